"""Running the check as the grader user (kit/running.py)."""

from __future__ import annotations

from .helpers import load

running = load("running")


def test_the_path_the_check_runs_with_has_the_kit_first_and_nothing_from_the_project(
    monkeypatch,
):
    monkeypatch.setenv("PATH", "/app/node_modules/.bin:.:/usr/local/bin:/app:/usr/bin:/bin")
    assert running.safe_path("/app", "/tmp/kit/bin") == "/tmp/kit/bin:/usr/local/bin:/usr/bin:/bin"
