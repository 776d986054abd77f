"""Cleaning the submission (kit/cleaning.py): the same guard as the matrix, discovered test
files and standard-library shadowing."""

from __future__ import annotations

import base64
import os

from hypothesis import given
from hypothesis import strategies as st

from tasks_review.core.trials import is_guarded
from tasks_review.core.trials.plan import guard_rules, is_discovered

from .helpers import load, write

cleaning = load("cleaning")


RULES = cleaning.Rules(guard_rules())

SEGMENT = st.sampled_from(
    [
        "src",
        "tests",
        "test",
        "spec",
        "__tests__",
        "lib",
        "a",
        "conftest.py",
        "pytest.ini",
        "package.json",
        ".npmrc",
        "x.pth",
        "test_a.py",
        "a_test.py",
        "a.test.js",
        "b.spec.ts",
        "vitest.config.mts",
        ".mocharc.yml",
        "tox.ini",
        "app.py",
        "index.js",
        "sitecustomize.py",
        "setup.cfg",
        "README.md",
        ".cargo",
        "config.toml",
        "Cargo.toml",
        "lib.rs",
    ]
)


@given(st.lists(SEGMENT, min_size=1, max_size=4))
def test_the_graders_guard_is_the_matrix_guard(parts):
    path = "/".join(parts)
    assert RULES.guarded(path) == is_guarded(path), path


def test_cleaning_removes_links_caches_dependencies_and_guarded_files_the_reference_lacks(
    tmp_path,
):
    project = tmp_path / "app"
    write(project, "calc/ops.py", b"mine")
    write(project, "tests/test_ops.py", b"gutted")
    write(project, "conftest.py", b"forcing passes")
    write(project, "sub/sitecustomize.py", b"forcing passes")
    write(project, "calc/__pycache__/ops.cpython-311.pyc", b"stale")
    write(project, "node_modules/.bin/node", b"#!/bin/sh\nexit 0\n")
    write(project, ".git/HEAD", b"ref: refs/heads/main\n")
    os.symlink("/etc/passwd", project / "t2e-etc")
    os.mkfifo(project / "pipe")
    reference = {"tests/test_ops.py": base64.b64encode(b"real tests").decode()}

    removed = cleaning.clean(str(project), RULES, reference)

    assert sorted(removed) == sorted(
        [
            "calc/__pycache__/",
            "conftest.py",
            "node_modules/",
            "pipe",
            "sub/sitecustomize.py",
            "t2e-etc",
        ]
    )
    assert (project / "calc/ops.py").read_bytes() == b"mine"
    assert (project / ".git/HEAD").exists()  # the repository itself stays
    assert (project / "tests/test_ops.py").exists()  # restored next, not removed


def test_cleaning_removes_files_a_runner_would_discover_that_the_reference_lacks(tmp_path):
    project = tmp_path / "app"
    for rel in [
        "test0.py",  # unittest's test*.py, discovered before test_wordstats.py
        "tests.py",
        "a-test.js",  # node --test's *-test.js, test-*.js, *_test.js
        "test-a.js",
        "lib/a_test.js",
        "test.mjs",
        "test_wordstats.py",
        "wordstats.py",
        "latest.js",
    ]:
        write(project, rel)
    reference = {"test_wordstats.py": base64.b64encode(b"real").decode()}

    removed = cleaning.clean(str(project), RULES, reference)

    assert sorted(removed) == [
        "a-test.js",
        "lib/a_test.js",
        "test-a.js",
        "test.mjs",
        "test0.py",
        "tests.py",
    ]
    assert (project / "wordstats.py").exists() and (project / "latest.js").exists()


def test_cleaning_goes_into_the_repository_too_where_node_test_discovers_files(tmp_path):
    # `node --test` skips node_modules, not .git: a test file there runs before the real ones.
    project = tmp_path / "app"
    write(project, ".git/HEAD", b"ref: refs/heads/main\n")
    write(project, ".git/objects/ab/cdef", b"object")
    write(project, ".git/a-test.js", b"stub the tests")
    write(project, ".git/hooks/test/x.js", b"in a test folder")
    write(project, ".git/info/test_x.py", b"")
    write(project, ".hg/test.mjs", b"")

    removed = cleaning.clean(str(project), RULES, {})

    assert sorted(removed) == [
        ".git/a-test.js",
        ".git/hooks/test/x.js",
        ".git/info/test_x.py",
        ".hg/test.mjs",
    ]
    assert (project / ".git/HEAD").exists() and (project / ".git/objects/ab/cdef").exists()


def test_a_discover_pattern_in_the_check_is_a_discovery_rule_too(tmp_path):
    rules = cleaning.Rules(guard_rules("python3 -m unittest discover -s tests -p '*_spec.py'"))
    assert rules.discovered("tests/cart_spec.py") and not RULES.discovered("tests/cart_spec.py")
    assert is_discovered("cart_spec.py", "python -m unittest discover -p '*_spec.py'")


def test_a_project_module_shadowing_the_standard_library_is_a_finding_unless_the_reference_has_it(
    tmp_path,
):
    project = tmp_path / "app"
    write(project, "decimal.py")
    write(project, "json/__init__.py")
    write(project, "pytest.py")
    write(project, "tests/re.py")
    write(project, "pkg/types.py")  # inside a package: not on the import path
    write(project, "calendar.py")
    reference = {"calendar.py": "eA=="}

    found = cleaning.shadowing(str(project), {".", "tests"}, reference)

    assert [f.split(" ")[0] for f in found] == [
        "decimal.py",
        "json/__init__.py",
        "pytest.py",
        "tests/re.py",
    ]
    # The project's own modules with such names are no finding (grading.json lists its paths).
    own = {"calendar.py", "decimal.py", "json/__init__.py", "pytest.py", "tests/re.py"}
    assert cleaning.shadowing(str(project), {".", "tests"}, own) == []


def test_a_package_with_no_init_py_shadows_too_compiled_or_native(tmp_path):
    # `import json` finds json/__init__.pyc (sourceless) or a native __init__ before the
    # standard library's json/__init__.py: a package all the same.
    project = tmp_path / "app"
    write(project, "json/__init__.pyc")
    write(project, "decimal/__init__.cpython-311-x86_64-linux-gnu.so")
    write(project, "unittest/mock.py")  # no __init__ at all: a namespace portion, found last

    found = cleaning.shadowing(str(project), {"."}, set())

    assert [f.split(" ")[0] for f in found] == [
        "decimal/__init__.cpython-311-x86_64-linux-gnu.so",
        "json/__init__.pyc",
    ]


def test_cleaning_removes_sourceless_pyc_files_the_reference_lacks(tmp_path):
    # Python writes bytecode only under __pycache__; a .pyc anywhere else is imported as the
    # module itself, with no source for anyone to read.
    project = tmp_path / "app"
    write(project, "decimal.pyc")
    write(project, "calc/ops.pyc")
    write(project, "json/__init__.pyc")
    write(project, "vendored/tool.pyc")
    write(project, "calc/ops.py")

    removed = cleaning.clean(str(project), RULES, {}, keep={"vendored/tool.pyc"})

    assert sorted(removed) == ["calc/ops.pyc", "decimal.pyc", "json/__init__.pyc"]
    assert (project / "vendored/tool.pyc").exists() and (project / "calc/ops.py").exists()
