"""A repair candidate: the facts the task writer needs, assembled from a pair and its fix.

    candidate = build_candidate(replay, atif, failing, passing, "python", fix, task,
                                project_dir="/app", services=("redis",))
    candidate.task_command, candidate.instruction, candidate.key
    candidate.summary()        # JSON-safe, no file contents: report.json and the candidate row

The recorded root is rewritten to ``project_dir`` in the command and the failing output, so
the same repair recorded under two roots (a session and its Harbor export) is one task with one
``key``. ``test_paths`` are the test files and test configuration the grader restores to the
reference's content before it runs the check.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trajectories.core.replay import ReplayResult, ShellCommand

from ..instruction import build_instruction, rewrite_root, strip_harness, trim_text
from .files import is_test_config, is_test_file
from .fix import Fix
from .taskcheck import TaskCheck

FAMILY = "repair"
PRESUMED_LISTED = 50  # of the presumed files, how many the summary names (all are counted)
PRESUMED_NAMED = 5  # and how many a sentence names per command


@dataclass(frozen=True, slots=True)
class RepairCandidate:
    """A failing check, the files it failed on, and the files it then passed on."""

    command: str  # the failing run's command line as recorded
    # What the task runs (``taskcheck``): the passing run's command line with what cannot or
    # need not run offline left out (or the bare check), a known mise task or make target
    # replaced by the commands it defines, Python programs by their bare name instead of the
    # recorded virtualenv's, and the recorded root replaced by ``project_dir``.
    task_command: str
    cwd: str  # where task_command starts, relative to the project ("." is the root)
    check_cwd: str  # where the check itself runs (after any `cd` in the command)
    language: str
    runner: str
    check_kind: str
    root: str  # the recorded project root
    project_dir: str  # where the task lays the project down
    fail_command_index: int
    pass_command_index: int
    fail_step_index: int  # positions in the ATIF steps list
    pass_step_index: int
    fail_step_id: Any  # the ATIF step_id values of those steps
    pass_step_id: Any
    fail_exit_code: int
    failing_output: str  # trimmed, with the recorded root rewritten
    start_files: Mapping[str, str]  # path -> sha256 of the content at the failing run
    ref_files: Mapping[str, str]  # path -> sha256 just before the passing run
    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    # Test files and test configuration (at the start or the reference) that the grader
    # restores to the reference's content before running the check.
    test_paths: tuple[str, ...]
    fix_edits_tests: bool
    unknown_paths: tuple[str, ...]  # seen at the start, content unknown, left out
    instruction: str
    key: str
    family: str = FAMILY
    # Services the check needs running beside it, from Debian's packages in the task's image
    # ("redis", "postgresql"): the check's harness starts them before the check, in the agent's
    # container and the verifier's alike. Empty for a self-contained check.
    services: tuple[str, ...] = ()
    # The commands ``task_command`` runs before the check itself (a `cd`, variables, a service
    # client such as `redis-cli FLUSHDB`), and why the task runs this command line rather than
    # the other run's or the bare check (``taskcheck``); "" when both runs were one plain check.
    setup: tuple[str, ...] = ()
    setup_note: str = ""
    # build, extend and qa take this same shape (a start, a reference, a check); what each
    # family adds is here (qa's question and answer, build's hidden test files ...), and what
    # its one LLM call cost (``core.llm.Usage.to_dict``). Empty for repair, which asks nothing.
    family_facts: Mapping[str, Any] = field(default_factory=dict)
    llm: Mapping[str, Any] = field(default_factory=dict)
    # Files taken at their last known content although a command may have changed them since
    # (``Fix.presumed``: path -> which command); the baseline in the image judges them.
    presumed: Mapping[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(sorted({*self.added, *self.modified, *self.deleted}))

    def summary(self) -> dict[str, Any]:
        """JSON-safe facts for report.json and the candidate row (no file contents)."""
        return {
            "family": self.family,
            "key": self.key,
            "command": self.command,
            "task_command": self.task_command,
            "cwd": self.cwd,
            "check_cwd": self.check_cwd,
            "language": self.language,
            "runner": self.runner,
            "check_kind": self.check_kind,
            "fail_command_index": self.fail_command_index,
            "pass_command_index": self.pass_command_index,
            "fail_step_index": self.fail_step_index,
            "pass_step_index": self.pass_step_index,
            "fail_exit_code": self.fail_exit_code,
            "start_files": len(self.start_files),
            "added": list(self.added),
            "modified": list(self.modified),
            "deleted": list(self.deleted),
            "fix_edits_tests": self.fix_edits_tests,
            "unknown_paths": list(self.unknown_paths),
            "services": list(self.services),
            "setup": list(self.setup),
            "setup_note": self.setup_note,
            "family_facts": dict(self.family_facts),
            "llm": dict(self.llm),
            "presumed": dict(sorted(self.presumed.items())[:PRESUMED_LISTED]),
            "presumed_count": len(self.presumed),
        }


def presumed_note(presumed: Mapping[str, str]) -> str:
    """A sentence naming the files taken at their last known content and the commands that may
    have changed them ("" when there are none): for the review page and a baseline's drop."""
    if not presumed:
        return ""
    by_command: dict[str, list[str]] = {}
    for path, command in sorted(presumed.items()):
        by_command.setdefault(command, []).append(path)
    parts = []
    for command, paths in by_command.items():
        shown = ", ".join(paths[:PRESUMED_NAMED])
        more = f" and {len(paths) - PRESUMED_NAMED} more" if len(paths) > PRESUMED_NAMED else ""
        parts.append(f"since {command}: {shown}{more}")
    count = len(presumed)
    files = "file is" if count == 1 else "files are"
    return (
        f"{count} {files} presumed unchanged (taken at their last known content, though a "
        f"command the trajectory does not show may have changed them), {'; '.join(parts)}."
    )


def build_candidate(
    replay: ReplayResult,
    atif: Mapping[str, Any],
    failing: ShellCommand,
    passing: ShellCommand,
    language: str,
    fix: Fix,
    task: TaskCheck,
    *,
    project_dir: str,
    services: tuple[str, ...] = (),
) -> RepairCandidate:
    check = failing.check
    assert check is not None and task.cwd is not None and task.check_cwd is not None
    root = replay.root
    task_command = rewrite_root(task.command, root, project_dir)
    spec = task.resolved.spec if task.resolved is not None else check
    output = trim_text(rewrite_root(strip_harness(failing.output), root, project_dir))
    test_paths = tuple(
        sorted(p for p in {*fix.start, *fix.ref} if is_test_file(p) or is_test_config(p))
    )
    fix_edits_tests = any(p in test_paths for p in (*fix.added, *fix.modified, *fix.deleted))
    exit_code = failing.exit_code if failing.exit_code is not None else 1
    instruction = build_instruction(
        atif,
        before_step=failing.step_index,
        command=task_command,
        cwd=task.cwd,
        output=output,
        exit_code=exit_code,
        root=root,
        project_dir=project_dir,
        fix_edits_tests=fix_edits_tests,
    )
    key = candidate_key(task_command, task.cwd, fix.start, fix.ref)
    return RepairCandidate(
        command=failing.command,
        task_command=task_command,
        cwd=task.cwd,
        check_cwd=task.check_cwd,
        language=language,
        runner=spec.runner,
        check_kind=str(spec.kind),
        root=root,
        project_dir=project_dir,
        fail_command_index=failing.index,
        pass_command_index=passing.index,
        fail_step_index=failing.step_index,
        pass_step_index=passing.step_index,
        fail_step_id=failing.step_id,
        pass_step_id=passing.step_id,
        fail_exit_code=exit_code,
        failing_output=output,
        start_files=dict(fix.start),
        ref_files=dict(fix.ref),
        added=fix.added,
        modified=fix.modified,
        deleted=fix.deleted,
        test_paths=test_paths,
        fix_edits_tests=fix_edits_tests,
        unknown_paths=fix.unknown,
        instruction=instruction,
        key=key,
        services=services,
        setup=tuple(rewrite_root(s, root, project_dir) for s in task.setup),
        setup_note=rewrite_root(task.note, root, project_dir),
        presumed=dict(fix.presumed),
    )


def candidate_key(command: str, cwd: str, start: Mapping[str, str], ref: Mapping[str, str]) -> str:
    """A hash of what makes two candidates the same task, wherever they were recorded.

    The command is the rewritten one, so the same repair recorded under two different roots
    (a session and its Harbor export) gets one key.
    """
    identity = {
        "family": FAMILY,
        "command": command,
        "cwd": cwd,
        "start": sorted(start.items()),
        "ref": sorted(ref.items()),
    }
    encoded = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()
