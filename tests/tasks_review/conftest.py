"""Fixtures shared by the review desk's tests."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tasks_review.models import Candidate
from tasks_review.services import reviews
from tests.tasks_review.factories import make_candidate, make_review, make_task_dir


@pytest.fixture
def two_reviews(settings):
    """Two independent reviews decide a candidate (one is the default)."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 2}


@pytest.fixture
def accepted(people, tmp_path):
    """Two accepted candidates with task folders, plus ones that must stay out of the export."""
    tasks = tmp_path / "tasks"
    a = make_candidate(task_dir=str(make_task_dir(tasks, "repair-invoice")))
    b = make_candidate(task_dir=str(make_task_dir(tasks, "repair-parser")))
    reviews.review_submit(user=people.alice, candidate_id=a.pk, decision="accept")
    reviews.review_submit(
        user=people.alice, candidate_id=b.pk, decision="accept", reason="other", comment="ok"
    )
    rejected = make_candidate(task_dir=str(make_task_dir(tasks, "repair-rejected")))
    reviews.review_submit(
        user=people.alice, candidate_id=rejected.pk, decision="reject", reason="too_easy"
    )
    no_folder = make_candidate(task_dir="")
    reviews.review_submit(user=people.alice, candidate_id=no_folder.pk, decision="accept")
    return a, b


@pytest.fixture
def reviewed(people):
    """Reviews to measure agreement on, every candidate's reviews complete: c1 A/A (alice, bob);
    c2 R/A; c3 R/R/R (alice, bob, dave); c4 N (bob) / A (dave). An adjudication on c2 is not an
    opinion and must not count."""
    A, R, N = "accept", "reject", "needs_fix"  # noqa: N806 (as the agreement tests spell them)
    cs = [make_candidate(trials=False) for _ in range(4)]
    for c, decisions, status in zip(
        cs,
        [
            {"alice": A, "bob": A},
            {"alice": R, "bob": A},
            {"alice": R, "bob": R, "dave": R},
            {"bob": N, "dave": A},
        ],
        ["accepted", "rejected", "rejected", "disputed"],
        strict=True,
    ):
        for name, decision in decisions.items():
            make_review(c, getattr(people, name), decision)
        Candidate.objects.filter(pk=c.pk).update(review_status=status)
    frank = User.objects.create_user("frank")
    make_review(cs[1], frank, R, is_adjudication=True)
    return cs


@pytest.fixture(scope="module")
def docker_engine():
    """This machine's Docker engine (or a skip saying why there is none), for the tests that
    run the pipeline's verify stage."""
    from groundwork.core.docker import Engine, InfraError

    try:
        return Engine.from_env()
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")
