"""A trajectory as turns: each request of the user, and what the agent did until the next one.

    for turn in turns(atif, replay):
        turn.request, turn.step, turn.end            # the request; its steps [step, end)
        commands_in(replay, turn)                    # the shell commands of the turn
        reply(atif, turn)                            # what the agent last said in it

Requests are the user's messages cleaned of harness noise (``instruction.clean_request``); a
message that is only noise or an acknowledgement starts no turn. Events and commands belong to
the turn whose steps hold them (a subagent's events play at the step that spawned it).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trajectories.core.replay import ReplayResult, ShellCommand

from ..instruction import _message_text, clean_request


@dataclass(frozen=True, slots=True)
class Turn:
    number: int  # 0 for the first request
    step: int  # the request's position in the ATIF steps
    end: int  # the next request's position, or the number of steps
    request: str
    first_event: int  # the first replay event of the turn (== end_event when it has none)
    end_event: int  # the first event after it


def turns(atif: Mapping[str, Any], replay: ReplayResult) -> list[Turn]:
    steps = atif.get("steps") or []
    starts: list[tuple[int, str]] = []
    for position, step in enumerate(steps):
        if not isinstance(step, Mapping) or step.get("source") != "user":
            continue
        if step.get("is_copied_context"):
            continue
        text = clean_request(_message_text(step.get("message")))
        if text is not None:
            starts.append((position, text))
    event_steps = [event.step_index for event in replay.events]
    found = []
    for number, (position, text) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(steps)
        found.append(
            Turn(
                number=number,
                step=position,
                end=end,
                request=text,
                first_event=bisect.bisect_left(event_steps, position),
                end_event=bisect.bisect_left(event_steps, end),
            )
        )
    return found


def commands_in(replay: ReplayResult, turn: Turn) -> list[ShellCommand]:
    return [c for c in replay.commands if turn.first_event <= c.event_index < turn.end_event]


def reply(atif: Mapping[str, Any], turn: Turn) -> tuple[int, str]:
    """(step, text) of the agent's last message in the turn; (-1, "") when it said nothing."""
    steps: Sequence[Any] = atif.get("steps") or []
    for position in range(turn.end - 1, turn.step, -1):
        step = steps[position]
        if isinstance(step, Mapping) and step.get("source") == "agent":
            text = _message_text(step.get("message")).strip()
            if text:
                return position, text
    return -1, ""


def observations(atif: Mapping[str, Any], turn: Turn) -> list[str]:
    """Every tool result's text in the turn, in order (what the agent's tools printed)."""
    texts: list[str] = []
    for step in (atif.get("steps") or [])[turn.step : turn.end]:
        if not isinstance(step, Mapping):
            continue
        for result in (step.get("observation") or {}).get("results") or ():
            if isinstance(result, Mapping):
                content = result.get("content")
                text = content if isinstance(content, str) else _message_text(content)
                if text:
                    texts.append(text)
    return texts
