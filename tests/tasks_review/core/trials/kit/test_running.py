"""Running the check as the grader user (kit/running.py)."""

from __future__ import annotations

import os

from .helpers import load

running = load("running")


def test_the_path_the_check_runs_with_has_the_kit_first_and_nothing_from_the_project(
    monkeypatch,
):
    monkeypatch.setenv("PATH", "/app/node_modules/.bin:.:/usr/local/bin:/app:/usr/bin:/bin")
    assert running.safe_path("/app", "/tmp/kit/bin") == "/tmp/kit/bin:/usr/local/bin:/usr/bin:/bin"


def test_the_checks_path_is_the_one_test_sh_passes_as_data_not_the_graders_own(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("TRAJ2ENV_CHECK_PATH", "/usr/local/bin:/usr/bin")
    assert running.safe_path("/app", "/tmp/kit/bin") == "/tmp/kit/bin:/usr/local/bin:/usr/bin"


def test_a_path_folder_anyone_but_root_could_write_is_left_out(tmp_path, monkeypatch):
    # Root runs nothing from these, but the check's user must not run the agent's programs
    # as the interpreter or runner it asked for (same-container grading: /opt/traj2env was
    # the agent's).
    good, agents, open_to_all, under_agents = (
        tmp_path / n for n in ("good", "agents", "open", "agents-parent")
    )
    for folder in (good, agents, open_to_all, under_agents / "bin"):
        folder.mkdir(parents=True)
    os.chown(agents, 1000, 1000)
    os.chmod(open_to_all, 0o777)
    os.chown(under_agents, 1000, 1000)
    path = ":".join(str(p) for p in (good, agents, open_to_all, under_agents / "bin"))
    monkeypatch.setenv("TRAJ2ENV_CHECK_PATH", path)
    assert running.safe_path("/app", "/tmp/kit/bin") == f"/tmp/kit/bin:{good}"


def test_every_process_but_the_grader_and_its_ancestors_is_a_stranger():
    parents = {1: 0, 7: 0, 8: 7, 9: 8, 20: 1, 21: 20, 30: 9, 40: 0}
    # 9 is the grader, started by 8 (test.sh), by 7 (docker exec); 30 is its own child.
    assert running.strangers(9, parents) == [20, 21, 40]


def test_strangers_are_killed_only_by_a_tasks_own_grader_never_on_this_machine():
    assert running.in_a_task_container() is False  # loaded from the repository, not /tests


def test_under_an_init_the_command_it_keeps_is_no_stranger_but_later_orphans_are():
    # docker run --init: tini is PID 1, `sleep infinity` its first child; the agent's daemon
    # (55) was orphaned to PID 1 later. Without an init, PID 1 is the command itself.
    parents = {1: 0, 7: 1, 55: 1, 60: 0}
    assert running.strangers(60, parents, "docker-init") == [55]
    assert running.strangers(60, parents, "sleep") == [7, 55]
