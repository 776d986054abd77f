"""`mise run TASK` and `make TARGET` run as the commands their definition gives, when known."""

from __future__ import annotations

import pytest

from tasks_review.core.mining import DropReason
from tasks_review.core.mining.scripts import Files, resolve

from .repair_helpers import Session, assert_drop, check_story

MISE_TEST = '[tasks.test]\nrun = "pytest -q"\n'


@pytest.mark.parametrize(
    "files, command, task_command",
    [
        ({"mise.toml": MISE_TEST}, "mise run test", "pytest -q"),
        ({".mise.toml": MISE_TEST}, "mise r test", "pytest -q"),
        ({"mise.toml": '[tasks]\ntest = "pytest -q"\n'}, "mise test", "pytest -q"),
        ({"mise.toml": '[tasks]\ntest = ["ruff check .", "pytest -q"]\n'}, "mise run test",
         "ruff check . && pytest -q"),
        ({"mise.toml": '[tasks.test]\nrun = ["ruff check .", "pytest -q"]\n'},
         "mise run test -- -k add", "ruff check . && pytest -q -k add"),
        ({"mise.toml": '[tasks.unit]\nalias = "u"\ndepends = ["lint"]\nrun = "pytest"\n'
                       '[tasks.lint]\nrun = "ruff check ."\n'}, "mise run unit",
         "ruff check . && pytest"),
        ({"mise.toml": '[env]\nCI = "1"\n_.python.venv = ".venv"\n[tasks.test]\n'
                       'dir = "tests"\nenv = { PYTHONPATH = ".." }\nrun = "pytest -q"\n'},
         "mise run test", "export CI=1 && cd tests && PYTHONPATH=.. pytest -q"),
        ({"mise.toml": '[tasks.test]\nrun = """\nset -e\npytest -q\n"""\n'}, "mise run test",
         "set -e && pytest -q"),
        ({"mise-tasks/test": '#!/usr/bin/env bash\n#MISE description="tests"\n'
                             'source .venv/bin/activate\npytest -q\n'}, "mise run test",
         "pytest -q"),
        ({".mise/tasks/test/unit": "#!/bin/sh\npytest -q tests\n"}, "mise run test:unit",
         "pytest -q tests"),
        ({"Makefile": "test:\n\tpytest -q\n"}, "make test", "pytest -q"),
        ({"Makefile": "PY ?= python\n.PHONY: test lint\ntest: lint\n\t@$(PY) -m pytest -q\n"
                      "lint:\n\truff check .\n"}, "make test",
         "ruff check . && python -m pytest -q"),
        ({"Makefile": "all: test\ntest:\n\tpytest\n"}, "make", "pytest"),
        ({"Makefile": "export PYTHONPATH = src\ntest:\n\tpytest\n"}, "make -s test",
         "export PYTHONPATH=src && pytest"),
        ({"sub/Makefile": "test:\n\tcd .. && pytest\n"}, "make -C sub test",
         "cd sub && cd .. && pytest"),
        ({"build.mk": "unit:\n\tpytest\n"}, "make -f build.mk unit", "pytest"),
        ({"justfile": "test:\n    pytest -q\n"}, "just test", "pytest -q"),
        ({"justfile": 'set shell := ["bash", "-c"]\nflags := "-q"\n\n# the tests\n'
                      "[group('ci')]\ntest: l\n    @pytest {{ flags }}\n"
                      "lint:\n    ruff check .\nalias l := lint\n"}, "just test",
         "ruff check . && pytest -q"),
        ({"Justfile": "default:\n    pytest\n"}, "just", "pytest"),
    ],
)  # fmt: skip
def test_a_known_definition_becomes_the_tasks_command(files, command, task_command):
    candidate = check_story(command, files=files).mine().only
    assert candidate.task_command == task_command
    assert candidate.command == command
    assert (candidate.runner, candidate.check_kind) == ("pytest", "test")
    assert f"`{command}` runs `{task_command}` as " in candidate.setup_note


@pytest.mark.parametrize(
    "files, command",
    [
        ({"mise.toml": '[tasks.test]\nrun = "pytest {{arg(name=\\"k\\")}}"\n'}, "mise run test"),
        ({"mise.toml": '[tasks.test]\nrun = "go mod download && pytest"\n'}, "mise run test"),
        ({"mise.toml": '[tasks.test]\nfile = "scripts/test.sh"\n'}, "mise run test"),
        ({"mise.toml": '[tasks.test]\nrun = "mise run other"\n'}, "mise run test"),
        ({"mise.toml": '[tasks.test]\nrun = [{ tasks = ["a", "b"] }]\n'}, "mise run test"),
        ({"mise-tasks/test": "#!/usr/bin/env python3\nimport pytest\n"}, "mise run test"),
        ({"Makefile": "test:\n\t$(MAKE) -C sub test\n"}, "make test"),
        ({"Makefile": "ifeq ($(CI),1)\nX=1\nendif\ntest:\n\tpytest\n"}, "make test"),
        ({"Makefile": "test:\n\t-pytest\n"}, "make test"),
        ({"Makefile": "test:\n\tpytest $(FLAGS)\n"}, "make test"),
        ({"Makefile": "test:\n\tpytest $<\n"}, "make test"),
        ({"Makefile": "test: build\n\tpytest\n"}, "make test"),
        ({"Makefile": "test:\n\tpytest\n"}, "make test V=1"),
        ({"Makefile": "test:\n\tpip install -e . && pytest\n"}, "make test"),
        ({"justfile": "test name:\n    pytest -k {{name}}\n"}, "just test"),
        ({"justfile": "set dotenv-load\ntest:\n    pytest\n"}, "just test"),
        ({"justfile": "test:\n    #!/usr/bin/env python3\n    import pytest\n"}, "just test"),
        ({"justfile": "[no-cd]\ntest:\n    pytest\n"}, "just test"),
        ({"justfile": "test:\n    pytest {{os()}}\n"}, "just test"),
        ({"justfile": "import 'ci.just'\ntest:\n    pytest\n"}, "just test"),
        ({"justfile": "test:\n    pytest\n"}, "just test lint"),
    ],
)
def test_a_definition_that_cannot_be_followed_keeps_the_recorded_check(files, command):
    candidate = check_story(command, files=files).mine().only
    assert candidate.task_command == command
    assert candidate.runner in ("mise", "make", "just")


def test_a_definition_the_fix_changed_is_not_followed():
    candidate = (
        Session()
        .write("calc.py", "def add(a, b):\n    return a - b\n")
        .write("tests/test_calc.py", "from calc import add\n")
        .write("Makefile", "test:\n\tpytest -x\n")
        .run("make test", fail=True, output="1 failed")
        .edit("calc.py", "a - b", "a + b")
        .write("Makefile", "test:\n\tpytest\n")
        .run("make test", output="1 passed")
        .mine()
        .only
    )
    assert candidate.task_command == "make test"


def test_an_unseen_definition_still_drops_as_before():
    drop = check_story("mise run test").mine().dropped
    assert_drop(drop, DropReason.CHECK_MANIFEST_UNSEEN, "mise.toml")


def test_just_finds_its_justfile_upward_and_runs_the_recipe_in_the_justfiles_folder():
    contents = {"justfile": b"test:\n    pytest -q\n"}
    resolved = resolve(["just", "test"], "api/sub", Files(set(contents), contents.get))
    assert resolved is not None
    assert (resolved.script, resolved.source) == ("cd ../.. && pytest -q", "justfile recipe test")


def test_the_closest_folder_defining_the_task_wins_and_runs_in_its_folder():
    files = {"mise.toml": '[tasks.test]\nrun = "pytest"\n', "api/mise.toml": MISE_TEST}
    contents = {path: text.encode() for path, text in files.items()}
    resolved = resolve(["mise", "run", "test"], "api/sub", Files(set(contents), contents.get))
    assert resolved is not None
    assert (resolved.script, resolved.source, resolved.cwd) == (
        "cd .. && pytest -q",
        "api/mise.toml [tasks.test]",
        "api",
    )
