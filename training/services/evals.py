"""Eval runs: a behaviour version scored over the graded rollouts of its tasks, with progress.

The harness (``training.core.harness``) scores each rollout from its stored facts and verified
reward; results are rows; the summary groups them per agent / model / adapter / prompt version
and split (``training.core.stats``). A run is a job: created queued, claimed by one worker.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from groundwork.access.errors import Invalid, NotFound, require
from groundwork.core.failures import said
from groundwork.jobs.heartbeat import Heartbeat
from groundwork.services.audit import audit_event_record
from training.core.facts import TrajectoryFacts
from training.core.harness import evaluate
from training.core.spec import BehaviourSpec, load_spec
from training.core.stats import ScoredRollout, Split, aggregate
from trajectories.core import limits
from trajectories.core.memory import collector_paused
from trajectories.store import DbBlobs

from ..models import Behaviour, BehaviourTask, BehaviourVersion, EvalResult, EvalRun, Rollout
from ..roles import RUN_EVAL

CHUNK = 500
GROUPS = ("agent", "model", "adapter", "prompt_version", "split")


def eval_run_create(
    *,
    user: AbstractBaseUser | None,
    behaviour_id: int,
    version_number: int | None = None,
    agent: str = "",
    k: int = 1,
) -> EvalRun:
    """A queued eval run of the behaviour's latest version (or the one named)."""
    if user is not None:
        require(user, RUN_EVAL, "start eval runs")
    if k < 1:
        raise Invalid(f"k must be at least 1, not {k}")
    problem = limits.refusal("the agent", agent, EvalRun._meta.get_field("agent").max_length or 0)
    if problem:
        raise Invalid(problem)
    behaviour = Behaviour.objects.filter(pk=behaviour_id).first()
    if behaviour is None:
        raise NotFound(f"behaviour {behaviour_id} does not exist")
    versions = behaviour.versions.order_by("-number")
    version = versions.filter(number=version_number).first() if version_number else versions.first()
    if version is None:
        raise NotFound(f"behaviour {behaviour.slug} has no version {version_number}")
    with transaction.atomic():
        run = EvalRun.objects.create(
            version=version, agent=agent, k=k, created_by=user if _known(user) else None
        )
        audit_event_record(
            actor=user,
            verb="eval.create",
            target=run,
            before=None,
            after={"behaviour": behaviour.slug, "version": version.number, "agent": agent, "k": k},
        )
    return run


def eval_run_execute(*, run_id: int) -> EvalRun | None:
    """Score every graded rollout of the behaviour's tasks; None when the run was not claimable."""
    if not EvalRun.claim(run_id, status=EvalRun.Status.RUNNING, done=0, total=0, error=""):
        return None
    run = EvalRun.objects.select_related("version__behaviour").get(pk=run_id)
    try:
        with Heartbeat(EvalRun.objects.filter(pk=run_id)):
            summary = _score(run)
    except Exception as error:
        EvalRun.objects.filter(pk=run.pk).update(
            status=EvalRun.Status.FAILED,
            error=said(error),
            finished_at=timezone.now(),
        )
        raise
    EvalRun.objects.filter(pk=run.pk).update(
        status=EvalRun.Status.DONE, summary=summary, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


_FIELDS = ("id", "candidate_id", "facts", "reward", "agent", "model", "adapter", "prompt_version")


def _score(run: EvalRun) -> dict[str, Any]:
    version: BehaviourVersion = run.version
    spec = load_spec({**version.spec, "version": version.number})
    tasks = {t.candidate_id: t for t in version.behaviour.tasks.all()}
    # A re-run after a dead worker starts over: results are per run, so clear the partial ones.
    EvalResult.objects.filter(run=run).delete()
    rollouts = Rollout.objects.filter(candidate_id__in=tasks, facts__isnull=False)
    if run.agent:
        rollouts = rollouts.filter(agent=run.agent)
    graded = rollouts.filter(grade=Rollout.Grade.GRADED)
    skipped = rollouts.count() - graded.count()
    EvalRun.objects.filter(pk=run.pk).update(total=graded.count())
    # Facts and results are trees without cycles: collections over the growing heap are waste.
    with collector_paused():
        outcomes = _score_rows(run, spec, tasks, graded.order_by("id"))
    return _summary(run, outcomes, skipped=skipped)


def _score_rows(
    run: EvalRun,
    spec: BehaviourSpec,
    tasks: dict[int, BehaviourTask],
    rollouts: QuerySet[Rollout],
) -> list[ScoredRollout]:
    blobs = DbBlobs()
    outcomes: list[ScoredRollout] = []
    done = 0
    batch: list[tuple[Any, ...]] = []
    for row in rollouts.values(*_FIELDS).iterator(chunk_size=CHUNK):
        task = tasks[row["candidate_id"]]
        # The verified reward is the row's (re-graded), never what the facts were built with.
        facts = TrajectoryFacts.from_dict({**row["facts"], "reward": row["reward"]})
        result = evaluate(spec, facts, blobs=blobs)
        batch.append(
            (
                run.pk,
                row["id"],
                task.pk,
                task.split,
                result.reward,
                result.passed,
                result.self_report_only,
                len(result.forbidden_hits),
                # The verified reward it was computed on: a later re-grade makes it stale.
                {**result.to_dict(), "verified_reward": row["reward"]},
            )
        )
        outcomes.append(
            ScoredRollout(
                task=str(task.candidate_id),
                reward=result.reward,
                passed=result.passed,
                agent=row["agent"],
                model=row["model"],
                adapter=row["adapter"],
                prompt_version=row["prompt_version"],
                split=Split(task.split),
                forbidden_hits=int(bool(result.forbidden_hits)),
                self_report_only=result.self_report_only,
            )
        )
        if len(batch) >= CHUNK:
            done = _flush(run, batch, done)
    _flush(run, batch, done)
    return outcomes


_RESULT_COLUMNS = (
    "run",
    "rollout",
    "task",
    "split",
    "reward",
    "passed",
    "self_report_only",
    "forbidden_hits",
    "detail",
)


def _flush(run: EvalRun, batch: list[tuple[Any, ...]], done: int) -> int:
    """Write a chunk of results with one executemany, and the progress the run's page shows.

    bulk_create builds SQL per row and field, which cost as much as scoring the rollouts
    (measured in benchmarks/bench_eval.py); only the JSON column needs its field's preparation.
    """
    if not batch:
        return done
    fields = [EvalResult._meta.get_field(name) for name in _RESULT_COLUMNS]
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(EvalResult._meta.db_table)} "
        f"({', '.join(quote(f.column) for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))})"
    )
    prep = EvalResult._meta.get_field("detail").get_db_prep_save
    # One transaction a chunk: in autocommit SQLite would commit every row of the executemany.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(sql, [(*row[:-1], prep(row[-1], connection)) for row in batch])
    done += len(batch)
    EvalRun.objects.filter(pk=run.pk).update(done=done)
    batch.clear()
    return done


def _summary(run: EvalRun, outcomes: list[ScoredRollout], *, skipped: int) -> dict[str, Any]:
    groups = [g.to_dict(GROUPS) for g in aggregate(outcomes, k=run.k, by=GROUPS)]
    failed = sum(1 for o in outcomes if not o.passed)
    warnings = []
    if skipped:
        warnings.append(
            f"{skipped} rollout(s) not graded yet (or ungraded): their verified reward is "
            "unknown, so they were not scored"
        )
    if not outcomes:
        warnings.append("no graded rollout of this behaviour's tasks: nothing to score")
    return {
        "behaviour": run.version.behaviour.slug,
        "version": run.version.number,
        "agent": run.agent or None,
        "k": run.k,
        "rollouts": len(outcomes),
        "passed": len(outcomes) - failed,
        "failed": failed,
        "average_reward": round(sum(o.reward for o in outcomes) / len(outcomes), 3)
        if outcomes
        else None,
        # Like the seed's evalGatePassed (no task failed), and never vacuous: nothing scored fails.
        "gate_passed": bool(outcomes) and failed == 0,
        "skipped_ungraded": skipped,
        "groups": groups,
        "warnings": warnings,
    }


def _known(user: AbstractBaseUser | None) -> bool:
    return user is not None and user.is_authenticated
