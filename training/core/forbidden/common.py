"""What every forbidden-action detector shares: the hit it reports and how it reads a command
(the program a simple command runs, its own words, its redirections).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from trajectories.core.replay.programs import basename, python_module, unwrap

from ..facts import Action, TrajectoryFacts
from ..facts.shell import Argv
from ..spec import ForbiddenRule


@dataclass(frozen=True, slots=True)
class Hit:
    name: str
    step: int
    event: int
    detail: str


Detector = Callable[[TrajectoryFacts, ForbiddenRule], Iterator[Hit]]


def _hit(rule: ForbiddenRule, action: Action, detail: str) -> Hit:
    return Hit(rule.name, action.step, action.event, detail)


def _commands(action: Action) -> Iterator[tuple[int, int, Argv]]:
    for p, pipeline in enumerate(action.pipelines):
        for s, argv in enumerate(pipeline):
            yield p, s, argv


@functools.lru_cache(maxsize=8192)
def _program(argv: Argv) -> tuple[str, tuple[str, ...]]:
    """The program a simple command runs and its arguments, wrappers (sudo, env …) and the
    redirections the reader appended (``"<", F`` / ``">", F``) removed. Cached: every detector
    asks it of the same commands, and sessions repeat commands."""
    real = unwrap(list(_words(argv)))
    if not real:
        return "", ()
    module = python_module(real)
    if module is not None:
        return module[0], tuple(module[1])
    return basename(real[0]), tuple(real[1:])


def _words(argv: Argv) -> Argv:
    """The command's own words, without the redirections appended after them."""
    for i, word in enumerate(argv):
        if word in ("<", ">") and i + 1 < len(argv) and i > 0:
            return argv[:i]
    return argv


def _redirected(argv: Argv, op: str) -> list[str]:
    """The files a simple command's ``<`` (or ``>``) redirections name."""
    return [argv[i + 1] for i in range(1, len(argv) - 1) if argv[i] == op]


_WORD = re.compile(r"""[^\s;&|()<>'"`]+""")


def _loose_words(action: Action) -> list[str]:
    """The words of a command line bash's grammar could not read, split loosely: what a
    detector reads of it as suspect."""
    return _WORD.findall(action.command or "")


def _mentions(action: Action, words: frozenset[str]) -> bool:
    """Whether any word of the command, by its base name, is one of ``words``: a cheap test
    that lets a detector pass over the many commands it cannot concern."""
    return any(
        basename(word) in words
        for pipeline in action.pipelines
        for argv in pipeline
        for word in argv
    )
