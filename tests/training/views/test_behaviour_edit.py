"""Writing specs on pages: a new behaviour, and each edit a new version whose old results keep
pointing at the version they used; problems come back at 422 with their JSON paths."""

from __future__ import annotations

import json

import pytest

from tests.tasks_review.factories import audit_events
from tests.training.factories import make_behaviour
from training.core.catalogue import catalogue
from training.models import Behaviour, BehaviourVersion
from training.views.behaviours import STARTER

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def html(response) -> str:
    return response.content.decode()


def spec_of(**changes) -> str:
    document = catalogue()["failing-test-repair"].to_dict()
    document.pop("version", None)
    return json.dumps({**document, **changes})


def test_the_edit_page_shows_the_latest_spec_as_json_in_a_monospace_textarea(client, people):
    make_behaviour()
    client.force_login(people.bob)
    page = html(client.get("/training/behaviours/failing-test-repair/edit/"))
    assert '<textarea name="spec" id="spec-text" class="spec-text" rows="30"' in page
    assert "&quot;slug&quot;: &quot;failing-test-repair&quot;" in page
    assert "Save as v2" in page and 'name="note"' in page
    fragment = html(client.get("/training/behaviours/failing-test-repair/edit/", headers=HX))
    assert fragment.strip().startswith('<form method="post" id="spec-editor"')


def test_saving_an_edit_makes_the_next_version_and_old_results_keep_theirs(
    client, people, evaluated
):
    client.force_login(people.bob)
    text = spec_of(pass_threshold=0.5)
    response = client.post(
        "/training/behaviours/failing-test-repair/edit/", {"spec": text, "note": "half is fine"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/training/behaviours/failing-test-repair/?version=2"
    v1, v2 = BehaviourVersion.objects.order_by("number")
    assert (v2.number, v2.note, v2.created_by, v2.spec["pass_threshold"]) == (
        2,
        "half is fine",
        people.bob,
        0.5,
    )
    assert v1.spec["pass_threshold"] == 1  # immutable
    evaluated.run.refresh_from_db()
    assert evaluated.run.version == v1
    assert [e.after["version"] for e in audit_events("behaviour.version")] == [2]


def test_problems_come_back_at_422_each_with_its_json_path_and_the_text_kept(client, people):
    make_behaviour()
    client.force_login(people.bob)
    document = json.loads(spec_of())
    document["evidence"][0]["check"] = "vibes"
    document["pass_threshold"] = 7
    text = json.dumps(document)
    response = client.post("/training/behaviours/failing-test-repair/edit/", {"spec": text})
    assert response.status_code == 422
    page = html(response)
    assert "The spec was not saved: 2 problems." in page
    assert "<li><code>$.pass_threshold</code>" in page
    assert "<li><code>$.evidence[0].check</code>" in page
    assert "&quot;vibes&quot;" in page  # the text as typed, not the stored spec
    assert BehaviourVersion.objects.count() == 1


def test_text_that_is_not_json_and_a_spec_with_no_expectations_are_refused(client, people):
    make_behaviour()
    client.force_login(people.bob)
    url = "/training/behaviours/failing-test-repair/edit/"
    broken = client.post(url, {"spec": '{"slug": "failing-test-repair",'})
    assert broken.status_code == 422 and "not JSON" in html(broken)
    hollow = spec_of(expected_actions=[], evidence=[], forbidden=[])
    empty = client.post(url, {"spec": hollow})
    assert empty.status_code == 422
    assert "would score every trajectory 1" in html(empty)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (spec_of(pass_threshold=float("nan")), "NaN"),
        (
            spec_of().replace('"slug"', '"x": ' + "[" * 100_000 + "]" * 100_000 + ', "slug"'),
            "deeper",
        ),
        (spec_of(description=json.loads("[" * 200 + "]" * 200)), "deeper"),
        (spec_of(title="lone").replace('"lone"', '"\\ud800 lone"'), "surrogate"),
        (spec_of(title="Read first\x00"), "NUL character"),
    ],
    ids=["nan", "deep", "deep-for-the-validator", "surrogate", "nul"],
)
def test_json_no_column_can_store_is_refused_with_422_on_both_editors(client, people, text, why):
    make_behaviour()
    client.force_login(people.bob)
    edited = client.post("/training/behaviours/failing-test-repair/edit/", {"spec": text})
    assert edited.status_code == 422 and why in html(edited)
    created = client.post("/training/behaviours/new/", {"spec": text.replace("failing-", "other-")})
    assert created.status_code == 422 and why in html(created)
    assert BehaviourVersion.objects.count() == 1


def test_an_unchanged_spec_is_a_409_and_a_renamed_one_a_422(client, people):
    make_behaviour()
    client.force_login(people.bob)
    url = "/training/behaviours/failing-test-repair/edit/"
    same = client.post(url, {"spec": spec_of()})
    assert same.status_code == 409 and "nothing changed since version 1" in html(same)
    renamed = client.post(url, {"spec": spec_of(slug="something-else")})
    assert renamed.status_code == 422 and "a behaviour keeps its name" in html(renamed)
    assert BehaviourVersion.objects.count() == 1


def test_a_new_behaviour_starts_from_a_valid_example_and_is_created_as_version_1(client, people):
    client.force_login(people.bob)
    page = html(client.get("/training/behaviours/new/"))
    assert "Create behaviour" in page and "&quot;my-behaviour&quot;" in page
    text = STARTER.replace("my-behaviour", "tests-before-push")
    response = client.post("/training/behaviours/new/", {"spec": text})
    assert response.status_code == 302
    assert response["Location"] == "/training/behaviours/tests-before-push/"
    behaviour = Behaviour.objects.get(slug="tests-before-push")
    assert behaviour.created_by == people.bob
    assert behaviour.latest_version().number == 1


def test_a_new_behaviour_with_a_taken_slug_is_409_and_a_page_name_422(client, people):
    make_behaviour()
    client.force_login(people.bob)
    taken = client.post("/training/behaviours/new/", {"spec": spec_of()})
    assert taken.status_code == 409 and "exists; edit it instead" in html(taken)
    for reserved in ("new", "seed"):
        response = client.post(
            "/training/behaviours/new/", {"spec": STARTER.replace("my-behaviour", reserved)}
        )
        assert response.status_code == 422
        assert "<code>$.slug</code>" in html(response)
    assert Behaviour.objects.count() == 1


def test_writing_specs_needs_the_edit_role(client, people):
    make_behaviour()
    client.force_login(people.alice)
    assert client.get("/training/behaviours/new/").status_code == 403
    assert client.post("/training/behaviours/new/", {"spec": STARTER}).status_code == 403
    url = "/training/behaviours/failing-test-repair/edit/"
    assert client.get(url).status_code == 403
    assert client.post(url, {"spec": spec_of(pass_threshold=0.5)}).status_code == 403
    assert client.get("/training/behaviours/no-such/edit/", headers=HX).status_code == 403
    client.force_login(people.bob)
    assert client.get("/training/behaviours/no-such/edit/").status_code == 404
