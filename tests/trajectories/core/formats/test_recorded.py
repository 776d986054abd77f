"""What ingest keeps beside the ATIF that a later stage needs: the session's git state, and the
tool results an ATIF export cut short when the session's own log is beside it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats import Loaded, load
from trajectories.core.replay import replay

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "formats"


def loaded(path: Path) -> Loaded:
    result = load(path)
    assert isinstance(result, Loaded), result
    return result


# -- git state -----------------------------------------------------------------------------------


def test_a_codex_rollout_keeps_the_commit_branch_and_remote_its_session_started_from(tmp_path):
    lines = (FIXTURES / "codex-rollout.jsonl").read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["git"] = {
        "commit_hash": "02942347cadda24d3080fbfbc2d13295bb3a496d",
        "branch": "feat/x",
        "repository_url": "git@github.com:org/proj.git",
    }
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    assert loaded(path).side_data["git"] == {
        "commit": "02942347cadda24d3080fbfbc2d13295bb3a496d",
        "branch": "feat/x",
        "remote": "git@github.com:org/proj.git",
    }


def test_a_claude_code_log_keeps_the_branch_of_its_first_line():
    assert loaded(FIXTURES / "claude-code-session.json").side_data["git"] == {"branch": "main"}


def test_a_log_that_records_no_git_state_keeps_none():
    assert "git" not in loaded(FIXTURES / "codex-rollout.jsonl").side_data
    assert "git" not in loaded(FIXTURES / "pi-linear.jsonl").side_data


# -- OpenClaw's ATIF export, put right from its log ------------------------------------------------

FILE = "def test_x():\n    assert True\n"


def openclaw_trial(tmp_path: Path, *, log: bool = True, logged: str = FILE) -> Path:
    """A Harbor step folder: OpenClaw's ATIF (results cut at the end) and its session log."""
    folder = tmp_path / "steps" / "run" / "agent"
    (folder / "openclaw-sessions").mkdir(parents=True)
    atif = {
        "schema_version": "ATIF-v1.7",
        "session_id": "s-1",
        "agent": {"name": "openclaw", "version": "1", "extra": {"openclaw_session_id": "s-1"}},
        "steps": [
            {"step_id": 1, "source": "user", "message": "look at the test"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {
                        "tool_call_id": "tool_1",
                        "function_name": "read",
                        "arguments": {"path": "/workspace/test_x.py"},
                    }
                ],
            },
            # As OpenClaw writes it: the result on a step of its own, the call named in extra.
            {
                "step_id": 3,
                "source": "agent",
                "message": FILE.rstrip(),
                "observation": {"results": [{"content": FILE.rstrip()}]},
                "extra": {"tool_call_id": "tool_1"},
            },
        ],
    }
    (folder / "trajectory.json").write_text(json.dumps(atif))
    if log:
        result = {"role": "toolResult", "toolCallId": "tool_1", "toolName": "read"}
        result["content"] = [{"type": "text", "text": logged}]
        lines = [
            {"type": "session", "version": 3, "id": "s-1", "cwd": "/workspace"},
            {"type": "message", "id": "m1", "message": result},
        ]
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / "openclaw-sessions" / "s-1.jsonl").write_text(text)
    return folder / "trajectory.json"


def replayed(path: Path) -> str:
    result = loaded(path)
    blobs = MemoryBlobs()
    files = replay(result.atif, result.side_data, root="/workspace", blobs=blobs).final_state
    sha = files["test_x.py"].sha
    assert sha is not None
    return blobs.get(sha).decode()


def test_an_openclaw_atif_gets_the_trailing_newline_its_export_cut_back_from_the_log(tmp_path):
    path = openclaw_trial(tmp_path)
    assert replayed(path) == FILE
    [note] = loaded(path).side_data["normalised"]
    assert "1 tool result" in note


def test_the_trial_folders_own_copy_finds_the_log_in_its_step_folder(tmp_path):
    step_copy = openclaw_trial(tmp_path)
    (tmp_path / "agent").mkdir()
    trial_copy = shutil.copy(step_copy, tmp_path / "agent" / "trajectory.json")
    assert replayed(Path(trial_copy)) == FILE


def test_without_its_log_an_openclaw_atif_stands_as_written(tmp_path):
    path = openclaw_trial(tmp_path, log=False)
    assert replayed(path) == FILE.rstrip()
    assert "normalised" not in loaded(path).side_data


def test_a_log_text_that_differs_by_more_than_its_end_changes_nothing(tmp_path):
    path = openclaw_trial(tmp_path, logged="def test_y():\n    assert True\n")
    assert replayed(path) == FILE.rstrip()
    assert "normalised" not in loaded(path).side_data
