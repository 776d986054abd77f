"""Downloads: ``curl -o``/``-O`` and ``wget`` write files whose content the replay never sees.

``curl`` prints to standard output unless told otherwise; ``wget`` saves under the URL's last
path segment (``index.html`` for a bare host) unless ``-O`` names the file or ``-`` the terminal.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from .model import LostTree, Write
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell


@handles("curl")
def curl(sh: Shell, call: Call) -> Handled:
    words, cwd = call.words, call.cwd
    values = call.args
    for i, v in enumerate(values):
        if v in ("-o", "--output") and i + 1 < len(words):
            if values[i + 1] != "-":
                sh.lose(words[i + 1], cwd, "downloaded by curl")
        elif v in ("-O", "--remote-name") or (
            v.startswith("-") and not v.startswith("--") and "O" in v
        ):
            name = _remote_name(values)
            target = sh.files.absolute(name, cwd) if name else None
            if target:
                sh.emit(Write(target, None, reason="downloaded by curl"))
            else:
                sh.emit(LostTree(cwd, "curl -O"))
    return cwd, None


@handles("wget")
def wget(sh: Shell, call: Call) -> Handled:
    words, cwd = call.words, call.cwd
    values = call.args
    for i, v in enumerate(values):
        if v in ("-O", "--output-document") and i + 1 < len(words):
            if values[i + 1] != "-":
                sh.lose(words[i + 1], cwd, "downloaded by wget")
            return cwd, None
        if v.startswith("-qO") or v == "-qO-":
            return cwd, None
    target = sh.files.absolute(_remote_name(values) or "index.html", cwd)
    if target:
        sh.emit(Write(target, None, reason="downloaded by wget"))
    return cwd, None


def _remote_name(values: list[str]) -> str:
    """The file name the first URL's path ends in ("" for none): what -O and wget save as."""
    url = next((u for u in values if "://" in u), "")
    return posixpath.basename(urlparse(url).path)
