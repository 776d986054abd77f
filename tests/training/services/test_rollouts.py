"""Grading rollouts: each held rollout beats on its row, and one a dead worker left grading is
taken over within a few beats (its sandboxes removed first), not after the job time limit."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from tasks_review.core.trials import TrialStatus, mined_task
from tasks_review.models import Candidate
from tests.tasks_review.factories import make_candidate
from tests.training.factories import make_rollout, repaired
from training.core.authored import authored_task
from training.core.harbor.regrade import Regrade, TaskGrader
from training.models import Rollout
from training.services import rollouts
from training.services.rollouts import rollouts_pending_by_task, rollouts_regrade

G = Rollout.Grade


class FullMarks:
    """The grader seam: every collected /app scores 1 after ``seconds``."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds

    def grade(self, app_dir, *, harbor_reward=None) -> Regrade:
        time.sleep(self.seconds)
        return Regrade(reward=1.0, status=TrialStatus.GRADED, harbor_reward=harbor_reward)


@pytest.fixture
def grader(monkeypatch, settings):
    """A fake grader at the Docker seam; the reclaims that asked for a dead run's containers."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HEARTBEAT_SECONDS": 30}
    settings.Q_CLUSTER = {
        **settings.Q_CLUSTER,
        "ALT_CLUSTERS": {settings.Q_DOCKER_CLUSTER: {"timeout": 1800}},
    }
    fake = FullMarks()
    removed: list[str] = []
    monkeypatch.setattr(TaskGrader, "prepare", classmethod(lambda cls, *a, **kw: fake))
    monkeypatch.setattr(
        rollouts,
        "dead_run_containers_remove",
        lambda run_id, **_: removed.append(run_id),
        raising=False,  # (absent before rollouts were reclaimed by their heartbeat)
    )
    return fake, removed


def grading(candidate, *, silent_for: timedelta) -> Rollout:
    """A rollout some worker took 10 minutes ago, last heard of ``silent_for`` ago."""
    now = timezone.now()
    return make_rollout(
        candidate,
        repaired(),
        reward=None,
        grade=G.GRADING,
        app_dir="/nonexistent/app",
        grade_started_at=now - timedelta(minutes=10),
        heartbeat_at=now - silent_for,
    )


@pytest.mark.django_db
def test_a_rollout_a_dead_worker_left_grading_is_taken_over_within_a_few_beats(grader, tmp_path):
    _fake, removed = grader
    candidate = make_candidate(task_dir=str(tmp_path))
    # Silent for 5 beats; started 10 minutes ago, well inside the 30-minute job limit.
    dead = grading(candidate, silent_for=timedelta(seconds=150))
    alive = grading(candidate, silent_for=timedelta(seconds=10))

    counts = rollouts_regrade(candidate_id=candidate.pk, rollout_ids=[dead.pk, alive.pk])

    assert counts == {"graded": 1, "ungraded": 0, "not_claimed": 1}
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.grade, dead.reward) == (G.GRADED, 1.0)
    assert alive.grade == G.GRADING  # its worker still beats: not taken
    assert removed == [f"regrade-{candidate.pk}"]  # the dead one's sandboxes, before grading


@pytest.mark.django_db
def test_a_silent_grading_rollout_waits_for_a_grader_again(grader, tmp_path):
    candidate = make_candidate(task_dir=str(tmp_path))
    dead = grading(candidate, silent_for=timedelta(seconds=150))
    grading(candidate, silent_for=timedelta(seconds=10))
    pending = make_rollout(candidate, repaired(), reward=None, grade=G.PENDING)
    make_rollout(candidate, repaired())  # graded

    assert rollouts_pending_by_task() == {candidate.pk: [dead.pk, pending.pk]}


@pytest.mark.django_db(transaction=True)
def test_grading_beats_on_the_rollouts_it_holds(grader, settings, tmp_path):
    fake, removed = grader
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "HEARTBEAT_SECONDS": 1}
    fake.seconds = 1.6  # long enough for a beat
    candidate = make_candidate(task_dir=str(tmp_path))
    rollout = make_rollout(candidate, repaired(), reward=None, grade=G.PENDING)
    claimed = timezone.now()

    rollouts_regrade(candidate_id=candidate.pk, rollout_ids=[rollout.pk])

    rollout.refresh_from_db()
    assert rollout.grade == G.GRADED and removed == []
    assert rollout.heartbeat_at - rollout.grade_started_at >= timedelta(seconds=1)
    assert rollout.grade_started_at >= claimed


def test_a_folder_path_over_path_max_is_refused_and_a_missing_one_quoted_short(people):
    from groundwork.access.errors import Invalid

    with pytest.raises(Invalid, match="folder is 204,800 characters long; at most 4,096"):
        rollouts.rollout_import_create(user=people.bob, path="/" + "p" * 204_799)
    with pytest.raises(Invalid, match="is not a folder") as refused:
        rollouts.rollout_import_create(user=people.bob, path="/nowhere/" + "p" * 3_000)
    assert len(str(refused.value)) < 300


@pytest.mark.django_db
def test_a_authored_task_is_graded_by_its_own_tests_and_a_mined_one_by_our_kit(
    grader, monkeypatch, tmp_path
):
    fake, _removed = grader
    sources = []

    def prepare(cls, task_dir, *, engine, run_id, source):
        sources.append(source)
        return fake

    monkeypatch.setattr(TaskGrader, "prepare", classmethod(prepare))
    for family in (Candidate.AUTHORED, "repair"):
        candidate = make_candidate(task_dir=str(tmp_path), family=family)
        rollout = make_rollout(candidate, repaired(), reward=None, grade=G.PENDING)
        rollouts_regrade(candidate_id=candidate.pk, rollout_ids=[rollout.pk], engine=object())
    assert sources == [authored_task, mined_task]
