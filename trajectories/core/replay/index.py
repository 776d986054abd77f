"""Random access to the file state at any event or step: checkpoints every K events plus deltas.

Stored form (all JSON-safe, see ``StateIndex.to_dict``)::

    {"format": 1, "every": K, "events": N,
     "step_events": [e0, e1, ..., N],          # first event of each step, then N
     "checkpoints": [{path: value}, ...],      # state before events 0, K, 2K, ...
     "blocks": [[[path, value], ...] per event] per checkpoint}

A value is a 64-hex sha (known content), ``?`` and a sha (uncertain: last known as that
content), "lost" or "partial", and for a tree marker "lost" or "uncertain" (its files keep their
last known content, see ``apply_value``); in a delta ``None`` removes the path. Format 2 added
the uncertain values; format 1 reads the same.

Block ``j`` holds the deltas of events ``j*K .. j*K+K-1``, so the state before event ``e`` is
``state_from(checkpoints[e // K], blocks[e // K][: e % K])``: one checkpoint and at most K-1
deltas, wherever ``e`` lies. A database adapter stores the header, each checkpoint and each
block as separate rows and loads exactly one of each per lookup (``locate`` says which); the
state after step ``i`` is the state before event ``event_after_step(step_events, i)``, so
``step_events`` belongs with the steps (each step row keeping its own first event index)
rather than in the per-request header.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from .model import TREE, Change, ChangeKind, Entry, ReplayResult, Status, is_tree, tree_dir, under

FORMAT = 2
_READABLE = (1, 2)
_PRESUMED = "?"
DEFAULT_EVERY = 128

Value = str | None  # sha | "?" sha | "lost" | "partial" | None (deleted)
Delta = Sequence[tuple[str, Value]]

_LOST = Entry(None, Status.LOST)
_PARTIAL = Entry(None, Status.PARTIAL)
_UNCERTAIN = Entry(None, Status.UNCERTAIN)  # a tree marker that presumes (see apply_value)


def encode_entry(entry: Entry) -> str:
    if entry.sha and entry.status is Status.KNOWN:
        return entry.sha
    if entry.sha and entry.status is Status.UNCERTAIN:
        return _PRESUMED + entry.sha
    return str(entry.status)


def decode_entry(value: str) -> Entry:
    if value == "lost":
        return _LOST
    if value == "partial":
        return _PARTIAL
    if value == "uncertain":
        return _UNCERTAIN
    if value.startswith(_PRESUMED):
        return Entry(value[1:], Status.UNCERTAIN)
    return Entry(value, Status.KNOWN)


def change_value(change: Change) -> Value:
    if change.kind is ChangeKind.WRITTEN:
        return _PRESUMED + change.sha if change.presumed and change.sha else change.sha
    if change.kind is ChangeKind.DELETED:
        return None
    if change.kind is ChangeKind.LOST and change.presumed:
        return str(Status.UNCERTAIN)  # a tree whose files keep their last known content
    return str(change.kind)  # "lost" | "partial"


def apply_value(state: MutableMapping[str, Entry], key: str, value: Value) -> None:
    """Apply one delta to ``state`` in place; the engine and the index share this one rule."""
    if not is_tree(key):
        if value is None:
            state.pop(key, None)
        else:
            state[key] = decode_entry(value)
        return
    directory = tree_dir(key)
    inside = [k for k in state if under(k, directory)]
    if value is None:  # the whole directory was removed, and with it any uncertainty
        for k in inside:
            del state[k]
        return
    # A tree marker subsumes nested markers; every file under it may have changed. Under an
    # "uncertain" marker (a script that only may have written) each keeps what it last held
    # as a presumption, which the baseline in the image judges; under a "lost" one, nothing.
    marker = decode_entry(value)
    presume = marker.status is Status.UNCERTAIN
    for k in inside:
        if is_tree(k):
            del state[k]
        else:
            entry = state[k]
            state[k] = Entry(entry.sha, Status.UNCERTAIN) if presume and entry.presumed else _LOST
    state[key] = marker


def state_from(checkpoint: Mapping[str, str], deltas: Iterable[Delta]) -> dict[str, Entry]:
    """Rebuild a state from one stored checkpoint and the stored deltas that follow it."""
    state = {path: decode_entry(value) for path, value in checkpoint.items()}
    for delta in deltas:
        for key, value in delta:
            apply_value(state, key, value)
    return state


def locate(every: int, event: int) -> tuple[int, int]:
    """(checkpoint number, deltas to apply from its block) for the state before ``event``."""
    return divmod(event, every)


def event_after_step(step_events: Sequence[int], step: int) -> int:
    """The first event after step ``step``: the state at a step is the state before it."""
    if step < 0:
        return 0
    if step >= len(step_events) - 1:
        return step_events[-1] if step_events else 0
    return step_events[step + 1]


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    old: Entry | None
    new: Entry | None


class StateIndex:
    """Built once per replay; answers state lookups with one checkpoint and < K deltas."""

    def __init__(
        self,
        *,
        every: int,
        n_events: int,
        step_events: Sequence[int],
        checkpoints: Sequence[Mapping[str, str]],
        deltas: Sequence[Delta],
    ) -> None:
        if every < 1:
            raise ValueError("checkpoint interval must be at least 1")
        self.every = every
        self.n_events = n_events
        self.step_events = list(step_events)
        self.checkpoints = list(checkpoints)
        self.deltas = list(deltas)

    @classmethod
    def build(cls, replay: ReplayResult, *, every: int = DEFAULT_EVERY) -> StateIndex:
        deltas: list[Delta] = [
            [(k, change_value(c)) for k, c in event.changes.items() if not c.flagged]
            for event in replay.events
        ]
        checkpoints: list[dict[str, str]] = []
        state: dict[str, Entry] = dict(replay.start)  # empty unless the replay was seeded
        for e, delta in enumerate(deltas):
            if e % every == 0:
                checkpoints.append({k: encode_entry(v) for k, v in state.items()})
            for key, value in delta:
                apply_value(state, key, value)
        if len(deltas) % every == 0:  # the state after the last event starts a new block
            checkpoints.append({k: encode_entry(v) for k, v in state.items()})
        step_events = [0] * (replay.n_steps + 1)
        next_event = 0
        for step in range(replay.n_steps + 1):
            while next_event < len(replay.events) and replay.events[next_event].step_index < step:
                next_event += 1
            step_events[step] = next_event
        return cls(
            every=every,
            n_events=len(deltas),
            step_events=step_events,
            checkpoints=checkpoints,
            deltas=deltas,
        )

    # -- lookups -------------------------------------------------------------------------------

    def plan(self, event: int) -> tuple[int, range]:
        """Which checkpoint and which event deltas rebuild the state before ``event``."""
        if not 0 <= event <= self.n_events:
            raise IndexError(f"event {event} outside 0..{self.n_events}")
        block, offset = locate(self.every, event)
        start = block * self.every
        return block, range(start, start + offset)

    def state_before_event(self, event: int) -> dict[str, Entry]:
        block, events = self.plan(event)
        return state_from(self.checkpoints[block], (self.deltas[e] for e in events))

    def state_after_event(self, event: int) -> dict[str, Entry]:
        return self.state_before_event(event + 1)

    def first_event_after_step(self, step: int) -> int:
        """The index of the first event of a step after ``step`` (= events up to ``step``)."""
        return event_after_step(self.step_events, step)

    def state_at_step(self, step: int) -> dict[str, Entry]:
        """The files after every tool call of step ``step`` (``-1`` is the start: empty, or
        the seeded tree)."""
        return self.state_before_event(self.first_event_after_step(step))

    def events_of_step(self, step: int) -> range:
        return range(self.first_event_after_step(step - 1), self.first_event_after_step(step))

    def diff(self, step: int) -> list[FileDiff]:
        """What changed at ``step`` against the state after the previous step."""
        before = self.state_at_step(step - 1)
        after = dict(before)
        for e in self.events_of_step(step):
            for key, value in self.deltas[e]:
                apply_value(after, key, value)
        return _diff(before, after)

    def diff_event(self, event: int) -> list[FileDiff]:
        before = self.state_before_event(event)
        after = dict(before)
        for key, value in self.deltas[event]:
            apply_value(after, key, value)
        return _diff(before, after)

    # -- stored form ---------------------------------------------------------------------------

    def header(self) -> dict[str, Any]:
        return {"format": FORMAT, "every": self.every, "events": self.n_events}

    def block(self, number: int) -> list[list[list[Any]]]:
        start = number * self.every
        return [
            [[key, value] for key, value in delta]
            for delta in self.deltas[start : start + self.every]
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.header(),
            "step_events": list(self.step_events),
            "checkpoints": [dict(c) for c in self.checkpoints],
            "blocks": [self.block(n) for n in range(len(self.checkpoints))],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StateIndex:
        if data.get("format") not in _READABLE:
            raise ValueError(f"unsupported state index format {data.get('format')!r}")
        deltas: list[Delta] = [
            [(key, value) for key, value in delta] for block in data["blocks"] for delta in block
        ]
        return cls(
            every=int(data["every"]),
            n_events=int(data["events"]),
            step_events=data["step_events"],
            checkpoints=data["checkpoints"],
            deltas=deltas[: int(data["events"])],
        )


def _diff(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> list[FileDiff]:
    keys = sorted(set(before) | set(after), key=lambda k: (k.endswith(TREE), k))
    return [FileDiff(k, before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)]
