"""Coreutils and findutils: the programs whose file effects are certain or plainly named.

``echo``, ``printf`` and ``cat`` produce output the walk can carry into a redirect or a pipe;
``tee``, ``rm``, ``mv``, ``cp``, ``mkdir`` and ``touch`` change named files with certainty.
``ln``, ``dd`` and ``truncate`` lose their targets; ``find -delete``/``-exec`` and ``xargs``
act on paths that are not in the command line, so their directories become uncertain.
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import TYPE_CHECKING

from .. import checks
from ..programs import basename, unwrap
from ..shell import Word
from .model import Copy, LostTree, MakeDir, Move, Touch, Write
from .registry import READ_ONLY, Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell


@handles("echo")
def echo(sh: Shell, call: Call) -> Handled:
    cwd = call.cwd
    operands = call.words[1:]
    newline = True
    while operands and re.fullmatch(r"-[neE]+", operands[0].value):
        if "e" in operands[0].value:
            return cwd, None  # escape interpretation differs between shells
        newline = "n" not in operands[0].value and newline
        operands = operands[1:]
    if not all(w.literal for w in operands):
        return cwd, None
    text = " ".join(w.value for w in operands)
    if "\\" in text:
        return cwd, None  # zsh and dash echo interpret backslashes, bash does not
    return cwd, text + ("\n" if newline else "")


@handles("printf")
def printf(sh: Shell, call: Call) -> Handled:
    operands = call.words[1:]
    if operands and operands[0].value == "--":
        operands = operands[1:]
    if not operands or not all(w.literal for w in operands) or operands[0].value == "-v":
        return call.cwd, None
    return call.cwd, _printf(operands[0].value, [w.value for w in operands[1:]])


_PRINTF_ESCAPES = dict(zip("nt\\\"'rabfv", "\n\t\\\"'\r\a\b\f\v", strict=True))


def _printf(fmt: str, args: list[str]) -> str | None:
    """printf with %s, %d, %% and the common backslash escapes; None for anything else."""
    pieces: list[tuple[str, str]] = []  # ("lit", text) | ("spec", "s"/"d")
    i = 0
    literal: list[str] = []
    while i < len(fmt):
        c = fmt[i]
        if c == "\\" and i + 1 < len(fmt):
            escaped = _PRINTF_ESCAPES.get(fmt[i + 1])
            if escaped is None:
                return None
            literal.append(escaped)
            i += 2
        elif c == "%" and i + 1 < len(fmt):
            if fmt[i + 1] == "%":
                literal.append("%")
            elif fmt[i + 1] in "sd":
                pieces.append(("lit", "".join(literal)))
                literal = []
                pieces.append(("spec", fmt[i + 1]))
            else:
                return None
            i += 2
        else:
            literal.append(c)
            i += 1
    pieces.append(("lit", "".join(literal)))
    specs = sum(1 for kind, _ in pieces if kind == "spec")
    if specs == 0:
        return "".join(text for _, text in pieces)
    out: list[str] = []
    queue = list(args)
    while True:  # the format is reused until the arguments run out, at least once
        for kind, text in pieces:
            if kind == "lit":
                out.append(text)
                continue
            value = queue.pop(0) if queue else ""
            if text == "d":
                if value == "":
                    value = "0"
                if not re.fullmatch(r"[+-]?\d+", value):
                    return None
                value = str(int(value))
            out.append(value)
        if not queue:
            return "".join(out)


@handles("cat")
def cat(sh: Shell, call: Call) -> Handled:
    cwd, stdin = call.cwd, call.stdin
    operands = call.words[1:]
    if any(w.value.startswith("-") and w.value != "-" for w in operands):
        return cwd, None  # -n, -A … change the output
    if not operands:
        return cwd, stdin
    parts = []
    for w in operands:
        if w.value == "-":
            parts.append(stdin)
            continue
        path = sh.path(w, cwd)
        parts.append(sh.files.text(path) if path else None)
    if any(p is None for p in parts):
        return cwd, None
    return cwd, "".join(p for p in parts if p is not None)


@handles("tee")
def tee(sh: Shell, call: Call) -> Handled:
    operands = [w for w in call.words[1:] if not w.value.startswith("-")]
    append = any(w.value in ("-a", "--append") for w in call.words[1:])
    for w in operands:
        path = sh.path(w, call.cwd)
        if path is None:
            sh.unknown_target(w, call.cwd, "tee to an unknown path")
        elif not path.startswith("/dev/"):
            sh.emit(Write(path, call.stdin, append=append, reason="tee"))
    return call.cwd, call.stdin


@handles("rm", "unlink")
def rm(sh: Shell, call: Call) -> Handled:
    recursive = False
    operands: list[Word] = []
    options_done = False
    for w in call.words[1:]:
        if not options_done and w.value == "--":
            options_done = True
        elif not options_done and w.value.startswith("-") and len(w.value) > 1:
            recursive = recursive or bool(re.search(r"[rR]", w.value)) or w.value == "--recursive"
        else:
            operands.append(w)
    for w in operands:
        sh.remove(w, call.cwd, recursive)
    return call.cwd, None


@handles("rmdir")
def rmdir(sh: Shell, call: Call) -> Handled:
    return call.cwd, None  # only ever removes empty directories


@handles("mkdir")
def mkdir(sh: Shell, call: Call) -> Handled:
    for path in _operand_paths(sh, call):
        sh.emit(MakeDir(path))
    return call.cwd, None


@handles("touch")
def touch(sh: Shell, call: Call) -> Handled:
    for path in _operand_paths(sh, call, valued={"-d", "-t", "-r", "--date", "--reference"}):
        sh.emit(Touch(path))
    return call.cwd, None


def _operand_paths(sh: Shell, call: Call, valued: Set[str] = frozenset()) -> list[str]:
    """The resolvable paths among the operands, skipping options and the values ``valued`` take."""
    words = _drop_valued(list(call.words[1:]), valued)
    return [p for w in words if not w.value.startswith("-") and (p := sh.path(w, call.cwd))]


@handles("mv")
def mv(sh: Shell, call: Call) -> Handled:
    move_or_copy(sh, list(call.words[1:]), call.cwd, copy=False)
    return call.cwd, None


@handles("cp")
def cp(sh: Shell, call: Call) -> Handled:
    move_or_copy(sh, list(call.words[1:]), call.cwd, copy=True)
    return call.cwd, None


@handles("install")
def install(sh: Shell, call: Call) -> Handled:
    words = list(call.words[1:])
    if any(w.value in ("-d", "--directory") for w in words):
        for path in _operand_paths(sh, call):
            sh.emit(MakeDir(path))
        return call.cwd, None
    move_or_copy(sh, _drop_valued(words, {"-m", "-o", "-g", "--mode"}), call.cwd, copy=True)
    return call.cwd, None


def move_or_copy(sh: Shell, words: list[Word], cwd: str | None, *, copy: bool) -> None:
    """``mv``/``cp`` operands (options included): sources to a destination or into a directory."""
    recursive = False
    target_dir: Word | None = None
    operands: list[Word] = []
    skip = False
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        v = w.value
        if v in ("-t", "--target-directory") and i + 1 < len(words):
            target_dir = words[i + 1]
            skip = True
        elif v.startswith("--target-directory="):
            target_dir = Word(v.split("=", 1)[1], v)
        elif v.startswith("-") and len(v) > 1:
            recursive = (
                recursive or bool(re.search(r"[rRa]", v)) or v in ("--recursive", "--archive")
            )
        else:
            operands.append(w)
    if target_dir is not None:
        sources, dst, into = operands, target_dir, True
    elif len(operands) >= 2:
        sources, dst = operands[:-1], operands[-1]
        into = len(sources) > 1 or dst.value.endswith("/")
    else:
        return
    dst_path = sh.path(dst, cwd)
    if dst_path is None:
        sh.unknown_target(dst, cwd, "copied or moved to an unknown path")
        for w in sources if not copy else []:
            sh.remove(w, cwd, True)
        return
    for w in sources:
        src = sh.path(w, cwd)
        if src is None or not w.literal:
            # Unknown sources: whatever lands at the destination is unknown.
            sh.emit(LostTree(dst_path, "copied or moved from unknown paths", rewrites=True))
            if not copy:
                sh.remove(w, cwd, True)
            continue
        if copy:
            sh.emit(Copy(src, dst_path, into_dir=into, recursive=recursive))
        else:
            sh.emit(Move(src, dst_path, into_dir=into))


@handles("ln")
def ln(sh: Shell, call: Call) -> Handled:
    operands = [w for w in call.words[1:] if not w.value.startswith("-")]
    if len(operands) >= 2:
        sh.lose(operands[-1], call.cwd, "symbolic or hard link created")
    elif operands:
        sh.emit(LostTree(call.cwd, "link created in the working directory"))
    return call.cwd, None


@handles("dd")
def dd(sh: Shell, call: Call) -> Handled:
    for w in call.words[1:]:
        if w.value.startswith("of="):
            path = sh.files.absolute(w.value[3:], call.cwd) if w.literal else None
            if path and not path.startswith("/dev/"):
                sh.emit(Write(path, None, reason="dd"))
    return call.cwd, None


@handles("truncate")
def truncate(sh: Shell, call: Call) -> Handled:
    operands = _drop_valued(list(call.words[1:]), {"-s", "--size", "-r", "--reference"})
    for w in operands:
        if not w.value.startswith("-"):
            sh.lose(w, call.cwd, "truncate")
    return call.cwd, None


@handles("chmod", "chown", "chgrp")
def chmod(sh: Shell, call: Call) -> Handled:
    return call.cwd, None  # modes are not content


def _drop_valued(words: list[Word], valued: Set[str]) -> list[Word]:
    out: list[Word] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w.value in valued:
            skip = True
            continue
        out.append(w)
    return out


@handles("find")
def find(sh: Shell, call: Call) -> Handled:
    words = call.words
    values = [w.value for w in words[1:]]
    roots = []
    for w in words[1:]:
        if w.value.startswith(("-", "(", "!")):
            break
        roots.append(w)
    if not roots:
        roots_abs: list[str | None] = [call.cwd]
    else:
        roots_abs = [sh.path(w, call.cwd) for w in roots]
    reason = ""
    if "-delete" in values:
        reason = "find -delete"
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in values:
            command = values[values.index(flag) + 1 : values.index(flag) + 2]
            if not command or basename(command[0]) not in READ_ONLY:
                reason = f"find {flag} {command[0] if command else ''}".strip()
    if "-fprint" in values or "-fprintf" in values or "-fls" in values:
        reason = "find writes a listing file"
    if reason:
        for root in roots_abs:
            sh.emit(LostTree(root, reason))
    return call.cwd, None


@handles("xargs")
def xargs(sh: Shell, call: Call) -> Handled:
    rest = call.args[1:]
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        i += 2 if rest[i] in ("-I", "-n", "-P", "-L", "-d", "-s", "-E", "-a") else 1
    inner = unwrap(rest[i:])
    if not inner or basename(inner[0]) in READ_ONLY:
        return call.cwd, None
    if checks.recognise(inner) is not None and checks.rewrites(inner) is None:
        return call.cwd, None
    sh.emit(LostTree(call.cwd, f"xargs {basename(inner[0])} on unknown arguments"))
    return call.cwd, None
