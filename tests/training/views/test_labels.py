"""The labelling pages: the queue with counts and agreement, a pair side by side (aligned, the
shared prefix apart, the divergence marked, each side's diff, identities hidden), the hold it
posts once open, a label that opens the next pair in place, skip, blind labels and refusals, with
and without HX-Request."""

from __future__ import annotations

import re

import pytest

from groundwork.models import AuditEvent
from groundwork.services import holds
from tests.training.core.helpers import Session
from tests.training.factories.loop import (
    FIXED,
    GUESSED,
    behaviour_with,
    fixing,
    guessing,
    make_trajectory_rollout,
    pass_and_fail,
    tasks_of,
)
from tests.trajectories.planted import CONFIG_FILE, ENV_FILE, GITHUB_TOKEN, USER_TEXT, leaked
from training.models import PairLabel, PreferencePair
from training.selectors import labels as reads
from training.services import labels
from training.services.labels import PAIRS
from training.services.pairs import pairs_build

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def pairs(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    behaviour = behaviour_with(train=2)
    for task in tasks_of(behaviour):
        pass_and_fail(task)
    return pairs_build(user=people.bob, behaviour_id=behaviour.pk)


def post_label(client, user, pair, choice="A", headers=None, **extra):
    left = reads.sides(pair, user).left
    data = {"choice": choice, "left": left, **extra}
    return client.post(f"/training/labels/pairs/{pair.pk}/label/", data, headers=headers or {})


def test_the_queue_counts_pairs_per_behaviour_and_offers_the_next(client, people, pairs):
    client.force_login(people.alice)
    for headers in ({}, HX):
        html = client.get("/training/labels/", headers=headers).content.decode()
        assert "Pairs by behaviour" in html and f'id="pairs-{pairs[0].behaviour_id}"' in html
        assert "Label the next pair" in html and "2 left for you" in html
        assert "Build pairs" not in html  # alice labels; she does not prepare data
    response = client.post("/training/labels/next/")
    assert response.status_code == 302
    assert response["Location"] == f"/training/labels/pairs/{pairs[0].pk}/"


def test_a_pair_shows_both_rollouts_aligned_with_the_divergence_and_each_diff(
    client, people, pairs
):
    client.force_login(people.alice)
    pair = pairs[0]
    html = client.get(f"/training/labels/pairs/{pair.pk}/").content.decode()
    assert "<html" in html and f'id="pair-{pair.pk}"' in html
    assert "Shared prefix: 1 step, the same on both sides" in html  # the user's request
    assert html.count("The rollouts diverge here") == 1
    assert "A's changes" in html and "B's changes" in html
    assert "src/invoice.py" in html and "+1" in html  # the passing side's fix, diffed
    sides = reads.sides(pair, people.alice)
    assert f'name="left" value="{sides.left}"' in html
    # Who did it stays hidden: neither the agents, nor the model, nor a call id.
    for name in ("codex", "claude-code", "claude-sonnet", "call_1"):
        assert name not in html


def test_the_pair_fragment_under_htmx_replaces_itself(client, people, pairs):
    client.force_login(people.alice)
    response = client.get(f"/training/labels/pairs/{pairs[0].pk}/", headers=HX)
    body = response.content.decode().strip()
    assert "<html" not in body and f'<article id="pair-{pairs[0].pk}"' in body
    assert "HX-Request" in response["Vary"]


# -- the hold -------------------------------------------------------------------------------------


def test_opening_a_pair_writes_nothing_and_the_page_posts_the_hold(client, people, pairs):
    pair = pairs[0]
    client.force_login(people.alice)
    for headers in ({}, HX):
        html = client.get(
            f"/training/labels/pairs/{pair.pk}/?behaviour={pair.behaviour.slug}", headers=headers
        ).content.decode()
        hold = f"/training/labels/pairs/{pair.pk}/hold/?behaviour={pair.behaviour.slug}"
        assert f'hx-post="{hold}" hx-trigger="load"' in html
        assert f'hx-sync="#pair-{pair.pk}:queue last"' in html  # a skip waits for the hold
        assert 'id="label-form"' in html and "Not held yet." in html
    pair.refresh_from_db()
    assert pair.held_by is None  # a prefetch or a link preview takes nothing
    assert not AuditEvent.objects.filter(target_type="preference_pair").exists()


def test_the_hold_post_holds_the_pair_and_answers_its_banner(client, people, pairs):
    pair = pairs[0]
    client.force_login(people.alice)
    slug = pair.behaviour.slug
    response = client.post(f"/training/labels/pairs/{pair.pk}/hold/?behaviour={slug}", headers=HX)
    pair.refresh_from_db()
    assert pair.held_by == people.alice
    html = response.content.decode()
    assert html.strip().startswith(f'<div id="hold-{pair.pk}" class="hold"')
    assert 'hx-trigger="load"' not in html  # no second take; the heartbeat renews it instead
    assert 'hx-trigger="hold-beat"' in html
    assert "Held for you until" in html and "<html" not in html
    held = AuditEvent.objects.filter(verb="preference_pair.hold", target_id=str(pair.pk))
    assert held.count() == 1
    client.post(f"/training/labels/pairs/{pair.pk}/hold/", headers=HX)  # the page opened again
    assert AuditEvent.objects.filter(verb="preference_pair.hold").count() == 1  # a renewal
    plain = client.post(f"/training/labels/pairs/{pair.pk}/hold/?behaviour={slug}")
    assert plain.status_code == 302
    assert plain["Location"] == f"/training/labels/pairs/{pair.pk}/?behaviour={slug}"
    held = client.get(f"/training/labels/pairs/{pair.pk}/").content.decode()
    assert "Held for you until" in held


def test_a_second_labellers_hold_post_sees_the_hold(client, people, pairs):
    pair = pairs[0]
    holds.hold(PAIRS, user=people.alice, row_id=pair.pk)
    client.force_login(people.bob)
    html = client.get(f"/training/labels/pairs/{pair.pk}/").content.decode()
    assert "Held by <strong>alice</strong>" in html
    assert 'id="label-form"' not in html and 'hx-trigger="load"' not in html
    response = client.post(f"/training/labels/pairs/{pair.pk}/hold/", headers=HX)
    assert response.status_code == 200
    assert "Held by <strong>alice</strong>" in response.content.decode()
    pair.refresh_from_db()
    assert pair.held_by == people.alice  # bob's post took nothing
    assert not AuditEvent.objects.filter(actor=people.bob, target_type="preference_pair").exists()


def test_leaving_a_held_pair_gives_it_back(client, people, pairs):
    pair = pairs[0]
    client.force_login(people.alice)
    html = client.post(f"/training/labels/pairs/{pair.pk}/hold/", headers=HX).content.decode()
    release = f"/training/labels/pairs/{pair.pk}/release/"
    assert f'data-hold-release="{release}"' in html
    assert client.post(release).status_code == 204  # the page's beacon as the tab closes
    pair.refresh_from_db()
    assert pair.held_by is None
    [event] = AuditEvent.objects.filter(verb="preference_pair.release")
    assert event.after["why"] == "left the page"


def test_the_next_pair_with_everything_held_says_who_holds_what_until_when(client, people, pairs):
    holds.hold(PAIRS, user=people.bob, row_id=pairs[0].pk)
    holds.hold(PAIRS, user=people.dave, row_id=pairs[1].pk)
    client.force_login(people.alice)
    response = client.post("/training/labels/next/")
    html = client.get(response["Location"]).content.decode()
    assert "2 pairs are held by others" in html
    assert f"#{pairs[0].pk} by bob until" in html and f"#{pairs[1].pk} by dave until" in html
    queue = client.get("/training/labels/").content.decode()  # the next button is off: said here
    assert "Nothing is free for you right now. 2 pairs are held by others" in queue


def test_holding_a_pair_is_a_post(client, people, pairs):
    client.force_login(people.alice)
    assert client.get(f"/training/labels/pairs/{pairs[0].pk}/hold/").status_code == 405


def test_a_pair_one_cannot_label_posts_no_hold(client, people, pairs):
    pair = pairs[0]
    labels.pair_label_submit(
        user=people.alice, pair_id=pair.pk, choice="A", left=reads.sides(pair, people.alice).left
    )
    client.force_login(people.alice)
    html = client.get(f"/training/labels/pairs/{pair.pk}/").content.decode()
    assert "/hold/" not in html
    response = client.post(f"/training/labels/pairs/{pair.pk}/hold/", headers=HX)
    assert response.status_code == 200
    assert "/hold/" not in response.content.decode()  # refused: no post again on load
    assert not AuditEvent.objects.filter(verb="preference_pair.hold").exists()


# -- labelling -------------------------------------------------------------------------------------


def test_a_label_under_htmx_opens_the_next_pair_in_place(client, people, pairs):
    client.force_login(people.alice)
    client.post(f"/training/labels/pairs/{pairs[0].pk}/hold/", headers=HX)
    response = post_label(client, people.alice, pairs[0], "B", headers=HX, tag="verified")
    assert response.status_code == 200
    assert response["HX-Push-Url"] == f"/training/labels/pairs/{pairs[1].pk}/"
    html = response.content.decode()
    assert f'<article id="pair-{pairs[1].pk}"' in html and f"Pair #{pairs[0].pk} labelled." in html
    label = PairLabel.objects.get()
    assert label.chosen_id == reads.sides(pairs[0], people.alice).right and label.tag == "verified"


def test_a_label_without_htmx_redirects_to_the_next_and_the_last_to_the_queue(
    client, people, pairs
):
    client.force_login(people.alice)
    response = post_label(client, people.alice, pairs[0])
    assert response.status_code == 302
    assert response["Location"] == f"/training/labels/pairs/{pairs[1].pk}/"
    response = post_label(client, people.alice, pairs[1], "tie")
    assert response["Location"] == "/training/labels/"
    client.force_login(people.bob)
    last = post_label(client, people.bob, pairs[0], headers=HX)
    assert last.status_code == 200 and f'<article id="pair-{pairs[1].pk}"' in last.content.decode()


def test_both_bad_is_a_button_with_its_key_and_is_recorded_as_neither(client, people, pairs):
    client.force_login(people.alice)
    for headers in ({}, HX):
        html = client.get(f"/training/labels/pairs/{pairs[0].pk}/", headers=headers)
        assert 'value="both_bad"' in html.content.decode()
        assert 'data-key="x"' in html.content.decode()
    response = post_label(client, people.alice, pairs[0], "both_bad", headers=HX)
    assert response.status_code == 200
    label = PairLabel.objects.get()
    assert label.both_bad and label.chosen_id is None
    html = client.get(f"/training/labels/pairs/{pairs[0].pk}/").content.decode()
    assert "You labelled this pair: both bad." in html


def test_the_last_label_under_htmx_shows_that_nothing_is_left(client, people, pairs):
    client.force_login(people.alice)
    post_label(client, people.alice, pairs[0])
    response = post_label(client, people.alice, pairs[1], headers=HX)
    assert response["HX-Push-Url"] == "/training/labels/"
    assert "Nothing left for you here" in response.content.decode()


def test_skip_releases_the_pair_and_opens_the_next(client, people, pairs):
    client.force_login(people.alice)
    client.post(f"/training/labels/pairs/{pairs[0].pk}/hold/", headers=HX)
    assert PreferencePair.objects.get(pk=pairs[0].pk).held_by == people.alice
    response = client.post(f"/training/labels/pairs/{pairs[0].pk}/skip/", headers=HX)
    assert f'<article id="pair-{pairs[1].pk}"' in response.content.decode()
    assert PreferencePair.objects.get(pk=pairs[0].pk).held_by is None
    assert not PairLabel.objects.exists()


def test_other_labels_stay_blind_until_the_pair_is_complete(client, people, pairs):
    labels.pair_label_submit(
        user=people.alice,
        pair_id=pairs[0].pk,
        choice="A",
        left=reads.sides(pairs[0], people.alice).left,
        tag="efficient",
    )
    client.force_login(people.bob)
    html = client.get(f"/training/labels/pairs/{pairs[0].pk}/").content.decode()
    assert "1 other label in — hidden until the pair has all 2" in html
    assert "alice" not in html and "fewer wasted steps" not in html
    post_label(client, people.bob, pairs[0])
    client.force_login(people.dave)
    html = client.get(f"/training/labels/pairs/{pairs[0].pk}/").content.decode()
    assert "alice:" in html and "bob:" in html and "fewer wasted steps" in html
    assert "This pair has all its labels." in html


def test_a_pending_labels_rationale_stays_out_of_the_audit_log(client, people, pairs):
    """bob reads the audit log and labels too: alice's tag would tell him her choice on a pair
    whose outcomes differ ("correct result" is the passing one)."""
    pair = pairs[0]
    labels.pair_label_submit(
        user=people.alice,
        pair_id=pair.pk,
        choice="A",
        left=reads.sides(pair, people.alice).left,
        tag="correct",
    )
    client.force_login(people.bob)
    html = client.get(f"/review/audit/?target=preference_pair:{pair.pk}").content.decode()
    assert "preference_pair.label" in html
    assert "correct" not in html.split("<tbody")[-1]
    assert PairLabel.objects.get().tag == "correct"  # the label row keeps it


def test_refusals_come_back_in_the_pair_with_their_status(client, people, pairs):
    client.force_login(people.alice)
    bad = post_label(client, people.alice, pairs[0], "left", headers=HX)
    assert bad.status_code == 422 and "choose A, B, tie or both_bad" in bad.content.decode()
    post_label(client, people.alice, pairs[0])
    again = post_label(client, people.alice, pairs[0])
    assert again.status_code == 409 and "already labelled" in again.content.decode()
    assert "<html" in again.content.decode()
    holds.release(PAIRS, user=people.alice, row_id=pairs[1].pk)  # the label moved her on to it
    holds.hold(PAIRS, user=people.bob, row_id=pairs[1].pk)
    held = post_label(client, people.alice, pairs[1], headers=HX)
    assert held.status_code == 409 and "held by bob" in held.content.decode()


def test_building_pairs_is_for_those_who_prepare_training_data(client, people, pairs):
    behaviour = pairs[0].behaviour
    [task, _other] = tasks_of(behaviour)
    make_trajectory_rollout(task.candidate, fixing("ls"), reward=1.0)
    make_trajectory_rollout(task.candidate, guessing(), reward=0.0)
    client.force_login(people.alice)
    assert client.post(f"/training/labels/build/{behaviour.slug}/").status_code == 403
    client.force_login(people.bob)
    response = client.post(f"/training/labels/build/{behaviour.slug}/", follow=True)
    html = response.content.decode()
    assert "failing-test-repair: 4 new pairs" in html and "Build pairs for" in html


def test_agreement_is_shown_on_the_queue(client, people, pairs):
    for user in (people.alice, people.bob):
        for pair in pairs:
            sides = reads.sides(pair, user)
            choice = "A" if sides.left == pair.preferred_id else "B"
            labels.pair_label_submit(user=user, pair_id=pair.pk, choice=choice, left=sides.left)
    client.force_login(people.dave)
    html = client.get("/training/labels/").content.decode()
    assert 'id="kappa-alice-bob"' in html and "Krippendorff" in html
    # Both always preferred the same ("a") side: no variation, so alpha is undefined.
    assert "Every label is the same (no variation to agree on)." in html


# -- caps: a pair page stays small whatever its rollouts hold --------------------------------------

MB = 1024 * 1024
LOG_LINE = "FAILED tests/test_invoice.py::test_total - assert 5 == 6\n"


@pytest.fixture
def loud_pair(people):
    behaviour = behaviour_with()
    task = tasks_of(behaviour)[0]
    loud = fixing(extra="").run("pytest -vv", output=LOG_LINE * (10 * MB // len(LOG_LINE)))
    make_trajectory_rollout(task.candidate, loud, reward=1.0, world=FIXED)
    make_trajectory_rollout(task.candidate, guessing(), reward=0.0, agent="codex", world=GUESSED)
    return pairs_build(user=people.bob, behaviour_id=behaviour.pk)[0]


def test_a_pair_with_a_10_mb_output_is_under_1_mb_and_shows_more_on_demand(
    client, people, loud_pair
):
    client.force_login(people.alice)
    for headers in ({}, HX):
        html = client.get(f"/training/labels/pairs/{loud_pair.pk}/", headers=headers)
        body = html.content.decode()
        assert len(body.encode()) < MB and "more characters" in body and "(show more)" in body
    link = re.search(r'hx-get="(/training/labels/pairs/\d+/more/\?[^"]+)"', body)
    assert link is not None
    more = client.get(link.group(1).replace("&amp;", "&"), headers=HX).content.decode()
    assert len(more.encode()) < MB and more.count("FAILED tests/test_invoice.py") > 800
    assert "more characters" in more and "<html" not in more
    missing = client.get(f"/training/labels/pairs/{loud_pair.pk}/more/?field=x.1.message")
    assert missing.status_code == 404


# -- secrets ---------------------------------------------------------------------------------------


@pytest.fixture
def leaky_pair(people):
    behaviour = behaviour_with()
    task = tasks_of(behaviour)[0]
    leaky = Session()
    leaky.builder.user(USER_TEXT)
    leaky.run("cat .env", output=ENV_FILE)
    leaky.run("cat build.log", output="x" * (10_000 - 20) + " " + GITHUB_TOKEN + " done\n")
    leaky.write("app/config.py", CONFIG_FILE)
    leaky.say("Deployed.")
    world = {**FIXED, "app/config.py": CONFIG_FILE.encode()}
    make_trajectory_rollout(task.candidate, leaky, reward=1.0, world=world)
    make_trajectory_rollout(task.candidate, guessing(), reward=0.0, agent="codex", world=GUESSED)
    return pairs_build(user=people.bob, behaviour_id=behaviour.pk)[0]


def test_a_pair_shows_no_planted_secret_in_steps_outputs_diffs_or_show_more(
    client, people, leaky_pair
):
    client.force_login(people.alice)
    for headers in ({}, HX):
        body = client.get(f"/training/labels/pairs/{leaky_pair.pk}/", headers=headers)
        html = body.content.decode()
        assert leaked(html) == [] and GITHUB_TOKEN[:8] not in html
        assert "Deploy the invoice service. Credentials:" in html and "REGION=eu-west-1" in html
        assert '<span class="redacted-note">2 secrets redacted</span>' in html  # output, diff
    link = re.search(r'hx-get="(/training/labels/pairs/\d+/more/\?[^"]+)"', html)
    assert link is not None
    more = client.get(link.group(1).replace("&amp;", "&"), headers=HX).content.decode()
    assert leaked(more) == [] and GITHUB_TOKEN[-8:] not in more and "ken] done" in more
