"""The task families beyond repair, and the one entry point that mines a trajectory for all.

    candidates, drops = mine(replay, index, blobs, atif, families=("repair", "qa"), llm=client)

repair asks no model (``mining.repair``). build, extend and qa make at most one structured
LLM call per candidate through the seam (``core.llm``, cached on disk), recorded on the
candidate (``RepairCandidate.llm``) or on its drop (``Drop.llm``). Without a client they are
skipped (``needs_llm`` says which; ``generate`` says so at start).

One module per family: ``build`` (the project the requests asked for), ``extend`` (the next
feature after a working state), ``qa`` (a question about the project's data); ``window`` is what
build and extend share (repair's rules over a window, the hidden tests' interface, the
instruction's frame), ``turns`` a trajectory as the user's requests and what followed each,
``common`` asking and dropping.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from groundwork.core.failures import said
from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult, StateIndex

from ..mining.candidate import RepairCandidate
from ..mining.drops import Drop, DropReason
from ..mining.repair import PROJECT_DIR, find_repair_candidates
from ..mining.scriptfiles import Above
from .build import find_build_candidates
from .common import Asks
from .extend import find_extend_candidates
from .qa import find_qa_candidates

LLM_FAMILIES = ("build", "extend", "qa")
Finder = Callable[..., tuple[list[RepairCandidate], list[Drop]]]
FINDERS: dict[str, Finder] = {
    "build": find_build_candidates,
    "extend": find_extend_candidates,
    "qa": find_qa_candidates,
}


def needs_llm(families: Iterable[str]) -> tuple[str, ...]:
    """The families among ``families`` that ask a model."""
    return tuple(f for f in families if f in LLM_FAMILIES)


def mine(
    replay: ReplayResult,
    index: StateIndex,
    blobs: BlobStore,
    atif: Mapping[str, Any],
    *,
    families: Iterable[str],
    llm: Asks | None,
    project_dir: str = PROJECT_DIR,
    above: Above | None = None,
) -> tuple[list[RepairCandidate], list[Drop]]:
    """Every asked family's candidates and drops for one replayed trajectory, family by family
    in the order asked. LLM families are skipped when ``llm`` is None. ``above``: a clone's
    files above the session's folder (repair's script runners read them)."""
    candidates: list[RepairCandidate] = []
    drops: list[Drop] = []
    for position, family in enumerate(families):
        if family != "repair" and (llm is None or family not in FINDERS):
            continue
        try:
            if family == "repair":
                found, dropped = find_repair_candidates(
                    replay, index, blobs, atif, project_dir=project_dir, above=above
                )
            else:
                found, dropped = FINDERS[family](
                    replay, index, blobs, atif, llm=llm, project_dir=project_dir
                )
        except Exception as exc:  # one family's bug must not lose the run's other work
            drops.append(_failed(family, position, exc))
            continue
        candidates += found
        drops += dropped
    return candidates, drops


def _failed(family: str, position: int, exc: Exception) -> Drop:
    where = traceback.extract_tb(exc.__traceback__)[-1:]
    at = f" at {where[0].filename.rsplit('/', 2)[-1]}:{where[0].lineno}" if where else ""
    # Negative indices: no pair of runs, and one such drop per family of a trajectory.
    return Drop(
        family=family,
        stage="mine",
        reason=DropReason.MINER_FAILED,
        detail=f"{said(exc)}{at}"[:2000],
        fail_command_index=-1 - position,
        pass_command_index=-1 - position,
        fail_step_index=-1,
        pass_step_index=-1,
        command="",
    )
