"""Which runs of a check make a repair: a failing run and the next passing run of that check.

    [(f.index, p.index) for f, p in check_pairs(replay.commands)]   # [(1, 2), (4, 5)]

A check is identified by its command string, the directory it started in and the directory the
check itself ran in (after any ``cd`` in the command).
"""

from __future__ import annotations

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
        identity = (command.command, command.cwd, check.cwd)
        if command.exit_code != 0:
            last_failure[identity] = command
            continue
        failing = last_failure.pop(identity, None)
        if failing is not None:
            yield failing, command
