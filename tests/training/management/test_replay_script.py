"""`manage.py replay_script TASK`: a kept task's recorded session written beside it for the replay
agent, with the harbor commands that run it. Exit 0 written, 1 refused, 2 a usage error."""

from __future__ import annotations

import pytest

from groundwork.models import AuditEvent
from tests.tasks_review.factories import make_candidate
from tests.training.samples import kept_sample
from training.core.harbor.replay_script import ActionKind, Cut, choose_script

pytestmark = pytest.mark.django_db


def test_the_script_of_a_kept_task_is_written_beside_it_and_audited(manage, tmp_path):
    task = kept_sample("claude-code", tmp_path)
    ran = manage("replay_script", task.task_name, "--json")
    assert ran.code == 0, ran.err
    done = ran.json
    path = tmp_path / "claude-code.replay.json"
    assert done["path"] == str(path) and (done["actions"], done["fix_at"]) == (3, 1)
    instruction = (tmp_path / "claude-code" / "instruction.md").read_text()
    script = choose_script(path, instruction)
    assert [a.kind for a in script.actions_for(Cut.BEFORE_FIX)] == [ActionKind.BASH]
    assert script.source_sha256 == task.trajectory.source.sha256
    assert "--ak cut=before_fix" in done["harbor"]["before_fix"]
    assert f"-p {tmp_path / 'claude-code'}" in done["harbor"]["whole"]
    audit = AuditEvent.objects.get(verb="replay_script.write")
    assert audit.target_id == str(task.pk) and audit.after["fix_at"] == 1


def test_out_puts_the_script_where_it_is_asked(manage, tmp_path):
    task = kept_sample("codex", tmp_path)
    ran = manage("replay_script", str(task.pk), "--out", str(tmp_path / "scripts" / "one.json"))
    assert ran.code == 0 and (tmp_path / "scripts" / "one.json").is_file()
    assert "cut before fix:" in ran.out


def test_an_authored_task_has_no_session_to_replay(manage, tmp_path):
    authored = make_candidate(trials=False, family="authored", task_dir=str(tmp_path))
    authored.trajectory = None
    authored.save(update_fields=["trajectory"])
    ran = manage("replay_script", str(authored.pk))
    assert ran.code == 2 and "authored, not mined from a recorded session" in ran.err


def test_a_task_whose_folder_names_another_session_is_refused(manage, tmp_path):
    task = kept_sample("claude-code", tmp_path)
    toml = tmp_path / "claude-code" / "task.toml"
    toml.write_text(toml.read_text().replace(task.trajectory.source.sha256, "cd" * 32))
    ran = manage("replay_script", str(task.pk))
    assert ran.code == 2 and "which is not a recording of trajectory" in ran.err
    assert not (tmp_path / "claude-code.replay.json").exists()


def test_an_unknown_task_is_a_usage_error(manage):
    assert manage("replay_script", "no-such-task").code == 2


def test_a_person_without_the_evaluation_role_is_refused_with_exit_1(manage, people, tmp_path):
    task = kept_sample("claude-code", tmp_path)
    ran = manage("replay_script", str(task.pk), "--as", "eve")
    assert ran.code == 1 and "write replay scripts" in ran.err
    assert not (tmp_path / "claude-code.replay.json").exists()
    assert manage("replay_script", str(task.pk), "--as", "bob").code == 0
