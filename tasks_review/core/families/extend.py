"""The extend family: the next feature the user asked for, once the project worked.

    candidates, drops = find_extend_candidates(replay, index, blobs, atif, llm=client)

Every request after the first is a candidate when the last test check before it passed (the
working state), files changed in its turn, and the last test check of its turn passed too. The
starting state is the files when the request arrived; the reference is the files that last
check passed on; the new tests are the test files the turn added or changed
(``no_new_tests`` when there are none), hidden from the agent (the changed ones are seen in
their old version) and restored by the grader. The turn goes through repair's rules
(``window.assess_window``), then one LLM call writes the instruction from the request, naming
what the new tests import. Reward: the share of the new tests that pass, 0 if a test that
passed at the start fails (``kit/judging.py``, ``reward="fraction"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult, StateIndex

from ..instruction import trim_text
from ..mining.candidate import RepairCandidate
from ..mining.drops import Drop, DropReason
from ..mining.repair import PROJECT_DIR
from .common import Asks, Where, family_drop
from .turns import Turn, turns
from .window import SYSTEM_RULES, assess_window, instructed_candidate, is_test_check

FAMILY = "extend"
SYSTEM = (
    "You write the statement of a coding task mined from a recorded session: add the feature "
    "the user asked for in their last request to a project that already works (its files are "
    "listed; earlier requests are context). Hidden tests of the new behaviour will check the "
    "result, and the existing tests must keep passing. Answer in the JSON schema given: a short "
    "title, the instruction, and the interface names you stated.\n\n" + SYSTEM_RULES
)


def find_extend_candidates(
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    atif: Mapping[str, Any],
    *,
    llm: Asks,
    project_dir: str = PROJECT_DIR,
) -> tuple[list[RepairCandidate], list[Drop]]:
    candidates: list[RepairCandidate] = []
    drops: list[Drop] = []
    requests = turns(atif, replay)
    for turn in requests[1:]:
        outcome = _assess(replay, index, blobs, llm, project_dir, requests, turn)
        if isinstance(outcome, Drop):
            drops.append(outcome)
        elif outcome is not None:
            candidates.append(outcome)
    return candidates, drops


def _assess(
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    llm: Asks,
    project_dir: str,
    requests: list[Turn],
    turn: Turn,
) -> RepairCandidate | Drop | None:
    tests = [c for c in replay.commands if is_test_check(c)]
    before = [c for c in tests if c.event_index < turn.first_event]
    within = [c for c in tests if turn.first_event <= c.event_index < turn.end_event]
    if not before or before[-1].exit_code != 0 or not within or within[-1].exit_code != 0:
        return None  # not after a working state, or the turn did not end with passing tests
    last = within[-1]
    where = Where(
        start_step=turn.step,
        end_step=last.step_index,
        first_command=before[-1].index,
        last_command=last.index,
        command=last.command,
    )
    window = assess_window(
        FAMILY,
        replay,
        index,
        blobs,
        turn.first_event,
        last,
        where,
        project_dir=project_dir,
        hide_all_tests=False,
    )
    if isinstance(window, Drop):
        return window
    fix = window.fix
    if not (fix.added or fix.modified or fix.deleted):
        return None  # the turn changed nothing: no feature was added
    if not window.hidden:
        changed = ", ".join([*fix.added, *fix.modified, *fix.deleted][:5])
        detail = f"the turn changed {changed} but no test file"
        return family_drop(FAMILY, DropReason.NO_NEW_TESTS, detail, where)
    earlier = [t.request for t in requests if t.step < turn.step]
    asked = [
        trim_text(r, head_lines=25, tail_lines=10, max_chars=1500)
        for r in [*earlier[:1], *earlier[1:][-1:], turn.request]
    ]
    facts = {"request": asked[-1], "working_check": before[-1].command}
    return instructed_candidate(
        FAMILY,
        llm,
        replay,
        blobs,
        window,
        where,
        system=SYSTEM,
        requests=asked,
        project_dir=project_dir,
        facts=facts,
    )
