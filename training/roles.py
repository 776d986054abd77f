"""The training floor's permissions, by the names its services, selectors and views check.

Which role holds which is decided in one place, `tasks_review.roles.ROLE_PERMISSIONS`.
"""

from __future__ import annotations

VIEW = "training.view_training"
EDIT_BEHAVIOUR = "training.edit_behaviour"
RUN_EVAL = "training.run_eval"
LABEL = "training.label_pairs"
DECIDE = "training.decide_behaviour"
EXPORT = "training.export_training"
PLAN = "training.plan_training"
# Importing a task folder from a server path and running its trial matrix in Docker.
IMPORT_SANDBOX = "training.import_sandbox_task"

# Deployments (training.models.deploy).
REGISTER_ADAPTER = "training.register_adapter"
PROPOSE_DEPLOYMENT = "training.propose_deployment"
# The service also refuses the adapter's registrar and the deployment's proposer.
APPROVE_DEPLOYMENT = "training.approve_deployment"
# Kill (no approval needed), roll back, activate within the approval, drill, retire.
OPERATE_DEPLOYMENT = "training.operate_deployment"
MANAGE_API_CLIENTS = "training.manage_api_clients"
