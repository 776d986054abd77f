"""Every row a job claims is one kind of thing: it says which rows wait and which run, the field
a claim stamps exists, and its app's redelivery sweep looks for it, so no job is lost for ever."""

from __future__ import annotations

import pytest
from django.apps import apps

from groundwork.models import Beating, Job, PlainJob
from tasks_review import tasks as desk_tasks
from training import tasks as training_tasks
from trajectories import tasks as trajectory_tasks
from trajectories.models import IngestRun

JOB_ROWS = sorted(
    (m for m in apps.get_models() if issubclass(m, Beating)), key=lambda m: m._meta.label
)


def test_the_job_rows_are_the_eight_jobs_and_the_dataset_export():
    assert [m._meta.label for m in JOB_ROWS] == [
        "tasks_review.Candidate",
        "tasks_review.DatasetExport",
        "tasks_review.PipelineRun",
        "training.AuthoredTask",
        "training.EvalRun",
        "training.Rollout",
        "training.RolloutImport",
        "training.TrainingExport",
        "trajectories.IngestRun",
    ]


@pytest.mark.parametrize("model", JOB_ROWS, ids=lambda m: m._meta.label)
def test_a_job_row_says_what_waits_what_runs_and_what_a_claim_stamps(model):
    assert model.WAITING is not None and model.RUNNING is not None
    assert model._meta.get_field(model.STARTED).null
    assert model.QUEUE in ("default", "docker")
    if issubclass(model, Job):
        assert set(model.FINISHED) <= {
            value for value, _ in model._meta.get_field("status").choices
        }


def test_every_queued_job_row_is_in_its_apps_redelivery_sweep():
    swept = {
        kind.rows.model
        for module in (trajectory_tasks, desk_tasks, training_tasks)
        for kind in module._lost()
    }
    # An ingest run has no queued job to lose: a command or a pipeline run's own job runs it
    # in place, and a later ingest marks a dead one failed (ingest_runs_interrupted).
    assert set(JOB_ROWS) - swept == {IngestRun}


def test_the_jobs_with_no_state_of_their_own_share_one_status_block():
    plain = [m._meta.label for m in JOB_ROWS if issubclass(m, PlainJob)]
    assert plain == [
        "tasks_review.DatasetExport",
        "training.EvalRun",
        "training.RolloutImport",
        "trajectories.IngestRun",
    ]
    for label in plain:
        model = apps.get_model(label)
        assert model.Status is PlainJob.Status
        assert [v for v, _ in model._meta.get_field("status").choices] == [
            "queued",
            "running",
            "done",
            "failed",
        ]
