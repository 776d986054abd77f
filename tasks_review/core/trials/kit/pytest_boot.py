"""traj2env pytest start: the grader's plugin first, then pytest as the check started it.

Usage (by shim.py): python -s [-E] pytest_boot.py (module | SCRIPT) -- ARGS

The kit's folder is ``sys.path[0]`` while the plugin and its modules are imported, before the
project's folder is on the path, so no project file can stand in for them. Then ``sys.path[0]``
becomes what ``python -m pytest`` (the current folder) or the ``pytest`` script (its folder)
would have made it.
"""

import os
import sys

import traj2env_pytest_controls  # noqa: F401 - imported from the kit, before the project

PLUGIN = "traj2env_pytest_controls"


def main():
    how, separator = sys.argv[1:3]
    if separator != "--":
        sys.stderr.write("pytest_boot: bad arguments\n")
        return 2
    args = sys.argv[3:]
    sys.path[0] = os.getcwd() if how == "module" else os.path.dirname(how)
    import pytest

    sys.argv = [how if how != "module" else "pytest"] + args + ["-p", PLUGIN]
    return pytest.console_main()


if __name__ == "__main__":
    sys.exit(main())
