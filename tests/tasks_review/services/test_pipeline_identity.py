"""A candidate is its content key: running the pipeline again over the same trajectories finds
the tasks it made before and reuses them (verdicts, reviews and all) instead of adding pending
copies, and says how many it reused."""

import pytest

from tasks_review.core.config import parse_config
from tasks_review.models import Candidate, PipelineRun
from tasks_review.services.pipeline import pipeline_run_create, pipeline_run_execute
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_docker")]


def run_samples(destination) -> PipelineRun:
    config = parse_config(
        {
            "source": {"path": str(SAMPLES), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env"},
            "output": {"destination": str(destination)},
        },
        base_dir=destination,
    )
    run = pipeline_run_create(config=config)
    done = pipeline_run_execute(run_id=run.id)
    assert done is not None
    return done


def test_a_re_run_reuses_the_candidates_it_made_before(tmp_path):
    first = run_samples(tmp_path / "one")
    made = list(Candidate.objects.exclude(status=Candidate.Status.DROPPED).order_by("id"))
    assert len(made) == 4 and first.counts["reused"] == 0
    Candidate.objects.filter(pk=made[0].pk).update(review_status=Candidate.ReviewStatus.REJECTED)

    again = run_samples(tmp_path / "two")
    assert again.counts["reused"] == 4
    assert again.counts["written"] == 0
    kept = Candidate.objects.exclude(status=Candidate.Status.DROPPED)
    assert list(kept.order_by("id")) == made  # no copy, pending or otherwise
    assert not kept.filter(run=again).exists()
    assert Candidate.objects.get(pk=made[0].pk).review_status == Candidate.ReviewStatus.REJECTED
    keys = list(kept.values_list("key", flat=True))
    assert len(keys) == len(set(keys))
