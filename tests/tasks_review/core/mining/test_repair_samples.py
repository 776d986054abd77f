"""The four bundled samples each tell one true repair story: each gives exactly one candidate."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tasks_review.core.instruction import added_lines
from tasks_review.core.mining import find_repair_candidates
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats import Loaded, load
from trajectories.core.replay import StateIndex, replay

SAMPLES = Path(__file__).resolve().parents[4] / "samples"


def _stories():
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while built
    spec.loader.exec_module(module)
    return module.STORIES


STORIES = _stories()


def mine_sample(fmt: str):
    story = STORIES[fmt]
    loaded = load(SAMPLES / story.sample)
    assert isinstance(loaded, Loaded)
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    candidates, drops = find_repair_candidates(result, StateIndex.build(result), blobs, loaded.atif)
    return story, loaded, blobs, candidates, drops


@pytest.mark.parametrize("fmt", sorted(STORIES))
def test_each_sample_yields_exactly_its_repair(fmt):
    story, loaded, blobs, candidates, drops = mine_sample(fmt)
    assert drops == []
    (candidate,) = candidates
    start = {path: blobs.get(sha).decode() for path, sha in candidate.start_files.items()}
    ref = {path: blobs.get(sha).decode() for path, sha in candidate.ref_files.items()}
    assert start == story.start, "the starting files are the buggy ones"
    assert ref == story.final, "the reference files are the fixed ones"
    assert candidate.command == story.command
    assert candidate.root == story.cwd
    assert candidate.language == ("node" if story.runtime in ("node", "npm") else "python")
    assert set(candidate.changed) == {
        p for p in story.final if story.start.get(p) != story.final[p]
    }
    assert not candidate.fix_edits_tests
    assert candidate.unknown_paths == ()


@pytest.mark.parametrize("fmt", sorted(STORIES))
def test_each_sample_instruction_has_the_request_and_the_failure_but_not_the_fix(fmt):
    story, loaded, blobs, candidates, _ = mine_sample(fmt)
    (candidate,) = candidates
    instruction = candidate.instruction
    assert story.request.split("\n")[0][:60] in instruction
    assert f"```sh\n{story.command}\n```" in instruction
    assert "Exit code" not in instruction and "Command exited" not in instruction
    assert story.cwd not in instruction, "the recorded root is rewritten to /app"
    fix_lines = added_lines(candidate.start_files, candidate.ref_files, blobs)
    assert fix_lines, "the fix adds lines the check could find"
    assert not [line for line in fix_lines if line in instruction]
    # The failing output is the one the log recorded, trimmed only of harness lines.
    recorded = [line for line in story.fail_output.splitlines() if line.strip()]
    assert recorded[-1].replace(story.cwd, "/app") in candidate.failing_output
