"""Archives: extracting makes the target directory uncertain, creating loses the archive file.

The archive's members are not in the trajectory, so an extraction (``tar -x``, ``unzip``) may have
overwritten anything below where it extracted; listings (``tar -t``, ``unzip -l``) change nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .model import LostTree
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell


@handles("tar")
def tar(sh: Shell, call: Call) -> Handled:
    words, cwd = call.words, call.cwd
    values = call.args[1:]
    mode = values[0] if values else ""
    where = cwd
    for i, v in enumerate(values):
        if v in ("-C", "--directory") and i + 1 < len(values):
            where = sh.path(words[i + 2], cwd)
    if re.match(r"^-?[a-zA-Z]*x", mode) or "--extract" in values or "-x" in values:
        sh.emit(LostTree(where, "archive extracted", rewrites=True))
    elif re.match(r"^-?[a-zA-Z]*[cru]", mode) or "--create" in values:
        for i, v in enumerate(values):
            if (v == "-f" or v == "--file") and i + 1 < len(values):
                sh.lose(words[i + 2], cwd, "archive written")
            elif re.match(r"^-?[a-zA-Z]*f$", v) and i + 1 < len(values):
                sh.lose(words[i + 2], cwd, "archive written")
    return cwd, None


@handles("unzip")
def unzip(sh: Shell, call: Call) -> Handled:
    values = call.args[1:]
    if "-l" in values or "-t" in values:
        return call.cwd, None
    where = call.cwd
    if "-d" in values and values.index("-d") + 1 < len(values):
        where = sh.path(call.words[values.index("-d") + 2], call.cwd)
    sh.emit(LostTree(where, "archive extracted", rewrites=True))
    return call.cwd, None
