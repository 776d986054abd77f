"""The one entry point over every asked family: a family that raises loses nothing else."""

from __future__ import annotations

from tasks_review.core import families
from tasks_review.core.mining import DropReason
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats import load
from trajectories.core.replay import StateIndex, replay

from ..mining.test_repair_samples import SAMPLES, STORIES


def _replayed():
    loaded = load(SAMPLES / STORIES["claude-code"].sample)
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    return result, StateIndex.build(result), blobs, loaded.atif


def test_a_family_that_raises_drops_as_miner_failed_and_the_others_still_mine(monkeypatch):
    def broken(*_args, **_kwargs):
        raise KeyError("tool_call_id")

    monkeypatch.setitem(families.FINDERS, "qa", broken)
    result, index, blobs, atif = _replayed()
    found, drops = families.mine(
        result, index, blobs, atif, families=("qa", "repair"), llm=object()
    )
    assert [c.family for c in found] == ["repair"]
    [failed] = drops
    assert (failed.family, failed.stage, failed.reason) == ("qa", "mine", DropReason.MINER_FAILED)
    assert failed.detail.startswith("a required field is missing: 'tool_call_id' at ")
    assert "test_mine.py" in failed.detail
