"""The candidate desk: evidence beside the decision, the hold it posts once open, blind review,
decisions and adjudication swapping in the next candidate, trial logs; each with and without
HX-Request."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from groundwork.models import AuditEvent
from groundwork.services import holds
from tasks_review.models import Candidate, Review, TrialRun
from tasks_review.services import reviews
from tasks_review.services.candidate_holds import CANDIDATES
from tests.tasks_review.factories import START, make_candidate, make_review
from tests.trajectories.planted import CONFIG_FILE, ENV_FILE, OPENAI_KEY, USER_TEXT, leaked

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
MB = 1024 * 1024


def desk_id(response) -> str:
    return re.search(r'<article id="(candidate-[\w]+)"', response.content.decode()).group(1)


# -- opening a candidate ---------------------------------------------------------------------------


def test_the_desk_shows_instruction_diff_tree_trials_and_replay_links(as_annotator):
    c = make_candidate()
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert '<pre class="instruction">The invoice total is off by one item.' in html
    # the reference diff, highlighted by Pygments' DiffLexer: the fix's lines
    assert '<span class="gd">-    return sum(xs[1:])</span>' in html
    assert '<span class="gi">+    return sum(xs)</span>' in html
    assert "<code>src/invoice.py</code>" in html
    # the starting tree, with the file the fix changes marked
    assert re.search(r'tree-file changed".*invoice\.py', html)
    assert 'class="tree-row tree-dir' in html and "tests/" in html
    # the trial matrix: 2 repeats of oracle, no-op and a control, each with its logs link
    assert html.count('<tr id="trial-') == 6
    trial = c.trials.get(role="oracle", repeat=0)
    assert f'hx-get="/review/candidates/{c.pk}/trials/{trial.pk}/logs/"' in html
    assert f'href="/review/candidates/{c.pk}/trials/{trial.pk}/logs/"' in html
    assert "6/6 as expected" in html
    # into the stepper at the failing and the passing check
    assert f'href="/trajectories/{c.trajectory_id}/steps/2/"' in html
    assert f'href="/trajectories/{c.trajectory_id}/steps/5/"' in html


@pytest.mark.parametrize("headers", [{}, HX])
def test_the_desk_says_where_the_start_was_seeded_from_and_which_files_are_presumed(
    as_annotator, headers
):
    c = make_candidate()
    note = "2 files are presumed unchanged (…), since `make gen` at event 4: a.py, b.py."
    clone = {"files": 12, "how": "the clone has no branch 'x' and no merge of it into main"}
    clone["doubtful"] = "the log showed 3 of the seeded files otherwise"
    Candidate.objects.filter(pk=c.pk).update(payload={"clone": clone, "presumed_note": note})
    html = as_annotator.get(f"/review/candidates/{c.pk}/", headers=headers).content.decode()
    seed = html[html.index(f'id="seed-{c.pk}"') :].split("</dd>")[0]
    assert "no merge of it into main" in seed and "3 of the seeded files otherwise" in seed
    assert "since `make gen` at event 4: a.py, b.py." in html


def test_the_trial_matrix_sits_beside_the_decision_buttons(as_annotator):
    c = make_candidate()
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    aside = html[html.index('<aside class="decide-col"') : html.index("</aside>")]
    assert 'data-key="a"' in aside and 'id="trial-' in aside


def test_an_unexpected_trial_result_and_ungraded_trials_stand_out(as_annotator):
    c = make_candidate()
    TrialRun.objects.filter(candidate=c, role="noop", repeat=0).update(reward=1.0)
    TrialRun.objects.filter(candidate=c, role="noop", repeat=1).update(
        status="ungraded", reward=None
    )
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "4/6 as expected" in html and "1 not" in html and "1 ungraded" in html
    assert html.count('class="verdict-fail"') == 1


def test_a_task_kept_by_an_older_verifier_is_marked_stale_on_the_desk_and_in_the_queue(
    as_annotator,
):
    from tasks_review.core.trials.version import VERIFIER_VERSION

    old = make_candidate(verifier_version=VERIFIER_VERSION - 1)
    current = make_candidate(verifier_version=VERIFIER_VERSION)
    html = as_annotator.get(f"/review/candidates/{old.pk}/").content.decode()
    assert f'id="verifier-stale-{old.pk}"' in html and "reverify" in html
    html = as_annotator.get(f"/review/candidates/{current.pk}/").content.decode()
    assert "verifier-stale" not in html and f"verifier v{VERIFIER_VERSION}" in html
    queue = as_annotator.get("/review/").content.decode()
    assert queue.count(">stale</span>") == 1


def test_how_a_kept_task_is_graded_is_shown_on_the_desk_and_why_when_check_only(as_annotator):
    why = "no probes are made for Go packages yet: graded by the recorded check alone"
    probed = {"grading": "equivalence", "discriminating": 7, "hidden_discriminating": 5}
    graded = make_candidate(grading="equivalence", verification={"grading": probed})
    go = make_candidate(
        grading="check-only", verification={"grading": {"grading": "check-only", "notes": [why]}}
    )
    html = as_annotator.get(f"/review/candidates/{graded.pk}/").content.decode()
    assert "equivalence-graded · 7 discriminating probes" in html and "5 hidden inputs" in html
    html = as_annotator.get(f"/review/candidates/{go.pk}/").content.decode()
    shown = html.split(f'id="grading-why-{go.pk}">')[1].split("</span>")[0]
    assert shown == why[0].upper() + why[1:] + "."  # a sentence, in the page, not a tooltip
    queue = as_annotator.get("/review/").content.decode()
    assert queue.count(">check-only</span>") == 1


def test_a_check_too_thin_to_tell_a_fix_from_a_lookup_table_is_flagged(as_annotator):
    thin = make_candidate(check_assertions=2, check_asserted_inputs=1, check_tests=1)
    broad = make_candidate(check_assertions=12, check_asserted_inputs=9, check_tests=4)
    html = as_annotator.get(f"/review/candidates/{thin.pk}/").content.decode()
    assert "2 assertions on 1 distinct input in 1 test" in html
    assert "too thin to tell a fix from a lookup table" in html
    html = as_annotator.get(f"/review/candidates/{broad.pk}/").content.decode()
    assert "12 assertions on 9 distinct inputs in 4 tests" in html and "too thin" not in html


def test_the_desk_is_a_page_and_under_htmx_a_fragment(as_annotator):
    c = make_candidate()
    page = as_annotator.get(f"/review/candidates/{c.pk}/")
    assert page.content.decode().lstrip().startswith("<!doctype html>")
    fragment = as_annotator.get(f"/review/candidates/{c.pk}/", headers=HX)
    body = fragment.content.decode().strip()
    assert body.startswith("<title>") and "<html" not in body
    assert f'<article id="candidate-{c.pk}"' in body
    restore = as_annotator.get(
        f"/review/candidates/{c.pk}/", headers={**HX, "HX-History-Restore-Request": "true"}
    )
    assert "<html" in restore.content.decode()


def test_opening_a_candidate_writes_nothing_and_the_page_posts_the_hold(people, client):
    c = make_candidate()
    client.force_login(people.alice)
    for headers in ({}, HX):
        html = client.get(f"/review/candidates/{c.pk}/", headers=headers).content.decode()
        assert f'hx-post="/review/candidates/{c.pk}/hold/" hx-trigger="load"' in html
        assert 'id="decision-form"' in html
    c.refresh_from_db()
    assert c.held_by is None  # a prefetch or a link preview takes nothing
    assert not AuditEvent.objects.exists()


def test_the_hold_post_holds_the_candidate_and_answers_its_banner(people, client):
    c = make_candidate()
    client.force_login(people.alice)
    response = client.post(f"/review/candidates/{c.pk}/hold/?language=python", headers=HX)
    c.refresh_from_db()
    assert c.held_by == people.alice
    html = response.content.decode()
    assert html.strip().startswith(f'<div id="hold-{c.pk}" class="hold"')
    assert 'hx-trigger="load"' not in html  # no second take; the heartbeat renews it instead
    assert "Held for you until" in html and "<html" not in html
    assert f'action="/review/candidates/{c.pk}/release/?language=python"' in html
    assert AuditEvent.objects.filter(verb="candidate.hold", target_id=str(c.pk)).count() == 1
    client.post(f"/review/candidates/{c.pk}/hold/", headers=HX)  # the page opened again
    assert AuditEvent.objects.filter(verb="candidate.hold").count() == 1  # a renewal is not news
    plain = client.post(f"/review/candidates/{c.pk}/hold/?language=python")
    assert plain.status_code == 302
    assert plain["Location"] == f"/review/candidates/{c.pk}/?language=python"
    held = client.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "Held for you until" in held


def test_a_second_reviewers_hold_post_sees_the_hold(people, client):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)
    client.force_login(people.bob)
    html = client.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "Held by <strong>alice</strong>" in html
    assert 'id="decision-form"' not in html and 'hx-trigger="load"' not in html
    response = client.post(f"/review/candidates/{c.pk}/hold/", headers=HX)
    assert response.status_code == 200
    assert "Held by <strong>alice</strong>" in response.content.decode()
    c.refresh_from_db()
    assert c.held_by == people.alice  # bob's post took nothing
    assert AuditEvent.objects.filter(actor=people.bob).count() == 0


def test_the_held_banner_renews_the_hold_on_a_heartbeat_and_gives_it_back_on_leaving(
    people, client
):
    c = make_candidate()
    client.force_login(people.alice)
    html = client.post(f"/review/candidates/{c.pk}/hold/", headers=HX).content.decode()
    assert f'hx-post="/review/candidates/{c.pk}/hold/"' in html
    assert 'hx-trigger="hold-beat"' in html and 'data-hold-beat="30"' in html
    release = f"/review/candidates/{c.pk}/release/?left=1"
    assert f'data-hold-release="{release}"' in html
    client.post(release)  # what the page's beacon posts as the tab closes
    c.refresh_from_db()
    assert c.held_by is None
    [event] = AuditEvent.objects.filter(verb="candidate.release")
    assert event.after["why"] == "left the page"


def test_a_renewal_that_finds_the_hold_lapsed_and_taken_shows_the_new_holder(people, client):
    c = make_candidate()
    client.force_login(people.alice)
    client.post(f"/review/candidates/{c.pk}/hold/", headers=HX)
    Candidate.objects.filter(pk=c.pk).update(held_until=timezone.now())  # the tab slept
    holds.hold(CANDIDATES, user=people.bob, row_id=c.pk)
    html = client.post(f"/review/candidates/{c.pk}/hold/", headers=HX).content.decode()
    assert "Held by <strong>bob</strong>" in html and "hold-beat" not in html


def test_holding_is_a_post(as_annotator):
    c = make_candidate()
    assert as_annotator.get(f"/review/candidates/{c.pk}/hold/").status_code == 405


def test_a_candidate_one_cannot_decide_posts_no_hold(people, client):
    c = make_candidate()
    reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
    client.force_login(people.alice)
    html = client.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "/hold/" not in html
    response = client.post(f"/review/candidates/{c.pk}/hold/", headers=HX)
    assert response.status_code == 200
    assert "/hold/" not in response.content.decode()  # refused: no post again on load
    assert not AuditEvent.objects.filter(verb="candidate.hold").exists()


def test_untrusted_text_is_escaped_everywhere_on_the_desk(as_annotator):
    planted = "<img src=x onerror=alert(1)>"
    c = make_candidate(
        instruction=planted,
        check_command=planted,
        start={"a.py": planted.encode() + b"\n"},
        fix={"a.py": b"ok\n", planted: b"x\n"},
    )
    c.trials.update(logs=planted)
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert planted not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_candidate_not_up_for_review_is_not_found(as_annotator):
    c = make_candidate(status=Candidate.Status.DROPPED)
    assert as_annotator.get(f"/review/candidates/{c.pk}/").status_code == 404


def test_binary_and_missing_contents_are_described_not_diffed(as_annotator):
    c = make_candidate(start={"logo.png": b"\x89PNG\0\0"}, fix={"logo.png": b"\x89PNG\0\1"})
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "Binary file (6 → 6 bytes)." in html
    Candidate.objects.filter(pk=c.pk).update(reference_files={"logo.png": "f" * 64})
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "missing from the blob store" in html


def test_j_and_k_go_to_the_neighbours_in_the_queue_skipping_held_ones(people, client):
    a, held, b, c = (make_candidate() for _ in range(4))
    holds.hold(CANDIDATES, user=people.bob, row_id=held.pk)
    client.force_login(people.alice)
    html = client.get(f"/review/candidates/{b.pk}/?language=python").content.decode()
    prev = re.search(r'<a class="navbtn" data-key="k"[^>]*href="([^"]+)"', html).group(1)
    nxt = re.search(r'<a class="navbtn" data-key="j"[^>]*href="([^"]+)"', html).group(1)
    assert prev == f"/review/candidates/{a.pk}/?language=python"
    assert nxt == f"/review/candidates/{c.pk}/?language=python"
    assert f'hx-get="/review/candidates/{c.pk}/?language=python"' in html


# -- blind review ----------------------------------------------------------------------------------


def test_a_reviewer_sees_others_decisions_only_once_the_reviews_are_complete(
    people, client, settings
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "REVIEWS_PER_CANDIDATE": 3}
    c = make_candidate()
    make_review(c, people.alice, "reject", "leaks_fix", comment="quotes the diff")
    client.force_login(people.bob)
    before = client.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "1 other review in — hidden until the candidate has all 3" in before
    assert "quotes the diff" not in before and "Leaks the fix" not in before.split("<fieldset")[0]
    assert 'class="decision decision-reject"' not in before

    client.post(f"/review/candidates/{c.pk}/decide/", {"decision": "accept"})
    mine_in = client.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "quotes the diff" not in mine_in and 'class="decision decision-reject"' not in mine_in
    assert "1 other review in — hidden until" in mine_in

    reviews.review_submit(user=people.dave, candidate_id=c.pk, decision="accept")
    after = client.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "quotes the diff" in after and 'class="decision decision-reject"' in after
    assert "hidden until" not in after


# -- decisions -------------------------------------------------------------------------------------


def test_a_decision_under_htmx_swaps_in_the_next_candidate_and_pushes_its_url(people, client):
    first, second = make_candidate(), make_candidate()
    client.force_login(people.alice)
    client.post(f"/review/candidates/{first.pk}/hold/", headers=HX)
    response = client.post(
        f"/review/candidates/{first.pk}/decide/?language=python",
        {"decision": "reject", "reason": "too_easy", "comment": ""},
        headers=HX,
    )
    assert response.status_code == 200
    assert desk_id(response) == f"candidate-{second.pk}"
    assert response["HX-Push-Url"] == f"/review/candidates/{second.pk}/?language=python"
    assert "<html" not in response.content.decode()
    assert f"Candidate #{first.pk}: reject (too easy) recorded." in response.content.decode()
    assert Review.objects.get().candidate == first
    second.refresh_from_db()
    assert second.held_by == people.alice  # the next one is held for the reviewer


def test_a_decision_without_htmx_redirects_to_the_next_candidate(people, client):
    first, second = make_candidate(), make_candidate()
    client.force_login(people.alice)
    response = client.post(f"/review/candidates/{first.pk}/decide/", {"decision": "accept"})
    assert response.status_code == 302
    assert response["Location"] == f"/review/candidates/{second.pk}/"


def test_the_last_decision_shows_that_nothing_is_left(people, client):
    only = make_candidate()
    client.force_login(people.alice)
    response = client.post(
        f"/review/candidates/{only.pk}/decide/", {"decision": "accept"}, headers=HX
    )
    assert desk_id(response) == "candidate-none"
    assert response["HX-Push-Url"] == "/review/"
    plain = client.post(f"/review/candidates/{only.pk}/decide/", {"decision": "accept"})
    assert plain.status_code == 409  # already reviewed: the refusal, not a second review


def test_a_decision_missing_its_reason_is_shown_back_with_422(people, client):
    c = make_candidate()
    client.force_login(people.alice)
    for headers in (HX, {}):
        response = client.post(
            f"/review/candidates/{c.pk}/decide/",
            {"decision": "reject", "comment": "keep me"},
            headers=headers,
        )
        assert response.status_code == 422
        html = response.content.decode()
        assert "choose a reason (1–9) for reject" in html
        assert "keep me</textarea>" in html
        assert desk_id(response) == f"candidate-{c.pk}"
    assert not Review.objects.exists()


def test_deciding_a_candidate_held_by_another_is_refused_with_409(people, client):
    c = make_candidate()
    holds.hold(CANDIDATES, user=people.alice, row_id=c.pk)
    client.force_login(people.bob)
    response = client.post(f"/review/candidates/{c.pk}/decide/", {"decision": "accept"}, headers=HX)
    assert response.status_code == 409
    assert "held by alice" in response.content.decode()
    assert not Review.objects.exists()


def test_decide_is_a_post(as_annotator):
    c = make_candidate()
    assert as_annotator.get(f"/review/candidates/{c.pk}/decide/").status_code == 405


def test_release_gives_the_candidate_back(people, client):
    c = make_candidate()
    client.force_login(people.alice)
    client.post(f"/review/candidates/{c.pk}/hold/")
    response = client.post(f"/review/candidates/{c.pk}/release/?language=python")
    assert response["Location"] == "/review/?language=python"
    c.refresh_from_db()
    assert c.held_by is None
    assert AuditEvent.objects.filter(verb="candidate.release", target_id=str(c.pk)).exists()
    assert client.post(f"/review/candidates/{c.pk}/release/").status_code == 409


# -- adjudication ----------------------------------------------------------------------------------


@pytest.fixture
def disputes(people, two_reviews):
    made = []
    for _ in range(2):
        c = make_candidate()
        reviews.review_submit(user=people.alice, candidate_id=c.pk, decision="accept")
        reviews.review_submit(
            user=people.dave,
            candidate_id=c.pk,
            decision="needs_fix",
            reason="ambiguous_instruction",
        )
        made.append(c)
    return made


def test_the_disputes_page_lists_each_dispute_with_its_reviews(people, client, disputes):
    client.force_login(people.bob)
    html = client.get("/review/disputes/").content.decode()
    for c in disputes:
        assert f'<article id="dispute-{c.pk}"' in html
    assert html.count('class="decision decision-accept"') == 2
    assert html.count('class="decision decision-needs_fix"') == 2


def test_an_adjudicator_settles_on_the_desk_and_the_next_dispute_follows(people, client, disputes):
    first, second = disputes
    client.force_login(people.bob)
    html = client.get(f"/review/candidates/{first.pk}/").content.decode()
    assert "Settle the dispute" in html
    assert f'hx-post="/review/candidates/{first.pk}/adjudicate/"' in html
    response = client.post(
        f"/review/candidates/{first.pk}/adjudicate/",
        {"decision": "needs_fix", "reason": "ambiguous_instruction"},
        headers=HX,
    )
    assert desk_id(response) == f"candidate-{second.pk}"
    assert response["HX-Push-Url"] == f"/review/candidates/{second.pk}/"
    first.refresh_from_db()
    assert first.review_status == "needs_fix"
    plain = client.post(f"/review/candidates/{second.pk}/adjudicate/", {"decision": "accept"})
    assert plain["Location"] == "/review/disputes/"


def test_a_disputing_reviewer_sees_the_dispute_but_cannot_settle_it(people, client, disputes):
    client.force_login(people.dave)
    html = client.get(f"/review/candidates/{disputes[0].pk}/").content.decode()
    assert 'id="decision-form"' not in html
    assert "You reviewed it, so another reviewer settles it." in html
    response = client.post(
        f"/review/candidates/{disputes[0].pk}/adjudicate/", {"decision": "accept"}, headers=HX
    )
    assert response.status_code == 409


# -- trial logs ------------------------------------------------------------------------------------


def test_trial_logs_are_a_fragment_under_htmx_and_a_page_without(as_annotator):
    c = make_candidate()
    trial = c.trials.get(role="noop", repeat=1)
    url = f"/review/candidates/{c.pk}/trials/{trial.pk}/logs/"
    fragment = as_annotator.get(url, headers=HX).content.decode().strip()
    assert fragment.startswith('<section id="trial-logs"') and "<html" not in fragment
    assert "== noop #1 ==" in fragment
    page = as_annotator.get(url).content.decode()
    assert "<html" in page and "== noop #1 ==" in page


def test_20_mb_trial_logs_are_under_1_mb_and_show_more_returns_the_next_part(as_annotator):
    c = make_candidate()
    trial = c.trials.get(role="noop", repeat=1)
    line = "E   AssertionError: assert 4 == 3 <and more>\n"
    TrialRun.objects.filter(pk=trial.pk).update(logs=line * (20 * MB // len(line)))
    url = f"/review/candidates/{c.pk}/trials/{trial.pk}/logs/"
    for headers in ({}, HX):
        body = as_annotator.get(url, headers=headers).content.decode()
        assert len(body.encode()) < MB and "more characters" in body
        assert f'hx-get="{url}more/?field=logs&amp;start=10000"' in body
    more = as_annotator.get(f"{url}more/?field=logs&start=10000", headers=HX).content.decode()
    assert len(more.encode()) < MB and "<html" not in more
    assert more.count("&lt;and more&gt;") > 1000 and "?field=logs&amp;start=60000" in more
    assert as_annotator.get(f"{url}more/?field=other&start=0").status_code == 404


def test_trial_logs_belong_to_their_candidate(as_annotator):
    c, other = make_candidate(), make_candidate()
    trial = other.trials.first()
    assert as_annotator.get(f"/review/candidates/{c.pk}/trials/{trial.pk}/logs/").status_code == 404


def test_the_desk_names_the_python_packages_the_image_installs_and_their_date(as_annotator):
    packages = {
        "pins": ["pluggy==1.6.0", "pytest==8.3.5"],
        "resolved_before": "2025-06-01T00:00:00+00:00",
        "date_source": "trajectory",
    }
    c = make_candidate(payload={"python_packages": packages})
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "<code>pluggy==1.6.0 pytest==8.3.5</code>" in html
    assert "as on PyPI 2025-06-01" in html
    plain = make_candidate()
    assert (
        "Python packages"
        not in as_annotator.get(f"/review/candidates/{plain.pk}/").content.decode()
    )


def test_the_desk_says_how_many_secrets_the_task_had_redacted(as_annotator):
    redactions = {"total": 3, "counts": {"github_token": 1, "openai_api_key": 2}}
    c = make_candidate(payload={"redactions": redactions})
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert "3 secrets redacted" in html and "openai_api_key 2" in html
    plain = make_candidate()
    assert "redacted" not in as_annotator.get(f"/review/candidates/{plain.pk}/").content.decode()


# -- secrets ---------------------------------------------------------------------------------------


def test_the_desk_shows_no_planted_secret_in_instruction_files_diff_or_trial_logs(as_annotator):
    c = make_candidate(
        instruction=USER_TEXT,
        check_command=f"OPENAI_API_KEY={OPENAI_KEY} pytest",
        start={**START, "app/config.py": b"REGION = 'eu-west-1'\n"},
        fix={"app/config.py": CONFIG_FILE.encode()},
    )
    TrialRun.objects.filter(candidate=c).update(logs=ENV_FILE * 3, error=USER_TEXT)
    html = as_annotator.get(f"/review/candidates/{c.pk}/").content.decode()
    assert leaked(html) == []
    assert "Deploy the invoice service. Credentials:" in html  # the rest of the instruction
    assert '<span class="redacted-note">3 secrets redacted</span>' in html
    assert '<span class="redacted-note">2 secrets redacted</span>' in html  # the diff
    trial = c.trials.first()
    for headers in ({}, HX):
        logs = as_annotator.get(
            f"/review/candidates/{c.pk}/trials/{trial.pk}/logs/", headers=headers
        ).content.decode()
        assert leaked(logs) == [] and "REGION=eu-west-1" in logs
        assert '<span class="redacted-note">6 secrets redacted</span>' in logs
