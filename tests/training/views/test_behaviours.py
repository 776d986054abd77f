"""The behaviours list and a behaviour's page: its spec in words, versions, tasks by split,
the results table of an eval run, adding kept tasks and starting an eval."""

from __future__ import annotations

import pytest

from tasks_review.models import Candidate
from tests.tasks_review.factories import audit_events, make_candidate
from tests.training.factories import make_behaviour, repaired
from tests.training.views.helpers import make_recorded_rollout
from training.core.catalogue import catalogue
from training.models import Behaviour, BehaviourTask, EvalRun
from training.services.behaviours import behaviour_version_create
from training.services.evals import eval_run_create

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def html(response) -> str:
    return response.content.decode()


# -- the list --------------------------------------------------------------------------------------


def test_the_empty_list_offers_to_seed_the_catalogue_to_those_who_may(client, people):
    client.force_login(people.bob)
    page = html(client.get("/training/behaviours/"))
    assert "No behaviours yet." in page
    assert f"Seed the catalogue ({len(catalogue())} missing)" in page
    assert "New behaviour" in page
    client.force_login(people.alice)  # sees the floor, may not change it
    page = html(client.get("/training/behaviours/"))
    assert "No behaviours yet." in page and "Seed the catalogue" not in page
    assert "New behaviour" not in page


def test_seeding_adds_every_catalogue_behaviour_once(client, people):
    client.force_login(people.bob)
    response = client.post("/training/behaviours/seed/")
    assert response.status_code == 302 and response["Location"] == "/training/behaviours/"
    assert set(Behaviour.objects.values_list("slug", flat=True)) == set(catalogue())
    assert len(audit_events("behaviour.create")) == len(catalogue())
    page = html(client.get("/training/behaviours/"))
    assert "Seed the catalogue" not in page  # nothing is missing any more
    client.post("/training/behaviours/seed/")
    assert Behaviour.objects.count() == len(catalogue())


def test_seeding_is_refused_to_an_annotator(client, people):
    client.force_login(people.alice)
    assert client.post("/training/behaviours/seed/").status_code == 403
    assert not Behaviour.objects.exists()


def test_the_list_shows_versions_task_counts_by_split_and_the_latest_verdict(
    client, people, evaluated
):
    client.force_login(people.alice)
    b = evaluated.behaviour
    train = b.tasks.filter(split="train").count()
    response = client.get("/training/behaviours/")
    page = html(response)
    row = page[page.index(f'<tr id="behaviour-{b.pk}">') :]
    row = row[: row.index("</tr>")]
    assert "Repair the code behind a failing test" in row and "v1" in row
    assert f'<td class="num">{train}</td>' in row and f'<td class="num">{2 - train}</td>' in row
    assert f'href="/training/evals/{evaluated.run.pk}/"' in row and "gate failed" in row
    assert "HX-Request" in response["Vary"]


def test_the_list_answers_htmx_with_its_table_only(client, people, evaluated):
    client.force_login(people.alice)
    fragment = html(client.get("/training/behaviours/", headers=HX)).strip()
    assert fragment.startswith('<div id="behaviour-list">') and "<html" not in fragment


# -- one behaviour ---------------------------------------------------------------------------------


def test_the_page_shows_the_spec_in_words_with_the_raw_json_folded(client, people, evaluated):
    client.force_login(people.alice)
    page = html(client.get("/training/behaviours/failing-test-repair/"))
    assert "<h1>Repair the code behind a failing test</h1>" in page
    # expected actions in order, evidence, forbidden actions by name, the threshold
    spec = page[page.index('id="spec"') :]
    assert spec.index("edit the code") < spec.index("run the tests, passing")
    assert "test check passed after the last edit" in spec
    assert "verified reward at least 1" in spec
    assert "Editing or deleting the task&#x27;s tests" in spec and "tamper_with_tests" in spec
    assert "Piping a download into a shell" in spec
    assert "expected actions must come in this order" in spec
    assert '<details class="raw-spec"><summary>The spec as JSON</summary><pre>{' in spec
    assert "&quot;slug&quot;: &quot;failing-test-repair&quot;" in spec


def test_the_page_lists_tasks_by_split_linking_to_the_review_desk(client, people, evaluated):
    client.force_login(people.alice)
    page = html(client.get("/training/behaviours/failing-test-repair/"))
    tasks = page[page.index('id="tasks"') :]
    for task in evaluated.behaviour.tasks.select_related("candidate"):
        label = "Train" if task.split == "train" else "Held-out"
        section = tasks[tasks.index(f"<h3>{label} ") :]
        assert f'href="/review/candidates/{task.candidate_id}/">{task.candidate.task_name}' in (
            section
        )
    client.force_login(people.carol)  # an approver cannot open the desk: names, no links
    page = html(client.get("/training/behaviours/failing-test-repair/"))
    assert "/review/candidates/" not in page


def test_each_task_shows_its_review_verdict_and_whether_the_loop_uses_it(client, people):
    behaviour = make_behaviour(tasks=3)
    first, second, third = behaviour.tasks.order_by("id")
    Candidate.objects.filter(pk=second.candidate_id).update(
        review_status=Candidate.ReviewStatus.REJECTED
    )
    Candidate.objects.filter(pk=third.candidate_id).update(
        review_status=Candidate.ReviewStatus.PENDING
    )
    client.force_login(people.alice)

    def tags(task) -> str:
        page = html(client.get(f"/training/behaviours/{behaviour.slug}/"))
        row = page[page.index(f'id="behaviour-task-{task.pk}"') :]
        return row[: row.index("</li>")]

    assert '<span class="tag">accepted</span>' in tags(first)
    assert "rejected, not used" in tags(second)
    assert "pending, not used" in tags(third)
    Behaviour.objects.filter(pk=behaviour.pk).update(allow_unreviewed=True)
    assert "pending</span>" in tags(third) and "rejected, not used" in tags(second)


def test_the_results_table_has_a_row_per_agent_and_split_linking_to_its_results(
    client, people, evaluated
):
    client.force_login(people.alice)
    page = html(client.get("/training/behaviours/failing-test-repair/"))
    results = page[page.index(f'id="behaviour-{evaluated.behaviour.pk}-results"') :]
    results = results[: results.index("</section>")]
    assert "gate failed" in results and "1 of 2 scored rollouts failed" in results
    for head in ("Rollouts", "pass@1", "Mean ± std reward", "Forbidden hits", "Self-report only"):
        assert head in results
    groups = {(g["agent"], g["split"]) for g in evaluated.run.summary["groups"]}
    assert results.count('<tr class="group">') == len(groups)
    for agent, split in groups:
        assert f"/training/evals/{evaluated.run.pk}/?agent={agent}&amp;split={split}" in results
    bluffer = results[results.index("<td>bluffer</td>") :]
    # pass@1 0, mean 0 ± 0, no forbidden hit, one self-report-only rollout
    cells = bluffer[: bluffer.index("</tr>")]
    assert '<td class="num">0.00</td>' in cells and "0.00 ± 0.00" in cells
    assert '<td class="num bad">1</td>' in cells


def test_an_older_version_is_shown_when_picked_and_a_missing_one_is_404(client, people, evaluated):
    spec = {**evaluated.behaviour.latest_version().spec, "pass_threshold": 0.5}
    behaviour_version_create(
        user=people.bob, behaviour_id=evaluated.behaviour.pk, spec=spec, note="lenient"
    )
    client.force_login(people.alice)
    latest = html(client.get("/training/behaviours/failing-test-repair/"))
    assert "Spec v2" in latest and "lenient" in latest
    assert "No finished eval run of v2 yet." in latest  # the run scored v1
    older = html(client.get("/training/behaviours/failing-test-repair/?version=1"))
    assert "Spec v1" in older and "v1 of 2" in older
    assert f'eval run <a href="/training/evals/{evaluated.run.pk}/">' in older
    assert client.get("/training/behaviours/failing-test-repair/?version=9").status_code == 404
    assert client.get("/training/behaviours/no-such/").status_code == 404


def test_the_run_picker_swaps_the_results_of_an_older_run(client, people, evaluated):
    newer = eval_run_create(user=people.bob, behaviour_id=evaluated.behaviour.pk, agent="oracle")
    client.force_login(people.alice)
    b = evaluated.behaviour
    page = html(client.get(f"/training/behaviours/{b.slug}/"))
    assert f'<option value="{newer.pk}" >#{newer.pk} · queued · oracle' in page
    target = {**HX, "HX-Target": f"behaviour-{b.pk}-results"}
    response = client.get(f"/training/behaviours/{b.slug}/?run={newer.pk}", headers=target)
    fragment = html(response).strip()
    assert fragment.startswith(f'<section class="panel" id="behaviour-{b.pk}-results">')
    assert "queued: no verdict yet" in fragment and "Follow its progress" in fragment
    other = make_behaviour("read-before-edit")
    foreign = eval_run_create(user=people.bob, behaviour_id=other.pk)
    assert client.get(f"/training/behaviours/{b.slug}/?run={foreign.pk}").status_code == 404


def test_the_kept_task_filter_answers_htmx_with_the_choosable_list(client, people, evaluated):
    b = evaluated.behaviour
    wanted = make_candidate(trials=False, task_name="repair-csv-quotes")
    make_candidate(trials=False, task_name="repair-dates")
    make_candidate(trials=False, task_name="repair-csv-dropped", status="dropped")
    client.force_login(people.bob)
    target = {**HX, "HX-Target": f"behaviour-{b.pk}-choosable"}
    fragment = html(client.get(f"/training/behaviours/{b.slug}/?q=csv", headers=target)).strip()
    assert fragment.startswith(f'<form method="post" action="/training/behaviours/{b.slug}/tasks/"')
    assert f'value="{wanted.pk}"' in fragment and "repair-dates" not in fragment
    assert "repair-csv-dropped" not in fragment  # only kept tasks can serve a behaviour
    chosen = b.tasks.first().candidate
    page = html(client.get(f"/training/behaviours/{b.slug}/"))
    assert f'name="candidate" value="{chosen.pk}"' not in page
    assert f'name="candidate" value="{wanted.pk}"' in page
    nothing = html(client.get(f"/training/behaviours/{b.slug}/?q=zzz", headers=target))
    assert "No kept task not yet chosen matches “zzz”." in nothing


def test_adding_kept_tasks_gives_each_its_split_once_with_an_audit_row(client, people):
    behaviour = make_behaviour()
    kept = [make_candidate(trials=False) for _ in range(3)]
    client.force_login(people.bob)
    response = client.post(
        f"/training/behaviours/{behaviour.slug}/tasks/", {"candidate": [c.pk for c in kept]}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/training/behaviours/{behaviour.slug}/#tasks"
    splits = dict(behaviour.tasks.values_list("candidate_id", "split"))
    assert set(splits) == {c.pk for c in kept}
    assert set(splits.values()) <= {"train", "held_out"}
    (event,) = audit_events("behaviour.tasks")
    assert event.actor == people.bob
    page = html(client.get(f"/training/behaviours/{behaviour.slug}/"))
    assert "Added 3 task(s)" in page


def test_adding_a_task_that_is_not_kept_is_refused_with_422_in_words(client, people):
    behaviour = make_behaviour()
    dropped = make_candidate(trials=False, status="dropped")
    client.force_login(people.bob)
    url = f"/training/behaviours/{behaviour.slug}/tasks/"
    response = client.post(url, {"candidate": [dropped.pk]})
    assert response.status_code == 422
    assert "is not a kept task" in html(response) and 'role="alert"' in html(response)
    empty = client.post(url, {})
    assert empty.status_code == 422
    assert "Choose at least one kept task to add." in html(empty)
    assert client.post(url, {"candidate": ["x"]}).status_code == 422
    assert client.post(url, {"candidate": [999999]}).status_code == 404
    assert not BehaviourTask.objects.exists()


def test_adding_tasks_needs_the_edit_role(client, people):
    behaviour = make_behaviour()
    kept = make_candidate(trials=False)
    client.force_login(people.alice)
    url = f"/training/behaviours/{behaviour.slug}/tasks/"
    assert client.post(url, {"candidate": [kept.pk]}).status_code == 403


def test_run_eval_creates_the_run_queues_it_and_opens_its_page(
    client, people, q_sync, django_capture_on_commit_callbacks
):
    behaviour = make_behaviour(tasks=1)
    task = behaviour.tasks.get().candidate
    make_recorded_rollout(task, repaired(), agent="oracle")
    client.force_login(people.bob)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(
            f"/training/behaviours/{behaviour.slug}/evals/",
            {"version": "1", "agent": "oracle", "k": "1"},
        )
    run = EvalRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/training/evals/{run.pk}/"
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert (run.status, run.agent, run.summary["gate_passed"]) == ("done", "oracle", True)


def test_run_eval_refuses_a_bad_k_with_422_and_an_approver_with_403(client, people):
    behaviour = make_behaviour(tasks=1)
    client.force_login(people.bob)
    url = f"/training/behaviours/{behaviour.slug}/evals/"
    for k in ("0", "many", "1000"):
        response = client.post(url, {"version": "1", "k": k})
        assert response.status_code == 422, k
        assert "k must" in html(response)
    client.force_login(people.carol)
    assert client.post(url, {"version": "1", "k": "1"}).status_code == 403
    assert not EvalRun.objects.exists()


@pytest.mark.parametrize(
    ("path", "field", "verb"),
    [
        ("unreviewed", "allow_unreviewed", "behaviour.unreviewed"),
        ("reward-preferences", "reward_preferences", "behaviour.reward_preferences"),
    ],
)
def test_an_editor_opts_the_behaviour_in_and_out_audited(client, people, path, field, verb):
    behaviour = make_behaviour()
    url = f"/training/behaviours/{behaviour.slug}/{path}/"
    client.force_login(people.alice)
    assert client.post(url, {"allow": "1"}).status_code == 403
    client.force_login(people.bob)
    page = html(client.get(f"/training/behaviours/{behaviour.slug}/"))
    assert f'action="{url}"' in page
    response = client.post(url, {"allow": "1"})
    assert response.status_code == 302
    assert getattr(Behaviour.objects.get(pk=behaviour.pk), field) is True
    client.post(url, {"allow": "0"})
    assert getattr(Behaviour.objects.get(pk=behaviour.pk), field) is False
    assert [e.after[field] for e in audit_events(verb)] == [True, False]
