"""The report channel (kit/reports.py) and the controls it plans per session
(kit/planning.py)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tasks_review.core.trials.kit import judging

from .helpers import KIT, load

planning = load("planning")
channel = load("reports")


def served(tmp_path, config, uid=None):
    kit = Path(tempfile.mkdtemp(prefix="t2e-", dir="/tmp"))
    os.chmod(kit, 0o755)
    reports = channel.Reports(
        str(kit / "report.sock"),
        planning.Planner({"project": "/app", **config}),
        uid=os.getuid() if uid is None else uid,
    )
    return kit, reports


def connect(kit, *messages, user=None):
    """A process (of ``user``, or this one's) that opens a session and sends ``messages``."""
    # The kit's own end of the channel, where any user can load it (as in the kit folder).
    shutil.copyfile(KIT / "traj2env_channel.py", kit / "traj2env_channel.py")
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(kit)!r})\n"
        "import traj2env_channel as c\n"
        f"c.PATH = {str(kit / 'report.sock')!r}\n"
        "link = c.Channel('unittest', argv=['python -m unittest'])\n"
        "link.receive()\n"
        f"for m in json.loads({json.dumps(json.dumps(messages))}): link.send(m)\n"
        "link.close()\n"
    )
    python = "/usr/bin/python3" if user is not None else sys.executable
    # A refused peer sees the channel close on it.
    subprocess.run([python, "-I", "-c", code], check=user is None, timeout=30, user=user)


def test_the_report_channel_flags_a_test_reported_twice_and_anything_after_the_end(tmp_path):
    kit, reports = served(tmp_path, {"reference": {}, "reference_controls": {}})
    sys.path.insert(0, str(KIT))
    try:
        import traj2env_channel

        traj2env_channel.PATH = str(kit / "report.sock")
        link = traj2env_channel.Channel("unittest", argv=["python -m unittest"])
        assert link.receive() == {"t": "ok"}
        link.send({"t": "case", "id": "t.T.test_a", "outcome": "failed"})
        link.send({"t": "case", "id": "t.T.test_a", "outcome": "passed"})  # an exit hook's
        link.send({"t": "end"})
        link.send({"t": "case", "id": "t.T.test_b", "outcome": "passed"})
        link.close()
        stray = traj2env_channel.Channel("nonsense")
        stray.close()
    finally:
        sys.path.remove(str(KIT))
    reports.close()
    (record,), strays = reports.records()
    assert record["complete"] and record["pid"] == os.getpid()
    assert record["problems"] == [
        "t.T.test_a was reported twice",
        "it reported after its end (an exit hook?)",
    ]
    assert strays and "without saying what it is" in strays[0]
    verdict = judging.judge_sessions(0, False, 0.1, [record], {"unittest"})
    assert verdict.reward == 0.0
    shutil.rmtree(kit)


FORGED = ({"t": "case", "id": "t.T.test_a", "outcome": "passed"}, {"t": "end"})


def test_a_session_from_another_user_than_the_graded_one_is_untrusted(tmp_path):
    # Any local user can reach a socket of mode 0666: only the check's own user may report.
    kit, reports = served(tmp_path, {"reference": {}, "reference_controls": {}}, uid=12345)
    connect(kit, *FORGED, user=65534)
    reports.close()
    records, strays = reports.records()
    assert any("uid 65534" in s for s in strays), (records, strays)
    verdict = judging.judge_sessions(0, False, 0.1, records, {"unittest"}, findings=strays)
    assert verdict.reward == 0.0
    shutil.rmtree(kit)


def test_sessions_beyond_the_cap_make_the_run_untrusted_not_the_first_ones_win(tmp_path):
    # Forged sessions sent first would push the real one (the last) out of the record.
    kit, reports = served(tmp_path, {"reference": {}, "reference_controls": {}})
    for _ in range(judging.MAX_SESSIONS + 1):
        connect(kit, *FORGED)
    reports.close()
    records, strays = reports.records()
    assert len(records) == judging.MAX_SESSIONS
    assert any("more runner sessions" in s for s in strays), strays
    shutil.rmtree(kit)


def test_the_grader_plans_copies_of_failing_tests_and_falsified_ones_per_session():
    reference = {"tests/test_a.py": base64.b64encode(TESTS).decode()}
    ids = [f"test_a.T.test_{n}" for n in ("one", "two", "three", "four")]
    facts = {"copyable": ids, "mutable": ids[:2]}
    planner = planning.Planner(
        {
            "project": "/app",
            "reference": reference,
            "reference_controls": facts,
            "start_failed": ["test_a.T.test_three", "test_a.T.test_four"],
        }
    )
    tests = [
        {"id": i, "file": "/app/tests/test_a.py", "qualname": "T." + i.rsplit(".", 1)[1]}
        for i in ids
    ]
    plan, problems = planner.python(tests)
    assert problems == []
    verbatim = {e["of"] for e in plan if not e["fail"]}
    falsified = {e["of"] for e in plan if e["fail"]}
    assert {"test_a.T.test_three", "test_a.T.test_four"} <= verbatim and len(verbatim) == 3
    assert falsified == {"test_a.T.test_one", "test_a.T.test_two"}
    names = [e["name"] for e in plan]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"test_[a-z]{14}", n) for n in names)
    again, _ = planner.python(tests)
    assert {e["name"] for e in again}.isdisjoint(names)  # per grading, never the same
    # A test the reference could falsify that now comes from elsewhere is a problem.
    moved = [{**tests[0], "file": "/app/elsewhere.py"}, *tests[1:]]
    assert planner.python(moved)[1] == [
        "test_a.T.test_one is not the reference's test (substituted?)"
    ]


TESTS = b"""import unittest


class T(unittest.TestCase):
    def test_one(self):
        self.assertEqual(1, 1)

    def test_two(self):
        assert 2 == 2

    def test_three(self):
        self.assertTrue(True)

    def test_four(self):
        self.assertIn(1, [1])
"""
