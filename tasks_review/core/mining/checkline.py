"""A check's command line taken apart: the setup before the check, the check, what follows.

    line = split_line("cd web && FOO=1 npm test 2>&1", "npm test")
    [text(c) for c in line.before], text(line.check)    # ["cd web"], "FOO=1 npm test 2>&1"
    step = classify(line.before[0], cwd="/repo", paths=Paths("/repo"))
    step.verdict, step.why                              # StepVerdict.KEEP, "changes directory …"

A line splits only when it is a plain chain: simple commands joined by ``&&`` and ``;`` (a
newline is a ``;``), no pipes, ``||``, subshells, compound commands or here-documents. Those
are the lines a task can take apart and put back together without changing what the check
sees; anything else is run as recorded or not at all (``taskcheck``).

``classify`` judges one setup command for a task that runs offline in its own image:
``KEEP`` runs there as it did (a ``cd`` inside the project, environment variables and shell
options, harmless printing, a local service client such as ``redis-cli FLUSHDB``, another
check), ``ELIDE`` is left out because the image stands for it (the recorded machine's
virtualenv, starting a service, which the check's harness does), and ``UNSAFE`` makes the task
fall back to the bare check: installs, the network, containers, writes outside the project,
anything the task cannot vouch for offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from trajectories.core.replay.checks import recognise, rewrites
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.programs import basename, unwrap
from trajectories.core.replay.shell import Redirect, SimpleCommand, Word, parse

from .installs import installs_packages
from .service_needs import client_need, starts_service

# Reserved words the shell reader drops silently (it flattens `if pytest; then …`): a line
# holding one is a compound command, not a chain.
_COMPOUND = re.compile(
    r"(^|[;&|()\n])\s*(if|then|elif|else|fi|do|done|while|until|for|case|esac|select|"
    r"function|!|\{|\})(?=\s|$|;)"
)


@dataclass(frozen=True, slots=True)
class Line:
    """A plain chain around one check: the commands before it, the check, the ones after."""

    before: tuple[SimpleCommand, ...]
    ops_before: tuple[str, ...]  # the operator after each command of ``before``
    check: SimpleCommand
    after: tuple[SimpleCommand, ...]
    ops_after: tuple[str, ...]  # the operator before each command of ``after``

    @property
    def status_is_the_checks(self) -> bool:
        """Whether a 0 exit status of the whole line says the check ran and passed.

        With nothing but ``&&`` after the check, a 0 means every command from the check on
        ran and succeeded, whatever came before it (a failed setup ends the line nonzero).
        The replay marks such a check masked when a setup before it may have failed: true
        for a failure, not for a pass.
        """
        return all(op == "&&" for op in self.ops_after)


def split_line(command: str, segment: str) -> Line | None:
    """The plain chain ``command`` is, around the simple command whose words are ``segment``."""
    found = _chain(command)
    if found is None:
        return None
    commands, ops = found
    at = next((i for i, c in enumerate(commands) if _words(c.argv) == segment), None)
    if at is None:
        return None
    return Line(
        before=tuple(commands[:at]),
        ops_before=tuple(ops[:at]),
        check=commands[at],
        after=tuple(commands[at + 1 :]),
        ops_after=tuple(ops[at:]),
    )


def chain(command: str) -> list[SimpleCommand] | None:
    """The simple commands of ``command`` when it is a plain chain (see the module), else None."""
    found = _chain(command)
    return None if found is None else found[0]


def _chain(command: str) -> tuple[list[SimpleCommand], list[str]] | None:
    if _COMPOUND.search(command):
        return None
    commands: list[SimpleCommand] = []
    ops: list[str] = []  # ops[i] joins commands[i] and commands[i + 1]
    for item in parse(command):
        if isinstance(item, str):
            if item not in ("&&", ";"):
                return None
            if len(ops) == len(commands):  # an operator first, or two in a row
                if item == ";":
                    continue  # blank lines and trailing newlines
                return None
            ops.append(item)
            continue
        if item.opaque or item.for_header or any(_redirect_text(r) is None for r in item.redirects):
            return None
        if len(commands) > len(ops):
            return None
        commands.append(item)
    if ops and len(ops) == len(commands):
        ops.pop()  # a trailing `;`
    return (commands, ops) if commands else None


def text(command: SimpleCommand, *, assignments: bool = True) -> str:
    """A simple command as typed (quoting kept), from its words and redirections."""
    parts = [w.raw for w in command.assignments] if assignments else []
    parts += [w.raw for w in command.argv]
    parts += [t for t in (_redirect_text(r) for r in command.redirects) if t]
    return " ".join(parts)


def _words(words: tuple[Word, ...]) -> str:
    return " ".join(w.raw for w in words)


def _redirect_text(redirect: Redirect) -> str | None:
    if redirect.heredoc is not None or redirect.target is None:
        return None
    fd = "" if redirect.fd is None else str(redirect.fd)
    return f"{fd}{redirect.op}{redirect.target.raw}"


# -- judging one setup command -------------------------------------------------------------------


class StepVerdict(StrEnum):
    KEEP = "keep"
    ELIDE = "elide"
    UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class Step:
    text: str  # the command as typed
    verdict: StepVerdict
    why: str  # for the reviewer: what it does in (or for) the task
    cwd: str | None  # the shell's directory after it (absolute; None when unknown)


# Commands that only print or wait: harmless wherever they run.
_HARMLESS = frozenset({"echo", "printf", "true", ":", "pwd", "date", "sleep", "clear"})
# Environment activations of the recorded machine; the task's image has its own environment.
_ACTIVATE = re.compile(r"(^|/)bin/activate(\.\w+)?$")
_ENV_MANAGERS = {
    ("conda", "activate"),
    ("mamba", "activate"),
    ("micromamba", "activate"),
    ("pyenv", "activate"),
    ("pyenv", "shell"),
    ("pyenv", "local"),
    ("nvm", "use"),
    ("fnm", "use"),
    ("volta", "pin"),
}
_NETWORK = frozenset(
    {
        "curl",
        "wget",
        "ssh",
        "scp",
        "rsync",
        "docker",
        "docker-compose",
        "podman",
        "kubectl",
        "helm",
        "gh",
        "aws",
        "gcloud",
        "az",
        "npx",
        "bunx",
        "pnpx",
    }
)
_GIT_NETWORK = frozenset({"clone", "fetch", "pull", "push", "submodule", "ls-remote"})


def classify(command: SimpleCommand, *, cwd: str | None, paths: Paths) -> Step:
    """What a task does with one setup command that ran before its check (see the module)."""
    typed = text(command)

    def step(verdict: StepVerdict, why: str) -> Step:
        return Step(typed, verdict, why, cwd)

    unsafe_value = _unsafe_assignment(command.assignments)
    if unsafe_value:
        return step(StepVerdict.UNSAFE, f"sets {unsafe_value} from a command substitution")
    outside = _writes_outside(command, cwd, paths)
    if outside:
        return step(StepVerdict.UNSAFE, f"writes {outside}, outside the project")
    if not command.argv:
        return step(StepVerdict.KEEP, "sets variables")
    if not command.argv[0].literal:
        return step(StepVerdict.UNSAFE, f"runs a program whose name is not literal ({typed})")
    args = unwrap(command.args)
    if not args:
        return step(StepVerdict.KEEP, "sets environment variables")
    name = basename(args[0])
    rest = args[1:]
    sub = next((a for a in rest if not a.startswith("-")), "")

    if name in ("cd", "pushd"):
        return _cd(command, cwd, paths, typed)
    if name in ("export", "unset", "set"):
        unsafe = _unsafe_assignment(command.argv[1:])
        if unsafe:
            return step(StepVerdict.UNSAFE, f"exports {unsafe} from a command substitution")
        return step(StepVerdict.KEEP, "sets the shell's environment or options")
    if name in ("source", ".") and rest and _ACTIVATE.search(rest[0]):
        return step(
            StepVerdict.ELIDE,
            "activates the recorded machine's virtualenv; the image's own environment stands "
            "for it",
        )
    if (name, sub) in _ENV_MANAGERS:
        return step(
            StepVerdict.ELIDE,
            f"selects an environment with {name}; the image has one Python and one Node",
        )
    if name in _HARMLESS:
        return step(StepVerdict.KEEP, "only prints or waits")
    started = starts_service(args)
    if started is not None:
        return step(
            StepVerdict.ELIDE,
            f"starts {started}; the check's harness starts it in the task's containers",
        )
    need = client_need(args, _assigned(command))
    if need is not None:
        if not need.provided:
            return step(
                StepVerdict.UNSAFE, f"talks to {need.describe()}, which the task cannot run"
            )
        return step(
            StepVerdict.KEEP, f"a {need.service} client: runs against the task's own server"
        )
    if installs_packages(typed):
        return step(
            StepVerdict.UNSAFE, "installs packages; the image has the project's dependencies"
        )
    if name in _NETWORK or (name == "git" and sub in _GIT_NETWORK):
        return step(StepVerdict.UNSAFE, f"{name} needs the network or the recorded machine")
    if rewrites(command.args) is not None:
        return step(
            StepVerdict.UNSAFE, "rewrites sources, so the check would not see the reference"
        )
    if recognise(command.args) is not None:
        return step(StepVerdict.KEEP, "another check, run offline on the project")
    return step(StepVerdict.UNSAFE, f"runs {name}, which the task cannot vouch for offline")


def _cd(command: SimpleCommand, cwd: str | None, paths: Paths, typed: str) -> Step:
    words = command.argv[1:]
    target = words[-1] if words else None
    if target is None or not target.literal or target.value == "-":
        return Step(
            typed, StepVerdict.UNSAFE, "changes to a directory the replay cannot place", None
        )
    destination = paths.absolute(target.value, cwd)
    if destination is None or paths.relative_dir(destination) is None:
        return Step(typed, StepVerdict.UNSAFE, "changes to a directory outside the project", None)
    where = paths.relative_dir(destination)
    return Step(
        typed, StepVerdict.KEEP, f"changes directory to {where} inside the project", destination
    )


def _writes_outside(command: SimpleCommand, cwd: str | None, paths: Paths) -> str | None:
    """A file outside the project that the command's output redirections write, if any."""
    for redirect in command.redirects:
        target = redirect.target
        if redirect.op not in (">", ">>", ">|", "&>", "&>>") or target is None:
            continue
        if target.literal and target.value.startswith("/dev/"):
            continue
        path = paths.absolute(target.value, cwd) if target.literal else None
        if path is None or paths.relative_dir(path.rsplit("/", 1)[0] or "/") is None:
            return target.raw
    return None


def _unsafe_assignment(words: tuple[Word, ...]) -> str | None:
    """The first ``NAME=value`` whose value runs a command (``$(…)``, backticks)."""
    for word in words:
        if "=" in word.value and ("$(" in word.raw or "`" in word.raw):
            return word.value.split("=", 1)[0]
    return None


def _assigned(command: SimpleCommand) -> dict[str, str]:
    """The variables a simple command sets for itself (``PGHOST=db psql``, ``env A=b …``)."""
    found = {}
    words = [w.value for w in command.assignments]
    args = command.args
    if args and basename(args[0]) == "env":
        words += [a for a in args[1:] if "=" in a and not a.startswith("-")]
    for word in words:
        name, _, value = word.partition("=")
        found[name] = value
    return found


def join(*parts: str) -> str:
    """Commands chained the way a setup gates its check."""
    return " && ".join(p for p in parts if p)
