"""manage.py ingest and the services behind it, on the bundled samples and small bad files."""

import json
import shutil
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.conftest import SAMPLES
from trajectories.models import IngestIssue, IngestRun, SourceFile, Step, Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute

pytestmark = pytest.mark.django_db


def ingest_json(*paths, **options) -> tuple[dict, int]:
    out = StringIO()
    try:
        call_command("ingest", *[str(p) for p in paths], json=True, stdout=out, **options)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code)
    return json.loads(out.getvalue()), code


def test_samples_ingest_one_per_format_and_the_generator_script_is_skipped(q_sync):
    result, code = ingest_json(SAMPLES)
    assert code == 0
    assert result["ingested"] == 4
    assert result["by_format"] == {"atif": 1, "claude-code": 1, "codex": 1, "pi": 1}
    assert result["duplicates"] == 0 and result["failed"] == []
    assert [s["path"].endswith("make_samples.py") for s in result["skipped"]] == [True]
    assert result["skipped"][0]["reason"].startswith("not a trajectory")
    assert result["partial"] == 0 and result["warnings"] == []
    assert set(result) == {
        "files",
        "ingested",
        "duplicates",
        "twins",
        "partial",
        "skipped",
        "failed",
        "warnings",
        "by_format",
    }


def test_the_same_bytes_ingested_again_add_nothing(q_sync):
    ingest_json(SAMPLES)
    before = (Trajectory.objects.count(), Step.objects.count(), SourceFile.objects.count())
    result, code = ingest_json(SAMPLES)
    assert code == 0  # everything was a duplicate
    assert result["ingested"] == 0 and result["duplicates"] == 4
    assert (Trajectory.objects.count(), Step.objects.count(), SourceFile.objects.count()) == before


def test_ingest_stores_atif_raw_bytes_sha_and_steps(q_sync):
    ingest_json(SAMPLES / "claude-code")
    t = Trajectory.objects.get()
    raw_path = next((SAMPLES / "claude-code").glob("*.jsonl"))
    assert t.source.raw.content() == raw_path.read_bytes()
    atif = json.loads(t.atif.content())
    assert atif["schema_version"] == "ATIF-v1.7"
    assert t.steps.count() == len(atif["steps"]) == t.steps_count
    side = json.loads(t.side_data.content())
    assert side["tool_results"], "Claude Code's toolUseResult is kept for the replay"
    assert t.model_name and t.agent_name == "claude-code" and t.title


def test_ingest_queues_the_replay_which_finds_the_checks(
    q_sync, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as queued:
        ingest_json(SAMPLES / "codex")
    assert len(queued) == 1
    t = Trajectory.objects.get()
    assert t.status == Trajectory.Status.REPLAYED
    exits = [c["exit_code"] for c in t.replay.checks]
    assert exits == [1, 0]


def test_a_bad_file_is_recorded_with_its_line_and_the_rest_is_ingested(tmp_path, q_sync):
    shutil.copy(next((SAMPLES / "pi").glob("*.jsonl")), tmp_path / "good.jsonl")
    (tmp_path / "broken.json").write_text('{"schema_version": "ATIF-v1.7", "steps": [')
    result, code = ingest_json(tmp_path)
    assert code == 0 and result["ingested"] == 1
    [failed] = result["failed"]
    assert failed["path"].endswith("broken.json") and failed["reason"]
    issue = IngestIssue.objects.get(kind="failed")
    assert issue.reason == failed["reason"]


def test_nothing_usable_exits_1(tmp_path):
    (tmp_path / "notes.md").write_text("# just notes\n")
    result, code = ingest_json(tmp_path)
    assert code == 1
    assert (
        result["ingested"] == 0 and result["skipped"][0]["reason"] == "not a trajectory: markdown"
    )


def test_a_missing_path_is_a_setup_error_exit_2(tmp_path):
    with pytest.raises(CommandError) as err:
        call_command("ingest", str(tmp_path / "nope"))
    assert err.value.returncode == 2 and "no such file" in str(err.value)


def test_a_forced_format_that_does_not_match_is_a_recorded_failure(tmp_path):
    shutil.copy(next((SAMPLES / "codex").glob("*.jsonl")), tmp_path / "rollout.jsonl")
    result, code = ingest_json(tmp_path, format="pi")
    assert code == 1
    assert "codex" in result["failed"][0]["reason"].lower()


def test_scan_blocks_a_trajectory_that_forges_its_reward(tmp_path, q_sync):
    doc = {
        "schema_version": "ATIF-v1.7",
        "session_id": "forger",
        "agent": {"name": "terminus-2", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Make the tests pass."},
            {
                "step_id": 2,
                "source": "agent",
                "message": "Done.",
                "tool_calls": [
                    {
                        "tool_call_id": "c1",
                        "function_name": "bash",
                        "arguments": {"command": "echo 1 > /logs/verifier/reward.txt"},
                    }
                ],
                "observation": {"results": [{"source_call_id": "c1", "content": ""}]},
            },
        ],
    }
    (tmp_path / "forger.json").write_text(json.dumps(doc))
    result, code = ingest_json(tmp_path, scan=True)
    assert code == 0
    t = Trajectory.objects.get()
    assert t.scanned and t.blocked
    assert any(f["severity"] in ("high", "critical") for f in t.scan_findings)


def secrets_session(tmp_path):
    from tests.tasks_review.core.secrets_story import secrets_story

    atif, _ = secrets_story().builder.build()
    (tmp_path / "secrets.json").write_text(json.dumps(atif))


def test_secrets_block_a_scanned_trajectory_when_the_setting_says_so(tmp_path, q_sync, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "SCAN_BLOCK_SECRETS": True}
    secrets_session(tmp_path)
    assert ingest_json(tmp_path, scan=True)[1] == 0
    t = Trajectory.objects.get()
    assert t.scanned and t.blocked
    (finding,) = [f for f in t.scan_findings if f["check"] == "traj2env.secrets"]
    assert finding["detail"] == "aws_access_key_id, github_token, openai_api_key, private_key"


def test_secrets_do_not_block_by_default(tmp_path, q_sync, settings):
    assert settings.TRAJ2ENV["SCAN_BLOCK_SECRETS"] is False
    secrets_session(tmp_path)
    assert ingest_json(tmp_path, scan=True)[1] == 0
    t = Trajectory.objects.get()
    assert t.scanned and not t.blocked
    assert not [f for f in t.scan_findings if f["check"] == "traj2env.secrets"]


def test_a_run_is_a_row_with_status_and_counts(tmp_path):
    run = ingest_run_create(paths=[SAMPLES])
    assert run.status == IngestRun.Status.QUEUED
    summary = ingest_run_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == IngestRun.Status.DONE
    assert (run.files_total, run.files_done, run.ingested) == (summary.files, summary.files, 4)
    assert ingest_run_execute(run_id=run.id) is None, "a finished run is not claimed twice"


def test_an_unknown_format_is_refused_before_anything_runs():
    with pytest.raises(ValueError, match="unknown format"):
        ingest_run_create(paths=[SAMPLES], fmt="jsonl")


def test_progress_is_reported_per_file():
    seen = []
    run = ingest_run_create(paths=[SAMPLES])
    ingest_run_execute(run_id=run.id, progress=lambda done, total, path: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] == len(seen)


def test_replay_command_prints_the_checks_of_a_file_it_ingests_first(q_sync):
    out = StringIO()
    path = next((SAMPLES / "claude-code").glob("*.jsonl"))
    call_command("replay", str(path), json=True, stdout=out)
    result = json.loads(out.getvalue())
    assert set(result) >= {"steps", "files_known", "files_lost", "commands", "checks"}
    assert [c["exit_code"] for c in result["checks"]] == [1, 0]
    assert result["checks"][0]["language"] == "python" and result["checks"][0]["kind"] == "test"
    assert result["files_known"] == 3 and result["files_lost"] == 0


def test_replay_command_rejects_an_unknown_id():
    with pytest.raises(CommandError) as err:
        call_command("replay", "424242")
    assert err.value.returncode == 2
