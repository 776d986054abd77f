"""Eval runs as their pages show them: the verdict in words, the groups table (agents x splits),
the results list with its filters, and one result's expectations with the step of each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import QuerySet
from django.utils.http import urlencode

from ..models import BehaviourTask, EvalResult, EvalRun
from .behaviours import FORBIDDEN_TITLES

SPLIT_ORDER = {value: n for n, (value, _) in enumerate(BehaviourTask.Split.choices)}
SPLIT_LABELS = dict(BehaviourTask.Split.choices)
WORLD_EVIDENCE = frozenset({"file_state", "verified_reward"})


@dataclass(frozen=True, slots=True)
class EvalVerdict:
    passed: bool | None  # None while the run has no answer yet
    why: str


def verdict(run: EvalRun) -> EvalVerdict:
    """Whether the run's gate passed, and why, in a sentence."""
    if run.status == EvalRun.Status.FAILED:
        return EvalVerdict(False, f"the run itself failed: {run.error or 'no reason recorded'}")
    if run.status != EvalRun.Status.DONE:
        return EvalVerdict(None, f"{run.get_status_display().lower()}: no verdict yet")
    summary = run.summary
    scored = summary.get("rollouts") or 0
    if not scored:
        return EvalVerdict(False, "nothing was scored: no graded rollout of this behaviour's tasks")
    if summary.get("gate_passed"):
        return EvalVerdict(True, f"all {scored} scored rollouts passed")
    return EvalVerdict(False, f"{summary.get('failed', 0)} of {scored} scored rollouts failed")


@dataclass(frozen=True, slots=True)
class GroupTable:
    rows: tuple[dict[str, Any], ...]
    k: int
    show_model: bool  # only when some group names a model (or an adapter, a prompt version)
    show_adapter: bool
    show_prompt: bool


def group_table(run: EvalRun) -> GroupTable:
    """One row per agent (model, adapter, prompt version when they differ) x split, with the
    query that lists its results on the run's page."""
    groups = list(run.summary.get("groups") or ())
    groups.sort(
        key=lambda g: (
            g.get("agent") or "",
            g.get("model") or "",
            g.get("adapter") or "",
            g.get("prompt_version") or "",
            SPLIT_ORDER.get(g.get("split") or "", 99),
        )
    )
    rows = tuple(
        {
            **g,
            "split_label": SPLIT_LABELS.get(g.get("split") or "", g.get("split") or "—"),
            "query": urlencode(
                {key: g[key] for key in ("agent", "split") if g.get(key)}, doseq=False
            ),
        }
        for g in groups
    )
    return GroupTable(
        rows=rows,
        k=run.k,
        show_model=any(g.get("model") for g in groups),
        show_adapter=any(g.get("adapter") for g in groups),
        show_prompt=any(g.get("prompt_version") for g in groups),
    )


@dataclass(frozen=True, slots=True)
class ResultFilters:
    agent: str = ""
    split: str = ""
    outcome: str = ""  # "passed" | "failed" | ""

    OUTCOMES = ("passed", "failed")

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> ResultFilters:
        split = query.get("split", "")
        outcome = query.get("outcome", "")
        return cls(
            agent=query.get("agent", "").strip(),
            split=split if split in SPLIT_LABELS else "",
            outcome=outcome if outcome in cls.OUTCOMES else "",
        )

    @property
    def active(self) -> bool:
        return bool(self.agent or self.split or self.outcome)

    def query(self) -> str:
        return urlencode({k: v for k, v in asdict(self).items() if v})


def result_search(run: EvalRun, filters: ResultFilters) -> QuerySet[EvalResult]:
    rows = run.results.select_related("rollout", "task__candidate").order_by("id")
    if filters.agent:
        rows = rows.filter(rollout__agent=filters.agent)
    if filters.split:
        rows = rows.filter(split=filters.split)
    if filters.outcome:
        rows = rows.filter(passed=filters.outcome == "passed")
    return rows


def result_neighbours(result: EvalResult, filters: ResultFilters) -> tuple[int | None, int | None]:
    """The results before and after this one in the run's list under the same filters."""
    rows = result_search(result.run, filters).values_list("id", flat=True)
    before = rows.filter(id__lt=result.pk).order_by("-id").first()
    after = rows.filter(id__gt=result.pk).order_by("id").first()
    return before, after


def result_agents(run: EvalRun) -> list[str]:
    return list(
        run.results.order_by("rollout__agent").values_list("rollout__agent", flat=True).distinct()
    )


@dataclass(frozen=True, slots=True)
class Item:
    """One line of a result: an expected action, a piece of evidence or a forbidden hit."""

    section: str  # "action", "evidence" or "forbidden"
    label: str
    ok: bool  # matched (a forbidden hit is never ok)
    step: int | None  # where the stepper opens: the match, else where it came closest
    exact: bool  # the step is where it matched, not only the nearest
    note: str = ""
    # Evidence read from the world the agent left (its files, the verifier), not from a step.
    of_world: bool = False


def result_items(result: EvalResult) -> list[Item]:
    """The harness's result (``training.core.harness.HarnessResult.to_dict``) line by line."""
    detail = result.detail or {}
    items = [
        _expectation(section, raw)
        for section, key in (("action", "actions"), ("evidence", "evidence"))
        for raw in detail.get(key) or ()
    ]
    items += [
        Item(
            section="forbidden",
            label=FORBIDDEN_TITLES.get(hit["name"], hit["name"]),
            ok=False,
            step=hit.get("step"),
            exact=True,
            note=hit.get("detail", ""),
        )
        for hit in detail.get("forbidden_hits") or ()
    ]
    return items


def _expectation(section: str, raw: Mapping[str, Any]) -> Item:
    step, near = raw.get("step"), raw.get("near_step")
    return Item(
        section=section,
        label=raw.get("label", ""),
        ok=bool(raw.get("matched")),
        step=step if step is not None else near,
        exact=step is not None,
        note=raw.get("note", ""),
        of_world=raw.get("kind") in WORLD_EVIDENCE,
    )
