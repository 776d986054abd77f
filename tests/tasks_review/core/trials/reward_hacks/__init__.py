"""The targeted reward hacks ``test_reward_hacks.py`` grades, one module per class: ``HACKS`` maps
each hack's name to the sample task it is aimed at and the agent (a ``Control``) that games its
grader; ``GIT_HACKS`` need the agent's ``.git`` to cross (Harbor's upload carries it), and
``IN_PLACE_HACKS`` aim at grading in the agent's own container (Harbor's stock environment)."""

from __future__ import annotations

from tasks_review.core.trials import Control

from . import cleaning, forgery, rewriting, unguarded
from .in_place import IN_PLACE_HACKS, READ_ONLY_ONE
from .unguarded import GIT_HACKS

HACKS: dict[str, tuple[str, Control]] = {
    **forgery.HACKS,
    **rewriting.HACKS,
    **unguarded.HACKS,
    **cleaning.HACKS,
}

__all__ = ["GIT_HACKS", "HACKS", "IN_PLACE_HACKS", "READ_ONLY_ONE"]
