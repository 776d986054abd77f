"""Applying patches to known file contents: Codex's apply_patch envelope and unified diffs.

Codex's format (``*** Begin Patch`` / ``*** Update File:`` / ``@@ anchor``) is not a unified
diff: hunks carry no line numbers and are located by searching for their context, with
whitespace- and punctuation-tolerant fallbacks. No Python library reads it, and unidiff would
reject it, so parsing and application are written here after Codex's own apply-patch crate
(codex-rs/apply-patch: parser.rs, seek_sequence.rs, lib.rs), whose behaviour they mirror: the
same leniencies, the same "file always ends with a newline" result.

Unified diffs (``git apply``, ``patch``) are parsed with unidiff; Claude Code's
``structuredPatch`` is the same hunk shape as JSON. Both go through ``apply_hunks``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError


class PatchError(ValueError):
    """The patch is malformed or does not apply to the content we know."""


# -- Codex apply_patch -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Chunk:
    context: str | None
    old: tuple[str, ...]
    new: tuple[str, ...]
    end_of_file: bool = False


@dataclass(frozen=True, slots=True)
class FileOp:
    kind: str  # "add" | "delete" | "update"
    path: str
    content: str = ""  # for "add"
    move_to: str | None = None
    chunks: tuple[Chunk, ...] = field(default_factory=tuple)


_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_ADD, _DELETE, _UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
_MOVE, _EOF = "*** Move to: ", "*** End of File"


def parse_codex_patch(text: str) -> list[FileOp]:
    lines = text.strip().splitlines()
    # Lenient mode: the patch may arrive wrapped in a heredoc (`<<'EOF'` … `EOF`).
    if lines and lines[0].strip() in ("<<EOF", "<<'EOF'", '<<"EOF"') and lines[-1].endswith("EOF"):
        lines = lines[1:-1]
    if not lines or lines[0].strip() != _BEGIN:
        raise PatchError("the first line of the patch must be '*** Begin Patch'")
    if lines[-1].strip() != _END:
        raise PatchError("the last line of the patch must be '*** End Patch'")
    body = lines[1:-1]
    ops: list[FileOp] = []
    i = 0
    while i < len(body):
        header = body[i].strip()
        i += 1
        if header.startswith(_ADD):
            added: list[str] = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:] + "\n")
                i += 1
            ops.append(FileOp("add", header[len(_ADD) :], content="".join(added)))
        elif header.startswith(_DELETE):
            ops.append(FileOp("delete", header[len(_DELETE) :]))
        elif header.startswith(_UPDATE):
            move_to = None
            if i < len(body) and body[i].startswith(_MOVE):
                move_to = body[i][len(_MOVE) :]
                i += 1
            chunks: list[Chunk] = []
            while i < len(body):
                if not body[i].strip():
                    i += 1
                    continue
                if body[i].startswith("*"):
                    break
                chunk, i = _parse_chunk(body, i, first=not chunks)
                chunks.append(chunk)
            if not chunks:
                raise PatchError(f"update of {header[len(_UPDATE) :]!r} has no hunks")
            ops.append(
                FileOp("update", header[len(_UPDATE) :], move_to=move_to, chunks=tuple(chunks))
            )
        else:
            raise PatchError(f"{header!r} is not a valid hunk header")
    return ops


def _parse_chunk(lines: Sequence[str], i: int, *, first: bool) -> tuple[Chunk, int]:
    context: str | None = None
    if lines[i] == "@@":
        i += 1
    elif lines[i].startswith("@@ "):
        context = lines[i][3:]
        i += 1
    elif not first:
        raise PatchError(f"expected an @@ hunk header, got {lines[i]!r}")
    old: list[str] = []
    new: list[str] = []
    end_of_file = False
    parsed = 0
    while i < len(lines):
        line = lines[i]
        if line == _EOF:
            if parsed == 0:
                raise PatchError("hunk has no lines")
            end_of_file = True
            i += 1
            break
        if line == "":
            old.append("")
            new.append("")
        elif line[0] == " ":
            old.append(line[1:])
            new.append(line[1:])
        elif line[0] == "+":
            new.append(line[1:])
        elif line[0] == "-":
            old.append(line[1:])
        else:
            if parsed == 0:
                raise PatchError(f"unexpected line in hunk: {line!r}")
            break  # the next hunk starts here
        parsed += 1
        i += 1
    if parsed == 0:
        raise PatchError("hunk has no lines")
    return Chunk(context, tuple(old), tuple(new), end_of_file), i


_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def _seek(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> int | None:
    """Codex's seek_sequence: exact, then rstrip, then strip, then punctuation-normalised."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    first = len(lines) - len(pattern) if eof else start
    last = len(lines) - len(pattern)
    normalisers = (
        lambda s: s,
        str.rstrip,
        str.strip,
        lambda s: s.strip().translate(_PUNCTUATION),
    )
    for norm in normalisers:
        wanted = [norm(p) for p in pattern]
        for i in range(first, last + 1):
            if all(norm(lines[i + j]) == wanted[j] for j in range(len(pattern))):
                return i
    return None


def apply_codex_chunks(content: str, chunks: Sequence[Chunk]) -> str:
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, Sequence[str]]] = []
    index = 0
    for chunk in chunks:
        if chunk.context is not None:
            found = _seek(lines, [chunk.context], index, False)
            if found is None:
                raise PatchError(f"context {chunk.context!r} not found")
            index = found + 1
        if not chunk.old:
            at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((at, 0, chunk.new))
            continue
        old, new = list(chunk.old), list(chunk.new)
        found = _seek(lines, old, index, chunk.end_of_file)
        if found is None and old and old[-1] == "":
            old = old[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            found = _seek(lines, old, index, chunk.end_of_file)
        if found is None:
            raise PatchError(f"hunk lines {list(chunk.old)[:3]!r}… not found")
        replacements.append((found, len(old), new))
        index = found + len(old)
    for start, length, new_lines in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[start : start + length] = list(new_lines)
    if not lines or lines[-1] != "":
        lines.append("")
    return "\n".join(lines)


# -- unified hunks -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int  # 1-based, as in "@@ -old_start,len"
    lines: tuple[tuple[str, str], ...]  # (" " | "-" | "+", text without newline)


def hunks_from_structured_patch(patch: object) -> list[Hunk]:
    """Claude Code's toolUseResult.structuredPatch → hunks; PatchError when malformed."""
    if not isinstance(patch, list):
        raise PatchError("structuredPatch is not a list")
    hunks = []
    for raw in patch:
        if not isinstance(raw, dict) or not isinstance(raw.get("lines"), list):
            raise PatchError("malformed structuredPatch hunk")
        lines = []
        for line in raw["lines"]:
            if not isinstance(line, str) or not line or line[0] not in " -+\\":
                raise PatchError(f"malformed structuredPatch line {line!r}")
            if line[0] != "\\":  # "\ No newline at end of file"
                lines.append((line[0], line[1:]))
        hunks.append(Hunk(int(raw.get("oldStart", 1)), tuple(lines)))
    return hunks


def apply_hunks(content: str, hunks: Sequence[Hunk]) -> str:
    """Apply unified hunks; each must match exactly, near its stated line like `patch` does."""
    lines = content.split("\n")
    offset = 0
    for hunk in hunks:
        old = [text for tag, text in hunk.lines if tag != "+"]
        new = [text for tag, text in hunk.lines if tag != "-"]
        guess = max(hunk.old_start - 1 + offset, 0) if old else max(hunk.old_start + offset, 0)
        at = _nearest(lines, old, guess)
        if at is None:
            raise PatchError(f"hunk at line {hunk.old_start} does not match")
        lines[at : at + len(old)] = new
        offset += len(new) - len(old)
    return "\n".join(lines)


def _nearest(lines: list[str], old: list[str], guess: int) -> int | None:
    if not old:
        return min(guess, len(lines))
    best: int | None = None
    for i in range(len(lines) - len(old) + 1):
        if lines[i : i + len(old)] == old and (best is None or abs(i - guess) < abs(best - guess)):
            best = i
    return best


@dataclass(frozen=True, slots=True)
class UnifiedFile:
    source: str | None  # path before, None for an added file
    target: str | None  # path after, None for a removed file
    hunks: tuple[Hunk, ...]
    added_content: str | None = None


def parse_unified(text: str, strip: int = 1) -> list[UnifiedFile]:
    try:
        patch = PatchSet(text)
    except UnidiffParseError as error:
        raise PatchError(str(error)) from error
    if not len(patch):
        raise PatchError("no files in patch")
    files = []
    for patched in patch:
        hunks = tuple(
            Hunk(
                h.source_start,
                tuple(
                    (line.line_type, line.value.rstrip("\n"))
                    for line in h
                    if line.line_type in " -+"
                ),
            )
            for h in patched
        )
        source = None if patched.is_added_file else _strip(patched.source_file, strip)
        target = None if patched.is_removed_file else _strip(patched.target_file, strip)
        added = None
        if patched.is_added_file:
            added = "".join(line.value for h in patched for line in h if line.line_type == "+")
        files.append(UnifiedFile(source, target, hunks, added))
    return files


def hunks_from_diff_body(diff: str) -> list[Hunk]:
    """Hunks of a unified diff given without file headers (Codex's patch_apply_end)."""
    files = parse_unified("--- a/file\n+++ b/file\n" + diff)
    return list(files[0].hunks)


def _strip(path: str, strip: int) -> str:
    parts = path.split("/")
    return "/".join(parts[strip:]) if len(parts) > strip else parts[-1]
