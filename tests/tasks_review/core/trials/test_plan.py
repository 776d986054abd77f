"""The grading plan: the runners behind a check, the guarded paths, the paths it names."""

from __future__ import annotations

import json

from tasks_review.core.trials import is_guarded, plan_check
from tasks_review.core.trials.plan import named_paths


def test_plan_finds_the_runners_behind_npm_scripts():
    files = {
        "package.json": json.dumps(
            {"scripts": {"test": "npm run unit", "unit": "node --test"}}
        ).encode()
    }
    plan = plan_check("npm test", ".", files)
    assert plan.structured == {"node-test"}
    assert plan.scripts == ("npm test", "npm unit")
    assert {r.name for r in plan.requirements} == {"npm", "node"}


def test_plan_needs_pytest_as_a_module_and_follows_cd():
    plan = plan_check("cd backend && python -m pytest -q", ".", {})
    assert plan.structured == {"pytest"}
    module = [r for r in plan.requirements if r.kind == "module"]
    assert [(r.name, r.cwd, r.python) for r in module] == [("pytest", "backend", "python")]


def test_guarded_paths_cover_tests_configuration_and_start_up_hooks():
    for path in [
        "tests/test_x.py",
        "package.json",
        ".npmrc",
        "sub/conftest.py",
        "x.pth",
        "sitecustomize.py",
        "pyproject.toml",
        "test/a.test.js",
    ]:
        assert is_guarded(path), path
    for path in ["src/app.py", "README.md", "lib/index.js"]:
        assert not is_guarded(path), path


def test_named_paths_are_what_a_check_looks_for_and_the_project_lacks():
    files = {"tests/test_out.py": b"assert Path('build/report.txt').exists()\nx = '0.125'\n"}
    found = named_paths("test -f dist/app.js && python3 -m unittest", files)
    assert sorted(found) == ["build/report.txt", "dist/app.js"]


def test_every_config_file_name_the_installed_pytest_reads_is_guarded_at_any_depth():
    # The names come from pytest's own source: a name it reads that we do not guard lets an
    # agent's config (pythonpath, addopts, testpaths) stand in for the reference's.
    from _pytest.config import findpaths

    names = list(findpaths.CONFIG_LOADERS_BY_NAME)
    assert {"pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"} <= set(names)
    for name in [*names, "conftest.py"]:
        for folder in ("", "tests/", "a/b/"):
            assert is_guarded(folder + name), folder + name
