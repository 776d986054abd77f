"""Every training URL against every role: all four roles see the floor; reviewers and admins
(bob, dave) edit behaviours, start evals and import or re-grade rollouts; eve has no role; an
anonymous visitor is sent to log in."""

from __future__ import annotations

import pytest

from tests.tasks_review.factories import make_candidate
from tests.training.core.harbor.test_jobs import write_trial
from tests.training.factories import make_rollout, repaired
from tests.training.views.helpers import make_evaluated
from training.services.rollouts import rollout_import_create
from training.views.behaviours import STARTER

pytestmark = pytest.mark.django_db

PEOPLE = ("alice", "bob", "carol", "dave", "eve", None)
SEE = {"alice", "bob", "carol", "dave"}  # view_training
TRAIN = {"bob", "dave"}  # edit_behaviour, run_eval


@pytest.fixture
def world(people, tmp_path):
    """The evaluated behaviour, a kept task not yet chosen, an ungraded rollout, an import
    and a jobs folder to import."""
    evaluated = make_evaluated(people.bob)
    spare = make_candidate(trials=False)
    ungraded = make_rollout(spare, repaired(), reward=None, grade="ungraded")
    jobs = tmp_path / "jobs"
    write_trial(jobs / "t__1")
    return {
        "slug": evaluated.behaviour.slug,
        "run": evaluated.run.pk,
        "result": evaluated.good_result.pk,
        "spare": spare.pk,
        "rollout": ungraded.pk,
        "import": rollout_import_create(user=people.bob, path=jobs).pk,
        "jobs": str(jobs),
    }


# (method, url template, data, who gets through, status when through)
MATRIX = [
    ("get", "/training/behaviours/", None, SEE, 200),
    ("post", "/training/behaviours/seed/", {}, TRAIN, 302),
    ("get", "/training/behaviours/new/", None, TRAIN, 200),
    ("post", "/training/behaviours/new/", {"spec": STARTER}, TRAIN, 302),
    ("get", "/training/behaviours/{slug}/", None, SEE, 200),
    ("get", "/training/behaviours/{slug}/edit/", None, TRAIN, 200),
    ("post", "/training/behaviours/{slug}/edit/", {"spec": "{}"}, TRAIN, 422),
    ("post", "/training/behaviours/{slug}/tasks/", {"candidate": "{spare}"}, TRAIN, 302),
    ("post", "/training/behaviours/{slug}/evals/", {"k": "1"}, TRAIN, 302),
    ("get", "/training/evals/{run}/", None, SEE, 200),
    ("get", "/training/results/{result}/", None, SEE, 200),
    ("get", "/training/rollouts/", None, SEE, 200),
    ("post", "/training/rollouts/import/", {"path": "{jobs}"}, TRAIN, 302),
    ("get", "/training/rollouts/imports/{import}/", None, SEE, 200),
    ("post", "/training/rollouts/{rollout}/regrade/", {}, TRAIN, 302),
]


@pytest.mark.parametrize("who", PEOPLE, ids=lambda w: w or "anonymous")
@pytest.mark.parametrize(
    ("method", "url", "data", "allowed", "ok"),
    MATRIX,
    ids=[f"{m.upper()} {u}" for m, u, *_ in MATRIX],
)
def test_role_matrix(client, people, world, who, method, url, data, allowed, ok):
    if who:
        client.force_login(getattr(people, who))
    if data:
        # "{name}" stands for a row of the world; anything else (a spec) is sent as it is
        data = {key: world.get(value.strip("{}"), value) for key, value in data.items()}
    response = getattr(client, method)(url.format(**world), data)
    if who is None:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    else:
        expected = ok if who in allowed else 403
        assert response.status_code == expected, response.content[:300]


def test_every_role_finds_the_training_link_in_the_top_bar(client, people, world):
    for who in ("alice", "bob", "carol", "dave"):
        client.force_login(getattr(people, who))
        page = client.get("/training/rollouts/").content.decode()
        assert '<a href="/training/behaviours/" aria-current="page">Training</a>' in page
        page = client.get("/runs/").content.decode()
        assert '<a href="/training/behaviours/" >Training</a>' in page
