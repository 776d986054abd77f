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
