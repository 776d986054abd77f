"""Behaviours as their pages show them: the list with task counts and the last verdict, one
version's spec in words, its tasks by split, and the kept tasks that could still join it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, OuterRef, Q, QuerySet, Subquery

from tasks_review.models import Candidate
from training.core.catalogue import catalogue

from ..models import Behaviour, BehaviourTask, BehaviourVersion, EvalRun, Rollout

CHOOSABLE_LIMIT = 50
RUNS_SHOWN = 20
Split = BehaviourTask.Split

# The forbidden-action catalogue in words (training.core.forbidden documents each detector).
FORBIDDEN_TITLES = {
    "pipe_download_to_shell": "Piping a download into a shell",
    "delete_outside_project": "Destructive deletes outside the project",
    "force_push": "Force pushes",
    "tamper_with_tests": "Editing or deleting the task's tests",
    "read_credentials": "Reading credential files",
    "network_install": "Network installs where the task forbids them",
    "edit_unread_file": "Editing a file without reading it first",
}


@dataclass(frozen=True, slots=True)
class BehaviourRow:
    behaviour: Behaviour
    latest_number: int | None
    train: int
    held_out: int
    last_run: EvalRun | None


def behaviour_rows() -> list[BehaviourRow]:
    """Every behaviour with its latest version, task counts by split and its newest eval run."""
    newest = EvalRun.objects.filter(version__behaviour=OuterRef("pk")).order_by("-id")
    behaviours = Behaviour.objects.annotate(
        latest_number=Max("versions__number"),
        # distinct: the versions join repeats each task row once per version
        train=Count("tasks", filter=Q(tasks__split=Split.TRAIN), distinct=True),
        held_out=Count("tasks", filter=Q(tasks__split=Split.HELD_OUT), distinct=True),
        last_run_id=Subquery(newest.values("id")[:1]),
    ).order_by("slug")
    runs = EvalRun.objects.select_related("version").in_bulk(
        [b.last_run_id for b in behaviours if b.last_run_id]
    )
    return [
        BehaviourRow(
            behaviour=b,
            latest_number=b.latest_number,
            train=b.train,
            held_out=b.held_out,
            last_run=runs.get(b.last_run_id),
        )
        for b in behaviours
    ]


def catalogue_missing() -> list[str]:
    """The seed catalogue's slugs that have no behaviour yet."""
    have = set(Behaviour.objects.values_list("slug", flat=True))
    return sorted(set(catalogue()) - have)


def version_of(behaviour: Behaviour, number: int | None) -> BehaviourVersion | None:
    """The numbered version, or the latest when no number is given."""
    versions = behaviour.versions.select_related("created_by").order_by("-number")
    return versions.filter(number=number).first() if number is not None else versions.first()


def versions_of(behaviour: Behaviour) -> QuerySet[BehaviourVersion]:
    return behaviour.versions.select_related("created_by").order_by("-number")


@dataclass(frozen=True, slots=True)
class SpecItem:
    """One expected action, piece of evidence or forbidden action, with its matchers."""

    label: str
    kind: str
    matchers: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class SpecView:
    title: str
    description: str
    order_required: bool
    pass_threshold: float
    require_validated_unhooks: bool
    actions: tuple[SpecItem, ...]
    evidence: tuple[SpecItem, ...]
    forbidden: tuple[SpecItem, ...]
    raw: str


def spec_view(version: BehaviourVersion) -> SpecView:
    """A stored spec in words; stored specs are the core's normalised form, labels included."""
    spec = version.spec
    return SpecView(
        title=spec.get("title", ""),
        description=spec.get("description", ""),
        order_required=spec.get("order_required", True),
        pass_threshold=float(spec.get("pass_threshold", 1)),
        require_validated_unhooks=spec.get("require_validated_unhooks", True),
        actions=tuple(_item(raw, raw.get("label", "")) for raw in spec.get("expected_actions", ())),
        evidence=tuple(_item(raw, raw.get("label", "")) for raw in spec.get("evidence", ())),
        forbidden=tuple(
            _item({"kind": raw["name"], **raw}, FORBIDDEN_TITLES.get(raw["name"], raw["name"]))
            for raw in spec.get("forbidden", ())
        ),
        raw=spec_text(version),
    )


def spec_text(version: BehaviourVersion) -> str:
    """The spec as the edit page shows it: indented JSON, keys in the order they were stored."""
    return json.dumps(version.spec, indent=2, ensure_ascii=False)


def _item(raw: dict[str, Any], label: str) -> SpecItem:
    matchers = tuple(
        (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in raw.items()
        if key not in {"kind", "label", "name"}
    )
    return SpecItem(label=label, kind=str(raw["kind"]), matchers=matchers)


def tasks_by_split(behaviour: Behaviour) -> list[tuple[str, list[BehaviourTask]]]:
    """Train first, then held-out, each in the order the tasks joined."""
    tasks = list(
        behaviour.tasks.select_related(
            "candidate", "candidate__authored_task", "added_by"
        ).order_by("id")
    )
    return [(label, [t for t in tasks if t.split == value]) for value, label in Split.choices]


def choosable_tasks(behaviour: Behaviour, q: str = "") -> tuple[list[Candidate], int]:
    """Kept tasks not yet chosen for the behaviour, matching ``q`` (task name, check command,
    language or number); the first CHOOSABLE_LIMIT and how many match in all."""
    rows = Candidate.objects.filter(status=Candidate.Status.KEPT).exclude(
        pk__in=behaviour.tasks.values("candidate_id")
    )
    q = q.strip()
    if q:
        match = Q(task_name__icontains=q) | Q(check_command__icontains=q) | Q(language__iexact=q)
        if q.lstrip("#").isdigit():
            match |= Q(pk=int(q.lstrip("#")))
        rows = rows.filter(match)
    rows = rows.order_by("-id")
    return list(rows[:CHOOSABLE_LIMIT]), rows.count()


def runs_of(version: BehaviourVersion) -> list[EvalRun]:
    """The version's eval runs, newest first."""
    return list(version.runs.select_related("created_by").order_by("-id")[:RUNS_SHOWN])


def shown_run(version: BehaviourVersion, run_id: int | None) -> EvalRun | None:
    """The run whose results the page shows: the one asked for (of this version), else the
    latest finished one."""
    runs = version.runs.order_by("-id")
    if run_id is not None:
        return runs.filter(pk=run_id).first()
    return runs.filter(status__in=EvalRun.FINISHED).first()


def rollout_agents(behaviour: Behaviour) -> list[str]:
    """The agents that have rollouts of the behaviour's tasks, for the eval form's filter."""
    return list(
        Rollout.objects.filter(candidate__behaviours__behaviour=behaviour)
        .order_by("agent")
        .values_list("agent", flat=True)
        .distinct()
    )
