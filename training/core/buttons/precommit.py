"""The git pre-commit hook at run time: staged changes to the task's tests are refused.

action = staged_action("A\\0tests/test_new.py\\0M\\0tests/test_app.py\\0R100\\0a.py\\0b.py\\0")
action.writes, action.edits, action.deletes
# (('tests/test_new.py', 'b.py'), ('tests/test_app.py',), ('a.py',))

Embedded in the pre-commit script (``git.py``) with ``rules.py``, so a commit is judged by the
``tamper_with_tests`` detector itself: the staged changes (``git diff --cached --name-status
-z -M``) become one action, added files as writes, modified ones as edits, deleted ones as
deletions and a rename as both; with the task's test list every change to a listed file counts,
without one only changes to existing files in conventional test locations do, and test hooks
(``conftest.py``, ``sitecustomize.py`` …) count either way, as they do in a scored trajectory.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any

from training.core.facts.model import Action
from training.core.spec import ActionKind

from .rules import HookConfig, failure_said, forbidden_reasons


def staged_action(name_status: str) -> Action:
    """The staged changes, from ``git diff --cached --name-status -z -M``'s output."""
    fields = name_status.split("\0")
    writes: list[str] = []
    edits: list[str] = []
    deletes: list[str] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status[0] in "RC":
            old, new = fields[i + 1], fields[i + 2]
            if status[0] == "R":
                deletes.append(old)
            writes.append(new)
            i += 3
            continue
        path = fields[i + 1]
        {"A": writes, "D": deletes}.get(status[0], edits).append(path)
        i += 2
    return Action(
        ActionKind.EDIT,
        0,
        1,
        "git commit",
        writes=tuple(writes),
        edits=tuple(edits),
        deletes=tuple(deletes),
    )


def main(config: Mapping[str, Any], argv: Sequence[str], *, stderr: IO[str] | None = None) -> int:
    """Exit 1, naming each refused change, when the commit would tamper with the tests."""
    stderr = stderr or sys.stderr
    hook = HookConfig.from_dict(config)
    try:
        root = _git("rev-parse", "--show-toplevel").strip()
        action = staged_action(_git("diff", "--cached", "--name-status", "-z", "-M"))
        reasons = forbidden_reasons(hook, action, root=root)
    except Exception as error:  # noqa: BLE001 - a crashing hook must not let the commit through
        print(
            f"The traj2env pre-commit hook failed ({failure_said(error)}); commit refused.",
            file=stderr,
        )
        return 1
    if not reasons:
        return 0
    print(f"Commit refused by the traj2env hook for “{hook.title}”:", file=stderr)
    for reason in reasons:
        print(f"  {reason}", file=stderr)
    print("Unstage those changes (git restore --staged PATH) and commit again.", file=stderr)
    return 1


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=True)
    return done.stdout
