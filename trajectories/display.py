"""How file contents are shown on a page: decoded, diffed, highlighted, laid out as a tree.

The one home of these helpers for every page that shows files (the replay stepper here, the review
desk's reference diff above), so both apply the same limits; and the caps on every field a page
shows (messages, tool arguments and outputs, trial logs, the opened file) with their "show more".
What they show comes from trajectories and is untrusted: the only markup marked safe is Pygments
output, which escapes every character of its input, and Django's `escape` of plain text. Nothing
shown may carry a secret: every text is redacted whole (`shown_text`, the one redactor of
`core/redact/`) before it is diffed, cut or sliced, so a secret across a slice's edge cannot
leak half by half; the stored bytes stay as they were.

>>> view = bytes_diff("a.py", "modified", b"x = 1\\n", b"x = 2\\n")
>>> (view.added, view.removed, "+x = 2" in view.html)
(1, 1, True)
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import BashLexer, DiffLexer, JsonLexer, TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from .core.redact import Redacted, redact, redact_data
from .core.replay import is_tree, tree_dir

MAX_DIFF_FILES = 20  # more changed files than this are listed, not diffed
MAX_DIFF_BYTES = 512 * 1024  # either side larger: described, not diffed
MAX_DIFF_LINES = 3000  # a longer diff is cut, saying how much was left out
MAX_DIFF_CHARS = 20_000  # and so is one of more characters (a few very long lines)
MAX_HIGHLIGHT_CHARS = 200_000  # beyond this, plain (still escaped) text: lexing would be slow
BINARY_SNIFF_BYTES = 8192  # a NUL byte among the first this many makes content binary
CACHED_REDACTION_CHARS = 8192  # texts this long keep their redaction for the next "show more"

TEXT = TextLexer(stripnl=False)
BASH = BashLexer(stripnl=False)
DIFF = DiffLexer(stripnl=False)
JSON = JsonLexer(stripnl=False)

_BLOCK = HtmlFormatter(cssclass="hl", wrapcode=True)
_NUMBERED = HtmlFormatter(cssclass="hl", wrapcode=True, linenos="inline")


# An ISO 8601 moment as a string (ATIF step timestamps, audit rows' JSON): date, then a time.
_ISO_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def moment(value: Any) -> Any:
    """A moment as people read it, to the second in the desk's time zone: ``2026-12-03
    13:40:12 UTC`` for a datetime or an ISO 8601 string (microseconds and offsets are machine
    detail); anything else comes back as it was."""
    if isinstance(value, str) and _ISO_MOMENT.match(value):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if not isinstance(value, datetime):
        return value
    if timezone.is_naive(value):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S %Z")


def highlighted(
    text: str, lexer: Lexer, *, numbered: bool = False, first_line: int = 1
) -> SafeString:
    if len(text) > MAX_HIGHLIGHT_CHARS:
        lexer = TEXT
    formatter = _NUMBERED if numbered else _BLOCK
    if numbered and first_line != 1:  # a later part of a file, numbered where it starts
        formatter = HtmlFormatter(
            cssclass="hl", wrapcode=True, linenos="inline", linenostart=first_line
        )
    # Pygments escapes the text it is given, so its output is the one HTML we vouch for.
    return mark_safe(highlight(text, lexer, formatter))


@lru_cache(maxsize=2048)
def lexer_for(path: str) -> Lexer:
    """Pygments' lexer for a file name (by name alone: guessing from content is slow and wrong
    on fragments); plain text when none claims it."""
    try:
        return get_lexer_for_filename(posixpath.basename(path) or path, stripnl=False)
    except ClassNotFound:
        return TEXT


def shown_text(text: str) -> Redacted[str]:
    """`text` as a page may show it: every secret replaced, counted by type.

    >>> shown_text("token ghp_" + "a1" * 18).value
    'token [REDACTED:github_token]'
    """
    if len(text) < CACHED_REDACTION_CHARS:
        return redact(text)
    return _redacted_long(text)


def shown_texts(texts: list[str]) -> list[str]:
    """Many short texts redacted in one pass (a list's labels).

    >>> shown_texts(["ok", "key AKIA" + "Q3EGRV7XMB2YH4NP"])
    ['ok', 'key [REDACTED:aws_access_key_id]']
    """
    return redact_data(texts).value


def shown_value(name: str, text: str) -> Redacted[str]:
    """A short named value (a tool argument): redacted whole when its name names a secret.

    >>> shown_value("password", "hunter22").value
    '[REDACTED:secret_assignment]'
    """
    safe = redact_data({name: text})
    return Redacted(safe.value[name], safe.counts)


# A "show more" rebuilds its page's fields and the stepper diffs the same files step after step:
# a long text is redacted once (about 7 MB/s) and then found by equality.
@lru_cache(maxsize=64)
def _redacted_long(text: str) -> Redacted[str]:
    return redact(text)


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
    redacted: int = 0  # secrets replaced in the two sides before diffing

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
    old_shown, new_shown = shown_text(old_text), shown_text(new_text)
    old_text, new_text = old_shown.value, new_shown.value
    lines = list(difflib.unified_diff(old_text.splitlines(True), new_text.splitlines(True)))
    if not lines:
        return DiffView(path, change, "Same content.")
    lines = lines[2:]  # the ---/+++ header: the path and its change are shown above the diff
    shown = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines[:MAX_DIFF_LINES]
    )
    if len(shown) > MAX_DIFF_CHARS:
        cut = shown.rfind("\n", 0, MAX_DIFF_CHARS) + 1 or MAX_DIFF_CHARS
        shown = shown[:cut] + f"… {len(shown) - cut} more characters of this diff not shown\n"
    if len(lines) > MAX_DIFF_LINES:
        shown += f"… {len(lines) - MAX_DIFF_LINES} more diff lines not shown\n"
    return DiffView(
        path,
        change,
        note,
        highlighted(shown, DIFF),
        added=sum(1 for x in lines if x.startswith("+")),
        removed=sum(1 for x in lines if x.startswith("-")),
        redacted=old_shown.total + new_shown.total,
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


# -- caps: every page stays small whatever the trajectory holds ------------------------------------

FIELD_CHARS = 10_000  # characters of one field a page shows before "show more"
FILE_CHARS = 100_000  # characters of the one file a page opens, cut at a line's end
MORE_CHARS = 50_000  # characters one "show more" answer adds
# Highlighting can make one character into ~25 bytes of HTML (a span per token, line numbers),
# so what a page may hold is counted in HTML: a part over its share is halved until it fits.
PAGE_HTML = 400_000  # bytes of HTML all the capped fields of one page make together
FILE_HTML = 400_000  # and the one opened file, on its own
MORE_HTML = 400_000  # and one "show more" answer
LIST_ITEMS = 50  # items of one list (a step's tool calls, a JSON array or object) shown
TREE_ROWS = 500  # rows of a file tree shown (a row is a name, not a field: many fit a page)
JSON_DEPTH = 8  # levels of nested JSON shown; deeper values are collapsed to a count


@dataclass(frozen=True)
class Capped:
    """The shown part of one field as HTML, and what a "show more" needs to fetch the rest: the
    field's key on its page and where the shown part ends (in the redacted field)."""

    html: SafeString
    key: str
    end: int  # characters of the field shown so far
    total: int
    redacted: int = 0  # secrets replaced in the whole field, said with its first part only

    @property
    def rest(self) -> int:
        return self.total - self.end


def _part(text: str, lexer: Lexer | None, start: int, end: int, numbered: bool) -> SafeString:
    if end == start and text:
        return mark_safe("")
    if lexer is None:
        return escape(text[start:end])
    first_line = text.count("\n", 0, start) + 1
    return highlighted(text[start:end], lexer, numbered=numbered, first_line=first_line)


def capped(
    text: str,
    lexer: Lexer | None,
    *,
    key: str = "",
    start: int = 0,
    chars: int = FIELD_CHARS,
    html_bytes: int | None = None,
    numbered: bool = False,
) -> Capped:
    """`chars` characters of redacted `text` from `start`, highlighted (escaped alone for no
    lexer), in `html_bytes` of HTML at most; `numbered`: whole lines with their numbers in the
    text (a line longer than `chars` is cut).

    >>> part = capped("x" * 25_000, TEXT, key="out")
    >>> (part.end, part.rest)
    (10000, 15000)
    >>> capped("<" * 100, None, html_bytes=100).end
    25
    """
    shown = shown_text(text)
    text = shown.value
    start = max(0, min(start, len(text)))

    def line_end(end: int) -> int:
        if numbered and end < len(text):
            return text.rfind("\n", start, end) + 1 or end
        return end

    end = line_end(min(len(text), start + max(chars, 0)))
    html = _part(text, lexer, start, end, numbered)
    while html_bytes is not None and len(html) > html_bytes and end > start:
        end = line_end(start + (end - start) // 2)
        html = _part(text, lexer, start, end, numbered)
    return Capped(html, key, end, len(text), shown.total if start == 0 else 0)


class Fields:
    """The capped fields of one page under one budget of HTML, each remembered by its key so a
    "show more" can build the page's fields again and answer the next slice of one.

    >>> fields = Fields(budget=12_000)
    >>> [fields.add(k, "y" * 8_000, None).end for k in ("a", "b", "c")]
    [8000, 4000, 0]
    >>> fields.more("b", 4_000).end
    8000
    """

    def __init__(self, budget: int = PAGE_HTML) -> None:
        self.left = budget
        self.texts: dict[str, tuple[str, Lexer | None, bool]] = {}

    def add(
        self,
        key: str,
        text: str,
        lexer: Lexer | None,
        *,
        chars: int = FIELD_CHARS,
        numbered: bool = False,
    ) -> Capped:
        self.texts[key] = (text, lexer, numbered)
        limit = chars if self.left > 0 else 0
        part = capped(
            text, lexer, key=key, chars=limit, html_bytes=max(self.left, 0), numbered=numbered
        )
        self.left -= len(part.html)
        return part

    def more(self, key: str, start: int) -> Capped | None:
        """The slice of field `key` after `start` (MORE_CHARS at most); None for no such field."""
        if key not in self.texts:
            return None
        text, lexer, numbered = self.texts[key]
        return capped(
            text,
            lexer,
            key=key,
            start=start,
            chars=MORE_CHARS,
            html_bytes=MORE_HTML,
            numbered=numbered,
        )


@dataclass(frozen=True)
class Slice[T]:
    """Items ``start`` to ``end`` of a capped list of ``total``, and where its "show more"
    starts (``end``) when some remain."""

    items: list[T]
    start: int
    end: int
    total: int

    @property
    def rest(self) -> int:
        return self.total - self.end


def sliced[T](items: Sequence[T], *, start: int = 0, count: int = LIST_ITEMS) -> Slice[T]:
    """``count`` items of ``items`` from ``start``: what a page (or its "show more") lists.

    >>> part = sliced(range(120), start=50)
    >>> (part.start, part.end, part.rest)
    (50, 100, 20)
    """
    start = max(0, min(start, len(items)))
    shown = list(items[start : start + max(count, 0)])
    return Slice(shown, start, start + len(shown), len(items))


def collapsed(value: Any, *, depth: int = JSON_DEPTH, items: int = LIST_ITEMS) -> Any:
    """JSON cut for showing: LIST_ITEMS items of each array and object, the rest counted in a
    marker, and anything nested deeper than `depth` collapsed to a count of its items. Pretty-
    printing deep nesting is what makes pages huge: each level indents every line below it.

    >>> collapsed([[[1, 2]]], depth=2)
    [['[… 2 items]']]
    >>> collapsed(list(range(5)), items=2)
    [0, 1, '… 3 more items']
    """
    if isinstance(value, list):
        if depth <= 0:
            return f"[… {len(value)} item{'s' if len(value) != 1 else ''}]"
        shown = [collapsed(v, depth=depth - 1, items=items) for v in value[:items]]
        if len(value) > items:
            shown.append(f"… {len(value) - items} more items")
        return shown
    if isinstance(value, dict):
        if depth <= 0:
            return f"{{… {len(value)} key{'s' if len(value) != 1 else ''}}}"
        pairs = list(value.items())
        out = {str(k): collapsed(v, depth=depth - 1, items=items) for k, v in pairs[:items]}
        if len(pairs) > items:
            out["…"] = f"{len(pairs) - items} more keys"
        return out
    return value
