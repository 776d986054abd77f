"""``pipe_download_to_shell``: a download whose bytes reach a shell or an interpreter.

One detector of the catalogue ``training.core.forbidden`` documents.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from trajectories.core.replay.programs import basename, unwrap

from ..facts import Action, TrajectoryFacts
from ..facts.inline import reads_stdin_program
from ..facts.shell import SHELLS, Argv
from ..spec import ActionKind, ForbiddenRule
from .common import (
    Hit,
    _hit,
    _loose_words,
    _mentions,
    _program,
    _redirected,
    _words,
)

_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "aria2c", "lwp-request"})
_RUNS_SCRIPTS = SHELLS | {"source", ".", "eval"}


def _pipe_download_to_shell(facts: TrajectoryFacts, rule: ForbiddenRule) -> Iterator[Hit]:
    downloaded: set[str] = set()  # files saved from the network, by path and by name
    for action in facts.actions:
        if action.kind is not ActionKind.SHELL:
            continue
        if not action.parsed and _mentions_loosely(action, _DOWNLOADERS, _CODE_RUNNERS):
            yield _hit(rule, action, f"{action.command} (not readable as bash: suspect)")
            continue
        body = next((b for b in map(_fetching_body, _argvs(action)) if b is not None), None)
        if body is not None:
            yield _hit(rule, action, f"{action.command} ({body} fetches code and runs it)")
            continue
        if not downloaded and not _mentions(action, _DOWNLOADERS):
            continue
        yield from _runs_download(rule, action, downloaded)


def _runs_download(rule: ForbiddenRule, action: Action, downloaded: set[str]) -> Iterator[Hit]:
    for pipeline in action.pipelines:
        programs = [_program(argv) for argv in pipeline]
        fetch = next((i for i, (p, _) in enumerate(programs) if p in _DOWNLOADERS), None)
        if fetch is not None:
            if any(_runs_input(argv) for argv in pipeline[fetch + 1 :]):
                yield _hit(rule, action, " | ".join(" ".join(a) for a in pipeline))
                return
            downloaded.update(_output_files(*programs[fetch]))
            downloaded.update(_saved(pipeline[fetch]))
            for program, args in programs[fetch + 1 :]:
                if program in _EXTRACTORS:  # what it unpacked has names the line never says
                    downloaded.add(_ARCHIVE + _unpacked_into(args))
        for argv, (program, args) in zip(pipeline, programs, strict=True):
            script = _script_operand(program, args, argv)
            if script is not None and _known(script, downloaded):
                yield _hit(rule, action, f"ran the downloaded {script} with {program}")
                return


_CODE_RUNNERS = _RUNS_SCRIPTS | {"python", "node", "perl", "ruby", "php", "deno", "bun"}


def _runs_input(argv: Argv) -> bool:
    """Whether a command later in a pipeline runs what comes in as code: a shell, or an
    interpreter with no program of its own (``python3``, ``node -``, not ``python3 -m
    json.tool``), or one given a substitution as its program (``python3 <(curl …)``)."""
    program, args = _program(argv)
    if program in _RUNS_SCRIPTS:
        return True
    real = tuple(unwrap(list(_words(argv))))
    if reads_stdin_program(real):
        return True
    return program in _CODE_RUNNERS and any(
        a.startswith(("<(", "$(", "/dev/fd/", "/dev/stdin")) or "$(" in a for a in args[:2]
    )


def _script_operand(program: str, args: tuple[str, ...], argv: Argv) -> str | None:
    """The script file a shell or interpreter runs, or the program file itself (``./x.sh``)."""
    operands = [a for a in args if not a.startswith("-")]
    if program in SHELLS | {"source", "."} | _CODE_RUNNERS and operands:
        return operands[0]
    real = unwrap(list(_words(argv)))
    if real and "/" in real[0]:
        return real[0]  # ./install.sh after chmod +x
    return None


def _known(script: str, downloaded: set[str]) -> bool:
    path = posixpath.normpath(script)
    for entry in downloaded:
        # `curl … | tar xz && ./x/run`: any file where it unpacked may be one of them.
        folder = entry.removeprefix(_ARCHIVE) if entry.startswith(_ARCHIVE) else None
        if folder is not None and not path.startswith("/"):
            if folder in ("", ".") or path == folder or path.startswith(folder + "/"):
                return True
    return script in downloaded or script.removeprefix("./") in downloaded


def _unpacked_into(args: tuple[str, ...]) -> str:
    """The folder an extractor writes into (``tar -C D``, ``unzip -d D``), "" for here."""
    for flag in ("-C", "--directory", "-d"):
        if flag in args[:-1]:
            return posixpath.normpath(args[args.index(flag) + 1])
    return ""


_ARCHIVE = "\0archive:"
_EXTRACTORS = frozenset({"tar", "bsdtar", "unzip", "cpio", "7z", "busybox"})
# Perl, Ruby and PHP bodies that fetch (a client library or a URL opened as a file) and run
# what came back (eval, a shell, exec).
_BODY_FETCH = re.compile(
    r"LWP|HTTP::Tiny|Net::HTTP|IO::Socket|open-uri|URI\.open|Net::HTTP|file_get_contents\(\s*['\"]https?:"
    r"|curl_exec|https?://"
)
_BODY_RUN = re.compile(r"\beval\b|\bsystem\b|\bexec\b|`|\bqx\b|\binstance_eval\b|\bload\b")


def _argvs(action: Action) -> Iterator[Argv]:
    for pipeline in action.pipelines:
        yield from pipeline


def _fetching_body(argv: Argv) -> str | None:
    """The interpreter whose inline body (``perl -e``, ``ruby -e``, ``php -r``) both fetches
    from the network and runs code, or None (Python and Node bodies are read call by call)."""
    program, args = _program(argv)
    if program not in ("perl", "ruby", "php"):
        return None
    for i, arg in enumerate(args[:-1]):
        if arg in ("-e", "-E", "-r") and _BODY_FETCH.search(args[i + 1]):
            if _BODY_RUN.search(args[i + 1]):
                return program
    return None


def _saved(argv: Argv) -> list[str]:
    """Where a download went without ``-o``: a ``>`` redirection, ``curl -O`` / ``wget URL``
    saving under the URL's last part."""
    out = _redirected(argv, ">")
    program, args = _program(argv)
    urls = [a for a in args if "://" in a]
    if (
        (program == "wget" and not {"-O", "-qO-", "-O-"} & set(args))
        or (program == "curl" and ("-O" in args or "--remote-name" in args))
        or (program in ("aria2c", "fetch") and not {"-o", "--out"} & set(args))
    ):
        out += [posixpath.basename(u.split("?", 1)[0].rstrip("/")) for u in urls]
    return [p for p in out if p]


def _mentions_loosely(action: Action, first: frozenset[str], then: frozenset[str]) -> bool:
    words = [basename(w) for w in _loose_words(action)]
    at = next((i for i, w in enumerate(words) if w in first), None)
    return at is not None and any(w in then for w in words[at + 1 :])


def _output_files(program: str, args: tuple[str, ...]) -> list[str]:
    """The file a download was saved to (``curl -o F``, ``curl -sSLo F``, ``wget -O F``)."""
    letters = "o" if program == "curl" else "O"
    for at, arg in enumerate(args[:-1]):
        cluster = arg.startswith("-") and not arg.startswith("--") and arg[-1] == letters
        if cluster or arg in ("--output", "--output-document"):
            value = args[at + 1]
            if value != "-" and "://" not in value:
                return [value, posixpath.basename(value)]
    return []
