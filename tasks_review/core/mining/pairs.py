"""Which runs of a check make a repair: a failing run and the next passing run of that check.

    [(f.index, p.index) for f, p in check_pairs(replay.commands)]   # [(1, 2), (4, 5)]

A check is identified by its command string (with the recorded machine's virtualenv taken off
the program: ``bare_check_command``), the directory it started in and the directory the check
itself ran in (after any ``cd`` in the command).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from trajectories.core.replay import ShellCommand


def check_pairs(commands: Sequence[ShellCommand]) -> Iterator[tuple[ShellCommand, ShellCommand]]:
    """(failing run, next passing run) of the same check, in trajectory order.

    Several failures before one pass yield one pair, with the last failure: its starting state
    is the one the fix was made on and the one its output describes, while an earlier failure
    would pair the same reference with a state that already holds half the fix. Masked runs
    (the recorded status is not the check's own) and runs without a status say nothing.
    """
    last_failure: dict[tuple[str, str | None, str | None], ShellCommand] = {}
    for command in commands:
        check = command.check
        if check is None or check.masked or command.exit_code is None:
            continue
        identity = (bare_check_command(command.command), command.cwd, check.cwd)
        if command.exit_code != 0:
            last_failure[identity] = command
            continue
        failing = last_failure.pop(identity, None)
        if failing is not None:
            yield failing, command


# A Python program run from a virtualenv's bin/ (`.venv/bin/pytest`, `venv/bin/python3.12`,
# `/home/u/proj/.venv/bin/python`, `~/.virtualenvs/proj/bin/mypy`) where a word starts. Only
# these programs: `source .venv/bin/activate` names the virtualenv itself and must stay as it is.
_VENV_PROGRAM = re.compile(
    r"(?<![^\s;&|()='\"])"  # a word starts here
    r"(?:[^\s;&|()'\"]*/)?(?:\.?venv|\.?env|\.?virtualenvs/[^/\s;&|()'\"]+)/bin/"
    r"(?=(?:python[0-9.]*|pytest|py\.test|mypy|ruff|flake8|pylint|pyright|coverage|tox|nox)"
    r"(?![^\s;&|()'\"]))"  # the whole program name, nothing after it in the word
)


def bare_check_command(command: str) -> str:
    """The check as the task runs it: Python programs by their bare name, not the recorded venv.

        bare_check_command(".venv/bin/pytest -q")                         # "pytest -q"
        bare_check_command("/home/u/proj/.venv/bin/python -m unittest")   # "python -m unittest"
        bare_check_command("source .venv/bin/activate && pytest")         # unchanged

    The recorded machine's virtualenv is not in the task: its image has its own Python
    environment with the project's requirements installed, where the bare runner is the same
    check. So a failing ``.venv/bin/pytest`` and a later passing ``pytest`` are one check, and
    the written task runs the bare one.
    """
    return _VENV_PROGRAM.sub("", command)
