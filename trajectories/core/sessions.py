"""When two files record the same session: the rule ingest uses to keep one trajectory.

A Harbor run folder holds Claude Code's stream-json stdout, its session JSONL and the ATIF
``trajectory.json`` written from them; a pi session may come with an ATIF twin. Each converts to
ATIF of its own, and mining one session twice would make two candidates of the same work.

    >>> from datetime import datetime, UTC
    >>> jsonl = Recording("abc", "Fix calc.py", datetime(2026, 3, 1, tzinfo=UTC), False)
    >>> atif = Recording("abc", "Fix  calc.py\\n", None, False)
    >>> same_session(jsonl, atif)
    True
    >>> same_session(jsonl, Recording("abc", "Now write the skill", None, False))
    False

The rule is conservative: merging two different sessions would lose one of them, while keeping a
twin apart only costs a duplicate. Step counts are no part of it: the converters disagree on them
for one session (Claude Code's JSONL and Harbor's ATIF of the same run differ by a few steps).
Session ids alone are not enough either: Claude Code resumes a session under the same id with a
new first request (Harbor's "learning" phase writes such a second trajectory).

Start times agree within ``START_TOLERANCE``, not to the microsecond: the recordings take them
from different events (OpenClaw's pi header is stamped 13:22:52.806, its ATIF twin's first step
13:22:52.976), while a resumed or repeated session starts minutes apart at least.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

START_TOLERANCE = timedelta(seconds=5)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Recording:
    """What says which session a file recorded."""

    session_id: str
    first_request: str  # the text of the first user step that is not copied context
    started_at: datetime | None
    is_subagent: bool


def same_session(a: Recording, b: Recording) -> bool:
    """Whether ``a`` and ``b`` record one session.

    All of: the same non-empty session id; the same first user message, compared with its runs
    of white space collapsed, and not empty; start times within ``START_TOLERANCE`` where both
    know one; both subagents or neither.
    """
    if not a.session_id or a.session_id != b.session_id:
        return False
    if a.is_subagent != b.is_subagent:
        return False
    first = _normal(a.first_request)
    if not first or first != _normal(b.first_request):
        return False
    if a.started_at is None or b.started_at is None:
        return True
    return abs(a.started_at - b.started_at) <= START_TOLERANCE


def first_request(steps: Iterable[tuple[str, str, bool]]) -> str:
    """The text of the first user step of ``(source, text, is_copied_context)`` steps."""
    return next((text for source, text, copied in steps if source == "user" and not copied), "")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()
