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

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay import ReplayResult, StateIndex

from ..mining.candidate import RepairCandidate
from ..mining.drops import Drop
from ..mining.repair import PROJECT_DIR, find_repair_candidates
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
) -> tuple[list[RepairCandidate], list[Drop]]:
    """Every asked family's candidates and drops for one replayed trajectory, family by family
    in the order asked. LLM families are skipped when ``llm`` is None."""
    candidates: list[RepairCandidate] = []
    drops: list[Drop] = []
    for family in families:
        if family == "repair":
            found, dropped = find_repair_candidates(
                replay, index, blobs, atif, project_dir=project_dir
            )
        elif llm is None or family not in FINDERS:
            continue
        else:
            found, dropped = FINDERS[family](
                replay, index, blobs, atif, llm=llm, project_dir=project_dir
            )
        candidates += found
        drops += dropped
    return candidates, drops
