"""Go checks when mining: Go's runner and language; the modules they need are fetched later."""

from __future__ import annotations

import pytest

from tasks_review.core.mining import DropReason

from .repair_helpers import Session, assert_drop

ADD_BUGGY = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
ADD_TEST = (
    'package calc\n\nimport "testing"\n\n'
    "func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n"
)
GO_MOD = "module example.com/calc\n\ngo 1.22\n"
GO_FAIL = "--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: -1\nFAIL\nFAIL\texample.com/calc\t0.002s"


def go_story(
    command: str = "go test ./...",
    files: dict[str, str] | None = None,
    *,
    package: str = "",
    passing_run: str | None = None,
    session: Session | None = None,
) -> Session:
    """Add() fixed in ``package`` between a failing and a passing Go check, beside ``files``
    (go.mod at the root unless ``files`` maps it to "")."""
    session = session or Session().user("Add an Add function with a test.")
    for path, content in {"go.mod": GO_MOD, **(files or {})}.items():
        if content:
            session.write(path, content)
    return (
        session.write(f"{package}calc.go", ADD_BUGGY)
        .write(f"{package}calc_test.go", ADD_TEST)
        .run(command, fail=True, output=GO_FAIL)
        .edit(f"{package}calc.go", "return a - b", "return a + b")
        .run(passing_run or command, output="ok  \texample.com/calc\t0.002s")
    )


@pytest.mark.parametrize(
    "command, kind",
    [
        ("go test ./...", "test"),
        ("go test -run TestAdd -v .", "test"),
        ("go vet ./...", "lint"),
        ("go build ./...", "build"),
        ("cd /repo && go test ./... 2>&1", "test"),
    ],
)
def test_a_go_module_that_needs_no_downloads_is_a_go_candidate(command, kind):
    candidate = go_story(command).mine().only
    assert (candidate.language, candidate.runner, candidate.check_kind) == ("go", "go", kind)
    assert "go.mod" in candidate.start_files
    assert candidate.modified == ("calc.go",)


@pytest.mark.parametrize(
    "files, command",
    [
        ({"Makefile": "test:\n\tgo test ./...\n"}, "make test"),
        ({"Makefile": "GO ?= go\nunit:\n\t$(GO) vet ./... && $(GO) test ./...\n"}, "make unit"),
        ({"mise.toml": '[tasks.test]\nrun = "go test ./..."\n'}, "mise run test"),
    ],
)
def test_make_targets_and_mise_tasks_that_run_go_are_go_checks(files, command):
    candidate = go_story(command, files).mine().only
    assert (candidate.language, candidate.runner) == ("go", "go")
    assert candidate.task_command.startswith("go ")


def test_a_vendored_module_and_local_replacements_build_offline():
    requires = "require example.com/util v1.0.0\n"
    vendored = {"go.mod": GO_MOD + requires, "vendor/modules.txt": "# example.com/util v1.0.0\n"}
    assert go_story(files=vendored).mine().only.language == "go"
    replaced = {"go.mod": GO_MOD + requires + "replace example.com/util => ../util\n"}
    assert go_story(files=replaced).mine().only.language == "go"


def test_a_go_mod_that_requires_modules_is_mined_and_its_modules_are_the_writers_to_fetch():
    # Mining does not judge dependencies: the task writer fetches them through the user's
    # GOPROXY (trials/gomodules.py) and drops the candidate there when they cannot be had.
    go_mod = (
        GO_MOD + "\nrequire (\n\tgithub.com/stretchr/testify v1.9.0\n"
        "\tgolang.org/x/sync v0.7.0 // indirect\n)\n"
        "replace example.com/local => ./local\n"
    )
    go_sum = "github.com/stretchr/testify v1.9.0/go.mod h1:x\n"
    candidate = go_story(files={"go.mod": go_mod, "go.sum": go_sum}).mine().only
    assert (candidate.language, candidate.runner) == ("go", "go")
    assert {"go.mod", "go.sum"} <= set(candidate.start_files)


def test_drop_check_manifest_unseen_when_no_go_mod_was_ever_shown():
    drop = go_story(files={"go.mod": ""}).mine().dropped
    assert_drop(drop, DropReason.CHECK_MANIFEST_UNSEEN, "needs go.mod in . or above")


def test_a_go_mod_above_the_check_folder_is_its_module():
    story = go_story("cd /repo/pkg && go test .", package="pkg/", passing_run="go test .")
    candidate = story.mine().only
    assert (candidate.check_cwd, candidate.language) == ("pkg", "go")


def test_drop_check_reads_lost_file_when_go_mod_is_only_partly_known():
    session = Session().read_part("go.mod", ["module example.com/calc"])
    drop = go_story(files={"go.mod": ""}, session=session).mine().dropped
    assert_drop(drop, DropReason.CHECK_READS_LOST_FILE, "go.mod (the Go module")


RUN_BUGGY = "package workflow\n\nfunc Run() int { return 1 }\n"
RUN_FIXED = "package workflow\n\nfunc Run() int { return 2 }\n"
RUN_TEST = (
    'package workflow\n\nimport "testing"\n\n'
    'func TestRun(t *testing.T) {\n\tif Run() != 2 {\n\t\tt.Fatal("want 2")\n\t}\n}\n'
)


def test_after_a_cd_the_shell_refused_an_edit_by_a_relative_path_lands_in_the_right_folder():
    """The real shape: `cd go`, a check, a second `cd go && …` that fails (the shell is already
    in go/), the fix written by a path relative to go/, the check again. The clone seeds go/."""
    session = Session().user("Make Run return 2.")
    session.run("cd go")
    session.run("go test ./internal/workflow/", fail=True, output="--- FAIL: TestRun\nFAIL")
    session.run("cd go && ls", fail=True, output="bash: cd: go: No such file or directory")
    session.run(f"cat > internal/workflow/run.go <<'EOF'\n{RUN_FIXED}EOF")
    session.run("go test ./internal/workflow/", output="ok  \texample.com/x/internal/workflow")
    seed = {
        "go/go.mod": "module example.com/x\n\ngo 1.22\n",
        "go/internal/workflow/run.go": RUN_BUGGY,
        "go/internal/workflow/run_test.go": RUN_TEST,
    }
    candidate = session.mine(seed=seed).only
    assert candidate.modified == ("go/internal/workflow/run.go",)
    assert candidate.cwd == "go"
