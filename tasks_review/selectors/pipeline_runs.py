"""What a finished pipeline run means for the command that started it."""

from __future__ import annotations

from tasks_review.models import Candidate, PipelineRun


def pipeline_exit_code(run: PipelineRun) -> int:
    """0 when the run produced what it was asked for, 1 when nothing usable.

    propose_only asks for candidates; otherwise tasks: kept ones when Docker verified them,
    written ones when verification is switched off; or, on a re-run, the tasks it made before
    and found again.
    """
    if run.status != PipelineRun.Status.DONE:
        return 1
    if run.counts.get("reused", 0) > 0:
        return 0
    if run.config["pipeline"]["options"].get("propose_only"):
        usable = Candidate.objects.filter(run=run, status=Candidate.Status.PROPOSED).exists()
    elif "verify" in run.timings:
        usable = run.counts.get("kept", 0) > 0
    else:
        usable = run.counts.get("written", 0) > 0
    return 0 if usable else 1
