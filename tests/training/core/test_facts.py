"""Trajectory facts: one normalised action per tool call, built from the replay."""

from __future__ import annotations

import json

import pytest

from training.core.facts import TaskContext, TrajectoryFacts
from training.core.facts.shell import is_focused, shell_pipelines
from training.core.spec import ActionKind
from trajectories.core.replay.model import CheckKind

from .helpers import Session, corpus_facts

PDFMINER = (
    "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc/"
    "agent/sessions/projects/-testbed/ca4291e5-5178-4fdb-972b-f6b4d6c26a65.jsonl"
)
OPENCLAW_TRIAL = (
    "openclaw-harbor-15735640198/clawbench-19-kimi2.6/t4-browser-research-and-code__56zvvqY/"
    "agent/trajectory.json"
)
TERMINUS_GOLDEN = (
    "atif/harbor-fork-wrongbutworks/golden-terminus_2/"
    "hello-world-context-summarization.trajectory.json"
)
CODEX_ROLLOUT = (
    "codex/codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)


def summary(facts: TrajectoryFacts) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return [(str(a.kind), a.reads, a.writes + a.edits + a.deletes) for a in facts.actions]


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_the_same_work_gives_the_same_actions_in_every_harness(agent):
    facts = (
        Session(agent)
        .read("src/app.py")
        .edit("src/app.py")
        .write("src/new.py")
        .run("python -m pytest tests/test_app.py -q", "1 passed")
        .facts()
    )
    kinds = [str(a.kind) for a in facts.actions]
    assert kinds == [
        "shell" if agent == "codex" else "read",  # Codex reads with the shell
        "edit",
        "edit" if agent == "codex" else "write",  # Codex adds files with apply_patch
        "shell",
    ]
    assert facts.actions[0].reads == ("src/app.py",)
    assert facts.actions[1].edits == ("src/app.py",)
    assert facts.actions[2].writes == ("src/new.py",)
    test = facts.actions[3]
    assert test.exit_code == 0 and test.ok is True
    assert test.check is not None and test.check.kind is CheckKind.TEST
    assert test.check.runner == "pytest" and test.check.focused


def test_a_failed_tool_call_changes_nothing_and_reads_nothing():
    facts = Session().read("src/missing.py", error=True).facts()
    (action,) = facts.actions
    assert action.kind is ActionKind.READ and action.ok is False
    assert action.paths == ("src/missing.py",) and action.reads == ()


def test_shell_changes_split_into_writes_edits_and_deletes():
    facts = (
        Session()
        .read("src/app.py")
        .run("sed -i 's/1/2/' src/app.py")
        .run("cat > notes.txt <<'EOF'\nhello\nEOF")
        .run("rm -f old.log")
        .facts()
    )
    _, sed, heredoc, rm = facts.actions
    assert sed.edits == ("src/app.py",) and sed.writes == ()
    assert heredoc.writes == ("notes.txt",)
    assert rm.deletes == ("old.log",)
    assert facts.last_edit_event == rm.event
    assert [(c.path, c.kind, c.step) for c in facts.file_changes] == [
        ("src/app.py", "edited", 1),
        ("notes.txt", "written", 2),
        ("old.log", "deleted", 3),
    ]


def test_writing_prose_after_the_last_code_edit_is_not_the_last_edit():
    facts = Session().edit("src/app.py").run("pytest -q").write("NOTES.md", "done\n").facts()
    assert facts.last_edit_event == facts.actions[0].event


def test_shell_reads_come_from_reading_programs_that_did_not_fail():
    facts = (
        Session("pi")
        .run("cd src && cat app.py | head -n 5")
        .run("sed -n '1,20p' lib/util.py")
        .run("cat missing.py", "No such file", exit_code=1)
        .run("grep -rn TODO src")
        .run("grep -n -A 5 'def parse' lib/parse.py")
        .facts()
    )
    assert [a.reads for a in facts.actions] == [
        ("src/app.py",),
        ("lib/util.py",),
        (),
        (),  # a recursive search is not a read
        ("lib/parse.py",),
    ]


def test_claude_codes_shell_keeps_its_directory_between_calls():
    facts = Session().run("cd src").run("cat app.py").facts()
    assert facts.actions[1].reads == ("src/app.py",)


def test_pipelines_expand_shell_scripts_and_substitutions():
    assert shell_pipelines("curl -s https://x.test/i.sh | sudo bash") == (
        (("curl", "-s", "https://x.test/i.sh"), ("sudo", "bash")),
    )
    inner = shell_pipelines('sh -c "wget -qO- https://x.test | sh"')
    assert (("wget", "-qO-", "https://x.test"), ("sh",)) in inner
    fed = shell_pipelines("bash <(curl -fsSL https://x.test/i.sh)")
    assert fed[-1] == (("curl", "-fsSL", "https://x.test/i.sh"), fed[0][0])
    assert shell_pipelines("export $(cat .env | xargs)")[1] == (("cat", ".env"), ("xargs",))
    assert shell_pipelines("wc -l < data.csv") == ((("wc", "-l", "<", "data.csv"),),)


def test_unbalanced_quotes_still_give_words():
    assert shell_pipelines('git commit -m "unterminated') == (
        (("git", "commit", "-m", "unterminated"),),
    )


@pytest.mark.parametrize(
    ("segment", "focused"),
    [
        ("python -m pytest tests/test_utils.py::TestPageLabels -v", True),
        ("pytest -k parse_labels", True),
        ("go test ./cmd/entire/cli/trailers/... -run TestParseCheck", True),
        ("npm test -- --run src/agents/__tests__/plugin.test.ts", True),
        ("mise run test -- ./redact/...", True),
        ("pytest", False),
        ("pytest tests/ -x -q --ignore=tests/test_tools_dump", False),
        ("go test ./...", False),
        ("npm test", False),
        ("pytest -p no:cacheprovider -q", False),
    ],
)
def test_a_check_is_focused_when_it_names_what_it_runs(segment, focused):
    assert is_focused(segment) is focused


def test_facts_round_trip_through_a_compact_dict():
    facts = (
        Session()
        .read("src/app.py")
        .edit("src/app.py")
        .run("pytest tests/test_app.py 2>&1 | tail -3", "1 passed")
        .run("rm -rf build")
        .say("All tests pass.")
        .facts(
            verified_reward=1.0,
            context=TaskContext(test_files=("tests/test_app.py",), network_allowed=False),
        )
    )
    data = json.loads(json.dumps(facts.to_dict()))
    assert TrajectoryFacts.from_dict(data) == facts
    check = facts.actions[2].check
    assert check is not None and check.masked  # `| tail` decided the recorded status


def test_facts_of_another_format_version_are_refused():
    data = Session().run("ls").facts().to_dict() | {"v": 99}
    with pytest.raises(ValueError, match="rebuild them"):
        TrajectoryFacts.from_dict(data)


def test_the_final_message_is_the_last_agent_text():
    facts = Session().run("ls").say("Fixed the parser; all tests pass.").facts()
    assert facts.final_message == "Fixed the parser; all tests pass."


@pytest.mark.corpus
def test_real_claude_code_session_reads_before_editing_and_runs_focused_pytest(corpus):
    facts = corpus_facts(corpus, PDFMINER)
    first_edit = next(a for a in facts.actions if a.edits)
    assert first_edit.edits == ("pdfminer/pdfdocument.py",)
    earlier_reads = {p for a in facts.actions if a.event < first_edit.event for p in a.reads}
    assert "pdfminer/pdfdocument.py" in earlier_reads
    checks = [(a.exit_code, a.check.focused) for a in facts.actions if a.check is not None]
    assert checks[:2] == [(1, True), (0, True)]  # the focused test failed, then passed
    assert "All 124 tests pass" in facts.final_message
    assert len(json.dumps(facts.to_dict())) < 20_000


@pytest.mark.corpus
def test_real_codex_rollout_edits_through_apply_patch_and_runs_npm_test(corpus):
    facts = corpus_facts(corpus, CODEX_ROLLOUT)
    patches = [a for a in facts.actions if a.tool == "apply_patch"]
    assert patches and all(a.kind is ActionKind.EDIT and a.changes for a in patches)
    tests = [a for a in facts.actions if a.check is not None and a.check.runner == "npm"]
    assert [a.exit_code for a in tests][:2] == [1, 0]
    assert all(a.cwd and a.cwd.startswith("/Users/Sample_User") for a in tests)


@pytest.mark.corpus
def test_real_harbor_atif_from_openclaw_and_terminus(corpus):
    openclaw = corpus_facts(corpus, OPENCLAW_TRIAL)
    assert openclaw.root == "/workspace"
    by_step = {(a.step, str(a.kind), a.tool) for a in openclaw.actions}
    assert {(17, "read", "read"), (19, "write", "write")} <= by_step
    (rewrite,) = [a for a in openclaw.actions if a.edits]
    assert rewrite.edits == ("report_client.py",)  # read at step 5, then written whole
    directory = next(a for a in openclaw.actions if a.paths == ("docs",))
    assert directory.ok is False and directory.reads == ()  # reading a folder failed
    (check,) = [a for a in openclaw.actions if a.check is not None]
    assert (check.step, check.exit_code, check.check.focused) == (22, 0, True)

    terminus = corpus_facts(corpus, TERMINUS_GOLDEN)
    shells = [a for a in terminus.actions if a.kind is ActionKind.SHELL]
    assert [a.command for a in shells][-1] == "cat hello.txt"
    assert shells[-1].reads == ("hello.txt",)
    assert {a.tool for a in terminus.actions if a.kind is ActionKind.OTHER} == {
        "mark_task_complete"
    }
