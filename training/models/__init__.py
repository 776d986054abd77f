"""The training floor's rows, one module per subject; Django finds them through this package."""

from .authored import AuthoredTask
from .behaviours import (
    Behaviour,
    BehaviourTask,
    BehaviourVersion,
    EvalResult,
    EvalRun,
    Rollout,
    RolloutImport,
)
from .decisions import Decision
from .deploy import (
    Adapter,
    ApiClient,
    Deployment,
    DeploymentApproval,
    DeploymentShare,
    DeploymentUsage,
)
from .exports import TrainingExport
from .labels import PairLabel, PreferencePair
from .plans import TrainingPlan

__all__ = [
    "Adapter",
    "ApiClient",
    "AuthoredTask",
    "Behaviour",
    "BehaviourTask",
    "BehaviourVersion",
    "Decision",
    "Deployment",
    "DeploymentApproval",
    "DeploymentShare",
    "DeploymentUsage",
    "EvalResult",
    "EvalRun",
    "PairLabel",
    "PreferencePair",
    "Rollout",
    "RolloutImport",
    "TrainingExport",
    "TrainingPlan",
]
