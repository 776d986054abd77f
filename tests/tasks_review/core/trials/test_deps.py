"""Declared dependencies, the offline sources that provide them, and npm's version ranges."""

from __future__ import annotations

import json

import pytest

from tasks_review.core.trials import (
    Dependency,
    OfflineSources,
    declared_dependencies,
    npm_satisfies,
    unavailable,
)
from tasks_review.core.trials.deps import python_requirements


def test_declared_dependencies_are_read_from_every_manifest_kind():
    files = {
        "requirements.txt": b"requests>=2.0  # http\n-e .\n./local\n"
        b"pytest==8.3.5; python_version>'3'\nold==1.0; python_version<'3'\n",
        "pyproject.toml": b'[project]\ndependencies = ["attrs>=23"]\n'
        b'[tool.poetry.dependencies]\npython = "^3.11"\nrich = "^13.1"\n',
        "setup.py": b"from setuptools import setup\nsetup(install_requires=['click>=8'])\n",
        "package.json": b'{"dependencies": {"left-pad": "^1.3.0", "mine": "file:../mine"},'
        b' "devDependencies": {"tap": "16.x"}, "optionalDependencies": {"fsevents": "*"}}',
        "node_modules/x/package.json": b'{"dependencies": {"ignored": "1"}}',
    }
    found = {(d.ecosystem, d.name, d.spec, d.optional) for d in declared_dependencies(files)}
    assert found == {
        ("pypi", "requests", ">=2.0", False),
        ("pypi", "pytest", "==8.3.5", False),
        ("pypi", "attrs", ">=23", False),
        ("pypi", "rich", ">=13.1,<14", False),
        ("pypi", "click", ">=8", False),
        ("npm", "left-pad", "^1.3.0", False),
        ("npm", "tap", "16.x", False),
        ("npm", "fsevents", "*", True),
    }


def test_without_offline_sources_every_declared_dependency_is_unavailable():
    deps = [
        Dependency("pypi", "requests", ">=2", "requirements.txt"),
        Dependency("npm", "left-pad", "^1.3.0", "package.json"),
        Dependency("npm", "fsevents", "*", "package.json", optional=True),
    ]
    reasons = dict((d.name, why) for d, why in unavailable(deps, OfflineSources()))
    assert reasons == {
        "requests": "no wheelhouse is configured",
        "left-pad": "no npm cache is configured",
    }


def test_a_wheelhouse_and_an_npm_cache_provide_matching_versions(tmp_path):
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    (wheelhouse / "requests-2.31.0-py3-none-any.whl").write_bytes(b"")
    (wheelhouse / "attrs-22.1.0.tar.gz").write_bytes(b"")
    index = tmp_path / "npm" / "_cacache" / "index-v5" / "ab" / "cd"
    index.mkdir(parents=True)
    key = "make-fetch-happen:request-cache:https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"
    (index / "entry").write_text("hash\t" + json.dumps({"key": key}) + "\n")
    sources = OfflineSources(wheelhouse=wheelhouse, npm_cache=tmp_path / "npm")
    deps = [
        Dependency("pypi", "requests", ">=2,<3", "r.txt"),
        Dependency("pypi", "attrs", ">=23", "r.txt"),
        Dependency("npm", "left-pad", "^1.2.0", "package.json"),
        Dependency("npm", "left-pad", "^2.0.0", "package.json"),
        Dependency("npm", "x", "github:user/x", "package.json"),
    ]
    missing = [(d.name, d.spec) for d, _ in unavailable(deps, sources)]
    assert missing == [("attrs", ">=23"), ("left-pad", "^2.0.0"), ("x", "github:user/x")]


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("1.3.0", "^1.2.0", True),
        ("2.0.0", "^1.2.0", False),
        ("0.2.5", "^0.2.3", True),
        ("0.3.0", "^0.2.3", False),
        ("0.0.4", "^0.0.3", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("1.9.9", "1.x", True),
        ("2.0.0", "1.x", False),
        ("3.0.0", "*", True),
        ("1.5.0", ">=1.2.0 <2.0.0", True),
        ("2.0.0", ">=1.2.0 <2.0.0", False),
        ("1.0.0", "1.2.0 - 1.4", False),
        ("1.4.7", "1.2.0 - 1.4", True),
        ("3.1.0", "^1.0.0 || ^3.0.0", True),
        ("1.2.3", "1.2.3", True),
        ("1.2.4", "=1.2.3", False),
        ("2.0.0-beta.1", "^2.0.0", False),
        ("1.3.0", ">1.2", True),
        ("1.2.9", ">1.2", False),
        ("1.2.0", "<=1.2", True),
    ],
)
def test_npm_ranges(version, spec, expected):
    assert npm_satisfies(version, spec) is expected


def test_python_requirements_are_what_the_project_declares_then_the_checks_runner():
    files = {
        "requirements.txt": b"requests>=2,<3\n-e .\n",
        "pyproject.toml": b'[project]\ndependencies = ["attrs"]\n',
        "package.json": b'{"devDependencies": {"vitest": "^1"}}',  # npm: not a wheel
    }
    assert python_requirements(files, "python -m pytest -q", ".") == [
        "attrs",
        "requests<3,>=2",
        "pytest",
    ]


def test_a_declared_runner_is_not_asked_for_twice_and_the_projects_own_modules_never():
    files = {"requirements-dev.txt": b"pytest==8.3.5\n", "mypkg/__main__.py": b""}
    assert python_requirements(files, "pytest -q && python -m mypkg", ".") == ["pytest==8.3.5"]
    assert python_requirements({}, "python3 -m unittest -v", ".") == []


# -- Go ------------------------------------------------------------------------------------------

GO_MOD = b"""module example.com/app

go 1.22.1

toolchain go1.23.4

require (
	github.com/vendored/lib v1.2.0
	github.com/local/fork v0.3.0 // indirect
	github.com/remote/dep v2.0.0+incompatible
)

require golang.org/x/outside v0.1.0

replace github.com/local/fork => ./third_party/fork

replace golang.org/x/outside v0.1.0 => ../outside
"""


def test_go_modules_that_need_downloads_are_the_unavailable_ones():
    from tasks_review.core.trials.deps import GO

    modules_txt = b"# github.com/vendored/lib v1.2.0\n## explicit\ngithub.com/vendored/lib\n"
    files = {
        "go.mod": GO_MOD,
        "vendor/modules.txt": modules_txt,
        "third_party/fork/go.mod": b"module github.com/local/fork\n\ngo 1.20\n",
        "testdata/broken/go.mod": b"module broken\n\nrequire nowhere.example/x v1\n",
    }
    found = declared_dependencies(files)
    assert [(d.ecosystem, d.name, d.spec) for d in found] == [
        (GO, "github.com/remote/dep", "v2.0.0+incompatible"),
        (GO, "golang.org/x/outside", "=> ../outside"),
    ]
    why = dict((d.name, reason) for d, reason in unavailable(found, OfflineSources()))
    assert "neither vendored" in why["github.com/remote/dep"]
    assert why["golang.org/x/outside"] == "replaced by ../outside, outside the project"


def test_a_go_module_with_no_requirements_needs_nothing():
    from tasks_review.core.trials.deps import go_version_required

    files = {"go.mod": b"module example.com/calc\n\ngo 1.21\n", "sub/go.mod": b"module s\ngo 1.9\n"}
    assert declared_dependencies(files) == []
    assert go_version_required(files) == "1.21"  # the newest go line, compared as numbers
    assert go_version_required({"go.mod": GO_MOD}) == "1.22.1"


@pytest.mark.parametrize(
    "command, files, expected",
    [
        ("go test ./...", {}, True),
        ("go vet ./... && go build ./...", {}, True),
        ("make test", {"go.mod": b"module m\n", "Makefile": b"test:\n\tgo test ./...\n"}, True),
        ("make test", {"Makefile": b"test:\n\tpytest\n"}, False),
        ("python3 -m pytest", {"go.mod": b"module m\n"}, False),
    ],
)
def test_a_check_needs_go_when_it_runs_go_or_a_script_in_a_go_module(command, files, expected):
    from tasks_review.core.trials.deps import needs_go

    assert needs_go(files, command, ".") is expected
