"""Pipeline run pages: list, live detail, report, re-run and cancel."""

import re

import pytest
from django.urls import reverse

from tasks_review.models import Candidate, PipelineRun, empty_counts
from tests.trajectories.factories import make_trajectory

pytestmark = pytest.mark.django_db
CONFIG = {
    "source": {"kind": "trajectory", "path": "/data/logs", "format": "auto"},
    "pipeline": {
        "name": "trajectory_to_env",
        "options": {"families": ["repair"], "propose_only": False},
    },
    "output": {"destination": "/tmp/out"},
}


def make_run(**fields) -> PipelineRun:
    return PipelineRun.objects.create(config=CONFIG, destination="/tmp/out", **fields)


def make_drop(run: PipelineRun, trajectory, reason: str, **fields) -> Candidate:
    return Candidate.objects.create(
        run=run,
        trajectory=trajectory,
        family="repair",
        key=f"{reason}-{Candidate.objects.count()}",
        status="dropped",
        drop_reason=reason,
        **fields,
    )


def test_list_shows_runs_with_their_counts(as_annotator):
    make_run(status="done", counts={**empty_counts(), "written": 7})
    body = as_annotator.get(reverse("runs:list")).content.decode()
    assert "/data/logs" in body and ">7<" in body.replace(" ", "")


def test_list_htmx_gets_the_fragment(as_annotator):
    make_run()
    response = as_annotator.get(reverse("runs:list"), headers={"HX-Request": "true"})
    assert b"<html" not in response.content and b'id="runs"' in response.content


def test_detail_polls_while_running_and_groups_drops_by_reason(as_annotator):
    run = make_run(status="running", stage="mine", stage_done=3, stage_total=9)
    t = make_trajectory()
    for reason in ("no_change", "no_change", "fix_touches_lost_file"):
        make_drop(
            run, t, reason, check_command="npm test", fail_step=1, pass_step=2, drop_stage="mine"
        )
    body = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in body
    assert "mine · 3 of 9" in body
    assert body.index("no_change") < body.index("fix_touches_lost_file")  # biggest group first


def test_progress_fragment_keeps_polling_until_the_run_ends(as_annotator):
    run = make_run(status="running", stage="replay")
    url = reverse("runs:detail", args=[run.pk])
    headers = {"HX-Request": "true", "HX-Target": f"run-{run.pk}-progress"}
    running = as_annotator.get(url, headers=headers)
    assert running.status_code == 200 and b"<html" not in running.content
    PipelineRun.objects.filter(id=run.id).update(status="done")
    done = as_annotator.get(url, headers=headers)
    assert done.status_code == 286  # htmx stops polling
    assert done["HX-Refresh"] == "true"


def test_report_is_json_once_finished(as_annotator):
    run = make_run(status="running")
    assert as_annotator.get(reverse("runs:report", args=[run.pk])).status_code == 404
    PipelineRun.objects.filter(id=run.id).update(status="done", report={"counts": {"kept": 1}})
    response = as_annotator.get(reverse("runs:report", args=[run.pk]))
    assert response.json() == {"counts": {"kept": 1}}


def test_rerun_and_cancel_need_the_run_pipeline_permission(client, people):
    run = make_run(status="done")
    client.force_login(people.alice)  # annotator: can look, cannot run
    assert client.post(reverse("runs:rerun", args=[run.pk])).status_code == 403
    client.force_login(people.bob)  # reviewer
    response = client.post(reverse("runs:rerun", args=[run.pk]))
    new = PipelineRun.objects.order_by("-id").first()
    assert response.status_code == 302 and new.id != run.id and new.config == run.config
    assert client.post(reverse("runs:cancel", args=[new.pk])).status_code == 302
    new.refresh_from_db()
    assert new.status == "cancelled" and new.cancel_requested


def test_a_finished_run_cannot_be_cancelled(client, people):
    run = make_run(status="done")
    client.force_login(people.dave)
    client.post(reverse("runs:cancel", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "done" and not run.cancel_requested


def test_outsiders_and_anonymous_see_no_runs(client, people):
    run = make_run()
    assert client.get(reverse("runs:list")).status_code == 302
    client.force_login(people.eve)
    assert client.get(reverse("runs:list")).status_code == 403
    assert client.get(reverse("runs:detail", args=[run.pk])).status_code == 403


def test_a_cancel_requested_mid_run_stops_it(tmp_path, settings):
    from tasks_review.core.config import parse_config
    from tasks_review.services.pipeline import pipeline_run_create, pipeline_run_execute
    from tests.conftest import SAMPLES

    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "BASE_IMAGE": "x.org/b@sha256:" + "0" * 64,
        "VERIFY": False,
    }
    config = parse_config(
        {
            "source": {"path": str(SAMPLES), "format": "auto"},
            "pipeline": {"name": "trajectory_to_env"},
            "output": {"destination": str(tmp_path)},
        },
        base_dir=tmp_path,
    )
    run = pipeline_run_create(config=config)

    def cancel_during_replay(event):
        if event.stage == "replay":
            PipelineRun.objects.filter(id=event.run).update(cancel_requested=True)

    done = pipeline_run_execute(run_id=run.id, progress=cancel_during_replay)
    assert done.status == "cancelled"
    assert done.report["status"] == "cancelled"
    assert not Candidate.objects.filter(run=run).exists()


def test_a_rerun_runs_as_a_django_q2_job(
    client, people, q_sync, django_capture_on_commit_callbacks, tmp_path, settings
):
    from tests.conftest import SAMPLES

    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "BASE_IMAGE": "x.org/b@sha256:" + "0" * 64,
        "VERIFY": False,
    }
    config = {**CONFIG, "source": {**CONFIG["source"], "path": str(SAMPLES)}}
    old = PipelineRun.objects.create(config=config, destination=str(tmp_path), status="done")
    client.force_login(people.dave)
    with django_capture_on_commit_callbacks(execute=True) as queued:
        client.post(reverse("runs:rerun", args=[old.pk]))
    assert len(queued) == 1
    new = PipelineRun.objects.exclude(id=old.id).get()
    assert new.status == "done" and new.counts["written"] == 4
    assert (tmp_path / "report.json").exists()


def test_a_queued_run_verifies_each_candidate_in_its_own_q2_job_and_the_last_one_finishes_it(
    people, q_sync, django_capture_on_commit_callbacks, tmp_path, settings, monkeypatch
):
    from django_q.tasks import async_task as real_async_task

    from tasks_review.core.config import parse_config
    from tasks_review.core.trials.model import MatrixResult, MatrixStatus
    from tasks_review.services import verification
    from tasks_review.services.pipeline import pipeline_run_create
    from tasks_review.tasks import pipeline_run_enqueue
    from tests.conftest import SAMPLES

    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "BASE_IMAGE": "x.org/b@sha256:" + "0" * 64,
        "VERIFY": True,
    }
    verified: list[str] = []

    def fake_matrix(task_dir, **_):
        verified.append(task_dir)
        return MatrixResult(task_dir=task_dir, status=MatrixStatus.KEPT)

    monkeypatch.setattr(verification, "verify_task", fake_matrix)
    jobs: list[str] = []

    def counting(func, *args, **kwargs):
        jobs.append(func)
        return real_async_task(func, *args, **kwargs)

    monkeypatch.setattr("groundwork.jobs.queue.async_task", counting)
    options = {**CONFIG["pipeline"]["options"], "jobs": 2}
    config = {
        "source": {**CONFIG["source"], "path": str(SAMPLES)},
        "pipeline": {**CONFIG["pipeline"], "options": options},
        "output": {"destination": str(tmp_path)},
    }
    run = pipeline_run_create(config=parse_config(config, base_dir=tmp_path))
    with django_capture_on_commit_callbacks(execute=True):
        pipeline_run_enqueue(run.id)
    run.refresh_from_db()
    statuses = list(
        Candidate.objects.filter(run=run).values_list("status", "drop_reason", "drop_detail")
    )
    assert run.status == "done", (run.error, statuses, jobs, run.counts)
    assert len(verified) == 4 == len(set(verified)), (statuses, jobs)  # each candidate once
    # The run's job, then one job per candidate plus the lanes' last look.
    assert jobs[0] == "tasks_review.tasks.pipeline_run_job"
    lane_jobs = [j for j in jobs if j == "tasks_review.tasks.pipeline_verify_job"]
    assert 4 <= len(lane_jobs) <= 4 + 2
    assert run.counts["kept"] == 4 and run.stage == "verify" and run.stage_done == 4
    assert run.report["counts"]["kept"] == 4 and "verify" in run.report["timings"]
    assert (tmp_path / "report.json").exists()
    assert set(Candidate.objects.filter(run=run).values_list("status", flat=True)) == {"kept"}


def test_ungraded_candidates_are_retried_one_q2_job_each_from_the_run_page(
    client, people, q_sync, django_capture_on_commit_callbacks, tmp_path, settings, monkeypatch
):
    from tasks_review.core.trials.model import MatrixResult, MatrixStatus
    from tasks_review.services import verification

    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "VERIFY": True}
    run = make_run(status="done", report={"counts": {}})
    PipelineRun.objects.filter(id=run.id).update(destination=str(tmp_path))
    rows = [
        Candidate.objects.create(
            run=run,
            trajectory=make_trajectory(),
            family="repair",
            key=f"k{i}",
            check_command="npm test",
            status="ungraded",
            fail_step=2,
            pass_step=5,
            task_dir=str(tmp_path / f"t{i}"),
        )
        for i in range(2)
    ]
    PipelineRun.objects.filter(id=run.id).update(counts={**empty_counts(), "ungraded": 2})
    outcome = {"status": MatrixStatus.UNGRADED}
    monkeypatch.setattr(
        verification,
        "verify_task",
        lambda task_dir, **_: MatrixResult(task_dir=task_dir, status=outcome["status"]),
    )
    page = client.get(reverse("runs:detail", args=[run.pk]))
    assert page.status_code == 302  # anonymous: to the login page
    client.force_login(people.eve)
    assert client.post(reverse("runs:retry", args=[run.pk])).status_code == 403
    client.force_login(people.dave)
    assert b"Retry 2 ungraded" in client.get(reverse("runs:detail", args=[run.pk])).content

    outcome["status"] = MatrixStatus.KEPT  # the engine is back
    with django_capture_on_commit_callbacks(execute=True) as queued:
        client.post(reverse("runs:retry", args=[run.pk]))
    assert len(queued) == 2  # one job per ungraded candidate
    assert {c.status for c in Candidate.objects.filter(id__in=[r.id for r in rows])} == {"kept"}
    run.refresh_from_db()
    assert (run.counts["kept"], run.counts["ungraded"]) == (2, 0)
    assert run.report["counts"]["kept"] == 2
    page = client.get(reverse("runs:detail", args=[run.pk])).content
    assert reverse("runs:retry", args=[run.pk]).encode() not in page  # nothing left to retry
    response = client.post(reverse("runs:retry", args=[run.pk]), follow=True)
    assert b"no ungraded candidate" in response.content


@pytest.mark.parametrize("action", ["runs:rerun", "runs:cancel", "runs:retry"])
def test_acting_on_a_run_that_does_not_exist_is_404(client, people, action):
    client.force_login(people.dave)
    assert client.post(reverse(action, args=[987654])).status_code == 404


def ungraded_candidate(run: PipelineRun, key: str, reasons: list[str]) -> Candidate:
    return Candidate.objects.create(
        run=run,
        trajectory=make_trajectory(),
        family="repair",
        key=key,
        check_command="npm test",
        status="ungraded",
        fail_step=2,
        pass_step=5,
        task_name=f"repair-{key}",
        verification={"status": "ungraded", "reasons": reasons},
    )


def test_the_run_page_says_why_candidates_are_ungraded_grouped_with_counts(as_annotator):
    run = make_run(status="done", counts={**empty_counts(), "ungraded": 3})
    gone = [f"oracle #{i} ungraded: the daemon went away" for i in range(3)]
    first = ungraded_candidate(run, "a", gone)
    ungraded_candidate(run, "b", gone[:1])
    harness = ungraded_candidate(run, "c", ["harness error: OSError: disk full"])
    page = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    summary = page[page.index(f'id="run-{run.pk}-ungraded"') :]
    assert "Ungraded: 3" in summary
    assert summary.index("the daemon went away") < summary.index("harness error: OSError")
    assert "<strong>2</strong>" in summary.split("harness error")[0]  # two candidates
    row = page[page.index(f'id="candidate-{first.pk}"') :].split("</tr>")[0]
    assert "the daemon went away" in row and "× 3" in row  # three of its trials
    row = page[page.index(f'id="candidate-{harness.pk}"') :].split("</tr>")[0]
    assert "harness error: OSError: disk full" in row


def test_a_run_without_ungraded_candidates_shows_no_ungraded_summary(as_annotator):
    run = make_run(status="done")
    page = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert f'id="run-{run.pk}-ungraded"' not in page


def test_the_run_page_shows_yield_per_harness_and_language_and_the_top_drop_reasons(
    as_annotator,
):
    run = make_run(status="done")
    codex, pi, idle = (make_trajectory(format=f) for f in ("codex", "pi", "pi"))
    run.trajectories.set([codex, pi, idle])
    for t, language, status, reason in (
        (codex, "python", "kept", ""),
        (codex, "python", "dropped", "no_change"),
        (pi, "node", "dropped", "no_change"),
        (pi, "node", "dropped", "package_install_fix"),
    ):
        Candidate.objects.create(
            run=run,
            trajectory=t,
            family="repair",
            key=f"{t.pk}-{status}-{reason}",
            language=language,
            status=status,
            task_dir="/tmp/out/x" if status == "kept" else "",
            fail_step=1,
            pass_step=2,
            drop_reason=reason,
        )
    page = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    card = page[page.index(f'id="run-{run.pk}-yield"') :].split("</section>")[0]
    cells = card.replace(" ", "").replace("\n", "")
    # trajectories, candidates, written, kept, dropped
    assert "<td>codex</td><td>1</td><td>2</td><td>1</td><td>1</td><td>1</td>" in cells
    assert "<td>pi</td><td>2</td><td>2</td><td>0</td><td>0</td><td>2</td>" in cells
    assert "<td>python</td><td>1</td><td>2</td><td>1</td><td>1</td><td>1</td>" in cells
    assert "<td>node</td><td>1</td><td>2</td><td>0</td><td>0</td><td>2</td>" in cells
    assert card.index("no_change</code>: <strong>2") < card.index("package_install_fix")


@pytest.mark.parametrize("htmx", [False, True])
def test_the_run_page_separates_product_side_drops_from_environment_limits(as_annotator, htmx):
    run = make_run(status="done")
    t = make_trajectory()
    for stage, reason, detail in (
        ("mine", "check_manifest_unseen", "mise run test needs mise.toml in ."),
        ("mine", "unsupported_language", "rust check (cargo); supported: go, node, python"),
        (
            "prepare",
            "dependency_unavailable_offline",
            "x (package.json): no npm cache is configured",
        ),
    ):
        make_drop(run, t, reason, drop_stage=stage, drop_detail=detail)
    headers = {"HX-Request": "true"} if htmx else {}
    page = as_annotator.get(reverse("runs:detail", args=[run.pk]), headers=headers)
    body = page.content.decode()
    product = body[body.index(f'id="run-{run.pk}-product-drops"') :].split("</div>")[0]
    environment = body[body.index(f'id="run-{run.pk}-environment-limits"') :].split("</div>")[0]
    assert "check_manifest_unseen</code>: <strong>1" in product and "rust" not in product
    assert "language <strong>rust</strong>: <strong>1" in environment
    assert 'source <strong>npm packages</strong> <span class="muted">from an npm registry' in (
        environment
    )


def test_the_run_page_says_which_commit_of_a_clone_each_trajectory_was_laid_over_or_why_not(
    as_annotator,
):
    over, missed = make_trajectory(), make_trajectory()
    entry = {"clone": "/home/me/src/app", "left_out": {}, "disagreeing": []}
    run = make_run(
        status="done",
        clones=[
            {
                **entry,
                "trajectory": over.pk,
                "commit": "0294234cadda24d3080fbfbc2d13295bb3a496d",
                "how": "recorded by the session",
                "files": 12,
                "read_disagreements": 1,
                "reason": "",
            },
            {
                **entry,
                "trajectory": missed.pk,
                "commit": None,
                "how": "",
                "files": 0,
                "read_disagreements": 0,
                "reason": "the clone has no branch '<spike>'",
            },
        ],
    )
    page = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    card = page[page.index(f'id="run-{run.pk}-clones"') :].split("</section>")[0]
    assert "12 files at <code>0294234cadda…</code>, recorded by the session" in card
    assert "1 shown otherwise by the log" in card
    assert "not laid over the clone: the clone has no branch &#x27;&lt;spike&gt;&#x27;" in card
    assert reverse("trajectories:detail", args=[missed.pk]) in card


def test_a_run_without_clones_shows_no_clone_section(as_annotator):
    run = make_run(status="done")
    page = as_annotator.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert f'id="run-{run.pk}-clones"' not in page


def test_mid_run_the_count_cards_and_the_yield_table_say_the_same(as_annotator):
    """The candidates' rows change as each lane verifies; the run's counters once a stage ends."""
    counts = {**empty_counts(), "trajectories": 2, "candidates": 4, "written": 4, "dropped": 0}
    run = make_run(status="running", stage="verify", stage_done=3, stage_total=4, counts=counts)
    t = make_trajectory()
    for i, status in enumerate(["kept", "kept", "kept", "dropped"]):
        Candidate.objects.create(
            run=run, trajectory=t, family="repair", key=f"k{i}", status=status,
            check_command="pytest", language="python", fail_step=1, pass_step=2,
            task_dir=f"/tmp/out/t{i}",
        )  # fmt: skip

    def cards(html: str) -> dict[str, str]:
        block = html.split('<dl class="counts">')[1].split("</dl>")[0]
        return dict(re.findall(r"<dt>(\w+)</dt><dd>(\d+)</dd>", block))

    url = reverse("runs:detail", args=[run.pk])
    html = as_annotator.get(url).content.decode()
    yield_row = html.split(f'id="run-{run.pk}-yield"')[1].split("<td>python</td>")[1]
    assert re.findall(r"<td>(\d+)</td>", yield_row.split("</tr>")[0]) == ["1", "4", "4", "3", "1"]
    shown = cards(html)
    assert [shown[k] for k in ("candidates", "written", "kept", "dropped")] == ["4", "4", "3", "1"]
    polled = as_annotator.get(
        url, headers={"HX-Request": "true", "HX-Target": f"run-{run.pk}-progress"}
    ).content.decode()
    assert cards(polled) == cards(html)
