"""Private keys as logs carry them: PEM, OpenSSH and PGP blocks and PuTTY key files, whole, quoted,
commented, numbered by a file viewer, JSON-escaped or cut at either end; and the line breaks such
text has."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .rule import Rule

_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END_MARK = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# A line of a key's body: a file viewer's line-number gutter (Claude Code's Read tool, also
# JSON-escaped), quote, comment and string decoration, at most one base64 run, and the string
# decoration that may follow it (`"...\n",`, `'...' +`).
_KEY_DECOR = r"[ \t>#/*;|\"'+\\,]*"
_LINE_START = r"[ \t]*(?:\d{1,7}(?:\u2192|\\u2192|\t|\\t))?" + _KEY_DECOR
_KEY_LINE = re.compile(_LINE_START + r"(?:(?P<run>[A-Za-z0-9+/=]{1,1024})[ \t\"',+\\;)]*)?")
_KEY_HEADER = re.compile(_KEY_DECOR + r"[A-Za-z][A-Za-z\-]{1,30}:[ \t][^\r\n]{0,256}")
_KEY_END = re.compile(_KEY_DECOR + r"(?P<run>[A-Za-z0-9+/=]{0,1024})" + _KEY_END_MARK.pattern)
# A body pasted on one line with its breaks turned into spaces: a first chunk longer than any
# word (prose after a marker is not a key), then the line-long chunks. Base64 reads the same
# backwards, so the tail before an END marker is matched on the reversed line.
_KEY_INLINE = re.compile(r"[ \t]?[A-Za-z0-9+/=]{32,1024}+(?:[ \t][A-Za-z0-9+/=]{16,1024}+){0,64}+")
_KEY_INLINE_TAIL = re.compile(
    r"[ \t]?(?:[A-Za-z0-9+/=]{1,1024}+[ \t])?[A-Za-z0-9+/=]{32,1024}+"
    r"(?:[ \t][A-Za-z0-9+/=]{16,1024}+){0,64}+"
)
LINE_MAX = 1100  # longer lines are not a key's (real ones are 64 or 70 characters)
_KEY_REACH = 32_768  # a walk stops this far from its marker (an 8192-bit RSA key is 6.5 KB)
_KEY_MIN_BODY = 32  # fewer base64 characters is code naming the markers, not a key


def _key_after_begin(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
    """From a BEGIN marker over the body to its END marker, or to the last body line when the
    block was cut before its end."""
    pos, limit = m.end(), min(len(text), m.end() + _KEY_REACH)
    body, last, in_headers = 0, m.end(), True
    while True:
        brk = next_break(text, pos, limit)
        stop = brk[0] if brk else min(limit, pos + LINE_MAX)
        end = _KEY_END.match(text, pos, stop)
        if end is not None:
            body += len(end.group("run"))
            return [(m.start(), end.end())] if body >= _KEY_MIN_BODY else []
        line = _KEY_LINE.fullmatch(text, pos, stop)
        if line is not None and line.group("run"):
            body += len(line.group("run"))
            last, in_headers = line.end("run"), False
        elif line is None:
            inline = _KEY_INLINE.match(text, pos) if pos == m.end() else None
            if inline is not None:
                return [(m.start(), inline.end())]
            if not (in_headers and _KEY_HEADER.fullmatch(text, pos, stop)):
                break  # Proc-Type:, DEK-Info:, Version: come before the body
        if brk is None:
            break
        pos = brk[1]
    return [(m.start(), last)] if body >= _KEY_MIN_BODY else []


# Line breaks are real or escaped (a key inside a JSON string), and found with str.find: a
# regex alternation of them would step through every character of a long line. Both searches
# look one line's length at most, so walking over many short lines stays linear.


def next_break(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """The span of the first line break in text[lo:hi]."""
    hi = min(hi, lo + LINE_MAX)
    found = [i for i in (text.find(c, lo, hi) for c in ("\n", "\r", "\\n")) if i >= 0]
    if not found:
        return None
    i = min(found)
    if text.startswith("\r\n", i):
        return (i, i + 2)
    if text.startswith("\\n", i):
        return (i - 2 if i - 2 >= lo and text.startswith("\\r", i - 2) else i, i + 2)
    return (i, i + 1)


def previous_break(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """The span of the last line break in text[lo:hi]."""
    lo = max(lo, hi - LINE_MAX)
    end = max(text.rfind("\n", lo, hi) + 1, text.rfind("\r", lo, hi) + 1)
    escaped = text.rfind("\\n", lo, hi)
    if escaped >= 0 and escaped + 2 > end:
        first = (
            escaped - 2 if escaped - 2 >= lo and text.startswith("\\r", escaped - 2) else escaped
        )
        return (first, escaped + 2)
    if end == 0:
        return None
    first = end - 2 if end - 2 >= lo and text.startswith("\r\n", end - 2) else end - 1
    return (first, end)


def _key_before_end(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
    """From an END marker back over the body before it: the tail of a block whose head was cut
    off (a whole block is the forward walk's finding too, and the two merge)."""
    lo = max(0, m.start() - _KEY_REACH)
    hi, start, body = m.start(), -1, 0
    while True:
        brk = previous_break(text, lo, hi)
        if brk is None and (lo > 0 or hi - lo > LINE_MAX):
            break  # a line longer than any key's, or the walk's reach
        line_start = brk[1] if brk else lo
        line = _KEY_LINE.fullmatch(text, line_start, hi)
        if line is None:
            if hi == m.start():  # the END marker's own line: a body pasted on one line?
                tail = _KEY_INLINE_TAIL.match(text[line_start:hi][::-1])
                if tail is not None:
                    return [(hi - tail.end(), m.end())]
            break
        if line.group("run"):
            body += len(line.group("run"))
            start = line.start("run")
        if brk is None:
            break
        hi = brk[0]
    return [(start, m.end())] if body >= _KEY_MIN_BODY else []


# PuTTY's key files (.ppk): a first line naming the format, `Name: value` headers, the base64
# lines that `Public-Lines: N` and `Private-Lines: N` announce, and the MAC. The file goes whole,
# as a PEM block does, from its first line to its MAC (or to its last private line when it was
# cut); a file cut before its private lines holds nothing secret and stays.
_PUTTY_BEGIN = re.compile(r"PuTTY-User-Key-File-[1-9]:[ \t]")
_PUTTY_HEADER = re.compile(
    _LINE_START + r"(?P<name>[A-Za-z][A-Za-z0-9\-]{1,30}):[ \t][^\r\n]{0,256}"
)
_PUTTY_MAC = re.compile(_LINE_START + r"Private-(?:MAC|Hash):[ \t](?P<mac>[0-9a-fA-F]{16,128})")


def _putty_file(text: str, m: re.Match[str]) -> Sequence[tuple[int, int]]:
    """From a PuTTY key file's first line over its headers and lines to its MAC."""
    limit = min(len(text), m.end() + _KEY_REACH)
    private, last, in_private = 0, m.end(), False
    brk = next_break(text, m.end(), limit)  # the rest of the first line is the key's algorithm
    while brk is not None:
        pos = brk[1]
        brk = next_break(text, pos, limit)
        stop = brk[0] if brk else min(limit, pos + LINE_MAX)
        mac = _PUTTY_MAC.match(text, pos, stop)
        if mac is not None:
            return [(m.start(), mac.end("mac"))] if private >= _KEY_MIN_BODY else []
        header = _PUTTY_HEADER.fullmatch(text, pos, stop)
        if header is not None:
            if private or header.group("name").startswith("PuTTY-User-Key-File-"):
                # After the private lines only the MAC belongs to the key; a first line is the
                # next file's (and stopping there keeps walks over many markers linear).
                break
            in_private = header.group("name") == "Private-Lines"
            continue
        line = _KEY_LINE.fullmatch(text, pos, stop)
        if line is None:
            break
        if in_private and line.group("run"):
            private += len(line.group("run"))
            last = line.end("run")
    return [(m.start(), last)] if private >= _KEY_MIN_BODY else []


def rules() -> list[Rule]:
    """A private-key block, from its markers; a PuTTY key file, from its first line."""
    return [
        # A whole PEM / OpenSSH / PGP block with its headers, on one line or several; escaped
        # newlines (a key inside a JSON string) count as newlines.
        Rule(
            "private_key",
            re.compile(
                r"-----BEGIN ([A-Z0-9 ]{0,40})PRIVATE KEY((?: BLOCK)?)-----"
                r"(?:(?!-----)[A-Za-z0-9+/=\s\\:,.\-]){16,16384}-----END \1PRIVATE KEY\2-----"
            ),
        ),
        # The same block as logs carry it: each line quoted (`> `), commented, numbered by a
        # file viewer or wrapped in string quotes, or cut short at either end by a tool that
        # keeps the head and tail of long text. Walked line by line from either marker.
        Rule("private_key", _KEY_BEGIN, widen=_key_after_begin),
        Rule("private_key", _KEY_END_MARK, widen=_key_before_end),
        Rule("private_key", _PUTTY_BEGIN, widen=_putty_file),
    ]
