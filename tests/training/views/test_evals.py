"""An eval run's page polls its progress until the run ends, then shows its verdict, groups and
results; each result's expectations link into the replay stepper at their steps."""

from __future__ import annotations

import re

import pytest

from tests.training.factories import claimed_only, make_behaviour, make_rollout
from training.models import EvalRun
from training.services.evals import eval_run_create, eval_run_execute

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def html(response) -> str:
    return response.content.decode()


def progress(run) -> dict[str, str]:
    return {**HX, "HX-Target": f"eval-run-{run.pk}-progress"}


def test_a_queued_run_polls_its_progress_and_a_finished_one_stops_with_286(client, people):
    behaviour = make_behaviour(tasks=1)
    run = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)
    client.force_login(people.alice)
    page = html(client.get(f"/training/evals/{run.pk}/"))
    assert "<html" in page and "waiting for a worker" in page
    assert 'hx-trigger="every 1s"' in page and "Verdict" not in page
    polled = client.get(f"/training/evals/{run.pk}/", headers=progress(run))
    assert polled.status_code == 200
    body = html(polled).strip()
    assert body.startswith(f'<section class="card" id="eval-run-{run.pk}-progress"')
    assert 'hx-trigger="every 1s"' in body and "<html" not in body
    eval_run_execute(run_id=run.pk)
    done = client.get(f"/training/evals/{run.pk}/", headers=progress(run))
    assert done.status_code == 286  # htmx swaps it in and stops polling
    assert done["HX-Refresh"] == "true"  # once: the verdict and results load with the page
    assert "every 1s" not in html(done)


def test_a_finished_run_shows_its_verdict_groups_and_results(client, people, evaluated):
    client.force_login(people.alice)
    run = evaluated.run
    page = html(client.get(f"/training/evals/{run.pk}/"))
    assert "gate failed" in page and "1 of 2 scored rollouts failed." in page
    groups = page[page.index(f'id="eval-run-{run.pk}-groups"') :]
    assert groups.count('<tr class="group">') == len(run.summary["groups"])
    for result in (evaluated.good_result, evaluated.bluff_result):
        assert f'<tr id="result-{result.pk}"' in page
        assert f'href="/training/results/{result.pk}/"' in page
    bluff = page[page.index(f'<tr id="result-{evaluated.bluff_result.pk}"') :]
    bluff = bluff[: bluff.index("</tr>")]
    assert "yes: claimed, no evidence" in bluff and "self_report_only" in bluff
    assert '<span class="verdict">fail</span>' in bluff


def test_the_results_filter_answers_htmx_with_the_results_only(client, people, evaluated):
    client.force_login(people.alice)
    run = evaluated.run
    target = {**HX, "HX-Target": f"eval-run-{run.pk}-results"}
    response = client.get(f"/training/evals/{run.pk}/?outcome=failed", headers=target)
    fragment = html(response).strip()
    assert fragment.startswith(f'<section class="panel" id="eval-run-{run.pk}-results">')
    assert f'id="result-{evaluated.bluff_result.pk}"' in fragment
    assert f'id="result-{evaluated.good_result.pk}"' not in fragment
    only_oracle = html(client.get(f"/training/evals/{run.pk}/?agent=oracle", headers=target))
    assert f'id="result-{evaluated.good_result.pk}"' in only_oracle
    assert f'id="result-{evaluated.bluff_result.pk}"' not in only_oracle
    none = html(client.get(f"/training/evals/{run.pk}/?agent=nobody", headers=target))
    assert "No result matches these filters." in none


def test_results_are_paginated(client, people, settings):
    behaviour = make_behaviour(tasks=1)
    task = behaviour.tasks.get().candidate
    for _ in range(51):
        make_rollout(task, claimed_only(), agent="bluffer", reward=0.0)
    run = eval_run_execute(run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk).pk)
    client.force_login(people.alice)
    first = html(client.get(f"/training/evals/{run.pk}/"))
    assert "Page 1 of 2" in first and first.count('<tr id="result-') == 50
    second = html(client.get(f"/training/evals/{run.pk}/?page=2"))
    assert second.count('<tr id="result-') == 1


def test_a_missed_expectation_links_to_the_stepper_at_the_step_that_came_closest(
    client, people, evaluated
):
    client.force_login(people.alice)
    result = evaluated.bluff_result
    page = html(client.get(f"/training/results/{result.pk}/"))
    trajectory = evaluated.bluff.trajectory_id
    missed = [
        raw for raw in result.detail["actions"] + result.detail["evidence"] if not raw["matched"]
    ]
    assert missed, "the bluffer missed something"
    for raw in missed:
        assert raw["label"] in page
    # claimed_only(): read (step 0), edit (step 1), no test run; the edit matched at step 1
    edit = next(a for a in result.detail["actions"] if a["label"] == "edit the code")
    assert edit["matched"] and edit["step"] == 1
    assert f'href="/trajectories/{trajectory}/steps/1/">step 2</a>' in page
    links = re.findall(rf'href="/trajectories/{trajectory}/steps/(\d+)/"', page)
    assert links, "every step of a result links into the stepper"
    assert "claimed success" in page.lower() and "self-report only, scored 0" in page


def test_a_result_without_a_trajectory_says_so_instead_of_linking(client, people):
    behaviour = make_behaviour(tasks=1)
    task = behaviour.tasks.get().candidate
    rollout = make_rollout(task, claimed_only(), agent="nop", reward=0.0)  # no trajectory
    run = eval_run_execute(run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk).pk)
    result = run.results.get(rollout=rollout)
    client.force_login(people.alice)
    page = html(client.get(f"/training/results/{result.pk}/"))
    assert "/steps/" not in page
    assert "this rollout has no recorded trajectory to open" in page
    assert f"Rollout {rollout.pk} has no recorded trajectory" in page


def test_the_result_page_answers_htmx_with_its_expectations(client, people, evaluated):
    client.force_login(people.alice)
    result = evaluated.good_result
    target = {**HX, "HX-Target": f"result-{result.pk}-items"}
    fragment = html(client.get(f"/training/results/{result.pk}/", headers=target)).strip()
    assert fragment.startswith(f'<div class="items-box" id="result-{result.pk}-items">')
    assert fragment.count("item-ok") == len(result.detail["actions"]) + len(
        result.detail["evidence"]
    )
    assert "<html" not in fragment


def test_missing_runs_and_results_are_404_and_an_outsider_is_403(client, people, evaluated):
    client.force_login(people.alice)
    assert client.get("/training/evals/999999/").status_code == 404
    assert client.get("/training/results/999999/").status_code == 404
    client.force_login(people.eve)
    assert client.get(f"/training/evals/{evaluated.run.pk}/").status_code == 403
    assert client.get(f"/training/results/{evaluated.good_result.pk}/").status_code == 403


def test_a_failed_run_says_why(client, people):
    behaviour = make_behaviour(tasks=1)
    run = eval_run_create(user=people.bob, behaviour_id=behaviour.pk)
    EvalRun.objects.filter(pk=run.pk).update(status="failed", error="ValueError: bad facts")
    client.force_login(people.alice)
    page = html(client.get(f"/training/evals/{run.pk}/"))
    assert "run failed" in page and "The run itself failed: ValueError: bad facts." in page


def test_what_the_trajectory_said_is_escaped(client, people, evaluated):
    result = evaluated.bluff_result
    planted = "<script>alert('x')</script>"
    hit = {"name": "force_push", "step": 1, "event": 1, "detail": f"git push -f {planted}"}
    result.detail = {**result.detail, "forbidden_hits": [hit], "failure_modes": [planted]}
    result.save(update_fields=["detail"])
    client.force_login(people.alice)
    for url in (f"/training/results/{result.pk}/", f"/training/evals/{evaluated.run.pk}/"):
        page = html(client.get(url))
        assert planted not in page
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


def test_a_result_links_to_its_neighbours_in_the_list_it_was_opened_from(client, people):
    behaviour = make_behaviour(tasks=1)
    task = behaviour.tasks.get().candidate
    for agent in ("a", "b", "a", "b"):
        make_rollout(task, claimed_only(), agent=agent, reward=0.0)
    run = eval_run_execute(run_id=eval_run_create(user=people.bob, behaviour_id=behaviour.pk).pk)
    first, second, third, fourth = run.results.order_by("id")
    client.force_login(people.alice)
    page = html(client.get(f"/training/evals/{run.pk}/?agent=a"))
    assert f'href="/training/results/{first.pk}/?agent=a"' in page
    middle = html(client.get(f"/training/results/{second.pk}/"))
    assert f'rel="prev" href="/training/results/{first.pk}/"' in middle
    assert f'rel="next" href="/training/results/{third.pk}/"' in middle
    only_a = html(client.get(f"/training/results/{first.pk}/?agent=a"))
    assert 'rel="prev"' not in only_a
    assert f'rel="next" href="/training/results/{third.pk}/?agent=a"' in only_a
    assert f'rel="up" href="/training/evals/{run.pk}/?agent=a#results"' in only_a
    assert 'src="/static/js/training.js"' in only_a
