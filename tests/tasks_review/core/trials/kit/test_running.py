"""Running the check as the grader user (kit/running.py)."""

from __future__ import annotations

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
