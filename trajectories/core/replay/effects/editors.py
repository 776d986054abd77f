"""Stream editors that may edit in place: ``sed -i``, ``perl -pi -e``, ``awk -i inplace``.

Without ``-i`` they only print, and what they print of a file is the reads' business
(``sed -n '1,200p' f``). With it, the files they name are rewritten with content the replay does
not compute: each becomes a write of unknown content.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..shell import Word
from . import interpreters
from .model import LostTree
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell


@handles("sed")
def sed(sh: Shell, call: Call) -> Handled:
    return in_place(sh, call, "sed", script_flags={"-e", "--expression", "-f", "--file"})


@handles("perl")
def perl(sh: Shell, call: Call) -> Handled:
    if not any(re.fullmatch(r"-[a-zA-Z]*i\S*", w.value) for w in call.words[1:]):
        interpreters.run_code(sh, "perl", call.args, call.cwd, call.stdin)
        return call.cwd, None
    return in_place(sh, call, "perl -i", script_flags={"-e", "-E"})


@handles("awk", "gawk")
def awk(sh: Shell, call: Call) -> Handled:
    values = call.args[1:]
    if "-i" in values and "inplace" in values:
        operands = [w for w in call.words[1:] if not w.value.startswith("-")][2:]
        for w in operands:
            sh.lose(w, call.cwd, "awk -i inplace")
        return call.cwd, None
    program = next((v for v in values if not v.startswith("-")), "")
    if re.search(r"system\(|>\s*\S|\|\s*\"", program):
        sh.emit(LostTree(call.cwd, "awk program writes or runs commands"))
    return call.cwd, None


def in_place(sh: Shell, call: Call, tool: str, *, script_flags: set[str]) -> Handled:
    """Lose the files an in-place edit names: the operands after the script (or all of them
    when the script came with ``-e``)."""
    words, cwd = call.words, call.cwd
    edits = False
    script_given = False
    operands: list[Word] = []
    skip = False
    for i, w in enumerate(words[1:], start=1):
        v = w.value
        if skip:
            skip = False
            continue
        if v in script_flags:
            script_given = True
            skip = True
        elif v == "--in-place" or v.startswith("--in-place="):
            edits = True
        elif re.fullmatch(r"-[a-zA-Z]*i\S*", v):
            edits = True
            # BSD sed: `-i ''` takes the backup suffix as the next argument.
            if v == "-i" and i + 1 < len(words) and words[i + 1].value == "":
                skip = True
            if "e" in v[1 : v.index("i")] or v.endswith("e"):
                script_given = True
                skip = v.endswith("e")
        elif v.startswith("-") and v != "-":
            if re.fullmatch(r"-[a-zA-Z]*e", v):
                script_given = True
                skip = True
        else:
            operands.append(w)
    if not edits:
        return cwd, None
    files = operands if script_given else operands[1:]
    if not files:
        return cwd, None
    for w in files:
        sh.lose(w, cwd, f"edited in place by {tool}")
    return cwd, None
