"""The four families over the real corpus (../shared/corpus, skipped when absent), mined with the
model answering from a server that derives schema-valid answers from each prompt
(``tests.llm_server.derived``: nobody hand-writes answers for third-party sessions whose
candidates move with every mining rule). Every LLM-family candidate is a proposal or a drop
with a stable reason, one request each, and the second run asks nothing."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.management import call_command

from tasks_review.core.mining import DropReason
from tasks_review.models import Candidate, PipelineRun
from tests.llm_server import MODEL, ModelServer, derived

pytestmark = [pytest.mark.corpus, pytest.mark.django_db]
FAMILIES = ["repair", "build", "extend", "qa"]


def run_over(corpus, tmp_path, name: str) -> PipelineRun:
    path = tmp_path / f"{name}.yaml"
    options = {"families": FAMILIES, "propose_only": True}
    path.write_text(
        f"source: {{kind: trajectory, path: {corpus}, format: auto}}\n"
        f"pipeline: {{name: trajectory_to_env, options: {json.dumps(options)}}}\n"
        f"output: {{destination: {tmp_path / name}}}\n"
    )
    with pytest.raises(SystemExit):
        call_command("generate", config=str(path))
    return PipelineRun.objects.latest("id")


def test_the_corpus_yields_llm_family_candidates_each_asked_once_and_never_again(
    corpus, settings, tmp_path
):
    with ModelServer(derived()) as server:
        settings.TRAJ2ENV = {
            **settings.TRAJ2ENV,
            "LLM_MODEL": MODEL,
            "LLM_API_BASE": server.url,
            "LLM_API_KEY": "unused",
            "LLM_CACHE_DIR": tmp_path / "llm-cache",
        }
        first = run_over(corpus, tmp_path, "first")
        asked = len(server.requests)
        second = run_over(corpus, tmp_path, "second")
        assert len(server.requests) == asked  # the cache answered every question
    rows = Candidate.objects.filter(run=first).exclude(family="repair")
    calls = [c for c in rows if (c.payload or {}).get("llm")]
    assert asked == len(calls) > 0
    assert all(not c.payload["llm"]["cached"] for c in calls)
    known = {str(r) for r in DropReason}
    assert {c.drop_reason for c in rows if c.status == "dropped"} <= known
    by = Counter((c.family, c.status) for c in rows)
    assert by[("build", "proposed")] >= 1  # the ClawBench session that wrote report_client.py
    report = first.report["summary"]["yield"]
    assert report["build"]["llm"]["calls"] >= 1
    again = second.report["summary"]["yield"]
    assert all(
        row["llm"]["calls"] == 0 and row["llm"]["cost_usd"] == 0.0
        for row in again.values()
        if "llm" in row
    )
