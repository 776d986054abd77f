from dataclasses import replace

import pytest

from tests.training.factories.deploy_states import adapter
from training.core.deploy.adapters import AdapterError, registration_conflicts, version_key


def test_a_registered_version_is_keyed_by_name_and_version_and_served_under_a_distinct_name():
    a = adapter(version="1.2.0")
    assert a.key == "failing-test-repair-lora@1.2.0"
    assert a.served_name == "failing-test-repair-lora-v1.2.0"


def test_the_record_cannot_be_changed_once_made():
    with pytest.raises(AttributeError):
        adapter().version = "2.0.0"  # type: ignore[misc]


def test_registering_the_same_weights_again_is_the_same_version_whoever_registers_them():
    assert registration_conflicts(adapter(), adapter(registrar="dave")) == ()


@pytest.mark.parametrize(
    "field, value",
    [
        ("base_model", "meta-llama/Llama-3.1-8B"),
        ("training_plan", "plan-8"),
        ("dataset_sha256", "c" * 64),
        ("artifact_uri", "s3://adapters/other"),
        ("artifact_sha256", "d" * 64),
        ("rank", 32),
        ("eval_suite", "repair-held-out-v2"),
    ],
)
def test_reusing_a_version_number_for_anything_else_is_a_conflict_naming_the_field(field, value):
    assert registration_conflicts(adapter(), replace(adapter(), **{field: value})) == (field,)


def test_comparing_two_different_versions_is_a_programming_error():
    with pytest.raises(ValueError, match="is not a registration of"):
        registration_conflicts(adapter(), adapter(version="2.0.0"))


def test_the_name_must_start_with_its_behaviour_so_served_names_say_what_they_change():
    with pytest.raises(AdapterError, match="must start with its behaviour") as error:
        adapter(name="repair-lora")
    assert error.value.field == "name"
    assert adapter(name="failing-test-repair").name == "failing-test-repair"
    with pytest.raises(AdapterError):
        adapter(name="failing-test-repairish")


@pytest.mark.parametrize("value", ["Repair", "repair lora", "-repair", "repair--lora", ""])
def test_slugs_are_lowercase_words_joined_by_single_separators(value):
    with pytest.raises(AdapterError) as error:
        adapter(eval_suite=value)
    assert error.value.field == "eval_suite"


@pytest.mark.parametrize("value", ["1", "1.2", "1.2.3", "0.1.0", "10.20.30"])
def test_versions_are_one_to_three_numbers(value):
    assert adapter(version=value).version == value


@pytest.mark.parametrize("value", ["v1", "1.02", "1.2.3.4", "1.", "", "1.0-rc1", "01"])
def test_other_version_strings_are_refused(value):
    with pytest.raises(AdapterError) as error:
        adapter(version=value)
    assert error.value.field == "version"


def test_versions_order_numerically_and_missing_parts_are_zero():
    assert version_key("1.10") > version_key("1.9")
    assert version_key("1") == version_key("1.0.0")
    with pytest.raises(AdapterError):
        version_key("1.x")


@pytest.mark.parametrize("field", ["dataset_sha256", "artifact_sha256"])
@pytest.mark.parametrize("value", ["a" * 63, "A" * 64, "g" * 64, "sha256:" + "a" * 64])
def test_digests_are_64_lowercase_hex_digits(field, value):
    with pytest.raises(AdapterError) as error:
        adapter(**{field: value})
    assert error.value.field == field


@pytest.mark.parametrize(
    "uri",
    [
        "file:///srv/adapters/repair-1.0",
        "file://localhost/srv/adapters/repair-1.0",
        "s3://bucket/adapters/repair",
        "gs://bucket/adapters/repair",
        "hf://acme/repair-lora",
        "https://models.example.com/repair.tar",
    ],
)
def test_artifacts_live_on_local_disk_object_stores_the_hub_or_https(uri):
    assert adapter(artifact_uri=uri).artifact_uri == uri


@pytest.mark.parametrize(
    "uri, why",
    [
        ("http://models.example.com/repair.tar", "scheme"),
        ("ftp://models.example.com/repair.tar", "scheme"),
        ("/srv/adapters/repair", "scheme"),
        ("file://srv/adapters/repair", "absolute path"),
        ("file:///", "below /"),
        ("s3://bucket", "host or bucket and a path"),
        ("https://user:secret@models.example.com/repair.tar", "credentials"),
        ("https://models.example.com/repair.tar?X-Amz-Signature=abc", "credentials"),
    ],
)
def test_other_artifact_uris_are_refused_with_the_reason(uri, why):
    with pytest.raises(AdapterError, match=why):
        adapter(artifact_uri=uri)


@pytest.mark.parametrize("rank", [0, -8, True, 8.0])
def test_the_lora_rank_is_a_positive_integer(rank):
    with pytest.raises(AdapterError, match="rank"):
        adapter(rank=rank)


@pytest.mark.parametrize("field", ["base_model", "training_plan", "registrar"])
def test_provenance_fields_are_required(field):
    with pytest.raises(AdapterError, match="required"):
        adapter(**{field: ""})


def test_every_problem_of_a_registration_is_named_at_once():
    with pytest.raises(AdapterError) as error:
        adapter(version="v2", rank=0, dataset_sha256="x", base_model="")
    assert {field for field, _ in error.value.problems} == {
        "version",
        "rank",
        "dataset_sha256",
        "base_model",
    }


@pytest.mark.parametrize(
    "field, limit", [("version", 20), ("base_model", 200), ("training_plan", 200)]
)
def test_a_field_over_its_length_is_refused_in_words(field, limit):
    value = "1" * (limit + 1) if field == "version" else "m" * (limit + 1)
    with pytest.raises(AdapterError, match=f"at most {limit} are allowed") as error:
        adapter(**{field: value})
    assert error.value.field == field


@pytest.mark.parametrize("field", ["base_model", "training_plan", "artifact_uri"])
def test_a_field_holding_a_nul_character_is_refused_in_words(field):
    value = "file:///srv/a\x00" if field == "artifact_uri" else "m\x00"
    with pytest.raises(AdapterError, match="holds a NUL character") as error:
        adapter(**{field: value})
    assert error.value.field == field


def test_a_refused_uri_is_quoted_short_however_long_it_is():
    with pytest.raises(AdapterError) as error:
        adapter(artifact_uri="ftp://" + "a" * 900)
    assert len(str(error.value)) < 300 and "…" in str(error.value)
