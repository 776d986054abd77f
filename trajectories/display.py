"""How file contents are shown on a page: decoded, diffed, highlighted, laid out as a tree.

The one home of these helpers for every page that shows files (the replay stepper here, the review
desk's reference diff above), so both apply the same limits. What they show comes from
trajectories and is untrusted: the only markup marked safe is Pygments output, which escapes every
character of its input.

>>> view = bytes_diff("a.py", "modified", b"x = 1\\n", b"x = 2\\n")
>>> (view.added, view.removed, "+x = 2" in view.html)
(1, 1, True)
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import BashLexer, DiffLexer, JsonLexer, TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from .core.replay import is_tree, tree_dir

MAX_DIFF_FILES = 20  # more changed files than this are listed, not diffed
MAX_DIFF_BYTES = 512 * 1024  # either side larger: described, not diffed
MAX_DIFF_LINES = 3000  # a longer diff is cut, saying how much was left out
MAX_HIGHLIGHT_CHARS = 200_000  # beyond this, plain (still escaped) text: lexing would be slow
BINARY_SNIFF_BYTES = 8192  # a NUL byte among the first this many makes content binary

TEXT = TextLexer(stripnl=False)
BASH = BashLexer(stripnl=False)
DIFF = DiffLexer(stripnl=False)
JSON = JsonLexer(stripnl=False)

_BLOCK = HtmlFormatter(cssclass="hl", wrapcode=True)
_NUMBERED = HtmlFormatter(cssclass="hl", wrapcode=True, linenos="inline")


def highlighted(text: str, lexer: Lexer, *, numbered: bool = False) -> SafeString:
    if len(text) > MAX_HIGHLIGHT_CHARS:
        lexer = TEXT
    # Pygments escapes the text it is given, so its output is the one HTML we vouch for.
    return mark_safe(highlight(text, lexer, _NUMBERED if numbered else _BLOCK))


@lru_cache(maxsize=2048)
def lexer_for(path: str) -> Lexer:
    """Pygments' lexer for a file name (by name alone: guessing from content is slow and wrong
    on fragments); plain text when none claims it."""
    try:
        return get_lexer_for_filename(posixpath.basename(path) or path, stripnl=False)
    except ClassNotFound:
        return TEXT


def decoded(data: bytes) -> str | None:
    """Text, or None for binary content (a NUL byte near the start, or not UTF-8)."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -- diffs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffView:
    """One changed path: a highlighted unified diff with its line counts, or a note saying why
    there is none."""

    path: str
    change: str  # added | modified | deleted, and the replay's lost | partial | recovered | ...
    note: str = ""
    html: SafeString | None = None
    added: int = 0
    removed: int = 0

    @property
    def label(self) -> str:
        """The path as a tree shows it ("./**" for the root's uncertainty marker)."""
        return f"{tree_dir(self.path) or '.'}/**" if is_tree(self.path) else self.path


def bytes_diff(
    path: str, change: str, old: bytes | None, new: bytes | None, *, note: str = ""
) -> DiffView:
    """difflib's unified diff of two contents (b"" for a side that does not exist, None for a
    side whose content is missing), highlighted. Past the limits, for binary content or equal
    texts, a note instead; `note` is said above a diff that could be shown."""
    if old is None or new is None:
        return DiffView(path, change, "The stored content is missing from the blob store.")
    if max(len(old), len(new)) > MAX_DIFF_BYTES:
        return DiffView(path, change, f"Too large to diff ({len(old)} → {len(new)} bytes).")
    old_text, new_text = decoded(old), decoded(new)
    if old_text is None or new_text is None:
        return DiffView(path, change, f"Binary file ({len(old)} → {len(new)} bytes).")
    lines = list(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True)))
    if not lines:
        return DiffView(path, change, "Same content.")
    lines = lines[2:]  # the ---/+++ header: the path and its change are shown above the diff
    shown = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines[:MAX_DIFF_LINES]
    )
    if len(lines) > MAX_DIFF_LINES:
        shown += f"… {len(lines) - MAX_DIFF_LINES} more diff lines not shown\n"
    return DiffView(
        path,
        change,
        note,
        highlighted(shown, DIFF),
        added=sum(1 for x in lines if x.startswith("+")),
        removed=sum(1 for x in lines if x.startswith("-")),
    )


# -- file trees ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeNode:
    """A directory or a file in an indented tree; each page adds what it marks on it."""

    name: str
    path: str
    depth: int
    is_dir: bool


_DIGITS = re.compile(r"(\d+)")


def _natural(name: str) -> tuple[str | int, ...]:
    """mod_2 before mod_10, as a person sorts file names."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in _DIGITS.split(name))


def tree_order(path: str) -> tuple[tuple[int, tuple[str | int, ...], str], ...]:
    """Directories before files at every level; a tree marker (`dir/**`) first inside its
    directory. The name itself breaks ties ("A" and "a"), so each directory's entries stay
    together."""
    *dirs, name = path.split("/")
    rank = -1 if name == "**" else 1
    return (*((0, _natural(d), d) for d in dirs), (rank, _natural(name), name))


def tree_nodes(paths: Iterable[str]) -> list[TreeNode]:
    """File paths as an indented tree: each directory once, before what it holds."""
    nodes: list[TreeNode] = []
    open_dirs: list[str] = []
    for path in sorted(paths, key=tree_order):
        *dirs, name = path.split("/")
        depth = 0
        while depth < min(len(open_dirs), len(dirs)) and open_dirs[depth] == dirs[depth]:
            depth += 1
        del open_dirs[depth:]
        for d in dirs[depth:]:
            nodes.append(TreeNode(d, "/".join([*open_dirs, d]), len(open_dirs), True))
            open_dirs.append(d)
        nodes.append(TreeNode(name, path, len(dirs), False))
    return nodes
