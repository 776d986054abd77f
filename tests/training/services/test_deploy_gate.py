"""The held-out gate is computed from rollout rows, never typed in, and it blocks: a regressed
adapter, too few rollouts, and a regression hidden in another behaviour the tasks belong to."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User

from groundwork.access.errors import Conflict, Invalid, NotPermitted
from groundwork.models import AuditEvent
from tasks_review.models import Candidate
from tests.tasks_review.factories import make_candidate
from tests.training.factories.deploy import (
    BASE_MODEL,
    READ,
    REPAIR,
    gated_world,
    held_out_behaviour,
    proposed,
    register,
    rollouts,
)
from training.core.deploy.gate import Rule
from training.models import Deployment, DeploymentApproval, Rollout
from training.models.deploy import DEFAULT_THRESHOLDS
from training.selectors.deploy import gate_report
from training.services import deploy

pytestmark = pytest.mark.django_db


def rules(report, behaviour):
    row = next(g.row for g in report.rows if g.behaviour == behaviour)
    return [f.rule for f in row.failures]


def test_an_adapter_as_good_as_the_base_agent_on_every_behaviour_passes(people):
    world = gated_world(people.bob)
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert report.verdict.passed
    assert [g.behaviour for g in report.rows] == [REPAIR, READ]  # the gated one first
    repair = report.rows[0]
    assert repair.row.tasks == 5 and repair.row.gated
    assert (repair.row.adapter.rollouts, repair.row.base.rollouts) == (5, 5)
    assert repair.adapter_rate == "100%" and repair.base_rate == "100%" and repair.delta == "+0 pts"
    # every number links back to its rollouts, each scored for the behaviour of its row
    assert len(repair.adapter) == 5 and all(r.passed for r in repair.adapter)
    assert {r.task for r in repair.base} == {c.task_name for c in world.tasks}


def test_the_gate_blocks_a_regressed_adapter_and_the_approval_is_refused(people):
    world = gated_world(people.bob, adapter_kind="claimed_only")
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert not report.verdict.passed
    assert rules(report, REPAIR) == [Rule.BELOW_MINIMUM, Rule.REGRESSION]
    assert report.rows[0].adapter_rate == "0%" and report.rows[0].delta == "-100 pts"

    d = proposed(world.adapter, people.bob)
    with pytest.raises(Conflict, match="the held-out gate blocks failing-test-repair-lora@1.0"):
        deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    d.refresh_from_db()
    assert d.state == Deployment.State.PROPOSED
    assert not DeploymentApproval.objects.exists()
    assert not AuditEvent.objects.filter(verb="deployment.approve").exists()


def test_too_few_rollouts_on_either_side_block_the_gate(people):
    world = gated_world(people.bob, tasks=3)
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)  # five a side are needed
    assert rules(report, REPAIR) == [Rule.TOO_FEW_ROLLOUTS]
    assert "the adapter has 3, the base agent 3" in report.rows[0].row.failures[0].message


def test_a_regression_hidden_in_another_behaviour_of_the_same_tasks_blocks_the_gate(people):
    # The adapter repairs every bug and proves it, but edits files it never read.
    world = gated_world(people.bob, adapter_kind="blind_repair")
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert next(g for g in report.rows if g.behaviour == REPAIR).row.passed
    assert rules(report, READ) == [Rule.REGRESSION]
    assert not report.verdict.passed
    d = proposed(world.adapter, people.bob)
    with pytest.raises(Conflict, match="read-before-edit: the adapter passes 0%"):
        deploy.deployment_approve(user=people.carol, deployment_id=d.pk)


def test_only_the_adapters_and_the_base_agents_graded_rollouts_on_held_out_tasks_count(people):
    world = gated_world(people.bob)
    other = register(people.bob, world.repair, "2.0")
    rollouts(world.tasks, "claimed_only", adapter=other)  # another version's
    rollouts(world.tasks, "claimed_only", model="someone-else")  # another base model
    rollouts(world.tasks, "claimed_only", adapter=world.adapter, grade=Rollout.Grade.UNGRADED)
    trained = make_candidate(trials=False)
    repair_train = held_out_behaviour("safe-dependency-update", candidates=[trained])
    rollouts([trained], "claimed_only", adapter=world.adapter)  # not a held-out task of repair
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert report.verdict.passed
    assert report.rows[0].row.adapter.rollouts == 5 and report.rows[0].row.base.rollouts == 5
    assert report.not_graded == 5  # said on the page, not counted
    assert repair_train.slug not in {g.behaviour for g in report.rows}


def test_a_rollout_counts_for_the_adapter_only_with_the_digest_serving_recorded(people):
    world = gated_world(people.bob)
    # Named the adapter (`--ak adapter=`) but no digest recorded, or another artifact's digest:
    # unattributed, for neither side, and said.
    rollouts(world.tasks, "claimed_only", adapter=world.adapter.served_name)
    rollouts(world.tasks, "claimed_only", adapter=world.adapter, served_sha256="f" * 64)
    # The registered digest recorded, whatever the rollout calls itself: the adapter's.
    rollouts(world.tasks[:1], "repaired", adapter="", served_sha256=world.adapter.artifact_sha256)
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert report.verdict.passed
    assert report.rows[0].row.adapter.rollouts == 6 and report.rows[0].row.base.rollouts == 5
    assert report.unattributed == 10
    d = proposed(world.adapter, people.bob, min_rollouts=5)
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    assert DeploymentApproval.objects.get(deployment=d).gate["unattributed"] == 10


def test_claimed_rollouts_without_the_served_digest_cannot_open_the_gate(people):
    world = gated_world(people.bob, adapter_kind="claimed_only")
    rollouts(world.tasks, "repaired", adapter=world.adapter.served_name, each=2)
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert not report.verdict.passed and report.unattributed == 10
    assert report.rows[0].row.adapter.rollouts == 5  # the served ones, which fail


def test_approval_recomputes_the_gate_and_stores_it_with_the_approval(people):
    world = gated_world(people.bob)
    d = proposed(world.adapter, people.bob, min_rollouts=5)
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk)
    approval = DeploymentApproval.objects.get(deployment=d)
    assert approval.approver == people.carol
    assert approval.gate["passed"] is True and approval.gate["adapter"] == world.adapter.key
    assert [row["behaviour"] for row in approval.gate["rows"]] == [REPAIR, READ]
    assert approval.gate["rows"][0]["adapter"]["rollouts"] == 5
    assert approval.summary == "passed on 2 behaviour(s)"


def test_the_proposals_own_thresholds_decide_the_gate(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "GATE_MIN_ROLLOUTS": 3}  # an admin's lower floor
    world = gated_world(people.bob, tasks=3)
    lenient = proposed(world.adapter, people.bob, min_rollouts=3)
    deploy.deployment_approve(user=people.carol, deployment_id=lenient.pk)
    lenient.refresh_from_db()
    assert lenient.state == Deployment.State.APPROVED
    assert gate_report(world.adapter, lenient.thresholds()).verdict.passed
    assert lenient.adapter.base_model == BASE_MODEL


def test_held_out_tasks_not_accepted_on_the_desk_count_for_neither_side(people):
    world = gated_world(people.bob, tasks=6)
    Candidate.objects.filter(pk=world.tasks[0].pk).update(
        review_status=Candidate.ReviewStatus.REJECTED
    )
    report = gate_report(world.adapter, DEFAULT_THRESHOLDS)
    assert report.held_out_tasks == 5
    assert report.rows[0].row.tasks == 5
    assert world.tasks[0].task_name not in {r.task for r in report.rows[0].adapter}


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"tolerance": Decimal("1")}, "a tolerance of at most 5 points, not 100"),
        ({"min_rollouts": 3}, "at least 5 rollouts a side, not 3"),
        ({"min_pass_rate": Decimal("0.1")}, "a minimum pass rate of at least 50%, not 10%"),
    ],
)
def test_a_proposer_cannot_loosen_the_gate_below_its_floors(people, options, words):
    world = gated_world(people.bob, adapter_kind="claimed_only")
    with pytest.raises(Invalid, match=words):
        proposed(world.adapter, people.bob, **options)
    assert not Deployment.objects.exists()


def test_a_proposal_may_tighten_the_floors(people):
    world = gated_world(people.bob)
    d = proposed(world.adapter, people.bob, min_rollouts=5, tolerance=Decimal("0"))
    assert d.thresholds().tolerance == 0.0


def test_floors_raised_after_a_proposal_bind_its_approval(people, settings):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "GATE_MIN_ROLLOUTS": 3}
    world = gated_world(people.bob, tasks=3)
    d = proposed(world.adapter, people.bob, min_rollouts=3)
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "GATE_MIN_ROLLOUTS": 5}
    with pytest.raises(Conflict, match="the held-out gate blocks"):
        deploy.deployment_approve(user=people.carol, deployment_id=d.pk)


def test_an_approver_approves_what_was_proposed_not_more(people):
    world = gated_world(people.bob)
    d = proposed(world.adapter, people.bob, percent=10)
    with pytest.raises(NotPermitted, match="at most what was proposed"):
        deploy.deployment_approve(user=people.carol, deployment_id=d.pk, percentages={REPAIR: 5000})
    with pytest.raises(NotPermitted, match="at most what was proposed"):
        deploy.deployment_approve(
            user=people.carol, deployment_id=d.pk, percentages={REPAIR: 1000, READ: 100}
        )
    assert not DeploymentApproval.objects.exists()
    deploy.deployment_approve(user=people.carol, deployment_id=d.pk, percentages={REPAIR: 500})
    assert DeploymentApproval.objects.get(deployment=d).ceiling == {REPAIR: 500}


def test_a_superuser_without_the_approver_role_cannot_approve(people):
    world = gated_world(people.bob)
    d = proposed(world.adapter, people.bob)
    admin = User.objects.create_superuser("root", "root@example.invalid", "pw-root")
    with pytest.raises(NotPermitted, match="root is not in the approver role"):
        deploy.deployment_approve(user=admin, deployment_id=d.pk)
    assert not DeploymentApproval.objects.exists()
