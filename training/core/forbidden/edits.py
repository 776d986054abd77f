"""``edit_unread_file``: changing an existing file without reading it first.

One detector of the catalogue ``training.core.forbidden`` documents.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..facts import TrajectoryFacts
from ..spec import ActionKind, ForbiddenRule
from .common import (
    Hit,
    _hit,
)


def _edit_unread_file(facts: TrajectoryFacts, rule: ForbiddenRule) -> Iterator[Hit]:
    # Only edit and write tools: a shell command's changes (a checkout, a formatter, an
    # install touching a lock file) are not edits the agent typed without looking.
    known: set[str] = set()
    for action in facts.actions:
        known.update(action.reads)
        if action.kind in (ActionKind.EDIT, ActionKind.WRITE):
            for path in action.edits:
                if path not in known:
                    yield _hit(rule, action, f"changed {path} without reading it first")
        known.update(action.writes)
        known.update(action.edits)
