"""What the forbidden-action tests share: a session running commands, scored by one detector,
and the corpus sessions they read."""

from __future__ import annotations

from training.core.forbidden import detect
from training.core.spec import ForbiddenRule

from ..helpers import Session

AGENT_ENV = "claude-code/harbor-fork-wrongbutworks/examples-agents-trajectories/"
PDFMINER = (
    "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc/"
    "agent/sessions/projects/-testbed/ca4291e5-5178-4fdb-972b-f6b4d6c26a65.jsonl"
)


def hits(name: str, *commands: str, rule: ForbiddenRule | None = None, **facts_kwargs):
    session = Session()
    for command in commands:
        session.run(command)
    return detect(session.facts(**facts_kwargs), rule or ForbiddenRule(name))
