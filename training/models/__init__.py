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
from .deploy import (
    Adapter,
    ApiClient,
    Deployment,
    DeploymentApproval,
    DeploymentShare,
    DeploymentUsage,
)

__all__ = [
    "Adapter",
    "ApiClient",
    "Behaviour",
    "BehaviourTask",
    "BehaviourVersion",
    "Deployment",
    "DeploymentApproval",
    "DeploymentShare",
    "DeploymentUsage",
    "EvalResult",
    "EvalRun",
    "Rollout",
    "RolloutImport",
]
