"""An authored task's solve.sh, wrapped: it runs the author's script unchanged, and under Harbor
(/logs/agent there) also leaves the trajectory of what it did, as a mined task's solve.sh does."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from harbor.models.trajectories import Trajectory

from training.core.authored import AuthoredTaskInvalid, read_authored_task, record_solution
from trajectories.core import formats
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import replay

from .helpers import EXAMPLE

AUTHORED = """\
#!/bin/bash
set -u
cd "$PROJECT"
echo "fixing"
printf 'fixed\\n' > notes.txt
printf 'new\\n' > added.txt
printf '\\x00\\xff' > blob.bin
rm old.txt
exit {status}
"""


def task(tmp_path: Path, script: str, *, status: int = 0) -> tuple[Path, Path]:
    """The example task with ``script`` as its solution, wrapped, and a project to run it in."""
    folder = tmp_path / "task"
    shutil.copytree(EXAMPLE, folder)
    (folder / "solution" / "solve.sh").write_text(script.format(status=status))
    project = tmp_path / "app"
    project.mkdir()
    (project / "notes.txt").write_text("broken\n")
    (project / "old.txt").write_text("gone soon\n")
    (project / "same.txt").write_text("untouched\n")
    spec = dataclasses.replace(read_authored_task(folder), project_dir=str(project))
    assert record_solution(folder, spec) is True
    return folder, project


def solve(folder: Path, project: Path, logs: Path | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PROJECT": str(project), "TRAJ2ENV_AGENT_LOGS": str(logs or "/nowhere")}
    return subprocess.run(
        [str(folder / "solution" / "solve.sh")],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_under_harbor_the_solution_leaves_its_command_and_the_files_it_changed(tmp_path):
    folder, project = task(tmp_path, AUTHORED)
    logs = tmp_path / "logs"
    logs.mkdir()
    done = solve(folder, project, logs)
    assert done.returncode == 0, done.stderr
    assert "fixing" in done.stdout, "the solution's output still reaches Harbor's oracle.txt"
    loaded = formats.load(logs / "trajectory.json")
    assert isinstance(loaded, formats.Loaded), loaded
    atif = loaded.atif
    Trajectory.model_validate(atif)
    assert atif["session_id"].startswith("oracle-") and atif["agent"]["name"] == "oracle"
    calls = [s["tool_calls"][0] for s in atif["steps"] if s.get("tool_calls")]
    ran = calls[0]["arguments"]["command"]
    assert ran == AUTHORED.format(status=0), "the solution's own text, as it ran"
    result = atif["steps"][1]["observation"]["results"][0]
    assert result["extra"] == {"exit_code": 0} and "fixing" in result["content"]
    written = [c["arguments"]["file_path"] for c in calls[1:] if c["function_name"] == "Write"]
    assert written == [str(project / "added.txt"), str(project / "notes.txt")]
    notes = [c["arguments"]["command"] for c in calls[1:] if c["function_name"] == "Bash"]
    assert notes == [f"base64 -d > '{project}/blob.bin'", f"rm -f -- '{project}/old.txt'"]
    assert sorted(p.name for p in logs.iterdir()) == ["trajectory.json"]


def test_the_recorded_writes_replay_to_the_files_the_solution_left(tmp_path):
    folder, project = task(tmp_path, AUTHORED)
    logs = tmp_path / "logs"
    logs.mkdir()
    solve(folder, project, logs)
    loaded = formats.load(logs / "trajectory.json")
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=str(project), blobs=blobs)
    notes = result.final_state["notes.txt"]
    assert blobs.get(notes.sha) == b"fixed\n"


def test_without_harbors_agent_logs_it_runs_the_solution_and_records_nothing(tmp_path):
    folder, project = task(tmp_path, AUTHORED, status=3)
    done = solve(folder, project, None)
    assert done.returncode == 3, "the author's exit status, unchanged"
    assert (project / "notes.txt").read_text() == "fixed\n"
    logs = tmp_path / "logs"
    logs.mkdir()
    folder2, project2 = task(tmp_path / "again", AUTHORED, status=3)
    assert solve(folder2, project2, logs).returncode == 3, "recording keeps the status too"
    assert (logs / "trajectory.json").is_file()


def test_a_script_for_another_interpreter_runs_by_its_own_line_and_is_shown_by_it(tmp_path):
    python = "#!/usr/bin/env python3\nimport pathlib\npathlib.Path('notes.txt').write_text('py')\n"
    folder, project = task(tmp_path, python)
    logs = tmp_path / "logs"
    logs.mkdir()
    assert solve(folder, project, logs).returncode == 0
    assert (project / "notes.txt").read_text() == "py"
    atif = formats.load(logs / "trajectory.json").atif
    command = atif["steps"][1]["tool_calls"][0]["arguments"]["command"]
    assert command == "/usr/bin/env python3 solution/solve.authored.sh"


def test_wrapping_twice_changes_nothing_and_a_taken_name_is_refused(tmp_path):
    folder, project = task(tmp_path, AUTHORED)
    spec = read_authored_task(folder)
    wrapped = (folder / "solution" / "solve.sh").read_bytes()
    assert record_solution(folder, spec) is False
    assert (folder / "solution" / "solve.sh").read_bytes() == wrapped
    other = tmp_path / "other"
    shutil.copytree(EXAMPLE, other)
    (other / "solution" / "solve.authored.sh").write_text("echo mine\n")
    with pytest.raises(AuthoredTaskInvalid, match="rename it"):
        record_solution(other, read_authored_task(other))
