"""Rollouts with real paths and no model, for real, and the learning loop end to end on them.

Two bundled samples' kept tasks: Claude Code's in the behaviour's train split, pi's held out.
Their replay scripts (`replay_script`), `harbor run` with the replay agent whole and cut before
the fix through our offline environment, the jobs folders imported and re-graded
(`rollouts_import`), then, as the people whose roles allow each step: an eval run, a preference
pair, two labellers, a DPO export whose chosen side follows them, a plan on it, the adapter
registered and its held-out rollouts imported, the gate, and the approval by a second person.

The tasks are written, not put through the trial matrix (the samples' repairs are kept by
tests/training/core/harbor/test_harbor_run.py), so the Docker time is the four trials and their
gradings, done once for the module. Skips when no Docker engine answers; builds the offline base
image when missing (that fixture's docstring says what it costs).
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import transaction
from django.test import override_settings
from harbor.models.agent.context import AgentContext
from harbor.models.trial.result import TrialResult

from groundwork.access.roles import ANNOTATOR, APPROVER, REVIEWER
from tests.training.core.harbor.test_harbor_run import (  # noqa: F401 (fixtures)
    base_ref,
    engine,
    harbor_run,
    left_behind,
    new_run_id,
)
from tests.training.factories import make_behaviour
from tests.training.samples import kept_sample
from training.core.harbor.jobs import SERVED_KEY, read_jobs
from training.core.harbor.replay_agent import ReplayAgent
from training.models import BehaviourTask, Deployment, DeploymentApproval, Rollout, TrainingExport
from training.selectors import labels as reads
from training.selectors.deploy import gate_report
from training.services import deploy, labels
from training.services.behaviours import behaviour_tasks_add
from training.services.deploy_adapters import adapter_register
from training.services.evals import eval_run_create, eval_run_execute
from training.services.exports import training_export_create, training_export_execute
from training.services.pairs import pairs_build
from training.services.plans import training_plan_create
from training.services.replay_scripts import replay_script_write

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db]

AGENT = ReplayAgent.import_path()
CUTS = ("whole", "before_fix")
TRAIN, HELD_OUT = "claude-code", "pi"
BASE_MODEL = "replay-base"  # what `-m` names: the base side of the gate is this model, no adapter
WEIGHTS = b"the adapter's weights, as a stand-in file"


@pytest.fixture(scope="module")
def replayed(django_db_setup, django_db_blocker, engine, base_ref, tmp_path_factory):  # noqa: F811
    """The Django side once for the module, rolled back at its end; what the tests read is
    plain data, so the Docker work is done once."""
    dataset, jobs = tmp_path_factory.mktemp("replay-tasks"), tmp_path_factory.mktemp("replay-jobs")
    run_id = new_run_id("replay")
    gate_floor = {"GATE_MIN_ROLLOUTS": 1, "GATE_MIN_PASS_RATE": 0.5, "GATE_MAX_TOLERANCE": 0.0}
    with django_db_blocker.unblock(), transaction.atomic():
        from django.conf import settings

        with override_settings(TRAJ2ENV={**settings.TRAJ2ENV, **gate_floor}):
            outcome = _the_loop(dataset, jobs, run_id, base_ref)
        outcome["left_behind"] = left_behind(engine, run_id)
        transaction.set_rollback(True)
    return outcome


def _people() -> dict[str, User]:
    """alice labels, bob reviews (labels, exports, plans, registers, proposes), carol approves."""
    roles = {"alice": ANNOTATOR, "bob": REVIEWER, "carol": APPROVER}
    made = {}
    for name, role in roles.items():
        made[name] = User.objects.create_user(username=name, password="pw-" + name)
        made[name].groups.add(Group.objects.get(name=role))
    return made


def _import(folder: Path) -> dict[str, Any]:
    out = StringIO()
    call_command("rollouts_import", str(folder), "--json", stdout=out)
    return json.loads(out.getvalue())


def _served_by(trial_dir: Path, digest: str) -> None:
    """What a serving side records for an agent it answered with the adapter (result.json's
    agent metadata). The replay agent calls no model, so no serving answers it: the test
    records it in serving's place, for the trials that stand for the adapter's."""
    path = trial_dir / "result.json"
    result = TrialResult.model_validate_json(path.read_bytes())
    context = result.agent_result or AgentContext()
    context.metadata = {**(context.metadata or {}), SERVED_KEY: digest}
    result.agent_result = context
    path.write_text(result.model_dump_json(indent=4))


def _the_loop(dataset: Path, jobs: Path, run_id: str, base_image: str) -> dict[str, Any]:
    people = _people()
    # 1. generate: the two samples' kept tasks, with the replay script of each.
    tasks = {
        fmt: kept_sample(fmt, dataset, base_image=base_image, check_timeout=120)
        for fmt in (TRAIN, HELD_OUT)
    }
    for task in tasks.values():
        replay_script_write(user=None, candidate_id=task.pk)
    behaviour = make_behaviour()
    behaviour_tasks_add(
        user=None, behaviour_id=behaviour.pk, candidate_ids=[t.pk for t in tasks.values()]
    )
    # The split is a hash of each task's key; the loop needs one task on each side.
    for fmt, split in (
        (TRAIN, BehaviourTask.Split.TRAIN),
        (HELD_OUT, BehaviourTask.Split.HELD_OUT),
    ):
        behaviour.tasks.filter(candidate=tasks[fmt]).update(split=split)

    # 2. rollouts from the replay agent through `harbor run`, both tasks, both cuts.
    for cut in CUTS:
        done = harbor_run(
            dataset,
            AGENT,
            jobs,
            run_id,
            "-m",
            BASE_MODEL,
            "--ak",
            f"script={dataset}",
            "--ak",
            f"cut={cut}",
            job_name=cut,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    fmts = {t.task_name: fmt for fmt, t in tasks.items()}
    trials = {(fmts[t.task_name], t.folder.parent.name): t for t in read_jobs(jobs)}

    # 3. import (and re-grade) the train task's trials.
    imported = [_import(trials[(TRAIN, cut)].folder) for cut in CUTS]

    # 4. evaluate.
    bob, alice, carol = people["bob"], people["alice"], people["carol"]
    run = eval_run_execute(run_id=eval_run_create(user=bob, behaviour_id=behaviour.pk).pk)
    assert run is not None

    # 5. build pairs.
    pairs = pairs_build(user=bob, behaviour_id=behaviour.pk)

    # 6. two people label them: both prefer the whole attempt.
    whole = _rollout(tasks[TRAIN].pk, "whole")
    for labeller in (alice, bob):
        for pair in pairs:
            shown = reads.sides(pair, labeller)
            choice = "A" if shown.left == whole.pk else "B"
            labels.pair_label_submit(user=labeller, pair_id=pair.pk, choice=choice, left=shown.left)

    # 7. a DPO export whose chosen sides follow the labels.
    export = training_export_create(
        user=bob, behaviour_id=behaviour.pk, kind="dpo", out_dir=dataset.parent / "dpo"
    )
    export = training_export_execute(export_id=export.pk)
    assert export is not None

    # 8. a plan on it.
    plan = training_plan_create(
        user=bob,
        export_id=export.pk,
        method="dpo",
        base_model=BASE_MODEL,
        gpu_hours=1,
        money=10,
    )

    # 9. the gate: the adapter registered, run on the held-out task (its whole attempt the
    # adapter's, served with its digest; the cut one the base model's), imported, gated.
    digest = hashlib.sha256(WEIGHTS).hexdigest()
    adapter, _ = adapter_register(
        user=bob,
        behaviour=behaviour.slug,
        name=f"{behaviour.slug}-lora",
        version="1.0",
        eval_suite=f"{behaviour.slug}-held-out",
        base_model=BASE_MODEL,
        training_plan=f"plan-{plan.pk}",
        dataset_sha256=export.sha256,
        artifact_uri=f"s3://adapters/{behaviour.slug}-lora/1.0",
        artifact_sha256=digest,
        rank=16,
    )
    _served_by(trials[(HELD_OUT, "whole")].folder, digest)
    held_imported = [_import(trials[(HELD_OUT, cut)].folder) for cut in CUTS]
    proposal = deploy.deployment_propose(
        user=bob,
        adapter_id=adapter.pk,
        percentages={behaviour.slug: 1000},
        min_rollouts=1,
        min_pass_rate=Decimal("0.5"),
        tolerance=Decimal("0"),
    )
    report = gate_report(adapter, proposal.thresholds())

    # 10. approval by a second person.
    deploy.deployment_approve(user=carol, deployment_id=proposal.pk)
    proposal.refresh_from_db()
    approval = DeploymentApproval.objects.get(deployment=proposal)

    return {
        "import": imported + held_imported,
        "rollouts": {
            (fmt, cut): _plain(_rollout(t.pk, cut)) for fmt, t in tasks.items() for cut in CUTS
        },
        "eval": {"status": run.status, "summary": run.summary},
        "pairs": [
            {
                "basis": p.basis,
                "preferred": Path(p.preferred.trial_dir).parent.name if p.preferred else None,
                "sides": sorted(Path(r.trial_dir).parent.name for r in (p.rollout_a, p.rollout_b)),
            }
            for p in pairs
        ],
        "whole": whole.pk,
        "export": {
            "status": export.status,
            "refusal": export.refusal or export.error,
            "rows": export.rows,
            "labels": (export.manifest or {}).get("labels"),
            "preferences": ((export.manifest or {}).get("provenance") or {}).get("preferences"),
        },
        "plan": {"export": plan.export_id, "held_out": plan.held_out_task_ids},
        "gate": {
            "passed": report.verdict.passed,
            "failures": report.verdict.failures(),
            "adapter": report.rows[0].row.adapter.rollouts if report.rows else 0,
            "base": report.rows[0].row.base.rollouts if report.rows else 0,
            "unattributed": report.unattributed,
        },
        "approval": {
            "state": proposal.state,
            "approver": approval.approver.username,
            "proposer": proposal.proposed_by.username,
            "gate_passed": approval.gate["passed"],
        },
    }


def _rollout(candidate_id: int, cut: str) -> Rollout:
    for r in Rollout.objects.select_related("trajectory").filter(candidate_id=candidate_id):
        if Path(r.trial_dir).parent.name == cut:
            return r
    raise AssertionError(f"no {cut} rollout of candidate {candidate_id}")


def _plain(rollout: Rollout) -> dict[str, Any]:
    trajectory = rollout.trajectory
    steps = list(trajectory.steps.order_by("index")) if trajectory else []
    return {
        "id": rollout.pk,
        "agent": rollout.agent,
        "model": rollout.model,
        "served_sha256": rollout.served_sha256,
        "reward": rollout.reward,
        "harbor_reward": rollout.harbor_reward,
        "grade": rollout.grade,
        "detail": rollout.grade_detail,
        "trajectory": trajectory.pk if trajectory else None,
        "session_id": trajectory.session_id if trajectory else None,
        "trial": rollout.trial_name,
        "calls": [c["function_name"] for s in steps for c in s.tool_calls],
    }


def test_the_whole_session_replayed_scores_1_and_the_cut_before_its_fix_0(replayed):
    for imported in replayed["import"]:
        assert (imported["imported"], imported["graded"], imported["skipped"]) == (1, 1, [])
    for fmt in (TRAIN, HELD_OUT):
        whole, cut = replayed["rollouts"][(fmt, "whole")], replayed["rollouts"][(fmt, "before_fix")]
        assert whole["grade"] == cut["grade"] == "graded", (whole["detail"], cut["detail"])
        assert (whole["reward"], whole["harbor_reward"]) == (1.0, 1.0)
        assert (cut["reward"], cut["harbor_reward"]) == (0.0, 0.0)
        assert whole["agent"] == cut["agent"] == "traj2env-replay"


def test_each_rollout_links_a_trajectory_of_its_own_trial(replayed):
    whole, cut = (replayed["rollouts"][(TRAIN, c)] for c in CUTS)
    assert whole["trajectory"] and cut["trajectory"] and whole["trajectory"] != cut["trajectory"]
    for rollout in (whole, cut):
        assert rollout["session_id"] == f"{rollout['trial']}__agent"
    # The recorded check, the fix, the check again; and the check alone before the fix.
    assert whole["calls"] == ["Bash", "Write", "Bash"]
    assert cut["calls"] == ["Bash"]


def test_a_preference_pair_is_built_from_the_two_replays(replayed):
    (pair,) = replayed["pairs"]
    assert pair["sides"] == ["before_fix", "whole"]
    assert (pair["basis"], pair["preferred"]) == ("outcome", "whole")


def test_the_loop_runs_end_to_end_from_generated_tasks_to_an_approved_deployment(replayed):
    # 4. evaluated; 6-7. the DPO export's one pair follows its two labels.
    assert replayed["eval"]["status"] == "done", replayed["eval"]
    export = replayed["export"]
    assert export["status"] == TrainingExport.Status.DONE, export["refusal"]
    assert export["rows"] == 1
    (pair,) = export["labels"]["pairs"]
    assert pair["chosen"] == str(replayed["whole"]) and pair["labels"] == 2
    assert export["preferences"] == {"from_rewards": False, "pairs": {"labels": 1}}
    # 8. the plan names its export and the held-out task.
    assert replayed["plan"]["held_out"] == ["traj2env/pi-repair"]
    # 9. the adapter's side is the rollout served with its digest; the base model's the other.
    held = replayed["rollouts"][(HELD_OUT, "whole")]
    assert held["served_sha256"] == hashlib.sha256(WEIGHTS).hexdigest()
    assert replayed["rollouts"][(HELD_OUT, "before_fix")]["served_sha256"] == ""
    gate = replayed["gate"]
    assert gate["passed"], gate["failures"]
    assert (gate["adapter"], gate["base"], gate["unattributed"]) == (1, 1, 0)
    # 10. approved by a second person.
    approval = replayed["approval"]
    assert approval["state"] == Deployment.State.APPROVED and approval["gate_passed"]
    assert approval["approver"] == "carol" != approval["proposer"] == "bob"


def test_the_replays_leave_no_container(replayed):
    assert replayed["left_behind"] == []
