"""The layer contract is enforced: lint-imports passes on the tree and fails on a planted breach."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("project", "groundwork", "trajectories", "tasks_review", "training")

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="lint-imports is not installed")


def lint(root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    args = [str(LINT_IMPORTS), "--no-logo", "--no-cache"]
    for contract in contracts:
        args += ["--contract", contract]
    return subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the packages and the contract, to plant breaches in."""
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_contract():
    result = lint(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_core_module_importing_django_breaks_the_framework_free_contract(tree):
    (tree / "tasks_review" / "core" / "planted.py").write_text("from django.db import models\n")
    result = lint(tree, "core-framework-free")
    assert result.returncode == 1
    assert "tasks_review.core.planted -> django (l.1)" in result.stdout


def test_a_core_module_reaching_django_through_an_app_module_breaks_it_too(tree):
    (tree / "trajectories" / "core" / "planted.py").write_text("import trajectories.models\n")
    result = lint(tree, "core-framework-free")
    assert result.returncode == 1
    assert "trajectories.core.planted" in result.stdout


def test_a_lower_floor_importing_a_higher_one_breaks_the_floors(tree):
    (tree / "trajectories" / "planted.py").write_text("import tasks_review.models\n")
    (tree / "tasks_review" / "planted.py").write_text("import training.core\n")
    result = lint(tree, "floors")
    assert result.returncode == 1
    assert "trajectories.planted -> tasks_review.models" in result.stdout
    assert "tasks_review.planted -> training.core" in result.stdout


def test_the_ground_floor_importing_any_app_breaks_the_floors(tree):
    (tree / "groundwork" / "planted.py").write_text("import trajectories.models\n")
    (tree / "groundwork" / "jobs" / "planted.py").write_text("from training import tasks\n")
    result = lint(tree, "floors")
    assert result.returncode == 1
    assert "groundwork.planted -> trajectories.models" in result.stdout
    assert "groundwork.jobs.planted -> training.tasks" in result.stdout


def test_the_ground_floors_core_importing_django_breaks_the_framework_free_contract(tree):
    (tree / "groundwork" / "core" / "docker" / "planted.py").write_text("import django.db\n")
    result = lint(tree, "core-framework-free")
    assert result.returncode == 1
    assert "groundwork.core.docker.planted -> django (l.1)" in result.stdout
