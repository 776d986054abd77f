"""The training floor's rows, one module per subject; Django finds them through this package."""

from .behaviours import (
    Behaviour,
    BehaviourTask,
    BehaviourVersion,
    EvalResult,
    EvalRun,
    Rollout,
    RolloutImport,
)

__all__ = [
    "Behaviour",
    "BehaviourTask",
    "BehaviourVersion",
    "EvalResult",
    "EvalRun",
    "Rollout",
    "RolloutImport",
]
