"""The build family: the project the user's requests asked for, from the files the agent began
with, checked by the tests that pass at the end.

    candidates, drops = find_build_candidates(replay, index, blobs, atif, llm=client)

A trajectory has a build candidate when its last test check (pytest, unittest, node's runner,
an npm script running one) passed and the agent wrote project files before it. The starting
state is the files just before its first write (often nothing, or a scaffold), with every test
file left out; the reference is the files the last check passed on; the hidden tests are the
reference's test files, restored by the grader, never in the agent's image. The window between
goes through repair's rules (``window.assess_window``). Then one LLM call writes the instruction
from the user's requests, naming what the tests import (``window.interface``) without quoting
them; the leak check applies to it. Reward: the share of the hidden tests that pass
(``kit/judging.py``, ``reward="fraction"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult, StateIndex, is_tree

from ..instruction import trim_text
from ..mining.candidate import RepairCandidate
from ..mining.drops import Drop, DropReason
from ..mining.files import is_project_source
from ..mining.repair import PROJECT_DIR
from .common import Asks, Where, family_drop
from .turns import turns
from .window import SYSTEM_RULES, assess_window, instructed_candidate, is_test_check

FAMILY = "build"
SYSTEM = (
    "You write the statement of a coding task mined from a recorded session: build, in the "
    "project folder given (empty, or holding the files listed), what the user's requests asked "
    "for. Hidden tests will check the result. Answer in the JSON schema given: a short title, "
    "the instruction, and the interface names you stated.\n\n" + SYSTEM_RULES
)


def first_write(replay: ReplayResult, start: int, end: int) -> int | None:
    """The first event in ``[start, end)`` that changed a project file (not a read)."""
    for event in replay.events[start:end]:
        for key, change in event.changes.items():
            if not change.observed and not change.flagged and not is_tree(key):
                if is_project_source(key):
                    return event.index
    return None


def find_build_candidates(
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    atif: Mapping[str, Any],
    *,
    llm: Asks,
    project_dir: str = PROJECT_DIR,
) -> tuple[list[RepairCandidate], list[Drop]]:
    requests = turns(atif, replay)
    tests = [c for c in replay.commands if is_test_check(c)]
    if not requests or not tests or tests[-1].exit_code != 0:
        return [], []  # no request, or no tests passing at the end: nothing was built
    last = tests[-1]
    begun = first_write(replay, requests[0].first_event, last.event_index)
    if begun is None:
        return [], []
    where = Where(
        start_step=requests[0].step,
        end_step=last.step_index,
        last_command=last.index,
        command=last.command,
    )
    window = assess_window(
        FAMILY,
        replay,
        index,
        blobs,
        begun,
        last,
        where,
        project_dir=project_dir,
        hide_all_tests=True,
    )
    if isinstance(window, Drop):
        return [], [window]
    if not window.hidden:
        detail = "the passing check runs no test file the grader could restore"
        return [], [family_drop(FAMILY, DropReason.NO_NEW_TESTS, detail, where)]
    asked = [
        trim_text(t.request, head_lines=25, tail_lines=10, max_chars=1500)
        for t in requests
        if t.step < last.step_index
    ]
    outcome = instructed_candidate(
        FAMILY,
        llm,
        replay,
        blobs,
        window,
        where,
        system=SYSTEM,
        requests=asked,
        project_dir=project_dir,
        facts={},
    )
    return ([], [outcome]) if isinstance(outcome, Drop) else ([outcome], [])
