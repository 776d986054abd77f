"""The rollouts page: importing a `harbor run` jobs folder as a job the page polls, skipped
trials with their reasons, Harbor's reward beside ours, and re-grading an ungraded rollout."""

from __future__ import annotations

import pytest

from tests.tasks_review.factories import make_candidate
from tests.training.core.harbor.test_jobs import COLLECTED, write_trial
from tests.training.factories import make_rollout, repaired
from training.models import Rollout, RolloutImport
from training.services.rollouts import rollout_import_create, rollout_import_execute

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
TASK = "traj2env/repair-1"  # the task the trials of write_trial ran


def html(response) -> str:
    return response.content.decode()


@pytest.fixture
def jobs(tmp_path):
    folder = tmp_path / "jobs" / "oracle"
    write_trial(folder / "repair-1__a", files={"verifier/reward.txt": "1", **COLLECTED})
    write_trial(folder / "repair-1__b", reward=0.0, files={"verifier/reward.txt": "0"})
    return tmp_path / "jobs"


def test_importing_a_jobs_folder_queues_a_job_that_reads_and_grades_it(
    client, people, jobs, q_sync, django_capture_on_commit_callbacks
):
    # A kept task whose folder is gone: grading answers "ungraded, and why" without Docker.
    task = make_candidate(trials=False, task_name=TASK, task_dir="")
    client.force_login(people.bob)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/training/rollouts/import/", {"path": str(jobs)})
    assert response.status_code == 302 and response["Location"] == "/training/rollouts/"
    row = RolloutImport.objects.get()
    assert row.status == "done" and row.created_by == people.bob
    rollouts = list(Rollout.objects.order_by("trial_name"))
    assert [(r.candidate, r.harbor_reward) for r in rollouts] == [(task, 1.0), (task, 0.0)]
    assert {r.grade for r in rollouts} == {"ungraded"}
    page = html(client.get("/training/rollouts/"))
    assert f"Import {row.pk} queued" in page
    assert f'id="rollout-import-{row.pk}"' in page and "2 rollouts from 2 trials" in page
    row_html = page[page.index(f'<tr id="rollout-{rollouts[0].pk}"') :]
    row_html = row_html[: row_html.index("</tr>")]
    assert f"the kept task (candidate {task.pk}) is gone" in row_html
    assert "Re-grade" in row_html and "terminus-2" in row_html and "gpt-x" in row_html


def test_trials_of_tasks_not_kept_here_are_skipped_with_the_reason(client, people, jobs):
    row = rollout_import_create(user=people.bob, path=jobs)
    rollout_import_execute(import_id=row.pk)
    client.force_login(people.alice)
    page = html(client.get(f"/training/rollouts/imports/{row.pk}/"))
    assert "Skipped trials and why" in page
    assert "<code>repair-1__a</code>" in page and "<code>unknown_task</code>" in page
    assert "not a kept task of this installation" in page
    assert "No trial of this folder ran a kept task of this installation." in page


def test_an_import_polls_while_it_runs_and_stops_with_286(client, people, jobs):
    row = rollout_import_create(user=people.bob, path=jobs)
    client.force_login(people.alice)
    target = {**HX, "HX-Target": f"rollout-import-{row.pk}"}
    running = client.get(f"/training/rollouts/imports/{row.pk}/", headers=target)
    assert running.status_code == 200
    body = html(running).strip()
    assert body.startswith(f'<article class="card import" id="rollout-import-{row.pk}"')
    assert 'hx-trigger="every 1s"' in body and "<html" not in body
    rollout_import_execute(import_id=row.pk)
    done = client.get(f"/training/rollouts/imports/{row.pk}/", headers=target)
    assert done.status_code == 286 and done["HX-Refresh"] == "true"
    assert "every 1s" not in html(done)
    page = client.get(f"/training/rollouts/imports/{row.pk}/")
    assert page.status_code == 200 and "<html" in html(page)


def test_a_bad_path_is_refused_at_422_in_words_and_kept_in_the_form(client, people, tmp_path):
    client.force_login(people.bob)
    missing = tmp_path / "no-such-jobs"
    response = client.post("/training/rollouts/import/", {"path": str(missing)})
    assert response.status_code == 422
    assert "is not a folder" in html(response) and f'value="{missing}"' in html(response)
    empty = client.post("/training/rollouts/import/", {"path": "  "})
    assert empty.status_code == 422 and "Give the server path of a jobs folder" in html(empty)
    assert not RolloutImport.objects.exists()


def test_rollouts_show_both_rewards_and_mark_a_disagreement(client, people):
    task = make_candidate(trials=False, task_name="repair-invoice")
    agrees = make_rollout(task, repaired(), agent="oracle", reward=1.0, harbor_reward=1.0)
    differs = make_rollout(
        task, repaired(), agent="claude-code", reward=0.0, harbor_reward=1.0, model="sonnet"
    )
    client.force_login(people.carol)
    page = html(client.get("/training/rollouts/"))
    row = page[page.index(f'<tr id="rollout-{differs.pk}" class="rollout disagrees">') :]
    row = row[: row.index("</tr>")]
    assert "disagrees with Harbor" in row and "sonnet" in row
    assert '<td class="num">1.0</td>' in row
    same = page[page.index(f'<tr id="rollout-{agrees.pk}" class="rollout">') :]
    assert "disagrees with Harbor" not in same[: same.index("</tr>")]
    assert "Import and grade" not in page  # an approver may look, not import
    assert "none recorded" in page  # neither rollout has a trajectory to open


def test_the_filters_answer_htmx_with_the_rollouts_only(client, people):
    task = make_candidate(trials=False, task_name="repair-invoice")
    other = make_candidate(trials=False, task_name="repair-dates")
    oracle = make_rollout(task, repaired(), agent="oracle")
    make_rollout(other, repaired(), agent="nop", reward=None, grade="ungraded")
    client.force_login(people.alice)
    target = {**HX, "HX-Target": "rollout-results"}
    fragment = html(client.get("/training/rollouts/?agent=oracle", headers=target)).strip()
    assert fragment.startswith('<div id="rollout-results">') and "<html" not in fragment
    assert fragment.count('<tr id="rollout-') == 1 and f'id="rollout-{oracle.pk}"' in fragment
    by_task = html(client.get("/training/rollouts/?task=dates", headers=target))
    assert by_task.count('<tr id="rollout-') == 1 and "repair-dates" in by_task
    by_number = html(client.get(f"/training/rollouts/?task=%23{task.pk}", headers=target))
    assert f'id="rollout-{oracle.pk}"' in by_number
    ungraded = html(client.get("/training/rollouts/?grade=ungraded", headers=target))
    assert ungraded.count('<tr id="rollout-') == 1 and "nop" in ungraded
    assert "No rollout matches these filters." in html(
        client.get("/training/rollouts/?agent=nobody", headers=target)
    )


def test_the_empty_page_says_how_to_make_rollouts(client, people):
    client.force_login(people.alice)
    page = html(client.get("/training/rollouts/"))
    assert "No rollouts yet." in page and "harbor run -p TASKS -a AGENT" in page


def test_re_grading_puts_an_ungraded_rollout_back_in_line(
    client, people, django_capture_on_commit_callbacks
):
    task = make_candidate(trials=False, task_name="repair-invoice")
    rollout = make_rollout(
        task,
        repaired(),
        agent="nop",
        reward=None,
        grade="ungraded",
        grade_detail={"reason": "Docker is not usable: no engine"},
    )
    client.force_login(people.bob)
    target = {**HX, "HX-Target": f"rollout-{rollout.pk}"}
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(f"/training/rollouts/{rollout.pk}/regrade/", headers=target)
    assert len(callbacks) == 1  # one grading job, on the docker cluster
    fragment = html(response).strip()
    assert fragment.startswith(f'<tr id="rollout-{rollout.pk}" class="rollout">')
    assert "pending" in fragment and "Re-grade" not in fragment
    rollout.refresh_from_db()
    assert rollout.grade == "pending"
    again = client.post(f"/training/rollouts/{rollout.pk}/regrade/")
    assert again.status_code == 302 and again["Location"] == "/training/rollouts/"
    assert client.post("/training/rollouts/999999/regrade/").status_code == 404


def test_importing_and_re_grading_need_the_run_eval_role(client, people, jobs):
    task = make_candidate(trials=False)
    rollout = make_rollout(task, repaired(), reward=None, grade="ungraded")
    for who in (people.alice, people.carol, people.eve):
        client.force_login(who)
        assert client.post("/training/rollouts/import/", {"path": str(jobs)}).status_code == 403
        assert client.post(f"/training/rollouts/{rollout.pk}/regrade/").status_code == 403
    assert not RolloutImport.objects.exists()
    rollout.refresh_from_db()
    assert rollout.grade == "ungraded"
