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


@handles("cd")
def cd(sh: Shell, call: Call) -> Handled:
    words = call.words
    if len(words) < 2:
        return None, None  # $HOME: unknown to the replay
    target = words[-1]
    if target.value == "-" or not (target.literal or (target.tilde and not target.expands)):
        return None, None
    return sh.files.absolute(target.value, call.cwd), None


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
