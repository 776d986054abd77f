"""Authored tasks as their pages show them: a behaviour's, each with its matrix in a line, and
one task's trials with their rewards, reasons and logs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from ..models import AuthoredTask, Behaviour

SHOWN = 50


@dataclass(frozen=True, slots=True)
class MatrixLine:
    """What the matrix showed, counted: as expected out of how many, per role."""

    oracle_ok: int = 0
    oracle: int = 0
    noop_ok: bool | None = None  # None: no graded no-op
    controls_ok: int = 0
    controls: int = 0  # applied (graded or ungraded); skipped ones are not counted
    skipped: int = 0
    ungraded: int = 0
    won: tuple[str, ...] = ()  # controls that scored anything but 0

    @property
    def ran(self) -> bool:
        return bool(self.oracle or self.controls or self.noop_ok is not None)


@dataclass(frozen=True, slots=True)
class AuthoredTrialRow:
    name: str
    role: str
    repeat: int
    status: str
    reward: float | None
    expected: float
    as_expected: bool
    why: str  # the reasons, the skip reason or the infrastructure error, in words
    seconds: float
    logs: str
    refused: tuple[str, ...]  # what the submission left behind because it could not cross


def authored_tasks_of(behaviour: Behaviour) -> list[tuple[AuthoredTask, MatrixLine]]:
    rows = _rows().filter(behaviour=behaviour)[:SHOWN]
    return [(row, matrix_line(row)) for row in rows]


def authored_task(pk: int) -> AuthoredTask | None:
    return _rows().filter(pk=pk).first()


def _rows() -> QuerySet[AuthoredTask]:
    return AuthoredTask.objects.select_related("behaviour", "candidate", "created_by").order_by(
        "-id"
    )


def matrix_line(row: AuthoredTask) -> MatrixLine:
    trials = (row.evidence or {}).get("trials") or []
    oracle = [t for t in trials if t["role"] == "oracle"]
    noop = [t for t in trials if t["role"] == "noop" and t["status"] == "graded"]
    controls = [t for t in trials if t["role"] == "control" and t["status"] != "skipped"]
    return MatrixLine(
        oracle_ok=sum(1 for t in oracle if _as_expected(t)),
        oracle=len(oracle),
        noop_ok=_as_expected(noop[0]) if noop else None,
        controls_ok=sum(1 for t in controls if _as_expected(t)),
        controls=len(controls),
        skipped=sum(1 for t in trials if t["status"] == "skipped"),
        ungraded=sum(1 for t in trials if t["status"] == "ungraded"),
        won=tuple((row.evidence or {}).get("won") or ()),
    )


def trial_rows(row: AuthoredTask) -> list[AuthoredTrialRow]:
    return [_trial(t) for t in (row.evidence or {}).get("trials") or []]


def _trial(t: dict[str, Any]) -> AuthoredTrialRow:
    detail = t.get("detail") or {}
    why = "; ".join(detail.get("reasons") or [])
    why = why or detail.get("skip_reason") or detail.get("infra_error") or ""
    return AuthoredTrialRow(
        name=t["name"],
        role=t["role"],
        repeat=t["repeat"],
        status=t["status"],
        reward=t["reward"],
        expected=t["expected"],
        as_expected=_as_expected(t),
        why=why,
        seconds=float(t.get("seconds") or 0.0),
        logs=t.get("logs") or "",
        refused=tuple((detail.get("submission") or {}).get("refused") or ()),
    )


def _as_expected(t: dict[str, Any]) -> bool:
    return t["status"] == "graded" and t["reward"] == t["expected"]
