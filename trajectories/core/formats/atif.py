"""ATIF input: accepted as written, once Harbor's model accepts it.

One structural quirk is repaired rather than refused. Harbor requires an
observation result's ``source_call_id`` to name a tool call *on the same step*
(``Trajectory.validate_tool_call_references``); some producers instead put a
call's result on a later step of its own ("tool results in separate steps"),
which the looser ``atif`` package and the ATIF RFC's prose allow. The result is
moved onto the step that made the call, which is where Harbor, replay and every
other reader look for it; nothing is dropped. A result naming a call that no
earlier step made cannot be moved: its ``source_call_id`` is cleared and the id
kept in the result's ``extra`` as ``unresolved_source_call_id``. Each repair is
listed in ``side_data["normalised"]``. Nothing else is changed: embedded
``subagent_trajectories`` in an ATIF file are part of that document and kept.
"""

from __future__ import annotations

from typing import Any

from .meta import Hints
from .model import IngestError
from .source import Source

ORIGIN = "the ATIF file"


def convert_atif(source: Source) -> tuple[dict[str, Any], dict[str, Any], Hints]:
    if len(source.records) > 1:
        raise IngestError(
            source.path,
            f"holds {len(source.records)} JSON values; an ATIF file holds one trajectory",
            source.records[1].line,
        )
    document = source.records[0].value
    side: dict[str, Any] = {}
    repairs = _reattach_results(document)
    if repairs:
        side["normalised"] = repairs
    return document, side, Hints()


def _reattach_results(document: dict[str, Any]) -> list[str]:
    steps = document.get("steps")
    if not isinstance(steps, list):
        return []
    call_step: dict[str, dict[str, Any]] = {}
    repairs: list[str] = []
    for step in steps:
        if not isinstance(step, dict):
            continue
        calls = step.get("tool_calls")
        own = {
            call["tool_call_id"]
            for call in (calls if isinstance(calls, list) else ())
            if isinstance(call, dict) and isinstance(call.get("tool_call_id"), str)
        }
        for call_id in own:
            call_step[call_id] = step
        observation = step.get("observation")
        if not isinstance(observation, dict) or not isinstance(observation.get("results"), list):
            continue
        results = observation["results"]
        stay = []
        for result in results:
            call_id = result.get("source_call_id") if isinstance(result, dict) else None
            # Anything but a dangling string id is left for Harbor to judge.
            if not isinstance(call_id, str) or call_id in own:
                stay.append(result)
                continue
            owner = call_step.get(call_id)
            if owner is not None:
                _results_of(owner).append(result)
                repairs.append(
                    f"moved the result of call {call_id} from step {step.get('step_id')} "
                    f"to step {owner.get('step_id')}, which made the call"
                )
                continue
            result["source_call_id"] = None
            if not isinstance(result.get("extra"), dict):
                result["extra"] = {}
            result["extra"]["unresolved_source_call_id"] = call_id
            repairs.append(
                f"cleared source_call_id {call_id!r} on step {step.get('step_id')}: "
                "no earlier step made that call"
            )
            stay.append(result)
        if len(stay) != len(results):
            if stay:
                observation["results"] = stay
            else:
                del step["observation"]
    return repairs


def _results_of(step: dict[str, Any]) -> list[Any]:
    observation = step.get("observation")
    if not isinstance(observation, dict):
        observation = step["observation"] = {}
    if not isinstance(observation.get("results"), list):
        observation["results"] = []
    results: list[Any] = observation["results"]
    return results
