"""The oracle's solve.sh: exact reference bytes, and under Harbor the trajectory of what it did."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from training.core.catalogue import catalogue
from training.core.facts import TaskContext, facts_of
from training.core.harness import evaluate
from trajectories.core import formats
from trajectories.core.blobs import MemoryBlobs

from .test_taskfiles import _lay, handmade, write

START = {
    "calc.py": b"def add(a, b):\n    return a - b\n",
    "old.py": b"GONE = 1\n",
    "test_calc.py": (
        b"import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
        b"    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
}
REFERENCE = {
    "calc.py": b"def add(a, b):\n    return a + b\n",
    "helper.py": b"HELP = 'new'\n",
    "test_calc.py": START["test_calc.py"],
}


def run_oracle(tmp_path: Path, reference: dict[str, bytes], *, logs: bool) -> Path:
    project = tmp_path / "app"
    blobs = MemoryBlobs()
    candidate = handmade(blobs, START, reference, project_dir=str(project))
    task = write(tmp_path / "task", candidate, blobs)
    _lay(project, START)
    agent_logs = tmp_path / "logs-agent"
    if logs:
        agent_logs.mkdir()
    env = {**os.environ, "TRAJ2ENV_AGENT_LOGS": str(agent_logs)}
    done = subprocess.run(
        ["bash", str(task / "solution" / "solve.sh")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return agent_logs


def recorded(agent_logs: Path):
    loaded = formats.load(agent_logs / "trajectory.json")
    assert isinstance(loaded, formats.Loaded), loaded  # valid ATIF, by Harbor's own models
    return loaded


def test_without_harbors_agent_logs_the_oracle_records_nothing(tmp_path):
    agent_logs = run_oracle(tmp_path, REFERENCE, logs=False)
    assert not agent_logs.exists()
    assert (tmp_path / "app" / "calc.py").read_bytes() == REFERENCE["calc.py"]


def test_under_harbor_the_oracle_leaves_the_trajectory_of_its_edits_and_its_check(tmp_path):
    loaded = recorded(run_oracle(tmp_path, REFERENCE, logs=True))
    steps = loaded.atif["steps"]
    calls = [c["function_name"] for s in steps for c in s.get("tool_calls") or []]
    # The deletion, the read of the file it replaced and its edit, the new file, the check.
    assert calls == ["Bash", "Read", "Edit", "Write", "Bash"]
    check = steps[-2]["observation"]["results"][0]
    assert check["extra"] == {"exit_code": 0} and "OK" in check["content"]
    assert steps[0]["source"] == "user" and "unittest" in steps[0]["message"]


def test_the_oracles_trajectory_passes_failing_test_repair_on_its_own_actions(tmp_path):
    loaded = recorded(run_oracle(tmp_path, REFERENCE, logs=True))
    facts = facts_of(
        loaded.atif,
        loaded.side_data,
        root=str(tmp_path / "app"),
        blobs=MemoryBlobs(),
        verified_reward=1.0,
        context=TaskContext(test_files=("test_calc.py",), network_allowed=False),
    )
    edits = [a for a in facts.actions if a.edits]
    assert [a.edits for a in edits] == [("calc.py",)]
    result = evaluate(catalogue()["failing-test-repair"], facts)
    assert result.passed, result.failure_modes


def test_the_recorded_check_status_is_the_real_one(tmp_path):
    broken = {**REFERENCE, "calc.py": b"def add(a, b):\n    return 0\n"}
    loaded = recorded(run_oracle(tmp_path, broken, logs=True))
    check = loaded.atif["steps"][-2]["observation"]["results"][0]
    assert check["extra"]["exit_code"] != 0 and "FAILED" in check["content"]
    assert "exited with 1" in loaded.atif["steps"][-1]["message"]


def test_the_trajectory_file_is_written_whole_and_nothing_else(tmp_path):
    agent_logs = run_oracle(tmp_path, REFERENCE, logs=True)
    assert sorted(p.name for p in agent_logs.iterdir()) == ["trajectory.json"]
    json.loads((agent_logs / "trajectory.json").read_text())
