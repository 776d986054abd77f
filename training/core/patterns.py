"""The regular expressions reviewers write in behaviour specs, run on what agents wrote.

    pattern = compiled(r"\\bmake\\b.*\\blint$")
    pattern.search("make -C web lint") is not None       # True
    why_not_linear(r"(a)\\1")                             # "RE2 cannot run it: invalid escape …"

A spec's ``command`` and ``line`` patterns are searched in command lines and file contents an
agent produced, so both sides are untrusted. Python's ``re`` backtracks: ``^(a+)+$`` on
30 a's and a b takes minutes. RE2 (google-re2) matches in time linear in the text, and refuses
what cannot be matched that way (backreferences, lookaround) instead of running it slowly:
``load_spec`` refuses such a pattern with ``why_not_linear``'s words at the field's path.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

try:
    # Imported by name: the Claude Code hooks carry harness.action_matches, and with it this
    # module, into a script that runs on the standard library alone (buttons/bundle.py refuses
    # a static third-party import). There, with no RE2, patterns fall back to re; they were
    # refused at spec validation on the host if RE2 cannot run them.
    re2: Any = importlib.import_module("re2")
except ImportError:
    re2 = None

if re2 is not None:
    _OPTIONS = re2.Options()
    _OPTIONS.log_errors = False  # the refusal is ours to word; RE2 would print it to stderr


class PatternError(ValueError):
    pass


@functools.lru_cache(maxsize=512)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (``search``/``match`` as in ``re``); raises PatternError."""
    if re2 is None:
        return re.compile(pattern)
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise PatternError(
            f"RE2 cannot run it: {text} (patterns are matched in linear time, so backreferences "
            "and lookaround are not available)"
        ) from None


def why_not_linear(pattern: str) -> str | None:
    """None when RE2 runs ``pattern``; else why not, in words."""
    try:
        compiled(pattern)
    except PatternError as error:
        return str(error)
    return None
