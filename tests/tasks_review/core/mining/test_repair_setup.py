"""A check run bare and later behind a setup is one check; the task runs what is safe of it."""

from __future__ import annotations

import pytest

from tasks_review.core.mining import DropReason
from tasks_review.core.mining.checkline import split_line, text

from .repair_helpers import Session, assert_drop, check_story

REDIS_FAIL = (
    "F                                                                        [100%]\n"
    "    def test_counter_counts_each_hit():\n"
    ">       assert hits(cache, 'home') == 2\n"
    "E       assert 1 == 2\n"
    "tests/test_calc.py:9: AssertionError\n1 failed in 0.05s"
)


def test_a_check_failing_bare_and_passing_behind_redis_cli_flushdb_runs_the_prefix_with_redis():
    candidate = (
        check_story("pytest -q", "redis-cli FLUSHDB && pytest -q", fail_output=REDIS_FAIL)
        .mine()
        .only
    )
    assert (candidate.fail_command_index, candidate.pass_command_index) == (0, 1)
    assert candidate.command == "pytest -q"  # the failing run, as recorded
    assert candidate.task_command == "redis-cli FLUSHDB && pytest -q"
    assert candidate.services == ("redis",)
    assert candidate.setup == ("redis-cli FLUSHDB",)
    assert "`redis-cli FLUSHDB` (a redis client" in candidate.setup_note
    assert "redis-cli FLUSHDB && pytest -q" in candidate.instruction
    assert candidate.summary()["services"] == ["redis"]
    assert candidate.summary()["setup"] == ["redis-cli FLUSHDB"]


def test_a_setup_only_the_failing_run_had_is_left_out():
    # Claude Code's shell keeps its directory: the passing `pytest -q` ran in tests/ too.
    candidate = check_story("cd /repo/tests && pytest -q", "pytest -q").mine().only
    assert (candidate.task_command, candidate.cwd, candidate.check_cwd) == (
        "pytest -q",
        "tests",
        "tests",
    )
    assert candidate.setup == ()
    assert "leaves out the failing run's `cd /app/tests`" in candidate.setup_note


def test_runs_prefixed_differently_run_the_passing_runs_setup():
    candidate = (
        check_story("cd /repo/tests && FOO=1 pytest -q", "cd /repo/tests && BAR=2 pytest -q")
        .mine()
        .only
    )
    assert candidate.task_command == "cd /app/tests && BAR=2 pytest -q"
    assert candidate.setup == ("cd /app/tests", "BAR=2")
    assert "leaves out the failing run's `FOO=1`" in candidate.setup_note


def test_a_failing_setup_prefixed_line_pairs_with_a_passing_one_behind_a_venv_activation():
    candidate = (
        check_story(
            "source .venv/bin/activate && python -m pytest -q",
            "FOO=1 python -m pytest -q 2>&1",
        )
        .mine()
        .only
    )
    assert candidate.task_command == "FOO=1 python -m pytest -q 2>&1"
    assert "leaves out the failing run's `source .venv/bin/activate`" in candidate.setup_note


@pytest.mark.parametrize(
    "passing_run, task_command, setup, note",
    [
        ("FOO=1 CI=true pytest -q", "FOO=1 CI=true pytest -q", ("FOO=1", "CI=true"), "variables"),
        ("echo seed > tests/seed.txt && pytest -q", "echo seed > tests/seed.txt && pytest -q",
         ("echo seed >tests/seed.txt",), "prints"),
        ("export PYTHONPATH=src && pytest -q", "export PYTHONPATH=src && pytest -q",
         ("export PYTHONPATH=src",), "environment"),
        ("set -o pipefail && pytest -q", "set -o pipefail && pytest -q", ("set -o pipefail",),
         "options"),
        ("ruff check . && pytest -q", "ruff check . && pytest -q", ("ruff check .",),
         "another check"),
        ("echo start && sleep 1 && pytest -q", "echo start && sleep 1 && pytest -q",
         ("echo start", "sleep 1"), "prints"),
        ("createdb calc_test && pytest -q", "createdb calc_test && pytest -q",
         ("createdb calc_test",), "postgresql client"),
        # Left out: the image stands for them.
        ("source .venv/bin/activate && pytest -q", "pytest -q", (), "virtualenv"),
        (". venv/bin/activate && FOO=1 pytest -q", "FOO=1 pytest -q", ("FOO=1",), "virtualenv"),
        ("conda activate calc && pytest -q", "pytest -q", (), "environment with conda"),
        ("redis-server --daemonize yes && pytest -q", "pytest -q", (), "harness starts it"),
        ("sudo service postgresql start && pytest -q", "pytest -q", (), "starts postgresql"),
        # What follows the check and cannot be vouched for is left out.
        ("pytest -q && git push", "pytest -q", (), "after the check"),
        # Unsafe setups: the bare check.
        ("pip install -e . && pytest -q", "pytest -q", (), "installs packages"),
        ("uv sync && pytest -q", "pytest -q", (), "installs packages"),
        ("curl -sf http://localhost:8000/health && pytest -q", "pytest -q", (), "network"),
        ("docker compose up -d && pytest -q", "pytest -q", (), "network"),
        ("git pull && pytest -q", "pytest -q", (), "network"),
        ("black . && pytest -q", "pytest -q", (), "rewrites sources"),
        ("python scripts/seed.py && pytest -q", "pytest -q", (), "cannot vouch for"),
        ("cd /tmp/other && cd /repo && pytest -q", "pytest -q", (), "outside the project"),
        ("SEED=$(date +%s) pytest -q", "pytest -q", (), "command substitution"),
        ("echo 1 > /etc/calc.conf && pytest -q", "pytest -q", (), "outside the project"),
        ("echo 1 >> ~/.calcrc && pytest -q", "pytest -q", (), "outside the project"),
    ],
)  # fmt: skip
def test_the_passing_runs_setup_runs_when_safe_offline_and_else_the_bare_check(
    passing_run, task_command, setup, note
):
    candidate = check_story("pytest -q", passing_run).mine().only
    assert candidate.task_command == task_command
    assert candidate.setup == setup
    assert note in candidate.setup_note
    if "bare check" in candidate.setup_note:
        assert "the passing run's setup is left out" in candidate.setup_note


def test_the_same_command_line_for_both_runs_stays_as_recorded():
    candidate = check_story("cd /repo && python -m pytest -q").mine().only
    assert candidate.task_command == "cd /app && python -m pytest -q"
    assert candidate.cwd == "."
    assert candidate.setup == ("cd /app",) and candidate.setup_note == ""
    assert candidate.services == ()


def test_a_passing_line_that_is_not_a_plain_chain_runs_as_recorded():
    subshell = check_story("python -m pytest -q", "(python -m pytest -q)").mine().only
    assert subshell.task_command == "(python -m pytest -q)"
    assert "not a plain chain" in subshell.setup_note


def test_an_install_in_the_passing_runs_setup_is_a_package_install_fix():
    drop = (
        Session()
        .write("calc.py", "def add(a, b):\n    return a + b\n")
        .write("tests/test_calc.py", "from calc import add\n")
        .run("python -m pytest -q", fail=True, output="/usr/bin/python: No module named pytest")
        .run("pip install pytest && python -m pytest -q", output="1 passed")
        .mine()
        .dropped
    )
    assert_drop(drop, DropReason.PACKAGE_INSTALL_FIX, "pip install pytest")


def test_a_failure_behind_a_setup_that_may_itself_have_failed_says_nothing():
    # `redis-cli FLUSHDB` may be what failed (no server): the check may never have run.
    mined = check_story("redis-cli FLUSHDB && pytest -q", "pytest -q").mine()
    assert mined.candidates == [] and mined.drops == []


def test_a_pass_behind_a_setup_counts_but_not_one_whose_status_a_later_command_decided():
    assert check_story("pytest -q", "pip install -e . && pytest -q").mine().only
    later = check_story("pytest -q", "pip install -e . && pytest -q; echo done").mine()
    assert later.candidates == [] and later.drops == []


@pytest.mark.parametrize(
    "line, segment, before, check, after",
    [
        ("cd web && FOO=1 npm test 2>&1", "npm test", ["cd web"], "FOO=1 npm test 2>&1", []),
        ("set -e\nsource .venv/bin/activate\npytest -q\n", "pytest -q",
         ["set -e", "source .venv/bin/activate"], "pytest -q", []),
        ("pytest -q; echo done", "pytest -q", [], "pytest -q", ["echo done"]),
        ("pytest 'tests/a b.py' -k \"x or y\"", "pytest 'tests/a b.py' -k \"x or y\"", [],
         "pytest 'tests/a b.py' -k \"x or y\"", []),
    ],
)  # fmt: skip
def test_a_plain_chain_splits_into_setup_check_and_what_follows(
    line, segment, before, check, after
):
    split = split_line(line, segment)
    assert split is not None
    assert [text(c) for c in split.before] == before
    assert text(split.check) == check
    assert [text(c) for c in split.after] == after


@pytest.mark.parametrize(
    "line",
    [
        "pytest -q | tail -5",
        "pytest -q || true",
        "(cd tests && pytest -q)",
        "if pytest -q; then echo ok; fi",
        "{ pytest -q; }",
        "pytest -q <<EOF\nx\nEOF",
        "pytest -q &",
        "for f in a b; do pytest -q; done",
    ],
)
def test_pipes_subshells_compound_commands_and_here_documents_do_not_split(line):
    assert split_line(line, "pytest -q") is None


def test_only_and_chains_after_the_check_say_its_status():
    assert split_line("a && pytest && b", "pytest").status_is_the_checks
    assert not split_line("a && pytest; b", "pytest").status_is_the_checks
