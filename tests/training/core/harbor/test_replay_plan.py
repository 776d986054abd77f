"""Planning a replay from a recorded session: which calls are re-issued in the task, mapped from
the recorded root to /app, and where the cut before the fix falls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks_review.core.taskfiles import SourceTrace, write_task
from tests.tasks_review.core.mining.test_repair_samples import mine_sample
from tests.training.core.helpers import Session
from training.core.harbor.replay_plan import Attempt, KeptTask, plan_replay, read_kept_task
from training.core.harbor.replay_script import ActionKind, Cut, ReplayScript, ScriptError
from trajectories.core.replay import replay

TASK = KeptTask("traj2env/repair-1", "Make the test pass.", "0f" * 32, key="k")
BUGGY = "def total():\n    return 0\n"
FIXED = "def total():\n    return 1\n"


def plan(session: Session, changed: tuple[str, ...] = ("invoice.py",)) -> ReplayScript:
    """The script of the session's first failing check and the next passing one."""
    atif, side = session.builder.build()
    result = replay(atif, side, root=session.root, blobs=session.blobs)
    fail = next(c.index for c in result.commands if c.exit_code)
    passing = next(c.index for c in result.commands if c.index > fail and c.exit_code == 0)
    attempt = Attempt(fail, passing, frozenset(changed), "/app", key="k")
    return plan_replay(result, atif, attempt=attempt, task=TASK, blobs=session.blobs)


def shape(actions) -> list[tuple[str, str]]:
    return [(a.kind.value, a.command or a.path) for a in actions]


def repair() -> Session:
    s = Session()
    s.write("scratch.py", "print(1)\n")  # before the failing check: already in the task's start
    s.run("cd /repo && pytest tests/test_invoice.py", output="1 failed", exit_code=1)
    s.read("invoice.py", BUGGY)
    s.tool("Grep", {"pattern": "total", "path": "/repo"}, "invoice.py:1")
    s.write("notes.txt", "total returns 0\n")  # a change, but not to a file the fix changes
    s.edit("invoice.py", "return 0", "return 1")
    s.run("pytest tests/test_invoice.py", output="1 passed")
    s.run("git status", output="clean")  # after the passing check: not part of the attempt
    return s


def test_the_whole_attempt_runs_from_the_failing_check_to_the_passing_one_in_app():
    script = plan(repair())
    assert shape(script.actions_for(Cut.WHOLE)) == [
        ("bash", "cd /app && pytest tests/test_invoice.py"),
        ("read", "/app/invoice.py"),
        ("write", "/app/notes.txt"),
        ("write", "/app/invoice.py"),
        ("bash", "pytest tests/test_invoice.py"),
    ]
    fix = script.actions[3]
    assert fix.data == FIXED.encode() and fix.tool == "Edit", "the content the edit left"
    assert all(a.cwd == "/app" for a in script.actions if a.kind is ActionKind.BASH)
    assert [(s.tool, s.reason) for s in script.skipped] == [("Grep", "it changed no file")]
    assert script.recorded_root == "/repo" and script.project_dir == "/app"


def test_the_cut_falls_just_before_the_first_call_that_changes_a_file_the_fix_changes():
    script = plan(repair())
    assert script.fix_at == 3
    assert shape(script.actions_for(Cut.BEFORE_FIX)) == [
        ("bash", "cd /app && pytest tests/test_invoice.py"),
        ("read", "/app/invoice.py"),
        ("write", "/app/notes.txt"),
    ]


def test_an_edit_on_a_file_the_replay_never_saw_is_applied_as_recorded():
    s = Session()
    s.run("pytest", output="1 failed", exit_code=1)
    s.edit("invoice.py", "return 0", "return 1")
    s.run("pytest", output="1 passed")
    (_, edit, _) = plan(s).actions
    assert (edit.kind, edit.path, edit.old, edit.new) == (
        ActionKind.EDIT,
        "/app/invoice.py",
        "return 0",
        "return 1",
    )


def test_a_fix_made_by_a_shell_command_is_cut_before_that_command():
    s = Session()
    s.run("pytest", output="1 failed", exit_code=1)
    s.read("invoice.py", BUGGY)
    s.run("sed -i 's/return 0/return 1/' invoice.py")
    s.run("pytest", output="1 passed")
    script = plan(s)
    assert script.fix_at == 2
    assert shape(script.actions)[2] == ("bash", "sed -i 's/return 0/return 1/' invoice.py")


def test_codex_patches_are_written_and_deleted_files_deleted():
    s = Session(agent="codex")
    s.run("npm test", output="1 failing", exit_code=1)
    s.patch("*** Update File: invoice.py\n@@\n-x = 1\n+x = 2\n*** Delete File: old.py\n")
    s.run("npm test", output="1 passing")
    script = plan(s, changed=("invoice.py", "old.py"))
    kinds = [a.kind for a in script.actions]
    assert kinds[0] is ActionKind.BASH and kinds[-1] is ActionKind.BASH
    assert ("delete", "/app/old.py") in shape(script.actions)
    assert script.fix_at == 1


def test_a_read_outside_the_project_is_skipped_with_the_reason():
    s = Session()
    s.run("pytest", output="1 failed", exit_code=1)
    s.read("/etc/hosts", "127.0.0.1 localhost\n")
    s.edit("invoice.py", "return 0", "return 1")
    s.run("pytest", output="1 passed")
    script = plan(s)
    assert [a.kind for a in script.actions] == [ActionKind.BASH, ActionKind.EDIT, ActionKind.BASH]
    assert script.skipped[0].reason == "it read /etc/hosts, outside the project"


def test_an_attempt_that_changed_nothing_has_no_fix_to_cut_before():
    s = Session()
    s.run("pytest", output="1 failed", exit_code=1)
    s.read("invoice.py", BUGGY)
    s.run("pytest", output="1 passed")
    with pytest.raises(ScriptError, match="no fix to cut before"):
        plan(s)


def test_checks_the_replay_does_not_hold_are_refused():
    s = repair()
    atif, side = s.builder.build()
    result = replay(atif, side, root=s.root, blobs=s.blobs)
    with pytest.raises(ScriptError, match="not a failing and a later passing one"):
        attempt = Attempt(3, 1, frozenset(), "/app", key="k")
        plan_replay(result, atif, attempt=attempt, task=TASK, blobs=s.blobs)


def test_a_task_written_for_another_candidate_is_refused():
    s = repair()
    atif, side = s.builder.build()
    result = replay(atif, side, root=s.root, blobs=s.blobs)
    other = KeptTask("traj2env/repair-9", "Fix it.", "0f" * 32, key="another-key")
    with pytest.raises(ScriptError, match="written for candidate another-key"):
        attempt = Attempt(0, 1, (), "/app", key="k")
        plan_replay(result, atif, attempt=attempt, task=other, blobs=s.blobs)


# -- a sample's kept task ---------------------------------------------------------------------


@pytest.fixture
def sample(tmp_path):
    """The Claude Code sample's repair, written as a task, and its session's replay."""
    _, loaded, blobs, (candidate,), _ = mine_sample("claude-code")
    task_dir = write_task(
        tmp_path / "repair-1",
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate("ab" * 32, candidate),
        source_model="test-model",
        base_image="traj2env/base@sha256:" + "0" * 64,
        task_name="traj2env/repair-1",
    )
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    return task_dir, candidate, loaded, result, blobs


def test_a_kept_task_says_which_session_and_candidate_it_came_from(sample):
    task_dir, candidate, *_ = sample
    task = read_kept_task(task_dir)
    assert (task.name, task.key) == ("traj2env/repair-1", candidate.key)
    assert task.source_sha256 == "ab" * 32
    assert task.instruction.strip() == (task_dir / "instruction.md").read_text().strip()


def test_the_samples_attempt_reruns_its_checks_and_writes_the_fix_in_app(sample):
    task_dir, candidate, loaded, result, blobs = sample
    task = read_kept_task(task_dir)
    script = plan_replay(result, loaded.atif, attempt=Attempt.of(candidate), task=task, blobs=blobs)
    check = "python3 -m unittest discover -s tests -v"
    assert shape(script.actions) == [
        ("bash", check),
        ("write", "/app/invoice/totals.py"),
        ("bash", check),
    ]
    assert script.fix_at == 1 and script.actions[1].tool == "Edit"
    assert script.matches((task_dir / "instruction.md").read_text())


def test_an_authored_task_records_no_session_to_replay(tmp_path):
    authored = (
        Path(__file__).resolve().parents[4] / "samples/authored/stop-when-credentials-missing"
    )
    with pytest.raises(ScriptError, match="records no session it was mined from"):
        read_kept_task(authored)
