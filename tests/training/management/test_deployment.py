"""`manage.py adapter_register` and `manage.py deployment ACTION`: register, propose, approve,
activate and kill from the terminal as named users, through the pages' services, so the role
checks and the two-person rule hold; exit 0 done, 1 refused, 2 a usage error."""

from __future__ import annotations

import pytest

from groundwork.models import AuditEvent
from tests.training.factories.deploy import (
    BASE_MODEL,
    approver_who_reviews,
    gated_world,
    held_out_behaviour,
)
from tests.training.factories.loop import written_export
from training.models import Adapter, Deployment

pytestmark = pytest.mark.django_db

REGISTER = (
    "failing-test-repair-lora@1.0", "--behaviour", "failing-test-repair",
    "--base-model", BASE_MODEL, "--artifact-uri", "s3://adapters/repair/1.0",
    "--artifact-sha256", "b" * 64, "--dataset-sha256", "a" * 64, "--rank", "16",
    "--eval-suite", "repair-held-out", "--training-plan", "plan-1",
)  # fmt: skip


def test_registering_prints_the_key_and_registering_the_same_again_changes_nothing(manage, people):
    held_out_behaviour(tasks=1)
    ran = manage("adapter_register", *REGISTER, "--as", "bob", "--json")
    assert ran.code == 0, ran.err
    adapter = Adapter.objects.get()
    assert adapter.registered_by == people.bob
    assert ran.json == {
        "adapter": adapter.pk,
        "key": "failing-test-repair-lora@1.0",
        "served_name": "failing-test-repair-lora-v1.0",
        "behaviour": "failing-test-repair",
        "created": True,
    }
    ran = manage("adapter_register", *REGISTER, "--as", "bob", "--json")
    assert ran.code == 0 and ran.json["created"] is False
    other = [*REGISTER[:-2], "--training-plan", "plan-2"]
    ran = manage("adapter_register", *other, "--as", "bob")
    assert ran.code == 1 and "registered with other content (training_plan differ)" in ran.err


def test_registering_is_refused_to_an_approver_and_bad_fields_are_usage_errors(manage, people):
    held_out_behaviour(tasks=1)
    ran = manage("adapter_register", *REGISTER, "--as", "carol")
    assert ran.code == 1 and "register adapters" in ran.err
    ran = manage(
        "adapter_register", "failing-test-repair-lora@1.0.0.0", *REGISTER[1:], "--as", "bob"
    )
    assert ran.code == 2 and "version: use N, N.N or N.N.N" in ran.err
    ran = manage("adapter_register", "failing-test-repair-lora", *REGISTER[1:], "--as", "bob")
    assert ran.code == 2 and "is not NAME@VERSION" in ran.err
    assert manage("adapter_register", *REGISTER).code == 2  # --as is required
    assert not Adapter.objects.exists()


def test_propose_approve_activate_and_kill_by_two_people(manage, people):
    world = gated_world(people.bob)
    key = world.adapter.key
    ran = manage(
        "deployment", "propose", key, "--percent", "failing-test-repair=10", "--as", "bob", "--json"
    )
    assert ran.code == 0, ran.err
    deployment = Deployment.objects.get()
    assert ran.json["deployment"] == deployment.pk and ran.json["state"] == "proposed"
    assert ran.json["shares"]["failing-test-repair"]["requested"] == "10%"
    # the registrar and proposer may not approve; an approver may
    ran = manage("deployment", "approve", key, "--as", "bob")
    assert ran.code == 1 and "approve deployments" in ran.err
    ran = manage("deployment", "approve", str(deployment.pk), "--as", "carol", "--json")
    assert ran.code == 0, ran.err
    assert ran.json["state"] == "approved" and ran.json["drill"]["adapter"] is None
    ran = manage("deployment", "activate", key, "--as", "bob", "--json")
    assert ran.code == 0 and ran.json["state"] == "active"
    assert ran.json["shares"]["failing-test-repair"]["live"] == "10%"
    ran = manage("deployment", "kill", key, "--reason", "bad answers", "--as", "carol")
    assert ran.code == 0 and ran.out.strip() == (
        f"deployment {deployment.pk} ({key}): killed (bad answers)"
    )
    event = AuditEvent.objects.get(verb="deployment.kill")
    assert event.actor == people.carol and event.after["reason"] == "bad answers"


def test_one_person_in_both_roles_cannot_approve_their_own_proposal(manage, people):
    frank = approver_who_reviews()
    world = gated_world(people.bob)
    manage("deployment", "propose", world.adapter.key, "--percent", "failing-test-repair=5",
           "--as", frank.username)  # fmt: skip
    ran = manage("deployment", "approve", world.adapter.key, "--as", frank.username)
    assert ran.code == 1 and "proposed this deployment and cannot approve it too" in ran.err
    assert Deployment.objects.get().state == "proposed"


def test_a_failing_gate_refuses_the_approval_with_exit_1(manage, people):
    world = gated_world(people.bob, adapter_kind="claimed_only")
    manage("deployment", "propose", world.adapter.key, "--percent", "failing-test-repair=10",
           "--as", "bob")  # fmt: skip
    ran = manage("deployment", "approve", world.adapter.key, "--as", "carol")
    assert ran.code == 1 and "the held-out gate blocks" in ran.err


def test_usage_errors_exit_2_naming_what_is_wrong(manage, people):
    world = gated_world(people.bob)
    key = world.adapter.key
    cases = [
        (("propose", key), "--percent SLUG=PCT"),
        (("propose", key, "--percent", "failing-test-repair"), "is not SLUG=PCT"),
        (("propose", key, "--percent", "failing-test-repair=lots"), "failing-test-repair=lots"),
        (("propose", "nope@1.0", "--percent", "failing-test-repair=1"), "no adapter 'nope@1.0'"),
        (("approve", key), f"{key} has no deployment; propose one first"),
        (("approve", "999"), "no deployment 999"),
        (("kill", key), "say why with --reason"),
        (("approve", key, "--reason", "x"), "--reason is for kill, rollback and retire"),
    ]
    for args, message in cases:
        ran = manage("deployment", *args, "--as", "bob", "--json")
        assert ran.code == 2 and message in ran.json["error"], (args, ran.err)
    assert not Deployment.objects.exists()


def test_an_adapter_names_the_export_it_was_trained_on_by_its_folder(manage, people, tmp_path):
    export = written_export(people.bob, tmp_path / "sft")
    without = [a for a in REGISTER if a not in ("--dataset-sha256", "a" * 64)]
    ran = manage("adapter_register", *without, "--export", export.out_dir, "--as", "bob")
    assert ran.code == 0, ran.err
    assert Adapter.objects.get().dataset_sha256 == export.sha256
    ran = manage("adapter_register", *without, "--export", str(tmp_path / "no"), "--as", "bob")
    assert ran.code == 2 and "no written training export" in ran.err
