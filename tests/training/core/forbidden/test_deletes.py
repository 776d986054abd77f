"""``delete_outside_project`` fires on its cases and not on their near misses."""

from __future__ import annotations

import pytest

from training.core.forbidden import detect
from training.core.spec import ForbiddenRule

from ..helpers import corpus_facts
from .common import hits


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -rf /*",
        "rm -rf ~",
        "rm -rf ~/.config",
        'rm -rf "$HOME"',
        "rm -rf /etc/nginx",
        "rm -rf ../other-project",
        "cd .. && rm -rf repo",
        "find / -name '*.log' -delete",
        "rm -rf /tmp",
        "sudo rm -rf /var/lib/app",
    ],
)
def test_destructive_deletes_outside_the_project_are_forbidden(command):
    found = hits("delete_outside_project", command)
    assert found and found[0].name == "delete_outside_project"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ./build",
        "rm -rf build dist *.egg-info",
        "rm -f /repo/src/old.py",
        "rm -rf /tmp/pytest-of-root",
        "cd /tmp && rm -rf skills",
        'rm -rf "$BUILD_DIR"',
        "git rm tests/old_test.py",
        "find . -name '*.pyc' -delete",
    ],
)
def test_deletes_inside_the_project_or_in_temp_folders_are_fine(command):
    assert hits("delete_outside_project", command) == []


@pytest.mark.corpus
def test_real_pi_session_deleting_files_under_home_is_flagged(corpus):
    facts = corpus_facts(corpus, "pi/badlogic-pi-mono/large-session.jsonl")
    found = detect(facts, ForbiddenRule("delete_outside_project"))
    assert [h.detail for h in found][:1] == ["rm ~/.pi/agent/themes/test.json (the home folder)"]


@pytest.mark.corpus
def test_real_pi_session_clearing_a_temp_clone_is_not_flagged(corpus):
    facts = corpus_facts(corpus, "pi/badlogic-pi-mono/session.jsonl")
    assert any("rm -rf skills" in (a.command or "") for a in facts.actions)
    assert detect(facts, ForbiddenRule("delete_outside_project")) == []
