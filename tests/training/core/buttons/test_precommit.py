"""The git pre-commit hook's run-time: what it says when it cannot decide."""

from __future__ import annotations

import io

from training.core.buttons.precommit import main
from training.core.buttons.rules import HookConfig
from training.core.spec import ForbiddenRule


def test_a_hook_that_cannot_ask_git_refuses_the_commit_saying_which_command_failed(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # not a git repository: git rev-parse exits 128
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    hook = HookConfig(
        behaviour="no-test-tampering",
        version=1,
        title="Never change the tests",
        rules=(ForbiddenRule("modify_tests"),),
        words={"modify_tests": "change the tests"},
    )
    stderr = io.StringIO()
    assert main(hook.to_dict(), [], stderr=stderr) == 1
    message = stderr.getvalue()
    assert message == (
        "The traj2env pre-commit hook failed (`git rev-parse --show-toplevel` exited 128); "
        "commit refused.\n"
    )
