"""Task runners and project scripts: ``npm run check``, ``make fmt``, ``mise run test`` …

A project script's body is not in the trajectory, but runners print each body before running it,
so the walk follows the bodies echoed into the output (``> biome check --write .``). When nothing
was echoed the script is judged by its name: test, build and typecheck scripts have no effect,
any other may rewrite files.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import checks
from ..shell import parse
from .model import LostTree
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

# Script runners print each script body before running it: npm/pnpm "> pkg@1.0 check" then
# "> biome check --write .", yarn 1 "$ jest", mise "[fmt] $ gofmt -w .", go-task "task: [x] …".
_ECHOED = (
    re.compile(r"^> \S+ \S+(?: \S+)?\n> (.+)$", re.MULTILINE),
    re.compile(r"^\[[\w:.-]+\] \$ (.+)$", re.MULTILINE),
    re.compile(r"^task: \[[\w:.-]+\] (.+)$", re.MULTILINE),
)
_YARN_ECHO = re.compile(r"^\$ (.+)$", re.MULTILINE)


def echoed_bodies(output: str | None) -> list[str]:
    """The script bodies a runner echoed into ``output``, in order."""
    if not output:
        return []
    found: list[tuple[int, str]] = []
    for pattern in _ECHOED:
        found.extend((m.start(), m.group(1)) for m in pattern.finditer(output))
    if "yarn run v" in output:
        found.extend((m.start(), m.group(1)) for m in _YARN_ECHO.finditer(output))
    return [body.strip() for _, body in sorted(found)]


def script(sh: Shell, call: checks.ScriptCall, cwd: str | None) -> None:
    """A project script: walk the bodies the runner echoed, else judge it by its name."""
    if not sh.recording:
        return  # a script run from an echoed body: its own body was echoed too
    where = sh.files.absolute(call.chdir, cwd) if call.chdir and cwd else cwd
    if sh.bodies_walked:
        return  # an earlier script in this command line echoed every body
    bodies = echoed_bodies(sh.output)
    if bodies:
        sh.bodies_walked = True
        sh.recording = False
        try:
            for body in bodies:
                sh.walk(parse(body), where)
        finally:
            sh.recording = True
        _learn_language(sh)
        return
    role = checks.script_role(call.name)
    if role in ("test", "build", "typecheck"):
        return  # tests and builds do not rewrite sources (the package docstring)
    name = f"{call.runner} {call.name}".strip()
    sh.emit(LostTree(where, f"{name} may rewrite files and did not echo its commands"))


def _learn_language(sh: Shell) -> None:
    """`mise run test` echoed `go test ./...`: the script's check is a Go check."""
    language = next((s.language for s in sh.echoed_checks if s.language), None)
    if language is None:
        return
    sh.run.checks = [
        replace(f, spec=replace(f.spec, language=language)) if f.spec.language is None else f
        for f in sh.run.checks
    ]


@handles("make", "gmake", "just", "mise", "task")
def task_runner(sh: Shell, call: Call) -> Handled:
    """A runner's own commands; the project scripts it runs went to ``script`` already."""
    args = call.args
    sub = next((a for a in args[1:] if not a.startswith("-")), "")
    if call.name == "mise" and sub not in ("run", "r", "exec", "x", "watch"):
        return call.cwd, None  # version manager commands: install, use, ls, trust …
    sh.emit(LostTree(call.cwd, f"script may write files: {' '.join(args[:3])}"))
    return call.cwd, None
