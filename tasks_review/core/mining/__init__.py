"""Task families find candidates in a replayed trajectory; each can be dropped with a reason.

The repair family (no LLM) is here: see ``repair.py`` and the modules it names. build, extend
and qa, which ask a model once per candidate, are in ``core.families`` and take the same
``RepairCandidate`` shape. Reason codes are in ``drops.py`` and shared by every family.
"""

from .candidate import RepairCandidate, candidate_key
from .checkpairs import bare_check_command, check_pairs
from .drops import Drop, DropReason
from .installs import installs_packages
from .repair import (
    DEFAULT_LANGUAGES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_START_BYTES,
    PROJECT_DIR,
    find_repair_candidates,
)

__all__ = [
    "DEFAULT_LANGUAGES",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_START_BYTES",
    "Drop",
    "DropReason",
    "PROJECT_DIR",
    "RepairCandidate",
    "candidate_key",
    "bare_check_command",
    "check_pairs",
    "find_repair_candidates",
    "installs_packages",
]
