"""Shell command lines as the harness reads them: argv pipelines, directories, files printed.

    shell_pipelines("cd src && cat a.py | grep -n def")
    # ((("cd", "src"),), (("cat", "a.py"), ("grep", "-n", "def")))
    read_targets(("head", "-n", "5", "a.py"))        # ["a.py"]
    is_focused("pytest tests/test_x.py::test_y")     # True

Commands are read with the replay's own shell parser, so the harness and the replay agree on
what a line runs. ``sh -c`` scripts, ``eval`` and ``$(…)`` / ``<(…)`` substitutions are expanded;
a substitution fed to a shell is written as a pipeline into it, since that is what it does.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence

from trajectories.core.replay.paths import Paths
from trajectories.core.replay.programs import basename, python_module, unwrap
from trajectories.core.replay.shell import SimpleCommand, parse

Argv = tuple[str, ...]
Pipeline = tuple[Argv, ...]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})
# Programs that print (or copy out) the files they are given.
READERS = frozenset(
    "cat tac less more most head tail bat batcat nl sed awk gawk strings xxd od hexdump base64 "
    "view vim vi nano jq yq source . grep egrep fgrep rg ag".split()
)
# Readers whose first operand is a script or pattern, not a file.
_SCRIPTED = frozenset("sed awk gawk jq yq grep egrep fgrep rg ag".split())
_SUBSTITUTION = re.compile(r"\$\(|<\(|>\(|`")


def shell_pipelines(script: str, depth: int = 0) -> tuple[Pipeline, ...]:
    """The simple commands of ``script`` as argv tuples, grouped by pipeline, in order.

    Input redirections are appended to the argv as ``"<", target`` so that what a command reads
    stays visible. ``sh -c SCRIPT``, ``eval`` and command substitutions are expanded (three
    levels deep); a substitution given to a shell (``bash <(curl …)``) becomes a pipeline
    into that shell, since that is what it does.
    """
    try:
        items = parse(script)
    except Exception:  # noqa: BLE001 - the reader is tolerant; whatever it still rejects
        return ((tuple(script.split()),),) if script.strip() else ()
    pipelines: list[Pipeline] = []
    current: list[Argv] = []
    extra: list[Pipeline] = []
    for item in items:
        if isinstance(item, str):
            if item in ("|", "|&"):
                continue
            if item in ("(", ")"):
                continue
            if current:
                pipelines.append(tuple(current))
                current = []
            pipelines.extend(extra)
            extra = []
            continue
        argv = _argv(item)
        if not argv:
            continue
        current.append(argv)
        if depth < 3:
            extra.extend(_expanded(item, argv, depth))
    if current:
        pipelines.append(tuple(current))
    pipelines.extend(extra)
    return tuple(pipelines)


def _argv(command: SimpleCommand) -> Argv:
    words = [w.value for w in command.argv]
    for redirect in command.redirects:
        if redirect.op in ("<", "<>") and redirect.target is not None:
            words += ["<", redirect.target.value]
    return tuple(words)


def _expanded(command: SimpleCommand, argv: Argv, depth: int) -> list[Pipeline]:
    real = unwrap(list(argv))
    program = basename(real[0]) if real else ""
    feeds_shell = program in SHELLS or program in ("source", ".", "eval")
    out: list[Pipeline] = []
    if program in SHELLS:
        script = _dash_c(real)
        if script is not None:
            out.extend(shell_pipelines(script, depth + 1))
    elif program == "eval":
        out.extend(shell_pipelines(" ".join(real[1:]), depth + 1))
    for word in command.argv:
        if not word.expands or not _SUBSTITUTION.search(word.raw):
            continue
        for inner in _substitutions(word.raw):
            for pipeline in shell_pipelines(inner, depth + 1):
                out.append((*pipeline, argv) if feeds_shell else pipeline)
    return out


def _dash_c(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv[1:], start=1):
        if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", arg) and i + 1 < len(argv):
            return argv[i + 1]
        if not arg.startswith("-"):
            return None
    return None


def _substitutions(raw: str) -> list[str]:
    """The scripts inside ``$(…)``, ``<(…)``, ``>(…)`` and backticks of a raw word."""
    found: list[str] = []
    i = 0
    while i < len(raw):
        if raw.startswith(("$(", "<(", ">("), i) and not raw.startswith("$((", i):
            start = i + 2
            level = 1
            j = start
            while j < len(raw) and level:
                level += {"(": 1, ")": -1}.get(raw[j], 0)
                j += 1
            found.append(raw[start : j - 1] if level == 0 else raw[start:])
            i = j
        elif raw[i] == "`":
            end = raw.find("`", i + 1)
            end = len(raw) if end < 0 else end
            found.append(raw[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return found


def shell_reads(pipelines: Iterable[Pipeline], cwd: str | None, paths: Paths) -> tuple[str, ...]:
    """The files a command line printed, as keys (root-relative inside the project), once each."""
    found: list[str] = []
    for argv, here in walk_cwd(pipelines, cwd, paths):
        for raw in read_targets(argv):
            key = paths.resolve(raw, here).key
            if key and key not in found:
                found.append(key)
    return tuple(found)


def walk_cwd(
    pipelines: Iterable[Pipeline], cwd: str | None, paths: Paths
) -> Iterator[tuple[Argv, str | None]]:
    """Each simple command with the directory it runs in, following ``cd`` along the line."""
    for pipeline in pipelines:
        for argv in pipeline:
            real = unwrap(list(argv))
            if real and real[0] == "cd":
                target = next((a for a in real[1:] if not a.startswith("-")), "~")
                cwd = paths.absolute(target, cwd) if "$" not in target else None
                continue
            yield argv, cwd


def read_targets(argv: Sequence[str], *, searches: bool = False) -> list[str]:
    """The files a simple command prints: a reader's file operands and any input redirection.

    Recursive searches (``grep -r``, ``rg``) are not reads of their operands unless
    ``searches``: what they print from a folder says little about any one file, but a search
    through a credential file still exposes it.
    """
    targets: list[str] = []
    words = list(argv)
    if "<" in words:
        at = words.index("<")
        targets += [w for w in words[at + 1 :: 2]]
        words = words[:at]
    real = unwrap(words)
    if not real or basename(real[0]) not in READERS:
        return targets
    program = basename(real[0])
    # Bare numbers are option values (head -n 5, grep -A 50), not files.
    operands = [w for w in real[1:] if not w.startswith("-") and not w.isdigit()]
    if program == "sed" and any(w.startswith("-i") for w in real[1:]):
        return targets  # sed -i edits; the replay records that as a change
    if program in _SCRIPTED:
        operands = operands[1:]
    searching = program in ("rg", "ag") or (program.endswith("grep") and _recursive(real[1:]))
    if searching and not searches:
        return targets
    return targets + operands


def _recursive(args: Sequence[str]) -> bool:
    return any(
        a in ("--recursive", "--dereference-recursive")
        or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
        for a in args
    )


# Options that select tests by name or package (pytest -k/-m, go -run, jest -t, vitest --run
# FILE, mocha --grep, cargo --package/--test, dotnet --filter).
_FILTER_OPTIONS = frozenset(
    {"-k", "-m", "-run", "--run", "-t", "--testNamePattern", "--grep", "-g", "--test"}
    | {"--package", "--filter", "--match", "--spec"}
)
_WHOLE_SUITE = frozenset({"", ".", "...", "tests", "test", "spec", "specs", "src", "__tests__"})


def is_focused(segment: str) -> bool:
    """Whether a check names what it runs rather than running everything.

    A test id (``tests/test_x.py::test_y``), a file or folder below the top level
    (``tests/test_x.py``, ``./pkg/redact/...``) or a filter option (``-k``, ``-run``,
    ``--testNamePattern`` …) makes a check focused; ``pytest``, ``go test ./...``, ``npm test``
    and ``pytest tests/`` do not.
    """
    pipelines = shell_pipelines(segment)
    if not pipelines or not pipelines[0]:
        return False
    argv = unwrap(list(pipelines[0][0]))
    module = python_module(argv)
    args = module[1] if module is not None else argv[1:]
    for i, arg in enumerate(args):
        name = arg.split("=", 1)[0]
        if name in _FILTER_OPTIONS and ("=" in arg or i + 1 < len(args)):
            return True
        if arg.startswith("-"):
            continue
        if "::" in arg:
            return True
        cleaned = arg.removeprefix("./").rstrip("/")
        if cleaned.endswith("/..."):  # a Go package pattern: focused unless it is ./...
            cleaned = cleaned[: -len("/...")]
            if cleaned not in _WHOLE_SUITE:
                return True
        if cleaned in _WHOLE_SUITE:
            continue
        if "/" in cleaned or posixpath.splitext(cleaned)[1] in _SOURCE_SUFFIXES:
            return True
    return False


_SOURCE_SUFFIXES = frozenset(
    {".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".rb", ".java", ".kt"}
)
