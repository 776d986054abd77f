"""Every candidate the real corpus yields becomes a task that Harbor loads and lints clean."""

from __future__ import annotations

import hashlib

import pytest
from harbor.lint import LintRule, lint_task
from harbor.models.task.task import Task

from tasks_review.core.taskfiles import SourceTrace, write_task
from trajectories.core.formats import NotTrajectory, discover, load

from .mining.test_repair_corpus import CORPUS_OUTCOMES, mined

pytestmark = pytest.mark.corpus

IMAGE = "node:20-bookworm-slim@sha256:" + "cd" * 32


def test_every_corpus_candidate_writes_a_task_harbor_accepts(corpus, tmp_path):
    written = 0
    for path in discover([corpus]):
        loaded = load(path)
        if isinstance(loaded, NotTrajectory):
            continue
        _, _, blobs, candidates, _ = mined(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        for candidate in candidates:
            task = write_task(
                tmp_path / candidate.key[:16],
                candidate,
                candidate.instruction,
                blobs,
                source_trace=SourceTrace.for_candidate(digest, candidate),
                source_model=loaded.meta.model_name,
                base_image=IMAGE,
            )
            assert Task(task).instruction == candidate.instruction
            assert lint_task(task, selected_rules=set(LintRule)) == [], task
            written += 1
    # As many as mining keeps: none today (test_repair_corpus lists why each repair drops).
    assert written == sum(1 for *_, outcome in CORPUS_OUTCOMES if outcome == "candidate")
