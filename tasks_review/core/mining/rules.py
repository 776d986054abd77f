"""The evidence behind the drop reasons that look past the fix itself, one function a reason.

    windows_paths(replay, failing, passing)             # "the check names a Windows path: …"
    escapes_root(replay, failing, passing, fix, task)   # "event 7 (Write) changed /etc/x …"
    installs_between(replay, failing, passing, task)    # ["pip install pytest"]
    unseen_manifest(replay, failing, fix)               # "npm run check needs package.json …"
    unseen_go_module(module, task, go_check=True)       # "a Go check needs go.mod in cmd …"
    lost_reads(replay, failing, "python", fix)          # ["tests/test_x.py (named in …) is lost"]
    go_downloads(module)                                # "go.mod requires 2 module(s) …"

Each returns what a reviewer needs to see why the candidate was dropped, or nothing when the
rule does not apply; ``repair`` decides the order in which the rules are asked.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence

from trajectories.core.replay import ReplayResult, ShellCommand
from trajectories.core.replay.programs import unwrap
from trajectories.core.replay.shell import SimpleCommand, parse

from .files import is_test_file, path_problem, under
from .fix import Fix
from .gomod import GoModule
from .installs import installs_packages
from .taskcheck import TaskCheck

# Writes outside the project to these are scratch space, not part of the fix.
_SCRATCH = ("/tmp/", "/var/tmp/", "/dev/", "/proc/")
_WINDOWS = re.compile(r"(^|[\s'\"=])[A-Za-z]:\\")
_PATHLIKE = re.compile(r"\.(py|[cm]?[jt]sx?|go|json)$")
# Folders where coding-agent harnesses keep their own state (plans, caches, sessions).
_HARNESS_DIRS = frozenset({".claude", ".codex", ".pi", ".cache", ".npm"})


def windows_paths(replay: ReplayResult, failing: ShellCommand, passing: ShellCommand) -> str | None:
    if _WINDOWS.search(failing.command) or (
        failing.cwd_abs is not None and _WINDOWS.search(failing.cwd_abs)
    ):
        return f"the check names a Windows path: {failing.command[:120]}"
    for event in replay.events[: passing.event_index]:
        for key, change in event.changes.items():
            if change.windows_path:
                return f"event {event.index} ({event.tool}) wrote the Windows path {key}"
    return None


def escapes_root(
    replay: ReplayResult, failing: ShellCommand, passing: ShellCommand, fix: Fix, task: TaskCheck
) -> str | None:
    check = failing.check
    if task.cwd is None or task.check_cwd is None or check is None or check.cwd is None:
        return f"the check ran outside the project root {replay.root}"
    for path in sorted({*fix.start, *fix.ref, *fix.touched_unknown}):
        problem = path_problem(path)
        if problem:
            return f"{path!r}: {problem}"
    for event in replay.events[failing.event_index : passing.event_index]:
        for key, change in event.changes.items():
            if change.escapes_root and not _scratch(key):
                return f"event {event.index} ({event.tool}) changed {key} outside the project"
    return None


def installs_between(
    replay: ReplayResult, failing: ShellCommand, passing: ShellCommand, task: TaskCheck
) -> list[str]:
    """Installs between the runs, and in the passing run's setup (`pip install x && pytest`)."""
    between = [
        c.command.strip()[:120]
        for c in replay.commands[failing.index + 1 : passing.index]
        if installs_packages(c.command)
    ]
    return between + [s[:120] for s in task.installs]


# Where each script runner finds the scripts it runs: the manifest names (a trailing "/" is a
# folder of task files), whether it looks in the folders above the one it runs in, and the
# options that name the manifest instead.
_PACKAGE_JSON = (("package.json",), True, ())
_SCRIPT_MANIFESTS: dict[str, tuple[tuple[str, ...], bool, tuple[str, ...]]] = {
    "npm": _PACKAGE_JSON,
    "yarn": _PACKAGE_JSON,
    "pnpm": _PACKAGE_JSON,
    "bun": _PACKAGE_JSON,
    "make": (("Makefile", "makefile", "GNUmakefile"), False, ("-f", "--file", "--makefile")),
    "gmake": (("Makefile", "makefile", "GNUmakefile"), False, ("-f", "--file", "--makefile")),
    "just": (("justfile", "Justfile", ".justfile"), True, ("-f", "--justfile")),
    "mise": (
        (
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            "mise/config.toml",
            ".mise/config.toml",
            ".config/mise.toml",
            ".config/mise/config.toml",
            "mise-tasks/",
            ".mise-tasks/",
            "mise/tasks/",
            ".mise/tasks/",
            ".config/mise/tasks/",
        ),
        True,
        (),
    ),
    "task": (
        ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml"),
        True,
        ("-t", "--taskfile"),
    ),
}


def unseen_manifest(
    replay: ReplayResult, failing: ShellCommand, fix: Fix, above: Sequence[str] = ()
) -> str | None:
    """The manifest a script-runner check needs that the trajectory never showed, if any.

    Seen is enough (at the start or the reference, whatever is known of its content): a
    manifest seen in part is ``lost_reads``' business. ``above``: files a clone holds above
    the session's folder (``../mise.toml``), where runners that look upward find theirs.
    """
    check = failing.check
    assert check is not None and check.cwd is not None
    spec = _SCRIPT_MANIFESTS.get(check.runner)
    if spec is None:
        return None
    names, upward, file_options = spec
    seen = {*fix.start_entries, *fix.ref_entries, *above}
    named = _option_value(check.segment, file_options)
    if named is not None:
        key = _project_key(replay.root, named, check.cwd, any_name=True)
        if key is not None and key in seen:
            return None
        return f"{check.segment} needs {named}, which the trajectory never showed"
    folders = [check.cwd]
    while upward and folders[-1] not in ("", "."):
        folders.append(posixpath.dirname(folders[-1]) or ".")
    levels = max((p.count("../") for p in above), default=0) if upward else 0
    folders += ["/".join([".."] * n) for n in range(1, levels + 1)]
    for folder in folders:
        for name in names:
            path = posixpath.normpath(posixpath.join(folder, name))
            if path in seen or (name.endswith("/") and any(under(k, path) for k in seen)):
                return None
    where = f"{check.cwd} or above" if upward and check.cwd != "." else check.cwd
    return (
        f"{check.segment} needs {' / '.join(names[:3])} in {where}, "
        "which the trajectory never showed"
    )


def unseen_go_module(module: GoModule | None, task: TaskCheck, *, go_check: bool) -> str | None:
    """A Go check with no go.mod the trajectory showed, where Go needs one."""
    if not go_check or module is not None:
        return None
    where = task.check_cwd or "."
    return f"a Go check needs go.mod in {where} or above, which the trajectory never showed"


def lost_go_module(module: GoModule | None) -> str | None:
    if module is None or module.known:
        return None
    return f"{module.path} (the Go module the check builds under) is lost or partial"


def go_downloads(module: GoModule | None) -> str | None:
    if module is None or not module.downloads:
        return None
    shown = ", ".join(module.downloads[:3]) + (" …" if len(module.downloads) > 3 else "")
    return (
        f"{module.path} requires {len(module.downloads)} module(s) with no vendor/ folder or "
        f"local replacement ({shown}); the image has no network to download them"
    )


def _option_value(segment: str, options: tuple[str, ...]) -> str | None:
    """The value of the first of ``options`` in the check's own command (`make -f x.mk`)."""
    for item in parse(segment):
        if not isinstance(item, SimpleCommand) or not item.argv:
            continue
        args = unwrap(item.args)
        for i, arg in enumerate(args[1:], 1):
            for option in options:
                if arg == option and i + 1 < len(args):
                    return args[i + 1]
                if option.startswith("--") and arg.startswith(option + "="):
                    return arg[len(option) + 1 :]
                if not option.startswith("--") and arg.startswith(option) and arg != option:
                    return arg[len(option) :]
        return None
    return None


def lost_reads(replay: ReplayResult, failing: ShellCommand, language: str, fix: Fix) -> list[str]:
    """Files the check is known to read whose content the replay does not know."""
    check = failing.check
    assert check is not None and check.cwd is not None
    cwd = check.cwd
    start, ref = fix.start_entries, fix.ref_entries
    problems: list[str] = []

    def unknown_at_either_end(key: str) -> bool:
        # A presumed file has content to lay down; the baseline judges the presumption.
        return any(e is not None and not e.presumed for e in (start.get(key), ref.get(key)))

    for word in _words(failing.command):
        key = _project_key(replay.root, word, cwd)
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


def _project_key(root: str, word: str, cwd: str, *, any_name: bool = False) -> str | None:
    """The project path a command word names, if it looks like a source file (or any file)."""
    word = word.split("::", 1)[0]  # pytest node ids: tests/test_x.py::TestY::test_z
    named = any_name or bool(_PATHLIKE.search(word))
    if not named or word.startswith("-") or "*" in word or "$" in word:
        return None
    root = root.rstrip("/")
    if word.startswith("/"):
        if not word.startswith(root + "/"):
            return None
        return posixpath.normpath(word[len(root) + 1 :])
    key = posixpath.normpath(posixpath.join(cwd, word))
    return None if key.startswith("..") else key


def _words(script: str) -> Iterator[str]:
    for item in parse(script):
        if isinstance(item, SimpleCommand):
            for word in item.argv[1:]:
                if word.literal:
                    yield word.value


def _scratch(key: str) -> bool:
    """Outside-the-project writes that are not part of a fix: temp space, harness state."""
    path = posixpath.normpath(key) if key.startswith("/") else key
    if any((path + "/").startswith(prefix) for prefix in _SCRATCH):
        return True
    return bool(set(path.split("/")[:-1]) & _HARNESS_DIRS)
