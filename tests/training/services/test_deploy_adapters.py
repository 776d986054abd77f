"""Adapter versions are registered once: the same content again is a no-op, other content under
the same version is refused naming what differs, and the row never changes."""

from __future__ import annotations

import json

import pytest

from groundwork.access.errors import Conflict, Invalid, NotFound, NotPermitted
from groundwork.models import AuditEvent
from tests.training.factories.deploy import REPAIR, artifact_digest, held_out_behaviour, register
from training.models import Adapter
from training.services.deploy_adapters import adapter_register

pytestmark = pytest.mark.django_db


@pytest.fixture
def repair(db):
    return held_out_behaviour(REPAIR, tasks=1)


def test_registering_stores_the_version_its_served_name_and_an_audit_event(people, repair):
    adapter = register(people.bob, repair, "1.2.0")
    assert adapter.key == "failing-test-repair-lora@1.2.0"
    assert adapter.served_name == "failing-test-repair-lora-v1.2.0"
    assert adapter.registered_by == people.bob and adapter.behaviour == repair
    event = AuditEvent.objects.get(verb="adapter.register")
    assert event.actor == people.bob and event.after["adapter"] == adapter.key


def test_registering_the_same_content_again_changes_nothing_and_keeps_the_first_registrar(
    people, repair
):
    first = register(people.bob, repair)
    again = register(people.dave, repair, dataset_sha256="A" * 64)  # case is not content
    assert again == first and again.registered_by == people.bob
    assert Adapter.objects.count() == 1
    assert AuditEvent.objects.filter(verb="adapter.register").count() == 1


def test_other_content_under_a_registered_version_is_refused_naming_what_differs(people, repair):
    register(people.bob, repair)
    with pytest.raises(Conflict) as refused:
        register(people.bob, repair, artifact_sha256="c" * 64, rank=32)
    assert "failing-test-repair-lora@1.0 is registered with other content" in str(refused.value)
    assert "(artifact_sha256, rank differ)" in str(refused.value)
    assert Adapter.objects.get().artifact_sha256 == artifact_digest(repair.slug, "1.0")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("name", "other-lora", "must start with its behaviour's slug"),
        ("version", "1.01", "use N, N.N or N.N.N"),
        ("artifact_uri", "http://example.com/w", "scheme must be one of"),
        ("artifact_uri", "s3://key:secret@bucket/w", "must not carry credentials"),
        ("dataset_sha256", "abc", "64 lowercase hexadecimal digits"),
        ("rank", 0, "must be a positive integer"),
    ],
)
def test_a_registration_the_core_refuses_is_refused_in_words(people, repair, field, value, words):
    with pytest.raises(Invalid, match=words):
        register(people.bob, repair, **{field: value})
    assert not Adapter.objects.exists()


def test_an_unknown_behaviour_and_an_annotator_are_refused(people, repair):
    with pytest.raises(NotFound, match="no behaviour 'nowhere'"):
        adapter_register(
            user=people.bob,
            behaviour="nowhere",
            name="nowhere-lora",
            version="1",
            eval_suite="suite",
            base_model="qwen-coder",
            training_plan="plan-7",
            dataset_sha256="a" * 64,
            artifact_uri="s3://adapters/nowhere/1",
            artifact_sha256="b" * 64,
            rank=8,
        )
    with pytest.raises(NotPermitted):
        register(people.alice, repair)


def test_an_adapter_row_is_immutable(people, repair):
    adapter = register(people.bob, repair)
    adapter.artifact_uri = "s3://adapters/elsewhere/1.0"
    with pytest.raises(PermissionError):
        adapter.save()


def test_a_local_adapter_whose_adapter_config_has_another_rank_is_refused(people, repair, tmp_path):
    (tmp_path / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8}))
    with pytest.raises(Invalid, match="registered with rank 16, but its adapter_config.json"):
        register(people.bob, repair, artifact_uri=f"file://{tmp_path}", rank=16)
    assert not Adapter.objects.exists()
    assert register(people.bob, repair, artifact_uri=f"file://{tmp_path}", rank=8).rank == 8
