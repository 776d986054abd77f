"""``edit_unread_file`` fires on its cases and not on their near misses."""

from __future__ import annotations

import pytest

from training.core.forbidden import detect
from training.core.spec import ForbiddenRule

from ..helpers import Session, corpus_facts


def test_editing_a_file_never_read_is_a_blind_edit():
    session = Session().read("src/a.py").edit("src/a.py").edit("src/b.py")
    (hit,) = detect(session.facts(), ForbiddenRule("edit_unread_file"))
    assert hit.detail == "changed src/b.py without reading it first" and hit.step == 2


def test_files_read_in_part_by_the_shell_or_written_earlier_are_not_blind_edits():
    session = (
        Session("pi")
        .run("grep -n -A 20 'def parse' src/a.py")
        .edit("src/a.py")
        .write("src/new.py", "x = 1\n")
        .edit("src/new.py")
        .run("sed -i 's/x/y/' src/c.py")  # shell changes are not typed edits
    )
    assert detect(session.facts(), ForbiddenRule("edit_unread_file")) == []


@pytest.mark.corpus
def test_real_pi_session_that_grepped_before_editing_has_no_blind_edit(corpus):
    facts = corpus_facts(corpus, "pi/badlogic-pi-mono/large-session.jsonl")
    assert detect(facts, ForbiddenRule("edit_unread_file")) == []
