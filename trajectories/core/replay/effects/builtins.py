"""Shell builtins that steer the walk: ``cd``, ``pushd``/``popd``, ``set -o pipefail``, ``source``.

They write no files themselves, but they decide where the commands after them run, whether a
pipeline's status is its check's own, and whether a sourced script may have done anything.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .model import LostTree
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

_ENV_SOURCES = re.compile(r"(^|/)(activate|\.env[\w.]*|\.?(bash|zsh)rc|\.profile|nvm\.sh|env\.sh)$")
# How bash, zsh (Claude Code's `(eval)` included), dash and fish say a `cd` failed; {t} is the
# directory as typed.
_CD_ERRORS = (
    r"\bcd: {t}: (?:no such file or directory|not a directory|permission denied)",
    r"\bcd:(?:\d+:)? (?:no such file or directory|not a directory|permission denied): {t}\s*$",
    r"\bcd: can't cd to {t}\s*$",
    r"\bcd: the directory '{t}' does not exist",
)


@handles("cd")
def cd(sh: Shell, call: Call) -> Handled:
    words = call.words
    if len(words) < 2:
        return None, None  # $HOME: unknown to the replay
    target = words[-1]
    if target.value == "-" or not (target.literal or (target.tilde and not target.expands)):
        return None, None
    moved = sh.files.absolute(target.value, call.cwd)
    refused = _refused(target.value, sh.output) or (
        moved is not None and sh.files.is_dir(moved) is False  # a file: cd fails, cut output
    )
    if sh.failed and refused:
        # The shell stayed where it was, and what was `&&`-chained after never ran: left alone,
        # a persistent shell's next call would resolve its relative paths under a folder that
        # does not exist (`go/go/…`).
        sh.halt()
        return call.cwd, None
    return moved, None


def _refused(target: str, output: str | None) -> bool:
    """Whether ``output`` holds the shell's own message that ``cd target`` failed."""
    if not output:
        return False
    t = re.escape(target)
    return any(re.search(p.format(t=t), output, re.IGNORECASE | re.MULTILINE) for p in _CD_ERRORS)


@handles("pushd")
def pushd(sh: Shell, call: Call) -> Handled:
    sh.dirs.append(call.cwd)
    return cd(sh, call)


@handles("popd")
def popd(sh: Shell, call: Call) -> Handled:
    return (sh.dirs.pop() if sh.dirs else None), None


@handles(":", "true", "false")
def no_op(sh: Shell, call: Call) -> Handled:
    return call.cwd, ""


@handles("set")
def set_options(sh: Shell, call: Call) -> Handled:
    values = call.args[1:]
    if "pipefail" in values:
        sh.pipefail = not any(v.startswith("+") for v in values)
    return call.cwd, None


@handles("source", ".")
def source(sh: Shell, call: Call) -> Handled:
    target = call.words[1].value if len(call.words) > 1 else ""
    if not _ENV_SOURCES.search(target):
        sh.emit(LostTree(call.cwd, f"sourced script may write files: {target}"))
    return call.cwd, None


@handles("eval")
def eval_(sh: Shell, call: Call) -> Handled:
    sh.emit(LostTree(call.cwd, "eval of a constructed command"))
    return call.cwd, None
