"""The training floor's permissions, by the names its services, selectors and views check, and
which role holds which (``groundwork.access.roles``: every app grants its own)."""

from __future__ import annotations

from groundwork.access.roles import ADMIN, ANNOTATOR, APPROVER, REVIEWER

VIEW = "training.view_training"
EDIT_BEHAVIOUR = "training.edit_behaviour"
RUN_EVAL = "training.run_eval"
LABEL = "training.label_pairs"
DECIDE = "training.decide_behaviour"
EXPORT = "training.export_training"
PLAN = "training.plan_training"
# Importing a task folder from a server path and running its trial matrix in Docker.
IMPORT_AUTHORED = "training.import_authored_task"

# Deployments (training.models.deploy).
REGISTER_ADAPTER = "training.register_adapter"
PROPOSE_DEPLOYMENT = "training.propose_deployment"
# The service also refuses the adapter's registrar and the deployment's proposer.
APPROVE_DEPLOYMENT = "training.approve_deployment"
# Kill (no approval needed), roll back, activate within the approval, drill, retire.
OPERATE_DEPLOYMENT = "training.operate_deployment"
MANAGE_API_CLIENTS = "training.manage_api_clients"

# Deployments: reviewers and admins register adapters and propose; approvers approve (the service
# also refuses the registrar and the proposer); all three operate (a kill needs no approval);
# admins hold the API clients serving infrastructure uses.
_TRAIN = [EDIT_BEHAVIOUR, RUN_EVAL, IMPORT_AUTHORED]
_LOOP = [DECIDE, EXPORT, PLAN]
_PROPOSE = [REGISTER_ADAPTER, PROPOSE_DEPLOYMENT]

GRANTS = {
    ANNOTATOR: [VIEW, LABEL],
    REVIEWER: [VIEW, *_TRAIN, LABEL, *_LOOP, *_PROPOSE, OPERATE_DEPLOYMENT],
    APPROVER: [VIEW, APPROVE_DEPLOYMENT, OPERATE_DEPLOYMENT],
    ADMIN: [VIEW, *_TRAIN, LABEL, *_LOOP, *_PROPOSE, OPERATE_DEPLOYMENT, MANAGE_API_CLIENTS],
}
