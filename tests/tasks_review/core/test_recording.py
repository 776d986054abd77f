"""The ATIF every task run leaves (solve.sh's oracles, the replay agent): valid by Harbor's own
models, read back by the replay as the actions it records, and embeddable in a task image."""

from __future__ import annotations

import json
import subprocess
import sys

from harbor.models.trajectories import Trajectory

from tasks_review.core.recording import Recorder, embedded_source
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import replay


def recorded() -> dict:
    record = Recorder("Make the test pass.", call_prefix="replay")
    record.bash("python3 -m unittest", "FAILED (failures=1)", 1)
    record.read("/app/calc.py", "def add(a, b):\n    return a - b\n")
    record.edit("/app/calc.py", "a - b", "a + b")
    record.write("/app/notes.md", "fixed\n")
    record.refused("Edit", {"file_path": "/app/x.py", "old_string": "y", "new_string": "z"}, "gone")
    record.bash("python3 -m unittest", "OK", 0)
    record.say("The test passes.")
    return record.document(session_id="t__agent", agent="replay", version="1", cwd="/app")


def test_the_document_is_atif_harbors_strict_models_accept():
    document = recorded()
    Trajectory.model_validate(document)
    assert document["session_id"] == "t__agent" and document["agent"]["extra"] == {"cwd": "/app"}


def test_the_replay_reads_the_recorded_calls_as_the_actions_they_were():
    result = replay(recorded(), root="/app", blobs=MemoryBlobs())
    assert [c.exit_code for c in result.commands] == [1, 0]
    written = [
        key
        for event in result.events
        for key, change in event.changes.items()
        if not change.observed
    ]
    assert written == ["calc.py", "notes.md"], "the refused edit changed nothing"


def test_the_embedded_source_runs_alone_with_the_standard_library(tmp_path):
    out = tmp_path / "trajectory.json"
    script = embedded_source() + (
        "record = Recorder('', call_prefix='oracle')\n"
        "record.bash('true', '', 0)\n"
        f"record.save({str(out)!r}, session_id='s', agent='oracle', version='v', cwd='/app')\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_text())
    assert document["steps"][0]["message"] == "Fix the check."  # no instruction: the fallback
    assert not (tmp_path / "trajectory.json.tmp").exists()
