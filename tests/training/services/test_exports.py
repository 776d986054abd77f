"""Training exports from the database: the train split's evaluated rollouts (or labelled pairs,
or kept tasks) written by the core, read back with `datasets`; refusals recorded with their
reasons; the same inputs giving the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import Dataset

from groundwork.access.errors import Invalid, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.tasks_review.factories import make_task_dir
from tests.training.factories import make_rollout
from tests.training.factories.loop import (
    FIXED,
    behaviour_with,
    evaluated,
    fixing,
    make_trajectory_rollout,
    pass_and_fail,
    tasks_of,
)
from training.core.exports.kinds import tree_sha256
from training.models import BehaviourTask, Rollout, TrainingExport
from training.selectors import labels as label_reads
from training.services import labels
from training.services.exports import training_export_create, training_export_execute
from training.services.pairs import pairs_build
from training.tasks import training_export_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def behaviour(people):
    """Two train tasks and one held-out task, each with a passing and a failing rollout, all
    scored by one eval run."""
    behaviour = behaviour_with(train=2, held_out=1)
    for task in behaviour.tasks.all():
        pass_and_fail(task)
    evaluated(behaviour)
    return behaviour


def export(behaviour, kind: str, out: Path, **kwargs) -> TrainingExport:
    row = training_export_create(
        user=None, behaviour_id=behaviour.pk, kind=kind, out_dir=out, **kwargs
    )
    done = training_export_execute(export_id=row.pk)
    assert done is not None
    return done


def read_parquet(out: Path, tmp_path: Path) -> Dataset:
    return Dataset.from_parquet(
        str(out / "data" / "train-00000-of-00001.parquet"), cache_dir=str(tmp_path / "cache")
    )


def test_sft_takes_the_passing_rollouts_of_the_train_split_and_reads_back(behaviour, tmp_path):
    done = export(behaviour, "sft", tmp_path / "sft")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    assert manifest == done.manifest and done.rows == 2
    train = {task_id_of(t) for t in tasks_of(behaviour)}
    assert set(manifest["task_ids"]) == train
    assert manifest["counts"]["left_out"] == {"eval_failed": 2}
    assert manifest["behaviour"] == {"slug": behaviour.slug, "spec_version": 1}
    run = behaviour.versions.get().runs.get()
    assert manifest["eval_run_ids"] == [str(run.pk)]
    by_id = {s["trajectory_id"]: s for s in manifest["sources"]}
    for rollout_id, source in by_id.items():
        trajectory = run.results.get(rollout_id=rollout_id).rollout.trajectory
        assert source["source_sha256"] == trajectory.source.sha256
    data = read_parquet(tmp_path / "sft", tmp_path)
    assert data.column_names == ["messages", "tools"] and len(data) == 2
    roles = [m["role"] for m in data[0]["messages"]]
    assert roles[0] == "user" and "assistant" in roles and "tool" in roles
    call = next(m for m in data[0]["messages"] if m.get("tool_calls"))["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], dict)  # TRL: arguments are objects
    assert done.sha256 and len(done.sha256) == 64
    event = AuditEvent.objects.get(verb="training_export.finish")
    assert event.after["status"] == "done" and event.after["rows"] == 2


def task_id_of(task: BehaviourTask) -> str:
    return task.candidate.task_name


def test_the_same_inputs_give_the_same_bytes(behaviour, tmp_path):
    first = export(behaviour, "openai", tmp_path / "one")
    second = export(behaviour, "openai", tmp_path / "two")
    for name in ("data.jsonl", "data/train-00000-of-00001.parquet", "README.md"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert first.manifest["files"] == second.manifest["files"]


def test_kto_labels_every_train_rollout_with_the_harness_pass(behaviour, tmp_path):
    done = export(behaviour, "kto", tmp_path / "kto")
    data = read_parquet(tmp_path / "kto", tmp_path)
    assert done.rows == 4 and sorted(data["label"]) == [False, False, True, True]
    assert set(data.column_names) == {"prompt", "completion", "label", "tools"}


def test_a_rollout_scored_by_no_eval_run_refuses_the_export_naming_it(behaviour, tmp_path):
    task = tasks_of(behaviour)[0]
    late = make_trajectory_rollout(task.candidate, fixing("ls"), reward=1.0, world=FIXED)
    done = export(behaviour, "sft", tmp_path / "late")
    assert done.status == TrainingExport.Status.REFUSED and done.refusal_code == "eval_missing"
    assert "has not run on every included rollout" in done.refusal
    assert str(late.pk) in done.refusal
    assert not (tmp_path / "late").exists()


def test_a_held_out_task_named_for_an_export_is_refused(behaviour, tmp_path):
    ids = list(behaviour.tasks.values_list("pk", flat=True))
    held_out = behaviour.tasks.get(split=BehaviourTask.Split.HELD_OUT)
    done = export(behaviour, "sft", tmp_path / "held", task_ids=ids)
    assert done.status == TrainingExport.Status.REFUSED and done.refusal_code == "held_out"
    assert f"held-out tasks may not enter a training export: task {task_id_of(held_out)}" in (
        done.refusal
    )


def test_a_secret_that_would_survive_redaction_refuses_the_export(behaviour, tmp_path):
    task = tasks_of(behaviour)[0]
    # A task's name is provenance, written as it is: an address in it cannot be redacted.
    Candidate.objects.filter(pk=task.candidate_id).update(task_name="fix-for-ann@corp.eu")
    done = export(behaviour, "sft", tmp_path / "leak")
    assert done.status == TrainingExport.Status.REFUSED
    assert done.refusal_code == "secret_survived" and "email" in done.refusal
    assert not (tmp_path / "leak").exists()


def test_a_credential_the_redactor_misses_is_refused_by_the_second_check(
    people, tmp_path, monkeypatch
):
    from training.core.exports import writer

    # The redactor and its own after-check share their rules: make both blind to everything.
    monkeypatch.setattr(writer, "redact_data", lambda rows: _Unchanged(rows))
    monkeypatch.setattr(writer, "still_has_secrets", lambda text: ())
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    session = fixing(extra="git push https://x:ghp_" + "a1B2" * 9 + "@github.com/o/r")
    rollout = make_trajectory_rollout(task.candidate, session, reward=1.0, world=FIXED)
    evaluated(behaviour)
    done = export(behaviour, "sft", tmp_path / "blind")
    assert done.status == TrainingExport.Status.REFUSED
    assert done.refusal_code == "secret_second_check"
    assert f"data.jsonl row 1 (rollout {rollout.pk})" in done.refusal
    assert "token starting ghp_" in done.refusal and "ghp_a1B2" not in done.refusal
    assert not (tmp_path / "blind").exists()


class _Unchanged:
    def __init__(self, rows):
        self.value, self.counts, self.total = rows, {}, 0


def test_secrets_in_trajectories_are_redacted_and_counted(people, tmp_path):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    session = fixing(extra="curl -H 'Authorization: token ghp_" + "a1B2" * 9 + "' api")
    make_trajectory_rollout(task.candidate, session, reward=1.0, world=FIXED)
    evaluated(behaviour)
    done = export(behaviour, "sft", tmp_path / "redacted")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    assert done.manifest["redaction"]["total"] >= 1
    assert "ghp_" not in (tmp_path / "redacted" / "data.jsonl").read_text()


def test_nothing_to_export_is_a_refusal_that_says_its_tasks_have_no_graded_rollouts(
    people, tmp_path
):
    behaviour = behaviour_with(train=1)
    done = export(behaviour, "sft", tmp_path / "empty")
    assert done.status == TrainingExport.Status.REFUSED
    assert done.refusal_code == "nothing_to_export"
    assert "nothing given" not in done.refusal
    assert "its 1 train task has no graded rollouts" in done.refusal


def test_graded_rollouts_with_no_agent_trajectory_are_counted_in_the_refusal(people, tmp_path):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    for _ in range(2):
        make_rollout(task.candidate, fixing(), agent="nop", reward=0.0)
    make_rollout(task.candidate, fixing(), grade=Rollout.Grade.PENDING, reward=None)
    done = export(behaviour, "kto", tmp_path / "nop")
    assert done.status == TrainingExport.Status.REFUSED
    assert (
        "2 graded rollouts have no agent trajectory (nop, or an authored task's solve.sh)"
        in done.refusal
    )
    assert "1 rollout is not graded yet" in done.refusal


def test_a_dpo_export_with_no_pairs_says_none_were_built(people, behaviour, tmp_path):
    done = export(behaviour, "dpo", tmp_path / "dpo")
    assert done.status == TrainingExport.Status.REFUSED
    assert "no pairs were built" in done.refusal


def test_dpo_takes_the_labelled_pairs_and_records_agreement(people, behaviour, tmp_path, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LABELS_PER_PAIR": 2}
    pairs = pairs_build(user=people.bob, behaviour_id=behaviour.pk)
    assert len(pairs) == 2
    for pair in pairs:  # both labellers prefer the passing rollout
        for user in (people.alice, people.bob):
            sides = label_reads.sides(pair, user)
            choice = "A" if sides.left == pair.preferred_id else "B"
            labels.pair_label_submit(user=user, pair_id=pair.pk, choice=choice, left=sides.left)
    done = export(behaviour, "dpo", tmp_path / "dpo")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    data = read_parquet(tmp_path / "dpo", tmp_path)
    assert set(data.column_names) == {"prompt", "chosen", "rejected", "tools"}
    assert len(data) == 2
    label_info = done.manifest["labels"]
    assert label_info["labels"] == 4
    assert {p["chosen"] for p in label_info["pairs"]} == {str(p.preferred_id) for p in pairs}
    assert label_info["agreement"]["labellers"] == ["alice", "bob"]
    assert label_info["agreement"]["cohen_kappa"]["alice/bob"]["pairs"] == 2


def test_rft_rows_reference_the_kept_tasks_copied_beside_them(people, tmp_path):
    behaviour = behaviour_with(train=2)
    for task in tasks_of(behaviour):
        folder = make_task_dir(tmp_path / "kept", task.candidate.task_name)
        Candidate.objects.filter(pk=task.candidate_id).update(task_dir=str(folder))
        pass_and_fail(task)
    evaluated(behaviour)
    done = export(behaviour, "rft", tmp_path / "rft")
    assert done.status == TrainingExport.Status.DONE, done.refusal or done.error
    entries = done.manifest["harbor_dataset"]["tasks"]
    assert len(entries) == 2
    for entry in entries:
        copied = tmp_path / "rft" / entry["dir"]
        assert (copied / "instruction.md").is_file()
        assert tree_sha256(copied) == entry["sha256"]
        assert entry["eval_run_ids"]
    data = read_parquet(tmp_path / "rft", tmp_path)
    assert sorted(data["task_dir"]) == sorted(e["dir"] for e in entries)


def test_a_kept_task_without_its_folder_fails_the_rft_export_saying_so(people, tmp_path):
    behaviour = behaviour_with(train=1)
    [task] = tasks_of(behaviour)
    Candidate.objects.filter(pk=task.candidate_id).update(task_dir=str(tmp_path / "gone"))
    done = export(behaviour, "rft", tmp_path / "rft")
    assert done.status == TrainingExport.Status.FAILED and "no instruction.md" in done.error


def test_creating_refuses_unknown_kinds_foreign_tasks_and_used_folders(people, behaviour, tmp_path):
    with pytest.raises(Invalid, match="unknown export kind"):
        training_export_create(user=people.bob, behaviour_id=behaviour.pk, kind="rlhf")
    with pytest.raises(Invalid, match="not one of"):
        training_export_create(
            user=people.bob, behaviour_id=behaviour.pk, kind="sft", task_ids=[999999]
        )
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(Invalid, match="not an empty folder"):
        training_export_create(
            user=people.bob, behaviour_id=behaviour.pk, kind="sft", out_dir=tmp_path / "used"
        )
    with pytest.raises(NotPermitted):
        training_export_create(user=people.alice, behaviour_id=behaviour.pk, kind="sft")


def test_the_job_writes_a_queued_export_once(people, behaviour, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    row = training_export_create(user=people.bob, behaviour_id=behaviour.pk, kind="sft")
    assert Path(row.out_dir).parent == tmp_path / "training-exports"
    assert training_export_job(row.pk) == "done"
    assert training_export_job(row.pk) == "not claimed"
    row.refresh_from_db()
    assert row.created_by == people.bob and Path(row.out_dir, "manifest.json").is_file()
