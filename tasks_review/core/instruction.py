"""The task's instruction.md: what the user asked for and how the check fails, never the fix.

A trajectory's later steps hold the answer, so the instruction is built from exactly two
sources, both fixed before the failing run: the user's requests up to that run, and the failing
command with its (trimmed) output. ``leaks`` then proves the point for each candidate: no
non-trivial line the fix added may appear in the text an agent will see.

Requests are cleaned of harness noise (Claude Code's ``<command-…>``/``<system-reminder>``
wrappers, Codex's ``<environment_context>`` and AGENTS.md preambles, copied context, interrupt
markers, bare acknowledgements such as "ok") and kept short: the first request, which usually
states the goal, and the last two before the failure, which usually say what was being done.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.redact import redact

# -- trimming ----------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")


# What harnesses wrap around a command's own output: Claude Code's "Exit code N" first line,
# pi's "Command exited with code N" last line, Harbor exports' "[error] tool reported failure".
_HARNESS_HEAD = re.compile(r"^(Error: )?Exit code -?\d+\n")
_HARNESS_TAIL = re.compile(
    r"(\n*(Command exited with code -?\d+|\[error\] tool reported failure)\s*)+$"
)


def strip_harness(output: str) -> str:
    """The command's own output, without the status lines the harness added."""
    return _HARNESS_TAIL.sub("", _HARNESS_HEAD.sub("", output, count=1))


def trim_text(
    text: str,
    *,
    head_lines: int = 40,
    tail_lines: int = 40,
    max_line_chars: int = 400,
    max_chars: int = 8000,
) -> str:
    """Head and tail of ``text`` with a marker for what was left out; colours stripped and
    secrets replaced.

    The head shows which check ran and the first failures, the tail its summary; the middle
    of a long run is repetition an agent can reproduce by running the check itself.
    Redaction comes first: a key block cut in its middle, its BEGIN line on one side of the
    marker and its END line on the other, no longer looks like a key to any later redaction.
    """
    text = redact(_ANSI.sub("", text).replace("\r\n", "\n")).value
    # A carriage return redraws the line (progress bars): keep what was drawn last.
    lines = [line.rsplit("\r", 1)[-1] for line in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    lines = [
        line if len(line) <= max_line_chars else line[:max_line_chars] + " [... line cut ...]"
        for line in lines
    ]
    if len(lines) > head_lines + tail_lines:
        omitted = len(lines) - head_lines - tail_lines
        lines = [
            *lines[:head_lines],
            f"[... {omitted} lines omitted ...]",
            *lines[len(lines) - tail_lines :],
        ]
    out = "\n".join(lines)
    if len(out) > max_chars:
        half = max_chars // 2
        cut = len(out) - 2 * half
        out = f"{out[:half]}\n[... {cut} characters omitted ...]\n{out[-half:]}"
    return out


# -- the user's requests -----------------------------------------------------------------------

_WRAPPERS = re.compile(
    r"<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|environment_context|user_instructions|"
    r"INSTRUCTIONS|task-notification)>.*?</\1>",
    re.DOTALL,
)
# Whole messages that are harness bookkeeping rather than something the user asked for.
_NOISE = re.compile(
    r"^(\[Request interrupted by user[^\]]*\]|Caveat: The messages below were generated|"
    r"# AGENTS\.md instructions for |<environment_context>|<user_instructions>|"
    r"This session is being continued from a previous conversation|"
    r"Operation stopped by hook:|<task-notification>|Warmup$)"
)
_ACK = re.compile(
    r"^(ok(ay)?|yes|yep|yeah|no|y|n|k|go|go on|go ahead|continue|proceed|next|hi|hello|hey|"
    r"yo|thanks?|thank you|great|nice|cool|wow|lgtm|done|sure|please do|do it)[.!?]*$",
    re.IGNORECASE,
)


def _message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        return "\n".join(
            str(part.get("text"))
            for part in message
            if isinstance(part, Mapping) and part.get("type") == "text" and part.get("text")
        )
    return ""


def clean_request(text: str) -> str | None:
    """The request without harness wrappers; None when nothing the user asked for remains."""
    if _NOISE.match(text.lstrip()):
        return None
    cleaned = _WRAPPERS.sub("", text)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    if not cleaned or _ACK.match(cleaned):
        return None
    return cleaned


def user_requests(atif: Mapping[str, Any], *, before_step: int) -> list[str]:
    """The user's requests in steps ``[0, before_step)``, cleaned, in order.

    Steps marked ``is_copied_context`` repeat an earlier session and are skipped.
    """
    requests: list[str] = []
    steps = atif.get("steps") or []
    for step in steps[: max(before_step, 0)]:
        if not isinstance(step, Mapping) or step.get("source") != "user":
            continue
        if step.get("is_copied_context"):
            continue
        cleaned = clean_request(_message_text(step.get("message")))
        if cleaned is not None:
            requests.append(cleaned)
    return requests


def pick_requests(requests: Sequence[str], *, keep_last: int = 2) -> list[str]:
    """The first request and the last ``keep_last`` ones, each once, in order."""
    chosen = sorted({0, *range(max(len(requests) - keep_last, 1), len(requests))})
    return [requests[i] for i in chosen if i < len(requests)]


# -- paths -------------------------------------------------------------------------------------


def rewrite_root(text: str, root: str, project_dir: str) -> str:
    """Replace the recorded project root with where the task puts the project.

    Only whole path prefixes are replaced: ``/repo`` in ``/repo/src`` and ``cd /repo &&``,
    not in ``/repository``.
    """
    if not root or root == "/" or root == project_dir:
        return text
    return re.sub(re.escape(root.rstrip("/")) + r"(?=$|[/\s'\"`;&|)>:,])", project_dir, text)


# -- the instruction ---------------------------------------------------------------------------


def _fence(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def build_instruction(
    atif: Mapping[str, Any],
    *,
    before_step: int,
    command: str,
    cwd: str,
    output: str,
    exit_code: int,
    root: str,
    project_dir: str,
    fix_edits_tests: bool = False,
) -> str:
    """instruction.md for a repair task.

    ``command`` is the check as the task runs it (root already rewritten), ``cwd`` its
    directory relative to the project, ``output`` the failing run's trimmed output.
    """
    where = project_dir if cwd in ("", ".") else f"{project_dir}/{cwd}"
    requests = [
        trim_text(rewrite_root(r, root, project_dir), head_lines=25, tail_lines=10, max_chars=1500)
        for r in pick_requests(user_requests(atif, before_step=before_step))
    ]
    parts = ["# Make the failing check pass", ""]
    parts.append(f"The project is in `{project_dir}`. Its check fails and needs fixing.")
    if requests:
        parts += ["", "## What the user asked for", ""]
        for request in requests:
            parts += [_quote(request), ""]
        if parts[-1] == "":
            parts.pop()
    shown_output = rewrite_root(output, root, project_dir) or "(no output)"
    parts += [
        "",
        "## The failing check",
        "",
        f"Run from `{where}`:",
        "",
        _fence(command, "sh"),
        "",
        f"It exits with status {exit_code}. Its output (trimmed):",
        "",
        _fence(shown_output, "text"),
        "",
        "## Your task",
        "",
        f"Change the project so that the command above exits with status 0 when run from "
        f"`{where}`. Fix the cause rather than the symptom: do not delete, skip or weaken "
        "tests, and do not change how the check is run. The check is graded against the "
        "grader's own copy of the test files and test configuration.",
    ]
    if fix_edits_tests:
        parts += [
            "",
            "The grader's copy of the tests is not identical to the one you see: the intended "
            "behaviour also changed some tests. Make the code do what the tests and the requests "
            "above ask for.",
        ]
    return "\n".join(parts) + "\n"


# -- leak detection ----------------------------------------------------------------------------

# Lines too common to mean anything when they show up in both the fix and the instruction.
_COMMON = frozenset(
    {
        "return none",
        "return true",
        "return false",
        "return null",
        "return result",
        "return self",
        "continue;",
        "break;",
        "finally:",
        "else {",
        "} else {",
        "} catch {",
        "default:",
        "export {};",
        "use strict",
        "'use strict';",
        '"use strict";',
        "module.exports = {",
        "if __name__ == '__main__':",
        'if __name__ == "__main__":',
        "raise notimplementederror",
    }
)


def significant(line: str) -> bool:
    """Whether a stripped line says enough to count as a leak when it reappears."""
    if len(line) < 8 or not re.search(r"[A-Za-z0-9]", line):
        return False
    return line.lower() not in _COMMON


def _lines(data: bytes) -> set[str] | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # binary content has no lines an instruction could quote
    return {line.strip() for line in text.splitlines()}


def added_lines(
    start_files: Mapping[str, str], ref_files: Mapping[str, str], blobs: BlobStore
) -> list[str]:
    """Significant lines present in a reference file but not in the same file at the start."""
    added: set[str] = set()
    for path, sha in ref_files.items():
        if start_files.get(path) == sha:
            continue
        new = _lines(blobs.get(sha))
        if new is None:
            continue
        old_sha = start_files.get(path)
        old = _lines(blobs.get(old_sha)) if old_sha is not None else set()
        added |= {line for line in new - (old or set()) if significant(line)}
    return sorted(added)


def leaks(
    instruction: str,
    start_files: Mapping[str, str],
    ref_files: Mapping[str, str],
    blobs: BlobStore,
) -> list[str]:
    """The fix's added lines that appear in ``instruction`` (empty: no leak)."""
    return [line for line in added_lines(start_files, ref_files, blobs) if line in instruction]


def leaks_in(texts: Iterable[str], added: Sequence[str]) -> list[str]:
    """Which of ``added`` appear in any of ``texts`` (for other agent-visible text)."""
    found = []
    for line in added:
        if any(line in text for text in texts):
            found.append(line)
    return found
