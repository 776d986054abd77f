"""traj2env keep-time call tracer (Python): which of the project's functions the tests call, and
with what.

Loaded through PYTHONPATH as ``sitecustomize`` in every Python process the recorded check
starts, only at keep time and only on the reference files (never while a submission is graded).
A profile hook notes each call whose caller is a test file and whose callee is a module-level
function of a project file that is not a test, with its arguments as they were on entry, when
they are plain data (``probe_values``), and the id the runner gives the running test: pytest's
node id, else unittest's ``TestCase.id()``, exactly as the grader's reports name it (a failed
probe then takes the credit of that test, and no other, in a fractional reward). At exit each
process writes what it saw to ``$TRAJ2ENV_TRACE_OUT/trace-<pid>.json``.
"""

import atexit
import json
import os
import sys

_OUT = os.environ.get("TRAJ2ENV_TRACE_OUT")
_PROJECT = os.environ.get("TRAJ2ENV_TRACE_PROJECT", "").rstrip("/")
_TESTS = frozenset(json.loads(os.environ.get("TRAJ2ENV_TRACE_TESTS") or "[]"))
_MAX = 3000

if _OUT and _PROJECT:
    import probe_values

    _seen: dict = {}
    _calls: list = []
    _kinds: dict = {}

    def _rel(filename):
        if not filename.startswith(_PROJECT + "/"):
            return None
        return filename[len(_PROJECT) + 1 :]

    def _is_test(rel):
        if rel in _TESTS:
            return True
        parts = rel.split("/")
        name = parts[-1]
        return (
            name.startswith("test_")
            or name.endswith("_test.py")
            or name == "conftest.py"
            or "tests" in parts[:-1]
            or "test" in parts[:-1]
        )

    def _is_test_file(filename):
        kind = _kinds.get(filename)
        if kind is None:
            rel = _rel(filename)
            kind = _kinds[filename] = (
                "outside"
                if rel is None or "/site-packages/" in filename
                else ("test" if _is_test(rel) else "project")
            )
        return kind

    def _args(frame, code):
        names = code.co_varnames
        loc = frame.f_locals
        count, kwonly = code.co_argcount, code.co_kwonlyargcount
        args = [loc[n] for n in names[:count]]
        kwargs = {n: loc[n] for n in names[count : count + kwonly]}
        index = count + kwonly
        if code.co_flags & 0x04:  # *args
            args.extend(loc[names[index]])
            index += 1
        if code.co_flags & 0x08:  # **kwargs
            kwargs.update(loc[names[index]])
        return args, kwargs

    def _test_id(frame):
        """The running test's id: the pytest item's node id when pytest runs it, else the
        unittest case's id; None outside a test (a call at import time)."""
        unit = None
        while frame is not None:
            local = frame.f_locals
            item = local.get("pyfuncitem") or local.get("item") or local.get("self")
            if type(item).__module__.startswith("_pytest"):  # read nothing of other objects
                nodeid = getattr(item, "nodeid", None)
                if isinstance(nodeid, str) and "::" in nodeid:
                    return nodeid
            case = local.get("self")
            if unit is None and frame.f_code.co_name == "run" and "unittest" in sys.modules:
                if isinstance(case, sys.modules["unittest"].TestCase):
                    unit = case.id()
            frame = frame.f_back
        return unit

    def _profile(frame, event, arg):
        if event != "call" or len(_calls) >= _MAX:
            return
        code = frame.f_code
        if _is_test_file(code.co_filename) != "project":
            return
        caller = frame.f_back
        if caller is None or _is_test_file(caller.f_code.co_filename) != "test":
            return
        qualname = getattr(code, "co_qualname", code.co_name)
        module_name = frame.f_globals.get("__name__")
        if "." in qualname or qualname.startswith("<") or not module_name:
            return
        module = sys.modules.get(module_name)
        function = getattr(module, code.co_name, None) if module is not None else None
        if module_name == "__main__" or getattr(function, "__code__", None) is not code:
            return
        try:
            args, kwargs = _args(frame, code)
            encoded = [probe_values.encode(a) for a in args]
            encoded_kw = {k: probe_values.encode(v) for k, v in kwargs.items()}
        except Exception:  # noqa: BLE001 - not plain data: not a probe
            return
        try:
            test = _test_id(caller)
        except Exception:  # noqa: BLE001 - an odd frame: the call is still an input
            test = None
        key = json.dumps([module_name, code.co_name, encoded, encoded_kw], sort_keys=True)
        if key in _seen:
            if test and test not in _seen[key]["tests"]:
                _seen[key]["tests"].append(test)
            return
        _seen[key] = {
            "module": module_name,
            "function": code.co_name,
            "args": encoded,
            "kwargs": encoded_kw,
            "tests": [test] if test else [],
        }
        _calls.append(_seen[key])

    def _write():
        sys.setprofile(None)
        paths = []
        for entry in sys.path:
            real = os.path.realpath(entry or os.getcwd())
            if real == _PROJECT or real.startswith(_PROJECT + "/"):
                rel = os.path.relpath(real, _PROJECT)
                if rel not in paths:
                    paths.append(rel)
        record = {"language": "python", "cwd": os.getcwd(), "paths": paths, "calls": _calls}
        try:
            os.makedirs(_OUT, exist_ok=True)
            with open(os.path.join(_OUT, f"trace-{os.getpid()}.json"), "w") as handle:
                json.dump(record, handle)
        except OSError:
            pass

    atexit.register(_write)
    sys.setprofile(_profile)
    import threading

    threading.setprofile(_profile)
