"""Every learning-loop URL against every role: alice annotates (labels), bob reviews and dave
administers (they also decide, export and plan), carol approves (she reads decisions), eve has no
role, and an anonymous visitor is sent to log in."""

from __future__ import annotations

import pytest

from tests.training.factories.loop import behaviour_with, evaluated, pass_and_fail, tasks_of
from training.models import TrainingExport
from training.services.exports import training_export_create, training_export_execute
from training.services.pairs import pairs_build
from training.services.plans import training_plan_create

pytestmark = pytest.mark.django_db

PEOPLE = ("alice", "bob", "carol", "dave", "eve", None)
SEE = {"alice", "bob", "carol", "dave"}  # view_training
LABELLERS = {"alice", "bob", "dave"}  # label_pairs
LEADS = {"bob", "dave"}  # decide_behaviour, export_training, plan_training


@pytest.fixture
def world(people, settings, tmp_path):
    """A behaviour with evaluated rollouts, two pairs, a written export and a plan on it."""
    settings.VAR_DIR = tmp_path
    behaviour = behaviour_with("read-before-edit", train=2, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    pairs = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    export = training_export_create(user=people.bob, behaviour_id=behaviour.pk, kind="kto")
    export = training_export_execute(export_id=export.pk)
    assert export.status == TrainingExport.Status.DONE, export.refusal or export.error
    plan = training_plan_create(
        user=people.bob,
        export_id=export.pk,
        method="kto",
        base_model="Qwen/Qwen2.5-Coder-7B-Instruct",
        gpu_hours=4,
        money=10,
    )
    assert tasks_of(behaviour)
    return {
        "slug": behaviour.slug,
        "pair": pairs[0].pk,
        "other": pairs[1].pk,
        "export": export.pk,
        "plan": plan.pk,
    }


DECISION = {"kind": "prompt", "rationale": "a rule first"}

# (method, url template, data, who gets through, status when through)
MATRIX = [
    ("get", "/training/decisions/", None, SEE, 200),
    ("get", "/training/behaviours/{slug}/decide/", None, SEE, 200),
    ("post", "/training/behaviours/{slug}/decide/", DECISION, LEADS, 302),
    ("get", "/training/behaviours/{slug}/decide/files/AGENTS.md", None, SEE, 200),
    ("post", "/training/behaviours/{slug}/decide/hook-trial/", {}, LEADS, 200),
    ("get", "/training/labels/", None, LABELLERS, 200),
    ("post", "/training/labels/next/", {}, LABELLERS, 302),
    ("post", "/training/labels/build/{slug}/", {}, LEADS, 302),
    ("get", "/training/labels/pairs/{pair}/", None, LABELLERS, 200),
    ("post", "/training/labels/pairs/{pair}/hold/", {}, LABELLERS, 302),
    ("post", "/training/labels/pairs/{other}/skip/", {}, LABELLERS, 302),
    ("get", "/training/exports/", None, LEADS, 200),
    ("post", "/training/exports/", {"behaviour": "{slug}", "kind": "sft"}, LEADS, 302),
    ("get", "/training/exports/{export}/", None, LEADS, 200),
    ("get", "/training/exports/{export}/manifest.json", None, LEADS, 200),
    ("get", "/training/plans/", None, LEADS, 200),
    ("get", "/training/plans/new/", None, LEADS, 200),
    ("get", "/training/plans/{plan}/", None, LEADS, 200),
    ("get", "/training/plans/{plan}/plan.md", None, LEADS, 200),
    ("get", "/training/plans/{plan}/plan.yaml", None, LEADS, 200),
]  # fmt: skip


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
        data = {k: v.format(**world) for k, v in data.items()}
    response = getattr(client, method)(url.format(**world), data)
    if who is None:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    else:
        assert response.status_code == (ok if who in allowed else 403)
