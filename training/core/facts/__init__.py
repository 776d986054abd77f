"""What the eval harness scores: the facts of one trajectory, taken from its replay.

result = replay(atif, side_data, root=root, blobs=blobs)
facts = build_facts(atif, side_data, result, verified_reward=1.0,
                    context=TaskContext(test_files=("tests/test_app.py",), network_allowed=False))
facts.actions[3]     # Action(kind=EDIT, step=5, event=3, tool='Edit', edits=('src/app.py',) …)
TrajectoryFacts.from_dict(facts.to_dict()) == facts

Every tool call becomes one ``Action`` (a Codex code-mode ``exec`` that ran several commands
becomes one per command), normalised across harnesses: Claude Code Read/Write/Edit/MultiEdit/
Bash, Codex shell/exec_command/apply_patch, pi read/write/edit/bash, Harbor agents' ATIF. The
tool names are read by the replay's own ``classify`` so the two can never disagree.

What an action did comes from the replay, not from what the agent said it did:

- ``reads``: files a read tool showed, or a reading program (``cat``, ``head``, ``sed -n``,
  ``grep`` …) printed from, in whole or in part, in a shell command that did not fail.
- ``writes`` / ``edits``: the files the replay saw the call change, split by whether the file
  was known to exist before (an overwrite, an in-place edit, a deletion or a change whose
  content the replay lost is an edit; creating a file is a write). Tree markers (``python
  x.py`` may write anything) are uncertainty, not edits.
- shell commands keep the command line, its simple commands as argv lists grouped by pipeline
  (``sh -c`` scripts and ``$(…)`` / ``<(…)`` substitutions expanded, a substitution fed to a
  shell written as a pipeline into it), the working directory, the exit status and the
  replay's recognised check.

Paths inside the project are root-relative keys (``src/app.py``); paths outside it are
absolute (``/etc/hosts``) or, when the replay cannot place ``~``, kept as written (``~/.ssh``).

The facts and their compact JSON form are in ``model``, building them from a replay in
``build``, reading shell command lines in ``shell``.
"""

from .build import FINAL_MESSAGE_CHARS, build_facts, facts_of, final_message
from .model import (
    FORMAT_VERSION,
    Action,
    CheckFact,
    FileChange,
    FinalFile,
    TaskContext,
    TrajectoryFacts,
    with_world,
)

__all__ = [
    "FINAL_MESSAGE_CHARS",
    "FORMAT_VERSION",
    "Action",
    "CheckFact",
    "FileChange",
    "FinalFile",
    "TaskContext",
    "TrajectoryFacts",
    "build_facts",
    "facts_of",
    "final_message",
    "with_world",
]
