"""What a training export is made of, read from the database into the core's frozen request.

The provenance rule (``selectors.provenance``) decides which of the chosen tasks (by default the
train split) and which of their rollouts may enter: kept by the current verifier, accepted on the
desk, held out nowhere, graded, with each rollout's latest eval result of the exported version
computed on its current reward. What it leaves out is counted in the manifest by reason. DPO
takes the behaviour's preference pairs with what their labels prefer; RFT takes the tasks
themselves. The core decides what is refused and why; nothing here filters a refusal away.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from tasks_review.models import Candidate
from training.core.exports import (
    EvalResult,
    ExportItem,
    ExportKind,
    ExportRequest,
    PreferencePair,
    Split,
    TaskRef,
)
from training.core.provenance import Reason

from ..models import BehaviourTask, EvalRun, Rollout, TrainingExport
from ..models import EvalResult as EvalResultRow
from ..models import PreferencePair as PairRow
from .grading import grading_summary, usable_tasks
from .labels import BOTH_BAD, label_agreement, preference
from .provenance import Admission, RolloutState, Use

# What people may say of a pair that prefers neither side: both exports leave its rollouts' pair
# out and count it.
NO_PREFERENCE = ("tie", BOTH_BAD)


def task_id_of(candidate: Candidate) -> str:
    """A kept task's id in exports, manifests and plans: its Harbor name, else its key."""
    return candidate.task_name or candidate.key


def chosen_tasks(export: TrainingExport) -> QuerySet[BehaviourTask]:
    """The tasks the export was asked for: those named, else the train split."""
    tasks = export.behaviour.tasks.select_related("candidate").order_by("id")
    if export.task_ids:
        return tasks.filter(pk__in=export.task_ids)
    return tasks.filter(split=BehaviourTask.Split.TRAIN)


def export_tasks(export: TrainingExport) -> list[BehaviourTask]:
    """The chosen tasks the behaviour may train on (check-only ones only when it opted in)."""
    return list(usable_tasks(export.behaviour, chosen_tasks(export)))


def _item(
    rollout: Rollout,
    task: BehaviourTask,
    export: TrainingExport,
    result: EvalResult | None,
    content: bool = True,
) -> ExportItem:
    trajectory = rollout.trajectory
    assert trajectory is not None  # the query asks for one
    return ExportItem(
        trajectory_id=str(rollout.pk),
        # Without content (a staleness check): the hash of the inputs names the source's sha256,
        # never the ATIF itself, so reading every trajectory would be wasted.
        atif=json.loads(trajectory.atif.content()) if content else {},
        source_sha256=trajectory.source.sha256,
        task_id=task_id_of(task.candidate),
        split=Split(task.split),
        behaviour=export.behaviour.slug,
        spec_version=export.version.number,
        eval=result,
    )


def _counted(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _absent(export: TrainingExport, candidate_ids: list[int]) -> tuple[str, ...]:
    """Why the export's tasks give fewer rollouts than they have, in words, for a refusal when
    none is left (the core says "no sft rows for …: <these>")."""
    split = "chosen" if export.task_ids else "train"
    if not candidate_ids:
        return (f"it has no {split} tasks",)
    rollouts = Rollout.objects.filter(candidate_id__in=candidate_ids)
    graded = rollouts.filter(grade=Rollout.Grade.GRADED)
    said = []
    if not graded.exists():
        tasks = _counted(len(candidate_ids), f"{split} task has", f"{split} tasks have")
        said.append(f"its {tasks} no graded rollouts (import and grade them on the rollouts page)")
    without = graded.filter(trajectory__isnull=True).count()
    if without:
        rollouts_have = _counted(without, "graded rollout has", "graded rollouts have")
        said.append(f"{rollouts_have} no agent trajectory (nop, or an authored task's solve.sh)")
    waiting = rollouts.filter(grade__in=(Rollout.Grade.PENDING, Rollout.Grade.GRADING)).count()
    if waiting:
        said.append(f"{_counted(waiting, 'rollout is', 'rollouts are')} not graded yet")
    ungraded = rollouts.filter(grade=Rollout.Grade.UNGRADED).count()
    if ungraded:
        said.append(f"{_counted(ungraded, 'rollout', 'rollouts')} could not be graded")
    return tuple(said)


def latest_results(version_id: int) -> dict[int, tuple[EvalResult, float | None]]:
    """Each rollout's latest result among the version's finished eval runs, with the verified
    reward it was computed on (None for a result from before that was recorded)."""
    results: dict[int, tuple[EvalResult, float | None]] = {}
    rows = EvalResultRow.objects.filter(
        run__version_id=version_id, run__status=EvalRun.Status.DONE
    ).order_by("run_id", "id")
    for rollout_id, run_id, passed, reward, detail in rows.values_list(
        "rollout_id", "run_id", "passed", "reward", "detail"
    ):
        verified = (detail or {}).get("verified_reward")
        results[rollout_id] = (EvalResult(passed, reward, str(run_id)), verified)
    return results


def _explicit_held_out(export: TrainingExport, task: BehaviourTask, why: tuple) -> bool:
    """A held-out task of this behaviour named for the export goes to the core, which refuses
    the whole export for it: naming one is a mistake to say, not to drop quietly."""
    return (
        bool(export.task_ids)
        and task.split == BehaviourTask.Split.HELD_OUT
        and why == (Reason.HELD_OUT,)
    )


def _export_request(export: TrainingExport, content: bool = True) -> ExportRequest:
    usable = {t.candidate_id: t for t in export_tasks(export)}
    admission = Admission(export.behaviour, Use.TRAIN, (t.candidate for t in usable.values()))
    tasks = {
        cid: t
        for cid, t in usable.items()
        if admission.task_ok(cid)
        or _explicit_held_out(export, t, admission.tasks_left_out.get(cid, ()))
    }
    grading = grading_summary(export.behaviour, list(chosen_tasks(export)))
    results = latest_results(export.version_id)
    request: dict[str, Any] = {
        "kind": ExportKind(export.kind),
        "behaviour": export.behaviour.slug,
        "spec_version": export.version.number,
        "export_id": str(export.pk),
        "created_at": export.created_at.isoformat(),
        "grading": grading,
    }
    if export.kind == TrainingExport.Kind.RFT:
        evaluated: dict[int, set[str]] = {}
        for rollout_id, cid in Rollout.objects.filter(
            pk__in=results, candidate_id__in=tasks
        ).values_list("pk", "candidate_id"):
            evaluated.setdefault(cid, set()).add(results[rollout_id][0].eval_run_id)
        request["tasks"] = tuple(
            TaskRef(
                task_id=task_id_of(task.candidate),
                path=Path(task.candidate.task_dir),
                split=Split(task.split),
                behaviour=export.behaviour.slug,
                spec_version=export.version.number,
                eval_run_ids=tuple(sorted(evaluated.get(cid, ()), key=int)),
            )
            for cid, task in tasks.items()
        )
        request["provenance"] = admission.manifest()
        request["absent"] = admission.words()
        return ExportRequest(**request)

    rollouts = Rollout.objects.filter(
        candidate_id__in=usable, trajectory__isnull=False
    ).select_related("trajectory__source", "trajectory__atif")
    items = {}
    for r in rollouts.order_by("id"):
        result, verified = results.get(r.pk, (None, None))
        if r.candidate_id in admission.tasks_left_out:
            if r.candidate_id in tasks and r.grade == Rollout.Grade.GRADED:  # named, held out
                items[r.pk] = _item(r, tasks[r.candidate_id], export, result, content)
                continue
        state = RolloutState(
            graded=r.grade == Rollout.Grade.GRADED,
            reward=r.reward,
            evaluated=result is not None,
            eval_reward=verified,
        )
        if admission.rollout_ok(r.candidate_id, state):  # a refused one is counted, with why
            items[r.pk] = _item(r, tasks[r.candidate_id], export, result, content)
    request["absent"] = admission.words() + (_absent(export, list(tasks)) if tasks else ())
    request["provenance"] = admission.manifest()
    if export.kind == TrainingExport.Kind.KTO:
        request["items"], request["provenance"] = _people_labelled(export, items, request)
        return ExportRequest(**request)
    if export.kind != TrainingExport.Kind.DPO:
        request["items"] = tuple(items.values())
        return ExportRequest(**request)

    pairs = []
    rows = PairRow.objects.filter(behaviour=export.behaviour, task__in=tasks.values())
    if not rows.exists():
        request["absent"] = (
            "no pairs were built for its tasks (build them on the preference labels page)",
            *request["absent"],
        )
    from_rewards = export.behaviour.reward_preferences
    bases: Counter[str] = Counter()
    for pair in rows.prefetch_related("labels").order_by("id"):
        chosen = preference(pair, list(pair.labels.all()), from_rewards=from_rewards)
        if chosen.chosen is None or chosen.rejected is None:
            bases[chosen.basis] += 1
            continue
        if chosen.chosen not in items or chosen.rejected not in items:
            bases["rollout_left_out"] += 1
            continue
        bases[chosen.basis] += 1
        pairs.append(
            PreferencePair(
                pair_id=str(pair.pk),
                chosen=items[chosen.chosen],
                rejected=items[chosen.rejected],
                labels=chosen.labels,
                agreement=chosen.agreement,
            )
        )
    request["pairs"] = tuple(pairs)
    # Whose word each pair's sides follow, and why the others were left out.
    request["provenance"] = {
        **request["provenance"],
        "preferences": {"from_rewards": from_rewards, "pairs": dict(sorted(bases.items()))},
    }
    request["agreement"] = agreement_summary(export.behaviour_id)
    return ExportRequest(**request)


def _people_labelled(
    export: TrainingExport, items: dict[int, ExportItem], request: dict[str, Any]
) -> tuple[tuple[ExportItem, ...], dict[str, Any]]:
    """KTO's items with people's verdicts where labellers decided a complete pair they were in
    (chosen: desirable, the other side: undesirable). Left out, and counted: a rollout people
    both chose and rejected in different pairs, and one whose complete pairs people called a tie
    or both bad (their word is that neither side is a preference, so the harness's label must
    not stand in for it)."""
    verdicts: dict[int, set[bool]] = {}
    undecided: dict[int, str] = {}
    bases: Counter[str] = Counter()
    pairs = PairRow.objects.filter(behaviour=export.behaviour, rollout_a_id__in=items)
    for pair in pairs.filter(status=PairRow.Status.COMPLETE).prefetch_related("labels"):
        said = preference(pair, list(pair.labels.all()))
        bases[said.basis] += 1
        if said.basis == "labels" and said.chosen is not None and said.rejected is not None:
            verdicts.setdefault(said.chosen, set()).add(True)
            verdicts.setdefault(said.rejected, set()).add(False)
        elif said.basis in NO_PREFERENCE:
            for side in (pair.rollout_a_id, pair.rollout_b_id):
                undecided.setdefault(side, said.basis)
    chosen, disagree = [], 0
    left_out: Counter[str] = Counter()
    for pk, item in items.items():
        seen = verdicts.get(pk, set())
        if len(seen) > 1:
            disagree += 1
            continue
        if not seen and pk in undecided:
            left_out[undecided[pk]] += 1
            continue
        chosen.append(replace(item, label=next(iter(seen))) if seen else item)
    kto = {
        "labels_disagree": disagree,
        "pairs": dict(sorted(bases.items())),
        "no_preference": {basis: left_out[basis] for basis in NO_PREFERENCE},
    }
    return tuple(chosen), {**request["provenance"], "kto": kto}


def export_request(export: TrainingExport) -> ExportRequest:
    """The export's request as the rows are now, its provenance naming a hash of every input
    the rule decided on, so a written export can tell when it has gone stale."""
    request = _export_request(export)
    fingerprint = inputs_sha256(request)
    return replace(request, provenance={**request.provenance, "inputs_sha256": fingerprint})


def _item_inputs(item: ExportItem) -> list[Any]:
    result = item.eval
    verdict = None if result is None else [result.passed, result.reward, result.eval_run_id]
    return [
        item.trajectory_id,
        item.task_id,
        item.split.value,
        item.source_sha256,
        verdict,
        item.label,
    ]


def inputs_sha256(request: ExportRequest) -> str:
    """A hash of what the export is made of and why: its rollouts with their eval verdicts, its
    pairs with whose word they follow, its tasks, and the rule's inputs and left-out counts."""
    document = {
        "spec_version": request.spec_version,
        "items": [_item_inputs(i) for i in request.items],
        "pairs": [
            [p.pair_id, _item_inputs(p.chosen), _item_inputs(p.rejected), p.labels]
            for p in request.pairs
        ],
        "tasks": [[t.task_id, t.split.value, list(t.eval_run_ids)] for t in request.tasks],
        "provenance": {k: v for k, v in request.provenance.items() if k != "inputs_sha256"},
    }
    text = json.dumps(document, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _fingerprint(export: TrainingExport) -> str:
    """The inputs' hash the export would record if it were written now."""
    return inputs_sha256(_export_request(export, content=False))


def exports_staleness(exports: Iterable[TrainingExport]) -> dict[int, str]:
    """``export_staleness`` of each written export that went stale, by id: the list's markers.
    Exports asked for the same tasks of the same version and kind share one fingerprint."""
    known: dict[tuple[Any, ...], str] = {}

    def fingerprint(export: TrainingExport) -> str:
        key = (export.behaviour_id, export.version_id, export.kind, tuple(export.task_ids or ()))
        if key not in known:
            known[key] = _fingerprint(export)
        return known[key]

    stale = {}
    for export in exports:
        why = export_staleness(export, fingerprint=fingerprint)
        if why:
            stale[export.pk] = why
    return stale


def export_staleness(
    export: TrainingExport, *, fingerprint: Callable[[TrainingExport], str] = _fingerprint
) -> str | None:
    """Why a written export no longer says what the rows say (a re-grade, a review verdict, a
    label, a split, an eval run or a new behaviour version since), or None while it still does."""
    if export.status != TrainingExport.Status.DONE:
        return None
    latest = export.behaviour.latest_version()
    if latest is not None and latest.pk != export.version_id:
        was = export.version.number
        return f"{export.behaviour.slug} has version {latest.number} since (it was v{was})"
    stored = ((export.manifest or {}).get("provenance") or {}).get("inputs_sha256")
    if not stored:
        return "it was written before exports recorded their inputs"
    if fingerprint(export) != stored:
        return (
            "its inputs changed since it was written (a re-grade, a review verdict, a label, a "
            "split or an eval run)"
        )
    return None


def agreement_summary(behaviour_id: int) -> dict[str, Any]:
    """The labellers' agreement on the behaviour's pairs, as the manifest records it."""
    agreement = label_agreement(behaviour_id)
    return {
        "krippendorff_alpha": agreement.alpha.value,
        "alpha_undefined": agreement.alpha.reason or None,
        "pairs_with_two_or_more_labels": agreement.units,
        "labels": agreement.reviews,
        "labellers": agreement.reviewers,
        "cohen_kappa": {
            f"{p.a}/{p.b}": {"pairs": p.n, "kappa": p.kappa.value} for p in agreement.pairs
        },
    }
