"""Shell commands that only read one file, and what their output proves about it.

Agents read files with the shell as often as with a read tool (Codex almost always does):
``cat f``, ``sed -n '1,200p' f``, ``nl -ba f``, ``head -n 80 f``. Such a command says what is in
the file only when every part of that claim is certain:

- The command line is exactly one simple read of one literal path: ``cat F``, ``sed -n 'A,Bp' F``
  (``-e`` allowed, ``$`` as the last address), ``nl -ba F`` (or ``-b a``), ``head [-n N | -N |
  --lines=N] F``, optionally after literal ``cd DIR &&`` steps and with ``2>/dev/null`` on the
  read. Pipes, lists, subshells, globs, expansions, assignments, wrappers, options that change
  the output (``cat -n``) and more than one file are not reads the replay can use.
- It exited 0, so the file existed and the program read it.
- The recorded output is the program's output byte for byte: the harness keeps it verbatim
  (``VERBATIM_AGENTS``) and nothing says it was cut (``doubtful``).
- The program printed the whole file: ``cat``; ``sed -n '1,$p'``; ``sed -n '1,Bp'`` and ``head -n
  B`` when fewer than B lines came back (so the file ended first); ``nl -ba`` whose numbering
  is intact and whose final newline is proven (see below).

Anything less is partial knowledge: the file exists and part of it was seen. A read never makes
anything lost, and a partial read leaves content the replay already knows alone.

Trailing newlines. In a verbatim harness the output's bytes are the file's bytes: output that
ends without a newline means the file ends without one, since ``cat``, ``head`` and ``sed`` (GNU
and BSD alike) copy a missing final newline as missing. ``nl`` ends every line it prints with a
newline whether the file did or not, so its output proves the final newline only when the last
numbered line is empty (an empty line exists only if its newline does); otherwise an ``nl`` read
is partial. Harnesses that rewrite output give partial knowledge only: Claude Code trims
trailing newlines, pi drops every carriage return and ANSI sequence, terminal agents record a
screen, and an agent not listed is not trusted.

Codex records a command's output twice: the model's view (tool results, each behind a ``Chunk
ID: …\\nWall time: …\\nProcess exited with code N\\nOriginal token count: N\\nOutput:\\n``
envelope, the output possibly spread over ``write_stdin`` polls) and the ``aggregated_output``
of its end event, which ingest keeps as ``side_data["commands"][call_id]["output"]``. Either
may be cut on its own (``…331 chars truncated…`` in one, complete in the other), so the engine
offers both: those that show no sign of cutting must agree, or the read is partial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .programs import basename
from .shell import Redirect, SimpleCommand, parse

# Agents whose shell tool records output exactly as the program wrote it.
VERBATIM_AGENTS = frozenset({"codex"})

_SED_SCRIPT = re.compile(r"(\d+)(?:,(\d+|\$))?p")
_COUNT = re.compile(r"[1-9]\d*|0")

# Signs that an output was cut before it reached the trajectory, in the forms harnesses use:
# Codex "…331 chars truncated…" / "…12 tokens truncated…" and "Total output lines: N" above a
# middle-truncated output, older Codex "[... omitted 10 of 400 lines ...]", "[... 12 lines
# truncated ...]", pi "[Showing lines 1-50 of 900 …]" / "[Output truncated. Full output: …]",
# Read-style "[120 more lines in file …]", Harbor "[trimmed]", and a line that is only "…".
# A "…" inside a line is file text: the markers harnesses write always say what was cut.
_CUT = re.compile(
    r"…\s*\d[\d,]*\s*(?:chars?|characters|tokens?|lines?|bytes?)\s+(?:truncated|omitted)"
    r"|\[\.\.\.[^\]\n]*?\d+[^\]\n]*?(?:truncated|omitted)[^\]\n]*\]"
    r"|\[\.\.\. ?omitted"
    r"|^Total output lines: \d+"
    r"|\[(?:Output truncated|Showing lines \d+-\d+ of \d+|\d+ more lines)"
    r"|\[(?:truncated|trimmed)\]|\.\.\. ?\((?:truncated|\d+ more lines)"
    r"|^[ \t]*…[ \t]*$",
    re.MULTILINE,
)
# Codex's envelope: the output's size before any cut, in the tokens max_output_tokens counts.
_ORIGINAL_TOKENS = re.compile(r"^Original token count: (\d+)$", re.MULTILINE)
# Bytes that were not valid UTF-8 came through as U+FFFD: the text is not the file's bytes.
_LOSSY = "\ufffd"


@dataclass(frozen=True, slots=True)
class ShellRead:
    """One read command: which program printed which file, and how much of it."""

    program: str  # cat, sed, nl, head
    path: str  # the file as written (literal)
    cd: tuple[str, ...] = ()  # literal `cd` targets before the read, in order
    first: int = 1  # the first line printed
    limit: int | None = None  # the last line printed at most; None: up to the end of the file
    numbered: bool = False  # nl -ba: every line behind a right-aligned number and a tab


def parse_read(script: str) -> ShellRead | None:
    """The read ``script`` is, if it is exactly one simple read of one file (else None)."""
    items = parse(script)
    while items and items[-1] == ";":
        items.pop()  # a trailing newline
    if not items or len(items) % 2 == 0:
        return None
    commands = items[0::2]
    if any(op != "&&" for op in items[1::2]):
        return None
    if not all(isinstance(c, SimpleCommand) for c in commands):
        return None
    cds: list[str] = []
    for cmd in commands[:-1]:
        assert isinstance(cmd, SimpleCommand)
        target = _cd_target(cmd)
        if target is None:
            return None
        cds.append(target)
    last = commands[-1]
    assert isinstance(last, SimpleCommand)
    read = _read_command(last)
    if read is None:
        return None
    return ShellRead(read.program, read.path, tuple(cds), read.first, read.limit, read.numbered)


def interpret(read: ShellRead, output: str) -> str | None:
    """The file's whole content from a verbatim, uncut ``output``; None when it shows a part."""
    if read.numbered:
        return _unnumber(output)
    if read.first != 1:
        return None
    if read.limit is None or _line_count(output) < read.limit:
        return output
    return None


def doubtful(text: str, max_tokens: object = None) -> bool:
    """Whether ``text`` shows a sign of having been cut or re-encoded on its way to the log.

    ``text`` may carry Codex's envelope; with the call's ``max_output_tokens`` (``max_tokens``)
    an original token count above it says the output was cut even without a marker.
    """
    if _LOSSY in text or _CUT.search(text) is not None:
        return True
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
        head = text.split("\nOutput:\n", 1)[0] if "\nOutput:\n" in text else ""
        return any(int(n) > max_tokens for n in _ORIGINAL_TOKENS.findall(head))
    return False


# -- parsing -----------------------------------------------------------------------------------


def _plain(cmd: SimpleCommand) -> bool:
    return (
        cmd.opaque is None
        and not cmd.for_header
        and not cmd.assignments
        and bool(cmd.argv)
        and all(w.literal for w in cmd.argv)
    )


def _cd_target(cmd: SimpleCommand) -> str | None:
    if not _plain(cmd) or cmd.redirects or len(cmd.argv) != 2 or cmd.argv[0].value != "cd":
        return None
    target = cmd.argv[1].value
    return None if not target or target.startswith("-") else target


def _quiet_stderr(redirect: Redirect) -> bool:
    target = redirect.target
    return (
        redirect.fd == 2
        and redirect.op == ">"
        and target is not None
        and target.literal
        and target.value == "/dev/null"
    )


def _read_command(cmd: SimpleCommand) -> ShellRead | None:
    if not _plain(cmd) or not all(_quiet_stderr(r) for r in cmd.redirects):
        return None
    program = basename(cmd.argv[0].value)
    args = [w.value for w in cmd.argv[1:]]
    if "--" in args:
        # Everything after `--` is a file: exactly one, and it comes last.
        if args.index("--") != len(args) - 2:
            return None
        options, path = args[:-2], args[-1]
    elif args and not args[-1].startswith("-"):
        options, path = args[:-1], args[-1]
    else:
        return None
    if path in ("", "-"):
        return None  # standard input, not a file
    if program == "cat":
        return ShellRead("cat", path) if not options else None
    if program == "nl":
        return ShellRead("nl", path, numbered=True) if options in (["-ba"], ["-b", "a"]) else None
    if program == "head":
        count = _head_count(options)
        return None if count is None else ShellRead("head", path, limit=count)
    if program == "sed":
        return _sed(options, path)
    return None


def _head_count(options: list[str]) -> int | None:
    if not options:
        return 10
    text: str | None = None
    if len(options) == 2 and options[0] in ("-n", "--lines"):
        text = options[1]
    elif len(options) == 1:
        option = options[0]
        if option.startswith("--lines="):
            text = option.removeprefix("--lines=")
        elif option.startswith("-n"):
            text = option[2:]
        elif option.startswith("-"):
            text = option[1:]
    if text is None or not _COUNT.fullmatch(text):
        return None
    return int(text)


def _sed(options: list[str], path: str) -> ShellRead | None:
    if not options or options[0] not in ("-n", "--quiet", "--silent"):
        return None
    rest = options[1:]
    if rest[:1] in (["-e"], ["--expression"]):
        rest = rest[1:]
    elif rest[:1] and rest[0].startswith("--expression="):
        rest = [rest[0].removeprefix("--expression=")]
    if len(rest) != 1:
        return None
    match = _SED_SCRIPT.fullmatch(rest[0])
    if match is None:
        return None
    first = int(match.group(1))
    if first < 1:
        return None  # sed rejects line 0
    last = match.group(2)
    if last is None:
        return ShellRead("sed", path, first=first, limit=first)
    if last == "$":
        return ShellRead("sed", path, first=first)
    return ShellRead("sed", path, first=first, limit=int(last))


# -- output ------------------------------------------------------------------------------------


def _line_count(output: str) -> int:
    """Lines printed: each newline ends one, and text after the last newline is one more."""
    return output.count("\n") + (1 if output and not output.endswith("\n") else 0)


def _unnumber(output: str) -> str | None:
    """``nl -ba`` output without its numbers (``%6d\\t`` per line, from 1), when it proves all."""
    if output == "":
        return ""  # nl prints nothing for an empty file only
    if not output.endswith("\n"):
        return None
    body: list[str] = []
    for number, line in enumerate(output[:-1].split("\n"), start=1):
        prefix = f"{number:>6}\t"
        if not line.startswith(prefix):
            return None  # not nl's default numbering (a section delimiter line, other options)
        body.append(line[len(prefix) :])
    if body[-1] != "":
        return None  # nl added the final newline, or copied it: the file's end is unknown
    return "\n".join(body) + "\n"
