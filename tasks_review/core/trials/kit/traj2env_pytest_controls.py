"""traj2env pytest plugin: reports to the grader, with control copies among the real tests.

Loaded by ``pytest_boot.py`` (before any conftest or test module) and named with ``-p`` on the
command line, so a pytest.ini the project ships cannot disable it. It connects to the grader at
configure time; after collection the grader hears which tests were found and answers which to
copy: each copy is the real test function read again from the reference's file on disk, under
a random name, verbatim or with one assertion made false, as an item of the same module or
class at a random place among them. Every outcome goes to the grader as the test ends. The
session's exit status is what the run would have had without the controls, so
``pytest && next`` in a recorded command still chains.
"""

import ast
import random
import sys

import copies
import judging
import pytest
import traj2env_channel

_RANDOM = random.SystemRandom()
_COPYABLE = ("Function", "TestCaseFunction")
_state = {"link": None, "phases": {}}  # type: ignore[var-annotated]  # 3.8 syntax
_record = {"complete": True, "problems": [], "cases": [], "copies": {}, "baseline": False}


def pytest_configure(config):
    if _state["link"] is None and traj2env_channel.available():
        _state["link"] = traj2env_channel.Channel("pytest", argv=["pytest"] + sys.argv[1:])
        _state["link"].receive()


def _describe(item):
    function = getattr(item, "function", None)
    code = getattr(function, "__code__", None)
    # Plain test functions and methods, and unittest.TestCase methods pytest runs; not
    # parametrized ones (a copy would need the parameters).
    plain = type(item).__name__ in _COPYABLE and getattr(item, "callspec", None) is None
    cls = getattr(item, "cls", None)
    name = getattr(item, "originalname", item.name)
    return {
        "id": item.nodeid,
        "file": code.co_filename if code is not None and plain else "",
        "qualname": f"{cls.__qualname__}.{name}" if cls is not None else name,
    }


def _copy(item, entry, trees):
    path = entry["file"]
    if path not in trees:
        with open(path, "rb") as handle:
            trees[path] = ast.parse(handle.read())
    function = copies.find(trees[path], entry["qualname"])
    node = copies.make(function, entry["name"], entry.get("at") if entry["fail"] else None)
    made = copies.compile_function(node, path, item.module.__dict__)
    setattr(item.cls if item.cls is not None else item.module, entry["name"], made)
    return type(item).from_parent(item.parent, name=entry["name"])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    link = _state["link"]
    if link is None:
        return
    link.send({"t": "tests", "tests": [_describe(item) for item in items]})
    answer = link.receive()
    plan = answer.get("copies") or []
    _record["baseline"] = bool(answer.get("baseline"))
    _record["copies"] = {e["name"]: {"of": e["of"], "fail": e["fail"]} for e in plan}
    by_id = {item.nodeid: item for item in items}
    trees = {}
    for entry in plan:
        original = by_id.get(entry["of"])
        if original is None:
            continue
        try:
            made = _copy(original, entry, trees)
        except Exception:  # a copy that cannot be built is missing; the grader sees that
            continue
        same = [i for i, it in enumerate(items) if it.parent is original.parent]
        items.insert(_RANDOM.randint(same[0], same[-1] + 1) if same else len(items), made)


def pytest_runtest_logreport(report):
    phases = _state["phases"].setdefault(report.nodeid, {})
    phases[report.when] = report


def _outcome(phases):
    setup, call, teardown = (phases.get(w) for w in ("setup", "call", "teardown"))
    if setup is not None and setup.failed:
        return "error"
    if setup is not None and setup.skipped:
        return "skipped"
    if teardown is not None and teardown.failed:
        return "error"
    if call is None:
        return "error"
    xfail = hasattr(call, "wasxfail")
    if call.passed:
        return "xpassed" if xfail else "passed"
    if call.skipped:
        return "xfailed" if xfail else "skipped"
    return "failed"


def pytest_runtest_logfinish(nodeid, location):
    link = _state["link"]
    phases = _state["phases"].pop(nodeid, {})
    if link is None:
        return
    outcome = _outcome(phases)
    _record["cases"].append([nodeid, outcome])
    link.send({"t": "case", "id": nodeid, "outcome": outcome})


def pytest_sessionfinish(session, exitstatus):
    link = _state["link"]
    if link is None:
        return
    link.send({"t": "end"})
    status = judging.runner_status(_record, int(exitstatus))
    if status != 0:
        session.exitstatus = int(exitstatus) or 1
    elif int(exitstatus) == 1:
        session.exitstatus = 0


def pytest_unconfigure(config):
    link = _state["link"]
    if link is not None:
        link.close()
        _state["link"] = None
