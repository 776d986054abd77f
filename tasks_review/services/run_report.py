"""A pipeline run's report.json: built from its rows, kept on the run, written beside its tasks."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from django.utils import timezone

from tasks_review.core.clones import seed_counts
from tasks_review.core.dropsides import ENVIRONMENT, PRODUCT, limit_of
from tasks_review.core.families.usage import llm_by_family
from tasks_review.models import Candidate, PipelineRun
from tasks_review.selectors import runs
from tasks_review.selectors.families import skipped_families


def run_report_build(
    run: PipelineRun, counts: dict[str, int], timings: dict[str, float]
) -> dict[str, Any]:
    """report.json for the run as it stands: counts, every drop with its reason, yields, timings."""
    rows = Candidate.objects.filter(run=run).select_related("trajectory__source")
    drops = [
        {
            "candidate": c.id,
            "trajectory": c.trajectory_id,
            "source": c.trajectory.source.path,
            "family": c.family,
            "stage": c.drop_stage,
            "reason": c.drop_reason,
            "detail": c.drop_detail,
            "command": c.check_command,
            **_side(c.drop_stage, c.drop_reason, c.drop_detail),
        }
        for c in rows
        if c.status == Candidate.Status.DROPPED
    ]
    by_family: dict[str, dict[str, Any]] = {}
    for c in rows:
        fam = by_family.setdefault(c.family, {"candidates": 0, "written": 0, "kept": 0})
        fam["candidates"] += 1
        fam["written"] += c.status in (Candidate.Status.WRITTEN, Candidate.Status.KEPT)
        fam["kept"] += c.status == Candidate.Status.KEPT
    llm = llm_by_family((c.family, (c.payload or {}).get("llm") or {}) for c in rows)
    for name, fam in by_family.items():
        fam["yield"] = round(fam["written"] / fam["candidates"], 4) if fam["candidates"] else 0.0
        if name in llm:
            fam["llm"] = llm[name]
    timings = dict(timings)  # one dict in the summary and the report: _finish adds to it
    clones = list(run.clones or [])
    ungraded = runs.ungraded(run).to_dict()
    yields = runs.yields(run).to_dict()
    summary = {
        "run": run.id,
        "status": run.status,
        "destination": run.destination,
        "counts": counts,
        "timings": timings,
        "ungraded": {"count": ungraded["count"], "reasons": ungraded["reasons"]},
        "yield": by_family,
        "skipped_families": skipped_families(run),
        **yields,
        "clones": seed_counts(clones),
        # The product's drops (better mining could keep them) and the environment's limits.
        "drops": runs.drop_sides(run),
        # How the kept tasks' rewards are decided: hidden equivalence probes, or the check alone.
        "grading": {
            kind: sum(1 for c in rows if c.status == Candidate.Status.KEPT and c.grading == kind)
            for kind in Candidate.Grading.values
        },
    }
    return {
        "summary": summary,
        "run": run.id,
        "status": run.status,
        "config": run.config,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": timezone.now().isoformat(),
        "counts": counts,
        "drops": drops,
        "ungraded": ungraded,
        "yield": by_family,
        "skipped_families": summary["skipped_families"],
        "grading": summary["grading"],
        **yields,
        # Each trajectory a configured clone matched: the commit laid under it, or why none.
        "clones": clones,
        "timings": timings,
        "tasks": [
            {
                "candidate": c.id,
                "task": c.task_name,
                "path": c.task_dir,
                "status": c.status,
                "grading": c.grading,
            }
            for c in rows
            if c.task_dir
        ],
    }


def _side(stage: str, reason: str, detail: str) -> dict[str, Any]:
    limit = limit_of(stage, reason, detail)
    return {
        "side": ENVIRONMENT if limit is not None else PRODUCT,
        "limit": dataclasses.asdict(limit) if limit is not None else None,
    }


def run_report_write(run: PipelineRun) -> None:
    destination = Path(run.destination)
    destination.mkdir(parents=True, exist_ok=True)
    (destination / "report.json").write_text(json.dumps(run.report, indent=2) + "\n")
