"""Which runs of a check make a repair: a failing run and the next passing run of that check.

    [(f.index, p.index) for f, p in check_pairs(replay.commands)]   # [(1, 2), (4, 5)]

A check is identified by the check itself, not by the command line around it: its own words
(``Check.segment``, with the recorded machine's virtualenv taken off the program by
``bare_check_command`` and a leading ``env VAR=…`` dropped) and the directory it ran in
(``Check.cwd``, after any ``cd``). So ``pytest -q`` that failed and ``redis-cli FLUSHDB &&
pytest -q`` that later passed are one check; ``taskcheck`` decides which of the two command
lines the task runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from trajectories.core.replay import ShellCommand

from .checkline import split_line


def check_pairs(commands: Sequence[ShellCommand]) -> Iterator[tuple[ShellCommand, ShellCommand]]:
    """(failing run, next passing run) of the same check, in trajectory order.

    Several failures before one pass yield one pair, with the last failure: its starting state
    is the one the fix was made on and the one its output describes, while an earlier failure
    would pair the same reference with a state that already holds half the fix. Runs whose
    recorded status is not the check's own (``says_status``) and runs without a status say
    nothing.
    """
    last_failure: dict[tuple[str, str | None], ShellCommand] = {}
    for command in commands:
        if not says_status(command):
            continue
        identity = check_identity(command)
        if command.exit_code != 0:
            last_failure[identity] = command
            continue
        failing = last_failure.pop(identity, None)
        if failing is not None:
            yield failing, command


def says_status(command: ShellCommand) -> bool:
    """Whether the recorded exit status is the check's own.

    The replay marks a check masked when a pipe, a later command or an ``||`` decided the
    status, and also when a setup chained before it with ``&&`` may have failed in its place
    (``redis-cli FLUSHDB && pytest``). That last one only hides a failure: a 0 means every
    command of the chain ran and succeeded, so a passing run behind a setup still counts.
    """
    check = command.check
    if check is None or command.exit_code is None:
        return False
    if not check.masked:
        return True
    if command.exit_code != 0:
        return False
    line = split_line(command.command, check.segment)
    return line is not None and line.status_is_the_checks


# `env [-i] [VAR=value …] check`: the variables are setup, the check is what follows.
_ENV_PREFIX = re.compile(r"^env(?:\s+-\w+)*(?:\s+[A-Za-z_]\w*=\S*)*\s+")


def check_identity(command: ShellCommand) -> tuple[str, str | None]:
    """What makes two runs the same check: its own words and the folder it ran in."""
    check = command.check
    assert check is not None
    return _ENV_PREFIX.sub("", bare_check_command(check.segment)), check.cwd


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
