"""Two rollouts of one task side by side: their steps aligned, and which pairs to label first.

>>> a = [{"source": "user", "message": "Fix add()"},
...      {"source": "agent", "message": "", "tool_calls": [
...          {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "pytest"}}]},
...      {"source": "agent", "message": "Done."}]
>>> b = [a[0], {"source": "agent", "message": "", "tool_calls": [
...          {"tool_call_id": "x9", "function_name": "Bash", "arguments": {"command": "ls"}}]},
...      a[1], a[2]]
>>> al = align(a, b)
>>> (al.prefix, al.divergence)
(1, 1)
>>> [(r.a, r.b, r.same) for r in al.rows]
[(0, 0, True), (None, 1, False), (1, 2, True), (2, 3, True)]
>>> pairs = candidate_pairs([Rollout("7", "task-1", reward=1.0, passed=True),
...                          Rollout("9", "task-1", reward=0.0, passed=False)])
>>> [(p.a.trajectory_id, p.b.trajectory_id, p.basis.value, p.preferred.trajectory_id)
...  for p in pairs]
[('7', '9', 'outcome', '7')]

Steps are ATIF step objects as dicts (``source``, ``message``, ``reasoning_content``,
``tool_calls`` with ``function_name`` and ``arguments``, ``observation``). Two steps are the same
when what the agent (or user) produced is the same after normalising: whitespace collapsed, the
run's own tool-call ids masked (Claude Code conversions write them into the message), arguments
compared as canonical JSON. Observations are left out of the comparison on purpose: they are the
environment's answer to the same action, and timings or temporary paths in them would end a
shared prefix that is really shared. The tails after the divergence are aligned by action with
difflib's SequenceMatcher, so "both then ran pytest" lines up even when the prose around differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from itertools import combinations
from typing import Any

from trajectories.core.replay.results import readable_text

Step = Mapping[str, Any]

_SPACE = re.compile(r"\s+")


def _call_ids(step: Step) -> list[str]:
    ids = [
        str(c.get("tool_call_id")) for c in step.get("tool_calls") or [] if c.get("tool_call_id")
    ]
    for result in (step.get("observation") or {}).get("results") or []:
        if result.get("source_call_id"):
            ids.append(str(result["source_call_id"]))
    return sorted(set(ids), key=len, reverse=True)  # longest first: one id may prefix another


def _normalise(text: str, ids: Sequence[str]) -> str:
    for call_id in ids:
        text = text.replace(call_id, "<call>")
    return _SPACE.sub(" ", text).strip()


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _calls(step: Step) -> tuple[tuple[str, str], ...]:
    return tuple(
        (str(c.get("function_name", "")), canonical_json(c.get("arguments") or {}))
        for c in step.get("tool_calls") or []
    )


def step_key(step: Step) -> tuple[Any, ...]:
    """What two steps must share to count as the same step: who spoke, what they said and
    reasoned, and which tools they called with which arguments."""
    ids = _call_ids(step)
    return (
        step.get("source"),
        _normalise(readable_text(step.get("message")), ids),
        _normalise(readable_text(step.get("reasoning_content")), ids),
        _calls(step),
    )


def action_key(step: Step) -> tuple[Any, ...]:
    """The looser key the tails are aligned on: who acted and the calls made (a step of prose
    alone aligns with another step of prose)."""
    return (step.get("source"), _calls(step))


@dataclass(frozen=True)
class AlignedRow:
    """One line of the side-by-side view: a step index on each side (None where that side has
    no counterpart) and whether the two steps are the same."""

    a: int | None
    b: int | None
    same: bool


@dataclass(frozen=True)
class Alignment:
    prefix: int  # how many leading steps the two share
    divergence: int | None  # index of the first step that differs (on both sides); None if equal
    rows: tuple[AlignedRow, ...]

    @property
    def identical(self) -> bool:
        return self.divergence is None


def align(a: Sequence[Step], b: Sequence[Step]) -> Alignment:
    """Align two trajectories of the same task step by step: the shared prefix, the divergence,
    then both tails matched by action."""
    keys_a = [step_key(s) for s in a]
    keys_b = [step_key(s) for s in b]
    prefix = 0
    while prefix < min(len(a), len(b)) and keys_a[prefix] == keys_b[prefix]:
        prefix += 1
    rows = [AlignedRow(i, i, True) for i in range(prefix)]
    if prefix == len(a) == len(b):
        return Alignment(prefix, None, tuple(rows))

    tail_a = [action_key(s) for s in a[prefix:]]
    tail_b = [action_key(s) for s in b[prefix:]]
    # autojunk would treat frequent keys (every prose step) as noise on long trajectories.
    matcher = SequenceMatcher(None, tail_a, tail_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ia = [prefix + i for i in range(i1, i2)]
        ib = [prefix + j for j in range(j1, j2)]
        if tag == "equal" or tag == "replace":
            for x, y in zip(ia, ib, strict=False):
                rows.append(AlignedRow(x, y, keys_a[x] == keys_b[y]))
            rest_a, rest_b = ia[len(ib) :], ib[len(ia) :]
        else:
            rest_a, rest_b = ia, ib
        rows.extend(AlignedRow(x, None, False) for x in rest_a)
        rows.extend(AlignedRow(None, y, False) for y in rest_b)
    return Alignment(prefix, prefix, tuple(rows))


@dataclass(frozen=True)
class Rollout:
    """One attempt of a kept task, with its verified reward (re-graded from the world state;
    None when not verified) and what produced it."""

    trajectory_id: str
    task_id: str
    reward: float | None
    passed: bool = False
    agent: str = ""
    model: str = ""
    adapter: str = ""
    seed: str = ""
    source_sha256: str = ""  # two rollouts with the same bytes are one trajectory


class PairBasis(StrEnum):
    OUTCOME = "outcome"  # one passed and the other did not
    REWARD = "reward"  # the same outcome, different rewards
    PATH_QUALITY = "path_quality"  # both passed with equal rewards: people judge the path


_BASIS_RANK = {PairBasis.OUTCOME: 0, PairBasis.REWARD: 1, PairBasis.PATH_QUALITY: 2}


@dataclass(frozen=True)
class CandidatePair:
    task_id: str
    a: Rollout  # the lower trajectory id; a labeller sees the sides in a random order
    b: Rollout
    basis: PairBasis

    @property
    def reward_gap(self) -> float:
        return abs((self.a.reward or 0.0) - (self.b.reward or 0.0))

    @property
    def preferred(self) -> Rollout | None:
        """The rollout the verified reward prefers; None when only people can say."""
        if self.basis is PairBasis.PATH_QUALITY:
            return None
        return self.a if (self.a.reward or 0.0) > (self.b.reward or 0.0) else self.b

    @property
    def differs_in(self) -> tuple[str, ...]:
        """Which of agent, model, adapter and seed the two rollouts differ in."""
        fields = ("agent", "model", "adapter", "seed")
        return tuple(f for f in fields if getattr(self.a, f) != getattr(self.b, f))


def _id_order(trajectory_id: str) -> tuple[int, int, str]:
    # Database ids arrive as strings; "10" sorts after "9".
    return (0, int(trajectory_id), "") if trajectory_id.isdigit() else (1, 0, trajectory_id)


def _basis(a: Rollout, b: Rollout) -> PairBasis | None:
    if a.passed != b.passed:
        return PairBasis.OUTCOME
    if a.reward != b.reward:
        return PairBasis.REWARD
    return PairBasis.PATH_QUALITY if a.passed else None  # two equal failures teach nothing


def candidate_pairs(
    rollouts: Iterable[Rollout], *, per_task: int | None = None
) -> list[CandidatePair]:
    """Pairs of rollouts of the same task, most informative first: outcomes that differ, then
    rewards that differ (largest gap first), then pairs that both passed, to be judged on path
    quality. Unverified rollouts and pairs of equal failures are left out, as is a trajectory
    paired with itself (the same id or the same bytes). The order is deterministic; ``per_task``
    keeps that many pairs of each task."""
    by_task: dict[str, dict[str, Rollout]] = {}
    for r in rollouts:
        if r.reward is None:
            continue
        seen = by_task.setdefault(r.task_id, {})
        if r.trajectory_id in seen:
            raise ValueError(f"rollout {r.trajectory_id} given twice")
        seen[r.trajectory_id] = r
    pairs: list[CandidatePair] = []
    for task_id in sorted(by_task):
        ordered = sorted(by_task[task_id].values(), key=lambda r: _id_order(r.trajectory_id))
        task_pairs = []
        for a, b in combinations(ordered, 2):
            if a.source_sha256 and a.source_sha256 == b.source_sha256:
                continue
            basis = _basis(a, b)
            if basis is not None:
                task_pairs.append(CandidatePair(task_id, a, b, basis))
        task_pairs.sort(key=_pair_order)
        pairs.extend(task_pairs[:per_task] if per_task is not None else task_pairs)
    pairs.sort(key=_pair_order)
    return pairs


def _pair_order(p: CandidatePair) -> tuple[Any, ...]:
    return (
        _BASIS_RANK[p.basis],
        -p.reward_gap,
        p.task_id,
        _id_order(p.a.trajectory_id),
        _id_order(p.b.trajectory_id),
    )
