"""Mining a session seeded with its clone's tree: what a script may have changed keeps its last
known content as a presumption (the baseline in the image judges it), and every question about
files (manifests, make and mise targets, the language) is answered from the seeded tree."""

from __future__ import annotations

from tasks_review.core.mining import DropReason
from tasks_review.core.mining.candidate import presumed_note

from .repair_helpers import CALC_BUGGY, TEST_CALC, Session, assert_drop, check_story

FIX = ("calc.py", "    return a - b\n", "    return a + b\n")
PROJECT = {"calc.py": CALC_BUGGY, "tests/test_calc.py": TEST_CALC}
MISE = '[tasks.test]\nrun = "pytest -q"\n[tasks.fmt]\nrun = "ruff format ."\n'


def story(check: str, *, before: str | None = None, between: str | None = None) -> Session:
    """``check`` fails, calc.py is fixed, ``check`` passes; ``before`` runs first, ``between``
    runs between the failure and the fix. No file is written by the log: the seed has them."""
    session = Session().user("Fix add().")
    if before is not None:
        session.run(before)
    session.run(check, fail=True, output="1 failed")
    if between is not None:
        session.run(between)
    return session.edit(*FIX).run(check, output="1 passed")


def test_a_script_between_the_runs_leaves_the_seeded_files_presumed_and_the_candidate_kept():
    seed = {**PROJECT, "Makefile": "gen:\n\t./scripts/gen.sh\n"}
    candidate = story("pytest -q", between="make gen").mine(seed=seed).only
    assert candidate.modified == ("calc.py",)
    assert "tests/test_calc.py" in candidate.presumed
    assert "make gen" in candidate.presumed["tests/test_calc.py"]


def test_the_checks_own_run_of_an_unechoed_make_target_keeps_the_seed():
    seed = {**PROJECT, "Makefile": ".PHONY: lint\nlint:\n\truff check .\n"}
    candidate = story("make lint").mine(seed=seed).only
    assert candidate.task_command == "ruff check ."
    assert candidate.modified == ("calc.py",)


def test_a_mise_task_after_an_earlier_mise_format_run_resolves_from_the_seeded_mise_toml():
    seed = {**PROJECT, "mise.toml": MISE}
    candidate = story("mise run test", before="mise run fmt").mine(seed=seed).only
    assert (candidate.task_command, candidate.language) == ("pytest -q", "python")


def test_a_window_where_only_a_script_may_have_changed_files_still_drops():
    seed = {**PROJECT, "Makefile": "gen:\n\t./scripts/gen.sh\n"}
    session = Session().user("Fix add().")
    session.run("pytest -q", fail=True, output="1 failed").run("make gen")
    session.run("pytest -q", output="1 passed")
    assert_drop(
        session.mine(seed=seed).dropped,
        DropReason.FIX_TOUCHES_LOST_FILE,
        "only a command the trajectory does not show may have changed files",
    )


def test_without_a_seed_the_log_alone_decides():
    assert_drop(
        check_story("mise run test").mine().dropped,
        DropReason.CHECK_MANIFEST_UNSEEN,
        "mise.toml",
    )


def test_the_presumed_files_are_named_in_one_sentence_by_the_command_that_may_have_changed_them():
    seed = {**PROJECT, "Makefile": "gen:\n\t./scripts/gen.sh\n"}
    candidate = story("pytest -q", between="make gen").mine(seed=seed).only
    note = presumed_note(candidate.presumed)
    assert note.startswith("3 files are presumed unchanged")  # calc.py: edited on it
    assert "since `make gen` at event 1" in note and "tests/test_calc.py" in note


ROOT_MISE = (
    '[tasks.test]\ndir = "go"\nrun = "go test ./..."\n'
    '[tasks.lint]\nrun = "golangci-lint run ./go/..."\n'
)
GO_PROJECT = {
    "go.mod": "module example.com/x\n\ngo 1.22\n",
    "calc.go": "package x\n\nfunc Add(a, b int) int { return a - b }\n",
    "calc_test.go": 'package x\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {}\n',
}


def go_story(check: str) -> Session:
    session = Session().user("Fix Add.")
    session.run(check, fail=True, output="--- FAIL: TestAdd\nFAIL")
    session.edit("calc.go", "return a - b", "return a + b")
    return session.run(check, output="ok  \texample.com/x")


def test_a_task_defined_in_the_repositorys_top_mise_toml_resolves_for_a_session_in_go():
    mined = go_story("mise run test").mine(
        seed=GO_PROJECT, above={"../mise.toml": ROOT_MISE}, here="go"
    )
    candidate = mined.only
    assert (candidate.task_command, candidate.language) == ("go test ./...", "go")
    assert "../mise.toml [tasks.test]" in candidate.setup_note


def test_a_top_task_that_runs_above_the_project_stays_as_recorded_and_is_not_unseen():
    mined = go_story("mise run lint").mine(
        seed=GO_PROJECT, above={"../mise.toml": ROOT_MISE}, here="go"
    )
    assert not any(d.reason is DropReason.CHECK_MANIFEST_UNSEEN for d in mined.drops)


def test_an_unresolved_make_target_takes_the_language_of_the_nearest_manifest_in_the_seed():
    seed = {**GO_PROJECT, "Makefile": "lint:\n\t./scripts/lint.sh\n"}
    candidate = go_story("make lint").mine(seed=seed).only
    assert (candidate.task_command, candidate.language) == ("make lint", "go")
    resolved = go_story("make lint").mine(seed={**seed, "Makefile": "lint:\n\tgo vet ./...\n"})
    assert (resolved.only.task_command, resolved.only.runner) == ("go vet ./...", "go")


def test_a_project_in_a_language_the_images_lack_says_which():
    seed = {"mix.exs": "defmodule X.MixProject do\nend\n", "lib/x.ex": "defmodule X do\nend\n"}
    session = Session().user("Fix it.").run("make test", fail=True, output="1 failure")
    session.edit("lib/x.ex", "defmodule X do", "defmodule X do  # fixed")
    drop = session.run("make test", output="0 failures").mine(seed=seed).dropped
    assert drop.reason is DropReason.UNSUPPORTED_LANGUAGE
    assert drop.detail.startswith("elixir check (make)")
