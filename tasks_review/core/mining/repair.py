"""The repair family: a check that failed, then passed after the agent changed files.

For every check the replay recorded (the check itself, whatever setup its command line ran
first, in the same directory: ``checkpairs``), a failing run followed by the next passing run of
that same check is a candidate. Its starting state is the files just before the failing run,
its reference the files just before the passing run; the fix is their difference. What the
task runs as its check (the passing run's line, its setup judged, or the bare check; a known
mise task or make target as the commands it defines) is ``taskcheck``'s decision. The
candidate then has to survive the rules in ``DropReason``, checked in this order (the first
that applies is the one reported):

    windows_paths, unsupported_language, path_escapes_root, package_install_fix, no_change,
    fix_touches_lost_file, check_manifest_unseen, check_reads_lost_file, service_unavailable,
    start_too_large, instruction_leaks_fix

Install and no-change come before the lost-file rules because installs leave uncertain trees
behind (``npm install`` rewrites node_modules) that would otherwise hide the real reason.
The rules about what the task's files cannot be (lost, unseen) come before the one about what
its image cannot run (a service): a task that cannot exist says more than one that could not
run here. Dependencies (Go modules, crates, npm and PyPI packages) are not judged here: the task
writer fetches them as the user's own tools do, and drops the candidate there, naming the
source, when they cannot be had. The services a kept check needs (``services``) are set on
the candidate for the image to run.

Only files whose content the replay knows can be laid down: the starting files are the known
files at the failing run (plus files first read in full between the runs, whose content was
there all along: a read tool or a shell read such as ``cat f``, which the replay marks
``Change.observed``), and files the trajectory saw without knowing their content are listed in
``unknown_paths`` and left out; building the image and running the check in it (the next
stage) is what proves the rest of the project was not needed.

Tests: the grader always runs the check against the reference's copy of the test files and
test configuration (``test_paths``), so editing tests never earns reward. When the recorded fix
itself changed tests (``fix_edits_tests``: the user said "the code is right, fix the test"),
the candidate is kept, flagged, and its instruction says that the grader's tests differ from
the visible ones; reviewers see the flag and may reject such tasks as underspecified.

The pieces live beside this module: ``checkpairs`` (which runs pair up), ``fix`` (the files at
either end and what the window did), ``rules`` and ``installs`` (the evidence for each drop),
``taskcheck`` with ``checkline`` and ``scripts`` (the task's command), ``service_needs`` and
``gomod`` (what its image must provide), ``candidate`` (the kept candidate and its key); this
module asks the rules in order.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult, ShellCommand, StateIndex

from ..instruction import leaks
from .candidate import FAMILY, RepairCandidate, build_candidate
from .checkpairs import check_pairs
from .drops import Drop, DropReason
from .files import is_manifest, language_of, project_language, under
from .fix import Fix, fix_between
from .gomod import go_module
from .rules import (
    escapes_root,
    installs_between,
    lost_go_module,
    lost_reads,
    unseen_go_module,
    unseen_manifest,
    windows_paths,
)
from .scriptfiles import Above, Files
from .service_needs import Need, ServiceNeeds, check_needs, line_needs
from .taskcheck import TaskCheck, task_check

STAGE = "mine"
PROJECT_DIR = "/app"
DEFAULT_LANGUAGES = frozenset({"python", "node", "go", "rust"})
DEFAULT_MAX_START_BYTES = 20 * 1024 * 1024
DEFAULT_MAX_FILES = 2000


DropMaker = Callable[[DropReason, str, str], Drop]  # (reason, detail, language) -> the drop


@dataclass(frozen=True, slots=True)
class Judged:
    """A pair of runs that passed every rule: the fix, the check as the task runs it, the
    check's language and the services it needs."""

    fix: Fix
    task: TaskCheck
    language: str
    services: tuple[str, ...]


def find_repair_candidates(
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    atif: Mapping[str, Any],
    *,
    max_start_bytes: int = DEFAULT_MAX_START_BYTES,
    max_files: int = DEFAULT_MAX_FILES,
    languages: frozenset[str] | set[str] = DEFAULT_LANGUAGES,
    project_dir: str = PROJECT_DIR,
    above: Above | None = None,
) -> tuple[list[RepairCandidate], list[Drop]]:
    """Every fail-then-pass pair of one trajectory, as a candidate or as a drop; ``above``:
    the clone's files above the session's folder, which script runners may read."""
    rules = Miner(
        replay, index, blobs, atif, max_start_bytes, max_files, languages, project_dir, above=above
    )
    candidates: list[RepairCandidate] = []
    drops: list[Drop] = []
    for failing, passing in check_pairs(replay.commands):
        outcome = rules.assess(failing, passing)
        if isinstance(outcome, Drop):
            drops.append(outcome)
        else:
            candidates.append(outcome)
    return candidates, drops


class Miner:
    def __init__(
        self,
        replay: ReplayResult,
        index: StateIndex,
        blobs: BlobStore,
        atif: Mapping[str, Any],
        max_start_bytes: int,
        max_files: int,
        languages: frozenset[str] | set[str],
        project_dir: str,
        *,
        above: Above | None = None,
    ) -> None:
        self.replay = replay
        self.index = index
        self.blobs = blobs
        self.atif = atif
        self.max_start_bytes = max_start_bytes
        self.max_files = max_files
        self.languages = frozenset(languages)
        self.project_dir = project_dir
        self.above = above  # a clone's files above the session's folder

    def assess(self, failing: ShellCommand, passing: ShellCommand) -> RepairCandidate | Drop:
        def drop(reason: DropReason, detail: str, language: str) -> Drop:
            return Drop(
                family=FAMILY,
                stage=STAGE,
                reason=reason,
                detail=detail,
                fail_command_index=failing.index,
                pass_command_index=passing.index,
                fail_step_index=failing.step_index,
                pass_step_index=passing.step_index,
                command=failing.command,
                language=language,
            )

        judged = self.judge(failing, passing, drop, fix_rules=True)
        if isinstance(judged, Drop):
            return judged
        candidate = build_candidate(
            self.replay,
            self.atif,
            failing,
            passing,
            judged.language,
            judged.fix,
            judged.task,
            project_dir=self.project_dir,
            services=judged.services,
        )
        leaked = leaks(candidate.instruction, judged.fix.start, judged.fix.ref, self.blobs)
        if leaked:
            shown = ", ".join(repr(line[:80]) for line in leaked[:3])
            return drop(
                DropReason.INSTRUCTION_LEAKS_FIX,
                f"{len(leaked)} line(s) the fix added appear in the instruction: {shown}",
                judged.language,
            )
        return candidate

    def judge(
        self,
        failing: ShellCommand,
        passing: ShellCommand,
        drop: DropMaker,
        *,
        fix_rules: bool,
    ) -> Judged | Drop:
        """The rules every family built on a failing and a passing run asks, in order.

        ``fix_rules`` adds the two that only a repair needs (the fix was an install; nothing
        changed): build and extend windows (``families.window``) change files by definition.
        """
        language = ""  # known once the fix is; drops after that say it (the run's yield)
        check = failing.check
        assert check is not None  # check_pairs only pairs checks

        windows = windows_paths(self.replay, failing, passing)
        if windows:
            return drop(DropReason.WINDOWS_PATHS, windows, language)

        fix = fix_between(self.replay, self.index, failing, passing)
        task = task_check(self.replay, failing, passing, self._files(fix))
        spec = task.resolved.spec if task.resolved is not None else check
        # A check that does not say its language (an unresolved make or mise target) builds
        # the project its folder belongs to: the nearest manifest's, else most of its files'.
        names = [*fix.ref, *fix.start]
        language = (
            spec.language
            or project_language(task.check_cwd or ".", names)
            or language_of(names)
            or "unknown"
        )
        if language not in self.languages:
            supported = ", ".join(sorted(self.languages))
            return drop(
                DropReason.UNSUPPORTED_LANGUAGE,
                f"{language} check ({spec.runner}); supported: {supported}",
                language,
            )

        escapes = escapes_root(self.replay, failing, passing, fix, task)
        if escapes:
            return drop(DropReason.PATH_ESCAPES_ROOT, escapes, language)

        if fix_rules:
            reason = self._fix_problem(failing, passing, fix, task)
            if reason is not None:
                return drop(*reason, language)

        if fix.touched_unknown:
            return drop(
                DropReason.FIX_TOUCHES_LOST_FILE,
                "content unknown at the start or the reference: "
                + ", ".join(fix.touched_unknown[:5]),
                language,
            )
        if fix.uncertain_trees and not (fix.added or fix.modified or fix.deleted):
            # The log's own edits are the fix; with none, only a command the trajectory does
            # not show can have made the check pass. Beside an edit, the files it may have
            # changed keep their last known content (``fix.presumed``) for the baseline to judge.
            where, directory = fix.uncertain_trees[0]
            return drop(
                DropReason.FIX_TOUCHES_LOST_FILE,
                "only a command the trajectory does not show may have changed files: the one "
                f"at event {where}, under {directory or 'the project root'}",
                language,
            )

        go_check = spec.language == "go"
        module = go_module(fix, self.blobs, task.check_cwd or ".") if go_check else None
        above = tuple(self.above.files) if self.above is not None else ()
        manifest = unseen_manifest(self.replay, failing, fix, above) or unseen_go_module(
            module, task, go_check=go_check
        )
        if manifest:
            return drop(DropReason.CHECK_MANIFEST_UNSEEN, manifest, language)

        unread = lost_reads(self.replay, failing, language, fix)
        lost_module = lost_go_module(module)
        if unread or lost_module:
            problems = [*([lost_module] if lost_module else []), *unread]
            return drop(DropReason.CHECK_READS_LOST_FILE, "; ".join(problems[:5]), language)

        needs = self._service_needs(failing, passing, task, fix)
        if needs.unavailable:
            first = needs.unavailable[0]
            return drop(
                DropReason.SERVICE_UNAVAILABLE,
                f"the check needs {first.describe()}, which the task's image cannot run "
                f"(seen: {first.evidence})",
                language,
            )
        size = sum(len(self.blobs.get(sha)) for sha in fix.start.values())
        if len(fix.start) > self.max_files or size > self.max_start_bytes:
            return drop(
                DropReason.START_TOO_LARGE,
                f"{len(fix.start)} files, {size} bytes (limits {self.max_files} files, "
                f"{self.max_start_bytes} bytes)",
                language,
            )
        return Judged(fix, task, language, needs.services)

    def _fix_problem(
        self, failing: ShellCommand, passing: ShellCommand, fix: Fix, task: TaskCheck
    ) -> tuple[DropReason, str] | None:
        """Why the fix is no repair of the code: an install did it, or nothing changed."""
        changed = [*fix.added, *fix.modified, *fix.deleted, *fix.touched_unknown]
        installs = installs_between(self.replay, failing, passing, task)
        if installs:
            sources = [p for p in changed if not is_manifest(p)]
            if not sources:
                listed = "; ".join(installs[:3])
                what = (
                    f"only dependency files changed ({', '.join(sorted(changed))})"
                    if changed
                    else "no source file changed"
                )
                return DropReason.PACKAGE_INSTALL_FIX, f"ran {listed}; {what}"
        if not changed and fix.dependency_changes:
            return (
                DropReason.PACKAGE_INSTALL_FIX,
                "the fix only edited installed dependencies: "
                + ", ".join(fix.dependency_changes[:5]),
            )
        if not changed and not fix.uncertain_trees:
            return (
                DropReason.NO_CHANGE,
                "the files were the same before both runs: the failure was flaky or environmental",
            )
        return None

    def _files(self, fix: Fix) -> Files:
        """What a script resolution may read: files seen at either end, and the content of
        those known and unchanged between the runs (the definition both runs used)."""

        above = self.above.files if self.above is not None else {}

        def read(path: str) -> bytes | None:
            sha = fix.start.get(path)
            if path in above:
                return self.blobs.get(above[path])  # the clone's, untouched by the session
            return self.blobs.get(sha) if sha is not None and fix.ref.get(path) == sha else None

        names = frozenset({*fix.start_entries, *fix.ref_entries, *above})
        return Files(names, read, self.above.here if self.above is not None else "")

    def _service_needs(
        self, failing: ShellCommand, passing: ShellCommand, task: TaskCheck, fix: Fix
    ) -> ServiceNeeds:
        lines = [
            (failing.command, "in the failing run"),
            (passing.command, "in the passing run"),
            (task.command, "in the task's check"),
        ]
        outputs = [
            (failing.output, "in the failing run's output"),
            (passing.output, "in the passing run's output"),
        ]
        session = [n for needs in self._session_needs[: passing.index] for n in needs]
        folder = task.check_cwd or "."
        config = {
            path: self.blobs.get(sha)
            for path, sha in fix.ref.items()
            if _test_environment(path, folder)
        }
        return check_needs(lines, outputs, session=session, config=config)

    @functools.cached_property
    def _session_needs(self) -> list[list[Need]]:
        """Each command's service evidence, once per trajectory (every pair asks)."""
        return [line_needs(c.command, "in the session") for c in self.replay.commands]


_TEST_ENVIRONMENT = frozenset(
    {"pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py"}
)


def _test_environment(path: str, folder: str) -> bool:
    """Files that set up the environment of a check run in ``folder``: .env files and pytest
    settings there or above it, conftest.py files there, above it or below it."""
    directory, name = posixpath.split(path)
    directory = directory or "."
    above = under(folder, directory) or folder == directory
    if name == "conftest.py":
        return above or under(path, folder)
    return above and (name in _TEST_ENVIRONMENT or name == ".env" or name.startswith(".env."))
