"""traj2env pytest plugin: two contradictory control tests, run after the real ones.

Loaded by shim.py with ``-p traj2env_pytest_controls`` next to ``--junitxml``. The controls are
plain ``assert`` statements in a test module of their own, collected last, so a conftest,
plugin or patch that forces outcomes forces theirs too: a must-fail control reported as
passed means the run was forged. The session's exit status is set to what the run would
have had without the controls, so ``pytest && next`` in a recorded command still chains.
"""

import os

import pytest

NONCE = os.environ.get("TRAJ2ENV_NONCE", "")
MUST_PASS = "test_traj2env_control_must_pass_" + NONCE
MUST_FAIL = "test_traj2env_control_must_fail_" + NONCE
_outcomes = {}  # type: ignore[var-annotated]  # Python 3.8 syntax: no dict[str, list]


def _passing():
    assert 1 == 1


def _failing():
    assert 1 == 2


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    # One pair per test module, as that module's own items: hooks and conftest files apply
    # by location, so a forgery scoped to the tests' folder reaches the controls too.
    modules = []
    for item in items:
        module = item.getparent(pytest.Module)
        if module is not None and module not in modules:
            modules.append(module)
    for module in modules:
        for name, function in ((MUST_PASS, _passing), (MUST_FAIL, _failing)):
            items.append(pytest.Function.from_parent(module, name=name, callobj=function))


def pytest_runtest_logreport(report):
    name = report.nodeid.rsplit("::", 1)[-1]
    if name not in (MUST_PASS, MUST_FAIL):
        _outcomes.setdefault("real", []).append(report.outcome)
    elif report.when == "call":
        _outcomes.setdefault(name, []).append(report.outcome)
    elif report.outcome != "passed":
        _outcomes.setdefault(name, []).append("error")


def pytest_sessionfinish(session, exitstatus):
    passes, fails = _outcomes.get(MUST_PASS, []), _outcomes.get(MUST_FAIL, [])
    controls_ok = (
        bool(passes)
        and len(passes) == len(fails)
        and set(passes) == {"passed"}
        and set(fails) == {"failed"}
    )
    real_failed = "failed" in _outcomes.get("real", [])
    if not controls_ok:
        session.exitstatus = 1
    elif exitstatus == 1 and not real_failed:
        session.exitstatus = 0
