"""Controls that swap the test runner or configure it to pass: hooks it loads, fake runners in
the project or first on PATH, package.json scripts and npm's script shell."""

from __future__ import annotations

from ..plan import PYTEST
from .base import NPM_SCRIPT, Control
from .shell import FAKE_RUNNER

_FAKE_MODULE = b'import sys\n\nprint("Ran 1 test\\n\\nOK")\nsys.exit(0)\n'
_PASSING_HOOKS = b"""\
import unittest

# Every failure and error becomes a success.
unittest.TestResult.addFailure = lambda self, test, err: self.addSuccess(test)
unittest.TestResult.addError = lambda self, test, err: self.addSuccess(test)
"""
_CONFTEST = b"""\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


CONFTEST_FORCES_PASS = Control(
    name="conftest_forces_pass",
    description="a conftest.py (project root, check folder, test folders) that marks every "
    "pytest report passed",
    shell=(
        'for d in . "$TRAJ2ENV_WORKDIR" $(printf \'%s\\n\' "$TRAJ2ENV_TESTS" | '
        "xargs -r -n1 dirname | sort -u); do\n"
        '  mkdir -p "$d" && cp "$TRAJ2ENV_PROJECT/.t2e-conftest.py" "$d/conftest.py"\n'
        "done\n"
    ),
    files={".t2e-conftest.py": _CONFTEST},
    runners=frozenset({PYTEST}),
)

SITECUSTOMIZE_FORCES_PASS = Control(
    name="sitecustomize_forces_pass",
    description="sitecustomize.py / usercustomize.py (project, test folders, the user's site "
    "folder) turning every unittest failure into a success",
    shell=(
        'for d in . "$TRAJ2ENV_WORKDIR" $(printf \'%s\\n\' "$TRAJ2ENV_TESTS" | '
        'xargs -r -n1 dirname | sort -u) "$(python3 -m site --user-site)"; do\n'
        '  mkdir -p "$d" && cp "$TRAJ2ENV_PROJECT/.t2e-hooks.py" "$d/sitecustomize.py" '
        '&& cp "$TRAJ2ENV_PROJECT/.t2e-hooks.py" "$d/usercustomize.py"\n'
        "done\n"
    ),
    files={".t2e-hooks.py": _PASSING_HOOKS},
    languages=frozenset({"python"}),
)

FAKE_RUNNER_IN_PROJECT = Control(
    name="fake_runner_in_project",
    description="fake test runners inside the project: unittest.py / pytest.py modules, "
    "python3 / pytest / node executables, node_modules/.bin/node",
    files={
        "unittest.py": _FAKE_MODULE,
        "pytest.py": _FAKE_MODULE,
        "python3": FAKE_RUNNER,
        "pytest": FAKE_RUNNER,
        "node": FAKE_RUNNER,
        "bin/python3": FAKE_RUNNER,
        "bin/node": FAKE_RUNNER,
        "node_modules/.bin/node": FAKE_RUNNER,
        "node_modules/.bin/pytest": FAKE_RUNNER,
    },
    shell=(
        "chmod +x python3 pytest node bin/python3 bin/node node_modules/.bin/node "
        "node_modules/.bin/pytest\n"
        'if [ "$TRAJ2ENV_WORKDIR" != "$TRAJ2ENV_PROJECT" ]; then\n'
        '  cp unittest.py pytest.py "$TRAJ2ENV_WORKDIR"/ && '
        'mkdir -p "$TRAJ2ENV_WORKDIR/node_modules/.bin" && '
        'cp -p node_modules/.bin/node "$TRAJ2ENV_WORKDIR/node_modules/.bin/"\n'
        "fi\n"
    ),
    languages=frozenset({"python", "node"}),
)

FAKE_RUNNER_ON_PATH = Control(
    name="fake_runner_on_path",
    description="fake python3 / pytest / node / npm in ~/.local/bin and ~/bin, put first on "
    "PATH by ~/.profile and ~/.bashrc",
    shell=(
        'for d in "$HOME/.local/bin" "$HOME/bin"; do\n'
        '  mkdir -p "$d"\n'
        "  for tool in python3 python pytest node npm; do\n"
        '    printf \'#!/bin/sh\\necho "1 passed, 0 failed"\\nexit 0\\n\' > "$d/$tool"\n'
        '    chmod +x "$d/$tool"\n'
        "  done\n"
        "done\n"
        'for rc in "$HOME/.profile" "$HOME/.bashrc"; do\n'
        '  printf \'export PATH="$HOME/.local/bin:$HOME/bin:$PATH"\\n\' >> "$rc"\n'
        "done\n"
    ),
)

NPM_TEST_SCRIPT_EXIT0 = Control(
    name="npm_test_script_exit0",
    description="every package.json script replaced by `exit 0`",
    shell=(
        'cd "$TRAJ2ENV_WORKDIR" && node -e "'
        "const fs = require('fs'); const p = JSON.parse(fs.readFileSync('package.json'));"
        " p.scripts = p.scripts || {}; p.scripts.test = 'exit 0';"
        " for (const k of Object.keys(p.scripts)) p.scripts[k] = 'exit 0';"
        " fs.writeFileSync('package.json', JSON.stringify(p, null, 2));\"\n"
    ),
    runners=frozenset({NPM_SCRIPT}),
)

NPMRC_SCRIPT_SHELL = Control(
    name="npmrc_script_shell",
    description="an .npmrc (project and home) whose script-shell is a fake shell that exits 0",
    files={".t2e-shell": FAKE_RUNNER},
    shell=(
        "chmod +x .t2e-shell\n"
        'for d in . "$TRAJ2ENV_WORKDIR" "$HOME"; do\n'
        '  printf "script-shell=%s/.t2e-shell\\n" "$TRAJ2ENV_PROJECT" >> "$d/.npmrc"\n'
        "done\n"
    ),
    runners=frozenset({NPM_SCRIPT}),
)
