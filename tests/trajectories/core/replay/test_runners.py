"""Task runners and project scripts: judged by the bodies the runner echoed, else by the name."""

from __future__ import annotations

import pytest

from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import ROOT, after, bash, cc, files_of, only_command, presumed_under

KNOWN = {"a.py": "a\n", "b.py": "b\n"}
PRESUMED = presumed_under(KNOWN)


def test_a_format_script_may_rewrite_everything():
    assert after("npm run format", files=KNOWN) == PRESUMED


def test_a_test_script_marks_nothing_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "npm test")
    assert files_of(b) == {"a.py": "a\n"}


def test_script_bodies_echoed_by_the_runner_decide_its_effects():
    # npm prints each script before running it: a check that formats with --write rewrites
    # sources, one that only type-checks does not.
    b = cc()
    b.call("Write", {"file_path": "/repo/a.ts", "content": "x\n"}, "ok")
    bash(b, "npm run check", "\n> app@1.0.0 check\n> tsc --noEmit\n\n")
    assert files_of(b) == {"a.ts": "x\n"}
    bash(b, "npm run check", "\n> app@1.0.0 check\n> biome check --write . && tsc --noEmit\n")
    assert files_of(b) == presumed_under({"a.ts": "x\n"})


def test_lint_script_whose_commands_were_not_echoed_may_have_rewritten_files():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.ts", "content": "x\n"}, "ok")
    bash(b, "npm run lint 2>&1 | tail -3", "All good")
    assert files_of(b) == presumed_under({"a.ts": "x\n"})


def test_script_runner_check_takes_its_language_from_the_echoed_body():
    b = AtifBuilder("claude-code", root=ROOT)
    b.call("Bash", {"command": "mise run test"}, "[test] $ go test ./...\nok  \tpkg\t0.1s")
    check = only_command(b).check
    assert check is not None
    assert (check.runner, check.target, check.language) == ("mise", "test", "go")


@pytest.mark.parametrize(
    "command, output, expected",
    [
        ("mise run fmt", "[fmt] $ gofmt -w .", PRESUMED),
        ("mise run fmt", "[fmt] $ gofmt -l .", KNOWN),
        ("task generate", "task: [generate] go generate ./...", PRESUMED),
        ("yarn lint", "yarn run v1.22.19\n$ eslint src\nDone in 1.2s.", KNOWN),
    ],
)
def test_echoed_bodies_of_mise_go_task_and_yarn_are_walked(command, output, expected):
    assert after(command, output, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        ("make fmt", PRESUMED),
        ("just lint", PRESUMED),
        ("make test", KNOWN),
        ("make build", KNOWN),
    ],
)
def test_targets_that_echoed_nothing_are_judged_by_their_name(command, expected):
    assert after(command, files=KNOWN) == expected


@pytest.mark.parametrize(
    "command, expected",
    [
        ("mise install", KNOWN),
        ("mise use node@20", KNOWN),
        ("mise exec -- node x.js", PRESUMED),
    ],
)
def test_mise_as_a_version_manager_changes_nothing_and_as_a_runner_may_write(command, expected):
    assert after(command, files=KNOWN) == expected
