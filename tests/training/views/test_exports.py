"""The training exports pages: a form that starts an export as a job, an export's page that polls
while it runs and stops with 286, then shows the manifest or the refusal in words."""

from __future__ import annotations

import pytest

from tests.training.factories.loop import (
    FIXED,
    behaviour_with,
    evaluated,
    fixing,
    make_trajectory_rollout,
    pass_and_fail,
    tasks_of,
)
from training.models import Rollout, TrainingExport
from training.selectors import labels as label_reads
from training.services import labels
from training.services.exports import training_export_create, training_export_execute
from training.services.pairs import pairs_build

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def behaviour(people, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    behaviour = behaviour_with(train=2)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    evaluated(behaviour)
    return behaviour


def test_the_form_starts_an_export_that_a_worker_writes(
    client, people, behaviour, q_sync, django_capture_on_commit_callbacks
):
    client.force_login(people.bob)
    page = client.get("/training/exports/").content.decode()
    assert "Start an export" in page and "No training exports yet" in page
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post("/training/exports/", {"behaviour": behaviour.slug, "kind": "sft"})
    export = TrainingExport.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/training/exports/{export.pk}/"
    assert len(callbacks) == 1 and export.created_by == people.bob
    assert export.status == TrainingExport.Status.DONE, export.refusal or export.error
    html = client.get(response["Location"]).content.decode()
    assert "<html" in html and f'id="training-export-{export.pk}"' in html
    assert export.sha256 in html and 'id="sources"' in html and "every 1s" not in html
    assert "Plan training on it" in html
    assert "Second check: atif-scan" in html
    listing = client.get("/training/exports/").content.decode()
    assert f'id="training-export-row-{export.pk}"' in listing


def test_a_running_export_polls_and_a_finished_one_stops_it(client, people, behaviour, tmp_path):
    client.force_login(people.dave)
    export = training_export_create(
        user=people.dave, behaviour_id=behaviour.pk, kind="kto", out_dir=tmp_path / "k"
    )
    target = {**HX, "HX-Target": f"training-export-{export.pk}"}
    running = client.get(f"/training/exports/{export.pk}/", headers=target)
    body = running.content.decode().strip()
    assert running.status_code == 200 and "<html" not in body
    assert body.startswith(f'<section class="card export-card" id="training-export-{export.pk}"')
    assert 'hx-trigger="every 1s"' in body and "waiting for a worker" in body
    training_export_execute(export_id=export.pk)
    done = client.get(f"/training/exports/{export.pk}/", headers=target)
    assert done.status_code == 286  # htmx swaps the finished export in, then stops polling
    assert "every 1s" not in done.content.decode() and "redactions" in done.content.decode()


def test_a_refused_export_says_why_and_what_to_do(client, people, behaviour, tmp_path):
    task = tasks_of(behaviour)[0]
    make_trajectory_rollout(task.candidate, fixing("ls"), reward=1.0, world=FIXED)
    export = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "r"
    )
    training_export_execute(export_id=export.pk)
    client.force_login(people.bob)
    html = client.get(f"/training/exports/{export.pk}/").content.decode()
    assert "Refused:" in html and "the eval harness has not run on every included rollout" in html
    assert "Run an eval of this version over the new rollouts" in html
    assert client.get(f"/training/exports/{export.pk}/manifest.json").status_code == 404


def test_the_manifest_is_served_as_json(client, people, behaviour, tmp_path):
    export = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="openai", out_dir=tmp_path / "o"
    )
    client.force_login(people.bob)
    assert client.get(f"/training/exports/{export.pk}/manifest.json").status_code == 404
    training_export_execute(export_id=export.pk)
    manifest = client.get(f"/training/exports/{export.pk}/manifest.json").json()
    assert manifest["kind"] == "openai" and manifest["counts"]["rows"] == 2


def test_a_form_without_a_behaviour_or_with_a_bad_kind_is_refused_with_422(
    client, people, behaviour
):
    client.force_login(people.bob)
    response = client.post("/training/exports/", {"behaviour": "", "kind": "sft"})
    assert (
        response.status_code == 422 and "Choose a behaviour to export." in response.content.decode()
    )
    response = client.post("/training/exports/", {"behaviour": behaviour.slug, "kind": "rlhf"})
    assert response.status_code == 422 and "unknown export kind" in response.content.decode()
    assert not TrainingExport.objects.exists()


def test_exports_are_for_reviewers_and_admins(client, people, behaviour):
    for who in (people.alice, people.carol, people.eve):
        client.force_login(who)
        assert client.get("/training/exports/").status_code == 403


def test_a_stale_export_is_marked_with_why_on_both_pages_and_can_be_exported_again(
    client, people, behaviour, tmp_path, q_sync, django_capture_on_commit_callbacks
):
    export = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "s"
    )
    export = training_export_execute(export_id=export.pk)
    client.force_login(people.bob)
    marker = f'id="training-export-stale-{export.pk}"'
    assert marker not in client.get("/training/exports/").content.decode()
    assert "Plan training on it" in client.get(f"/training/exports/{export.pk}/").content.decode()
    rollout = Rollout.objects.get(pk=int(export.manifest["sources"][0]["trajectory_id"]))
    Rollout.objects.filter(pk=rollout.pk).update(reward=0.0)  # re-graded since the export
    for url, headers in (
        ("/training/exports/", {}),
        ("/training/exports/", HX),
        (f"/training/exports/{export.pk}/", {}),
        (f"/training/exports/{export.pk}/", {**HX, "HX-Target": f"training-export-{export.pk}"}),
    ):
        html = client.get(url, headers=headers).content.decode()
        assert marker in html and "its inputs changed since it was written" in html, url
        assert f'action="/training/exports/{export.pk}/again/"' in html, url
    assert (
        "Plan training on it" not in client.get(f"/training/exports/{export.pk}/").content.decode()
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/training/exports/{export.pk}/again/")
    again = TrainingExport.objects.exclude(pk=export.pk).get()
    assert response.status_code == 302 and response["Location"] == f"/training/exports/{again.pk}/"
    assert (again.behaviour, again.kind, again.created_by) == (behaviour, "sft", people.bob)
    assert again.status == TrainingExport.Status.DONE, again.refusal or again.error
    assert again.out_dir != export.out_dir
    listing = client.get("/training/exports/").content.decode()
    assert marker in listing and f'id="training-export-stale-{again.pk}"' not in listing


def test_exporting_again_is_for_those_who_export(client, people, behaviour, tmp_path):
    export = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "s"
    )
    client.force_login(people.alice)
    assert client.post(f"/training/exports/{export.pk}/again/").status_code == 403
    client.force_login(people.bob)
    assert client.get(f"/training/exports/{export.pk}/again/").status_code == 405
    assert TrainingExport.objects.count() == 1


def test_a_dpo_exports_page_counts_the_pairs_people_called_both_bad(
    client, people, behaviour, settings, tmp_path
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    chosen, bad = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    for user in (people.alice, people.bob):
        left = label_reads.sides(chosen, user).left
        choice = "A" if left == chosen.rollout_a_id else "B"  # both prefer rollout a
        labels.pair_label_submit(user=user, pair_id=chosen.pk, choice=choice, left=left)
        left = label_reads.sides(bad, user).left
        labels.pair_label_submit(user=user, pair_id=bad.pk, choice="both_bad", left=left)
    export = training_export_create(
        user=people.bob, behaviour_id=behaviour.pk, kind="dpo", out_dir=tmp_path / "d"
    )
    export = training_export_execute(export_id=export.pk)
    assert export.status == TrainingExport.Status.DONE, export.refusal or export.error
    client.force_login(people.bob)
    html = client.get(f"/training/exports/{export.pk}/").content.decode()
    assert "<code>both_bad</code> 1" in html and "<code>labels</code> 1" in html
