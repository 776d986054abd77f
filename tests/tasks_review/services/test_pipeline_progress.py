"""The pipeline's progress seam: what a caller of ``pipeline_run_execute`` hears, in order."""

import pytest

from tasks_review.core.config import parse_config
from tasks_review.services.pipeline import pipeline_run_create, pipeline_run_execute
from tests.conftest import SAMPLES

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_docker")]


def run_samples(tmp_path, events: list) -> None:
    config = parse_config(
        {
            "source": {"path": str(SAMPLES), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env"},
            "output": {"destination": str(tmp_path)},
        },
        base_dir=tmp_path,
    )
    run = pipeline_run_create(config=config)
    pipeline_run_execute(run_id=run.id, progress=events.append)


def test_progress_hears_each_stage_start_every_item_and_its_end_in_order(tmp_path):
    events: list = []
    run_samples(tmp_path, events)
    stages = [e.stage for e in events]
    assert list(dict.fromkeys(stages)) == ["ingest", "replay", "mine", "write"]
    assert stages == sorted(stages, key=["ingest", "replay", "mine", "write"].index)
    for stage in ("replay", "mine", "write"):
        mine = [e for e in events if e.stage == stage]
        assert [e.done for e in mine] == [0, 1, 2, 3, 4, 4]  # start, each item, end
        assert {e.total for e in mine} == {4}
        assert [e.finished for e in mine] == [False] * 5 + [True]
        assert [e.elapsed for e in mine] == sorted(e.elapsed for e in mine)
    ingest = [e for e in events if e.stage == "ingest"]
    assert ingest[-1].done == ingest[-1].total == 5 and ingest[-1].finished  # five files


def test_progress_carries_the_runs_counts_as_they_grow(tmp_path):
    events: list = []
    run_samples(tmp_path, events)
    mined = [e.counts["candidates"] for e in events if e.stage == "mine"]
    assert mined[0] == 0 and mined[-1] == 4 and mined == sorted(mined)
    assert [e.counts["written"] for e in events if e.stage == "write"][-1] == 4
    assert events[-1].counts["trajectories"] == 4


def test_a_miner_that_raises_on_one_trajectory_is_a_drop_and_the_run_goes_on(tmp_path, monkeypatch):
    from tasks_review.core.mining import repair
    from tasks_review.models import Candidate, PipelineRun

    real = repair.find_repair_candidates
    calls = []

    def flaky(replay, *args, **kwargs):
        calls.append(replay.root)
        if len(calls) == 1:
            raise ValueError("an unexpected shape")
        return real(replay, *args, **kwargs)

    monkeypatch.setattr("tasks_review.core.families.find_repair_candidates", flaky)
    run_samples(tmp_path, [])
    run = PipelineRun.objects.get()
    assert run.status == PipelineRun.Status.DONE
    [failed] = Candidate.objects.filter(drop_reason="miner_failed")
    assert failed.drop_detail.startswith("an unexpected shape at ")
    assert (failed.fail_step, failed.pass_step) == (None, None)
    assert run.counts["written"] == 3  # the other three samples
