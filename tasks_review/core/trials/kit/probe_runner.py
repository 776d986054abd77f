"""traj2env probe runner (Python): call the project's functions on given inputs, print the outcomes.

Standard library only (Python 3.8+). The grader starts it as the unprivileged ``grader`` user,
with ``python3 -I``, in a fresh process after the recorded check, and feeds it the probe
inputs on stdin; at keep time the host runs the same program on the reference and on the
starting files. It knows no expected value: it only reports what the code did, and the grader
(root, in its own process) compares. Whatever the submission's code does in this process, it
can only change what is reported, never what it is compared with.

stdin: ``{"project", "workdir", "paths": [project-relative import folders], "timeout",
"calls": [{"id", "module", "function", "args", "kwargs"}]}``. stdout: one JSON object,
``{"outcomes": {id: {"returns": value} | {"raises": "ValueError"} | {"opaque": type} |
{"unavailable": why} | {"timeout": true}}}``. Anything the code prints goes to stderr.
"""

import importlib
import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # -I leaves the script's own folder off sys.path

import probe_values  # noqa: E402


class CallTimeout(BaseException):
    """One call ran past its limit."""


def _on_alarm(signum, frame):
    raise CallTimeout()


def call_one(call, timeout):
    try:
        module = importlib.import_module(call["module"])
        function = module
        for part in call["function"].split(".") if call["function"] else ():
            function = getattr(function, part)
        if not callable(function):
            return {"unavailable": "not callable"}
        args = probe_values.decode(call.get("args") or [])
        kwargs = probe_values.decode(call.get("kwargs") or {})
    except CallTimeout:
        return {"timeout": True}
    except BaseException as exc:  # noqa: BLE001 - whatever importing the code raised
        return {"unavailable": type(exc).__name__}
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = function(*args, **kwargs)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except CallTimeout:
        return {"timeout": True}
    except BaseException as exc:  # noqa: BLE001 - the code's own exception is its outcome
        signal.setitimer(signal.ITIMER_REAL, 0)
        return {"raises": type(exc).__name__}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return probe_values.encode_result(result)


def main():
    request = json.loads(sys.stdin.read())
    # The report goes to a descriptor of its own; fd 1 then points at stderr, so a print in
    # the code under test cannot break the JSON (it could forge it: see the module docstring).
    report = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    project = request["project"]
    os.chdir(request.get("workdir") or project)
    for rel in reversed(request.get("paths") or ["."]):
        sys.path.insert(0, os.path.normpath(os.path.join(project, rel)))
    signal.signal(signal.SIGALRM, _on_alarm)
    timeout = float(request.get("timeout") or 2.0)
    outcomes = {}
    for call in request.get("calls") or ():
        outcomes[str(call["id"])] = call_one(call, timeout)
    report.write(json.dumps({"outcomes": outcomes}, sort_keys=True))
    report.flush()
    os._exit(0)  # no atexit hook or finaliser of the code under test runs after the report


if __name__ == "__main__":
    main()
