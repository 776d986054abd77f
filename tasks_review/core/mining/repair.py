"""The repair family: a check that failed, then passed after the agent changed files.

For every check (same command string, same working directory) the replay recorded, a failing
run followed by the next passing run of that same check is a candidate. Its starting state is
the files just before the failing run, its reference the files just before the passing run;
the fix is their difference. The candidate then has to survive the rules in ``DropReason``,
checked in this order (the first that applies is the one reported):

    windows_paths, unsupported_language, path_escapes_root, package_install_fix, no_change,
    fix_touches_lost_file, check_reads_lost_file, start_too_large, instruction_leaks_fix

Install and no-change come before the lost-file rules because installs leave uncertain trees
behind (``npm install`` rewrites node_modules) that would otherwise hide the real reason.

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
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import (
    ChangeKind,
    Entry,
    ReplayResult,
    ShellCommand,
    StateIndex,
    Status,
    is_tree,
    tree_dir,
)
from trajectories.core.replay.programs import basename, python_module, unwrap
from trajectories.core.replay.shell import SimpleCommand, parse

from ..instruction import build_instruction, leaks, rewrite_root, strip_harness, trim_text
from .drops import Drop, DropReason
from .files import (
    is_manifest,
    is_project_source,
    is_test_config,
    is_test_file,
    language_of,
    path_problem,
    under,
)

FAMILY = "repair"
STAGE = "mine"
PROJECT_DIR = "/app"
DEFAULT_LANGUAGES = frozenset({"python", "node", "go"})
DEFAULT_MAX_START_BYTES = 20 * 1024 * 1024
DEFAULT_MAX_FILES = 2000
# Writes outside the project to these are scratch space, not part of the fix.
_SCRATCH = ("/tmp/", "/var/tmp/", "/dev/", "/proc/")
_WINDOWS = re.compile(r"(^|[\s'\"=])[A-Za-z]:\\")
_PATHLIKE = re.compile(r"\.(py|[cm]?[jt]sx?|go|json)$")
_UNSEEN = Entry(None, Status.LOST)
# Folders where coding-agent harnesses keep their own state (plans, caches, sessions).
_HARNESS_DIRS = frozenset({".claude", ".codex", ".pi", ".cache", ".npm"})


@dataclass(frozen=True, slots=True)
class RepairCandidate:
    """A failing check, the files it failed on, and the files it then passed on."""

    command: str  # the check as recorded
    task_command: str  # the same with the recorded root replaced by ``project_dir``
    cwd: str  # where the command started, relative to the project ("." is the root)
    check_cwd: str  # where the check itself ran (after any `cd` in the command)
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
        }


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
) -> tuple[list[RepairCandidate], list[Drop]]:
    """Every fail-then-pass pair of one trajectory, as a candidate or as a drop."""
    miner = _Miner(replay, index, blobs, atif, max_start_bytes, max_files, languages, project_dir)
    candidates: list[RepairCandidate] = []
    drops: list[Drop] = []
    for failing, passing in check_pairs(replay.commands):
        outcome = miner.assess(failing, passing)
        if isinstance(outcome, Drop):
            drops.append(outcome)
        else:
            candidates.append(outcome)
    return candidates, drops


def check_pairs(commands: Sequence[ShellCommand]) -> Iterator[tuple[ShellCommand, ShellCommand]]:
    """(failing run, next passing run) of the same check, in trajectory order.

    Several failures before one pass yield one pair, with the last failure: its starting state
    is the one the fix was made on and the one its output describes, while an earlier failure
    would pair the same reference with a state that already holds half the fix. Masked runs
    (the recorded status is not the check's own) and runs without a status say nothing.
    """
    last_failure: dict[tuple[str, str | None, str | None], ShellCommand] = {}
    for command in commands:
        check = command.check
        if check is None or check.masked or command.exit_code is None:
            continue
        identity = (command.command, command.cwd, check.cwd)
        if command.exit_code != 0:
            last_failure[identity] = command
            continue
        failing = last_failure.pop(identity, None)
        if failing is not None:
            yield failing, command


@dataclass(frozen=True, slots=True)
class _Fix:
    start: dict[str, str]
    ref: dict[str, str]
    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    unknown: tuple[str, ...]
    touched_unknown: tuple[str, ...]  # changed paths whose content is unknown at either end
    dependency_changes: tuple[str, ...]  # changed files inside installed dependencies
    uncertain_trees: tuple[tuple[int, str], ...]  # (event index, directory) in the window
    start_entries: dict[str, Entry]
    ref_entries: dict[str, Entry]


class _Miner:
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
    ) -> None:
        self.replay = replay
        self.index = index
        self.blobs = blobs
        self.atif = atif
        self.max_start_bytes = max_start_bytes
        self.max_files = max_files
        self.languages = frozenset(languages)
        self.project_dir = project_dir

    def assess(self, failing: ShellCommand, passing: ShellCommand) -> RepairCandidate | Drop:
        def drop(reason: DropReason, detail: str) -> Drop:
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
            )

        check = failing.check
        assert check is not None  # check_pairs only pairs checks

        windows = self._windows(failing, passing)
        if windows:
            return drop(DropReason.WINDOWS_PATHS, windows)

        fix = self._fix(failing, passing)
        language = check.language or language_of([*fix.ref, *fix.start]) or "unknown"
        if language not in self.languages:
            supported = ", ".join(sorted(self.languages))
            return drop(
                DropReason.UNSUPPORTED_LANGUAGE,
                f"{language} check ({check.runner}); supported: {supported}",
            )

        escapes = self._escapes(failing, passing, fix)
        if escapes:
            return drop(DropReason.PATH_ESCAPES_ROOT, escapes)

        changed = [*fix.added, *fix.modified, *fix.deleted, *fix.touched_unknown]
        installs = self._installs(failing, passing)
        if installs:
            sources = [p for p in changed if not is_manifest(p)]
            if not sources:
                listed = "; ".join(installs[:3])
                what = (
                    f"only dependency files changed ({', '.join(sorted(changed))})"
                    if changed
                    else "no source file changed"
                )
                return drop(DropReason.PACKAGE_INSTALL_FIX, f"ran {listed}; {what}")
        if not changed and fix.dependency_changes:
            return drop(
                DropReason.PACKAGE_INSTALL_FIX,
                "the fix only edited installed dependencies: "
                + ", ".join(fix.dependency_changes[:5]),
            )

        if not changed and not fix.uncertain_trees:
            return drop(
                DropReason.NO_CHANGE,
                "the files were the same before both runs: the failure was flaky or environmental",
            )

        if fix.touched_unknown:
            return drop(
                DropReason.FIX_TOUCHES_LOST_FILE,
                "content unknown at the start or the reference: "
                + ", ".join(fix.touched_unknown[:5]),
            )
        if fix.uncertain_trees:
            where, directory = fix.uncertain_trees[0]
            return drop(
                DropReason.FIX_TOUCHES_LOST_FILE,
                f"the command at event {where} may have changed files under "
                f"{directory or 'the project root'} in ways the trajectory does not show",
            )

        unread = self._lost_reads(failing, language, fix)
        if unread:
            return drop(DropReason.CHECK_READS_LOST_FILE, "; ".join(unread[:5]))

        size = sum(len(self.blobs.get(sha)) for sha in fix.start.values())
        if len(fix.start) > self.max_files or size > self.max_start_bytes:
            return drop(
                DropReason.START_TOO_LARGE,
                f"{len(fix.start)} files, {size} bytes (limits {self.max_files} files, "
                f"{self.max_start_bytes} bytes)",
            )

        candidate = self._candidate(failing, passing, language, fix)
        leaked = leaks(candidate.instruction, fix.start, fix.ref, self.blobs)
        if leaked:
            shown = ", ".join(repr(line[:80]) for line in leaked[:3])
            return drop(
                DropReason.INSTRUCTION_LEAKS_FIX,
                f"{len(leaked)} line(s) the fix added appear in the instruction: {shown}",
            )
        return candidate

    # -- the fix -------------------------------------------------------------------------------

    def _fix(self, failing: ShellCommand, passing: ShellCommand) -> _Fix:
        start_state = self.index.state_before_event(failing.event_index)
        ref_state = self.index.state_before_event(passing.event_index)
        window = self.replay.events[failing.event_index : passing.event_index]

        # What the window did to each path. Reads before any write only looked at a file: its
        # content was already there at the failing run, so a full read tells the start content
        # of a file the replay had not seen (or had lost) by then.
        observed: dict[str, Entry] = {}
        touched: set[str] = set()
        trees: list[tuple[int, str]] = []
        for event in window:
            for key, change in event.changes.items():
                if change.flagged:
                    continue
                if is_tree(key):
                    # Installed dependencies (node_modules/**) are rebuilt by the image, and
                    # a removed tree is certain.
                    directory = tree_dir(key)
                    in_dependencies = not is_project_source(f"{directory}/x")
                    if change.kind is not ChangeKind.DELETED and not in_dependencies:
                        trees.append((event.index, directory))
                    continue
                if key in touched:
                    continue
                if not change.observed:  # a read says what was there; it changes nothing
                    touched.add(key)
                elif change.kind is ChangeKind.WRITTEN and change.sha:
                    if not observed.get(key, _UNSEEN).known:
                        observed[key] = Entry(change.sha, Status.KNOWN)
                else:
                    observed.setdefault(key, Entry(None, Status.PARTIAL))

        start_entries: dict[str, Entry] = {}
        for key, entry in start_state.items():
            if not is_tree(key):
                start_entries[key] = entry
        for key, entry in observed.items():
            current = start_entries.get(key)
            if current is None or not current.known:
                start_entries[key] = entry
        ref_entries = {k: e for k, e in ref_state.items() if not is_tree(k)}

        start: dict[str, str] = {}
        ref: dict[str, str] = {}
        added: list[str] = []
        modified: list[str] = []
        deleted: list[str] = []
        unknown: list[str] = []
        touched_unknown: list[str] = []
        dependency: list[str] = []
        for key in sorted(set(start_entries) | set(ref_entries)):
            s, r = start_entries.get(key), ref_entries.get(key)
            changed = s != r or (key in touched and not (s and s.known and r and r.known))
            if not is_project_source(key):
                if changed:
                    dependency.append(key)
                continue
            if s is not None and s.known and s.sha:
                start[key] = s.sha
            elif s is not None:
                unknown.append(key)
            if r is not None and r.known and r.sha:
                ref[key] = r.sha
            if not changed:
                continue
            if (s is not None and not s.known) or (r is not None and not r.known):
                touched_unknown.append(key)
            elif s is None:
                added.append(key)
            elif r is None:
                deleted.append(key)
            else:
                modified.append(key)
        return _Fix(
            start=start,
            ref=ref,
            added=tuple(added),
            modified=tuple(modified),
            deleted=tuple(deleted),
            unknown=tuple(k for k in unknown if k not in touched_unknown),
            touched_unknown=tuple(touched_unknown),
            dependency_changes=tuple(dependency),
            uncertain_trees=tuple(trees),
            start_entries=start_entries,
            ref_entries=ref_entries,
        )

    # -- rules ---------------------------------------------------------------------------------

    def _windows(self, failing: ShellCommand, passing: ShellCommand) -> str | None:
        if _WINDOWS.search(failing.command) or (
            failing.cwd_abs is not None and _WINDOWS.search(failing.cwd_abs)
        ):
            return f"the check names a Windows path: {failing.command[:120]}"
        for event in self.replay.events[: passing.event_index]:
            for key, change in event.changes.items():
                if change.windows_path:
                    return f"event {event.index} ({event.tool}) wrote the Windows path {key}"
        return None

    def _escapes(self, failing: ShellCommand, passing: ShellCommand, fix: _Fix) -> str | None:
        check = failing.check
        if failing.cwd is None or check is None or check.cwd is None:
            return f"the check ran outside the project root {self.replay.root}"
        for path in sorted({*fix.start, *fix.ref, *fix.touched_unknown}):
            problem = path_problem(path)
            if problem:
                return f"{path!r}: {problem}"
        for event in self.replay.events[failing.event_index : passing.event_index]:
            for key, change in event.changes.items():
                if change.escapes_root and not _scratch(key):
                    return f"event {event.index} ({event.tool}) changed {key} outside the project"
        return None

    def _installs(self, failing: ShellCommand, passing: ShellCommand) -> list[str]:
        return [
            c.command.strip()[:120]
            for c in self.replay.commands[failing.index + 1 : passing.index]
            if installs_packages(c.command)
        ]

    def _lost_reads(self, failing: ShellCommand, language: str, fix: _Fix) -> list[str]:
        """Files the check is known to read whose content the replay does not know."""
        check = failing.check
        assert check is not None and check.cwd is not None
        cwd = check.cwd
        start, ref = fix.start_entries, fix.ref_entries
        problems: list[str] = []

        def unknown_at_either_end(key: str) -> bool:
            return any(e is not None and not e.known for e in (start.get(key), ref.get(key)))

        for word in _words(failing.command):
            key = self._project_key(word, cwd)
            if key is None:
                continue
            if key in start or key in ref:
                if unknown_at_either_end(key):
                    problems.append(f"{key} (named in the command) is lost or partial")
            elif not any(under(k, key) for k in (*start, *ref)):
                problems.append(f"{key} (named in the command) was never seen")
        if language == "node" and check.runner in ("npm", "yarn", "pnpm", "bun"):
            manifest = posixpath.normpath(posixpath.join(cwd, "package.json"))
            if unknown_at_either_end(manifest):
                problems.append(f"{manifest} (the {check.runner} scripts) is lost or partial")
        for key in sorted(set(start) | set(ref)):
            if not under(key, cwd) or not unknown_at_either_end(key):
                continue
            name = posixpath.basename(key)
            python_test = language == "python" and name.endswith(".py") and is_test_file(key)
            go_test = language == "go" and name.endswith("_test.go")
            if python_test or go_test:
                problems.append(f"{key} (a test file under {cwd}) is lost or partial")
        return sorted(set(problems))

    def _project_key(self, word: str, cwd: str) -> str | None:
        """The project path a command word names, if it looks like a source file."""
        word = word.split("::", 1)[0]  # pytest node ids: tests/test_x.py::TestY::test_z
        if not _PATHLIKE.search(word) or word.startswith("-") or "*" in word or "$" in word:
            return None
        root = self.replay.root.rstrip("/")
        if word.startswith("/"):
            if not word.startswith(root + "/"):
                return None
            return posixpath.normpath(word[len(root) + 1 :])
        key = posixpath.normpath(posixpath.join(cwd, word))
        return None if key.startswith("..") else key

    # -- the candidate -------------------------------------------------------------------------

    def _candidate(
        self, failing: ShellCommand, passing: ShellCommand, language: str, fix: _Fix
    ) -> RepairCandidate:
        check = failing.check
        assert check is not None and check.cwd is not None and failing.cwd is not None
        root = self.replay.root
        task_command = rewrite_root(failing.command, root, self.project_dir)
        output = trim_text(rewrite_root(strip_harness(failing.output), root, self.project_dir))
        test_paths = tuple(
            sorted(p for p in {*fix.start, *fix.ref} if is_test_file(p) or is_test_config(p))
        )
        fix_edits_tests = any(p in test_paths for p in (*fix.added, *fix.modified, *fix.deleted))
        exit_code = failing.exit_code if failing.exit_code is not None else 1
        instruction = build_instruction(
            self.atif,
            before_step=failing.step_index,
            command=task_command,
            cwd=failing.cwd,
            output=output,
            exit_code=exit_code,
            root=root,
            project_dir=self.project_dir,
            fix_edits_tests=fix_edits_tests,
        )
        key = candidate_key(task_command, failing.cwd, fix.start, fix.ref)
        return RepairCandidate(
            command=failing.command,
            task_command=task_command,
            cwd=failing.cwd,
            check_cwd=check.cwd,
            language=language,
            runner=check.runner,
            check_kind=str(check.kind),
            root=root,
            project_dir=self.project_dir,
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


# -- shell reading -----------------------------------------------------------------------------


def _simple_commands(script: str) -> Iterator[list[str]]:
    for item in parse(script):
        if isinstance(item, SimpleCommand) and item.argv and item.opaque is None:
            args = unwrap(item.args)
            if args:
                yield args


def _words(script: str) -> Iterator[str]:
    for item in parse(script):
        if isinstance(item, SimpleCommand):
            for word in item.argv[1:]:
                if word.literal:
                    yield word.value


_INSTALL_SUBCOMMANDS = {
    "pip": {"install"},
    "pipx": {"install"},
    "uv": {"add", "sync"},
    "poetry": {"add", "install"},
    "pipenv": {"install"},
    "pdm": {"add", "install"},
    "conda": {"install"},
    "mamba": {"install"},
    "micromamba": {"install"},
    "npm": {"install", "i", "ci", "add", "isntall", "in"},
    "yarn": {"add", "install"},
    "pnpm": {"add", "install", "i"},
    "bun": {"add", "install", "i"},
    "apt": {"install"},
    "apt-get": {"install"},
    "apk": {"add"},
    "brew": {"install"},
    "dnf": {"install"},
    "yum": {"install"},
    "go": {"get", "install"},
    "cargo": {"add", "install"},
    "gem": {"install"},
    "bundle": {"install"},
}


def installs_packages(script: str) -> bool:
    """Whether a shell command installs packages (``pip install``, ``npm i``, ``apt-get``...)."""
    for args in _simple_commands(script):
        name = basename(args[0])
        module = python_module(args)
        if module is not None:
            name, rest = module[0].split(".")[0], module[1]
        else:
            rest = args[1:]
        operands = [a for a in rest if not a.startswith("-")]
        sub = operands[0] if operands else ""
        if name == "uv" and operands[:2] == ["pip", "install"]:
            return True
        if name in ("yarn", "bun") and not operands:
            return True  # bare `yarn` / `bun` install the lockfile's dependencies
        if name == "go" and operands[:2] == ["mod", "download"]:
            return True
        if sub in _INSTALL_SUBCOMMANDS.get(name, ()):
            return True
    return False


def _scratch(key: str) -> bool:
    """Outside-the-project writes that are not part of a fix: temp space, harness state."""
    path = posixpath.normpath(key) if key.startswith("/") else key
    if any((path + "/").startswith(prefix) for prefix in _SCRATCH):
        return True
    return bool(set(path.split("/")[:-1]) & _HARNESS_DIRS)
