"""The shell walk: a parsed command line run the way the shell would run it, effects only.

``run_script`` walks the items of ``shell.parse`` in order: ``cd`` changes the directory for what
follows, a subshell ``( … )`` restores it, a pipe carries the output of a command whose output
is known (``echo x | tee f``) into the next one, here-documents and ``<`` feed standard input,
and redirections write files. Each simple command goes to its program's handler (``registry``);
recognised checks are recorded with whether the exit status the trajectory shows is really
theirs (``masked``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import checks
from ..checks import CheckSpec
from ..programs import basename, unwrap
from ..shell import Item, SimpleCommand, parse
from . import formatters, runners
from .model import Files, LostTree, Write
from .registry import HANDLERS, READ_ONLY, VERSION_FLAGS, Call, Handled
from .targets import Targets


@dataclass(frozen=True, slots=True)
class FoundCheck:
    spec: CheckSpec
    segment: str
    cwd: str | None
    masked: bool


@dataclass
class ShellRun:
    cwd: str | None
    checks: list[FoundCheck] = field(default_factory=list)


class Shell(Targets):
    """One command line being walked: what handlers see of the files and of the walk so far."""

    def __init__(
        self, files: Files, cwd: str | None, output: str | None, *, failed: bool = False
    ) -> None:
        super().__init__(files)
        self.run = ShellRun(cwd=cwd)
        self.pipefail = False
        self.dirs: list[str | None] = []  # pushd's stack
        self.output = output
        self.failed = failed  # the trajectory shows the line's status as a failure
        # Set when a command is known to have failed here (a `cd` the shell refused): the
        # commands `&&`-chained after it are skipped, the way the shell skipped them.
        self.halted = False
        self.bodies_walked = False
        # False while walking echoed script bodies: they account for effects only, the check
        # is the script runner's command that the agent typed.
        self.recording = True
        self.echoed_checks: list[CheckSpec] = []
        self.rewriter_runs: dict[str, int] = {}

    def halt(self) -> None:
        """The command being walked failed: what is `&&`-chained after it does not run."""
        self.halted = True

    def walk(self, items: list[Item], cwd: str | None) -> str | None:
        stack: list[str | None] = []
        stdout_prev: str | None = None
        ops = [(i, it) for i, it in enumerate(items) if isinstance(it, str)]
        skip_to = -1  # a subshell that never ran: its items up to this index
        for index, item in enumerate(items):
            if index <= skip_to:
                continue
            if self.halted and item in (";", "||", "&"):
                self.halted = False  # the next command runs whatever the status
            if item == "(":
                if self.halted:
                    skip_to = _closing(items, index)
                    continue
                stack.append(cwd)
                continue
            if item == ")":
                cwd = stack.pop() if stack else cwd
                continue
            if isinstance(item, str) or self.halted:
                continue
            before = next(
                (op for i, op in reversed(ops) if i < index and op not in ("(", ")")), None
            )
            after = next((op for i, op in ops if i > index and op not in ("(", ")")), None)
            piped_in = before in ("|", "|&")
            piped_out = after in ("|", "|&")
            masked = (
                (piped_out and not self.pipefail)
                or before == "||"
                or _status_decided_later(items, index)
                or _may_fail_before(items, index)
            )
            cwd, stdout_prev = self.command(
                item, cwd, stdout_prev if piped_in else None, masked=masked
            )
        return cwd

    def command(
        self, cmd: SimpleCommand, cwd: str | None, piped: str | None, *, masked: bool
    ) -> Handled:
        """Run one simple command; returns (cwd afterwards, stdout text when known)."""
        if cmd.opaque:
            self.emit(LostTree(cwd, f"shell construct: {cmd.opaque}"))
            return cwd, None
        if cmd.for_header:
            return cwd, None
        stdin = self.stdin(cmd, cwd, piped)
        stdout: str | None = None
        if cmd.argv:
            cwd, stdout = self.program(cmd, cwd, stdin, masked=masked)
        self.redirects(cmd, cwd, stdout)
        if any(r.fd in (None, 1) and r.op in (">", ">>", ">|", "&>", "&>>") for r in cmd.redirects):
            stdout = None  # it went to the file, not down the pipe
        return cwd, stdout

    def stdin(self, cmd: SimpleCommand, cwd: str | None, piped: str | None) -> str | None:
        text = piped
        for r in cmd.redirects:
            if r.op in ("<<", "<<-"):
                doc = r.heredoc
                text = doc.body if doc is not None and doc.complete and not doc.expands else None
            elif r.op == "<<<":
                text = r.target.value + "\n" if r.target is not None and r.target.literal else None
            elif r.op == "<" and r.fd in (None, 0):
                path = self.path(r.target, cwd)
                text = self.files.text(path) if path else None
        return text

    def redirects(self, cmd: SimpleCommand, cwd: str | None, stdout: str | None) -> None:
        outputs = [
            r
            for r in cmd.redirects
            if r.op in (">", ">>", ">|", "&>", "&>>")
            or (
                r.op == ">&" and r.target is not None and not re.fullmatch(r"\d+|-", r.target.value)
            )
        ]
        last_stdout = max(
            (i for i, r in enumerate(outputs) if r.fd in (None, 1) or r.op.startswith("&")),
            default=None,
        )
        quiet = bool(cmd.argv) and basename(cmd.argv[0].value) in ("echo", "printf", "true", ":")
        for i, r in enumerate(outputs):
            target = r.target
            if target is None:
                continue
            if target.literal and target.value.startswith("/dev/"):
                continue
            path = self.path(target, cwd)
            if path is None:
                self.unknown_target(target, cwd, "output redirected to an unknown path")
                continue
            append = r.op in (">>", "&>>")
            if r.fd == 2:
                content = "" if quiet else None
            elif i == last_stdout:
                content = None if r.op.startswith("&") and not quiet else stdout
            else:
                content = ""  # an earlier stdout redirect is truncated and left empty
            if append and content == "":
                continue  # appending nothing leaves the file as it was
            self.emit(Write(path, content, append=append, reason="output redirection"))

    def program(
        self, cmd: SimpleCommand, cwd: str | None, stdin: str | None, *, masked: bool
    ) -> Handled:
        words = list(cmd.argv)
        values = [w.value for w in words]
        if not words[0].literal:
            self.emit(LostTree(cwd, f"command name is not literal: {words[0].raw}"))
            return cwd, None
        args = unwrap(values)
        if not args:
            return cwd, None
        # Keep the Word objects aligned with the unwrapped arguments.
        words = words[len(values) - len(args) :]
        name = basename(args[0])
        segment = " ".join(w.raw for w in cmd.argv)

        spec = checks.recognise(values)
        if spec is not None and self.recording:
            self.run.checks.append(FoundCheck(spec, segment, cwd, masked))
        elif spec is not None:
            self.echoed_checks.append(spec)
        script = checks.script_call(values)
        if script is not None:
            runners.script(self, script, cwd)
            return cwd, None
        rewritten = checks.rewrites(values)
        if rewritten is not None:
            formatters.rewrite(self, rewritten, words, cwd, name)
            return cwd, None
        if spec is not None:
            return cwd, None  # checks do not rewrite sources (see the package docstring)
        if len(args) == 2 and args[1] in VERSION_FLAGS and name not in ("rm", "mv", "cp"):
            return cwd, None

        handler = HANDLERS.get(name)
        if handler is not None:
            return handler(self, Call(tuple(words), cwd, stdin))
        if name in READ_ONLY:
            return cwd, None
        self.emit(LostTree(cwd, f"program may write files: {name}"))
        return cwd, None


def _status_decided_later(items: list[Item], index: int) -> bool:
    """Whether a command after ``items[index]`` decides the exit status regardless of it."""
    for i in range(index + 1, len(items)):
        item = items[i]
        if isinstance(item, str) and item in (";", "||", "&", "|", "|&"):
            if item in ("|", "|&"):
                continue  # the check's own pipeline is judged by the caller
            if any(isinstance(rest, SimpleCommand) for rest in items[i + 1 :]):
                return True
    return False


_TRIVIAL = set(
    "cd pushd popd export source . set unset mkdir echo printf true : alias ulimit umask clear pwd "
    "date sleep".split()
)


def _may_fail_before(items: list[Item], index: int) -> bool:
    """Whether an `&&`-chained command before ``items[index]`` may have failed in its place.

    In `npm ci && npm test` a nonzero status may be npm ci's, and then the tests never ran;
    `cd`, `source …/activate` and the like are taken to succeed.
    """
    i = index - 1
    while i >= 0:
        item = items[i]
        if isinstance(item, str):
            if item in ("(", ")", "&&"):
                i -= 1
                continue
            return False  # `;`, `||`, `|`, `&`: the chain before does not gate this command
        if item.argv and basename(item.argv[0].value) not in _TRIVIAL:
            return True
        i -= 1
    return False


def _closing(items: list[Item], index: int) -> int:
    """The index of the ``)`` matching the ``(`` at ``index`` (the last item if unbalanced)."""
    depth = 0
    for i in range(index, len(items)):
        item = items[i]
        depth += (item == "(") - (item == ")") if isinstance(item, str) else 0
        if depth == 0:
            return i
    return len(items) - 1


def run_script(
    script: str,
    cwd: str | None,
    files: Files,
    output: str | None = None,
    *,
    failed: bool = False,
) -> ShellRun:
    """Walk ``script`` from ``cwd``, applying its file effects to ``files`` as they happen.

    ``output`` is what the command printed; script runners echo the script bodies into it.
    ``failed``: the trajectory shows the line failing, so a `cd` its output says the shell
    refused stays where it was and stops its `&&` chain.
    """
    shell = Shell(files, cwd, output, failed=failed)
    shell.run.cwd = shell.walk(parse(script), cwd)
    return shell.run
