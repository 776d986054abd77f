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

One loss is put right from the session's own log. OpenClaw's ATIF export (as Harbor trial
folders hold it, ``agent/trajectory.json`` beside ``openclaw-sessions/<id>.jsonl``) cuts the
trailing white space off every tool result, so a file read in full would replay one newline
short of what the pi log of the same session shows (and of the file's size in an ``ls -l``
of the same run). Where that log is beside the ATIF, a result that is exactly its log text
with the end cut off gets the log's text back (listed in ``normalised``); the session then
replays to the same bytes from either recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .meta import Hints
from .model import IngestError
from .source import Source, read_source

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
    repairs.extend(_restore_openclaw_results(document, source.path))
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


def _restore_openclaw_results(document: dict[str, Any], path: Path) -> list[str]:
    log = _openclaw_log(document, path)
    if not log:
        return []
    restored = 0
    for step in document.get("steps") or ():
        observation = step.get("observation") if isinstance(step, dict) else None
        results = observation.get("results") if isinstance(observation, dict) else None
        for result in results if isinstance(results, list) else ():
            if not isinstance(result, dict) or not isinstance(result.get("content"), str):
                continue
            # OpenClaw's export puts a result on a step of its own, naming the call there.
            call_id = result.get("source_call_id") or _step_call(step)
            shown = result["content"]
            for text in log.get(call_id, ()) if isinstance(call_id, str) else ():
                if text != shown and text.rstrip() == shown:
                    result["content"] = text
                    restored += 1
                    break
    if not restored:
        return []
    return [
        f"restored the trailing white space of {restored} tool result(s) from the OpenClaw "
        "session log beside the file (its ATIF export cuts it off)"
    ]


def _openclaw_log(document: dict[str, Any], path: Path) -> dict[str, tuple[str, ...]]:
    """The texts each call's result had in the OpenClaw session log beside ``path``, if any:
    as pi's reader joins them, as Harbor's converter does, and Harbor's aggregated output."""
    agent = document.get("agent")
    extra = agent.get("extra") if isinstance(agent, dict) else None
    session = extra.get("openclaw_session_id") if isinstance(extra, dict) else None
    if not isinstance(session, str) or not session or "/" in session or session.startswith("."):
        return {}
    name = f"{session}.jsonl"
    try:
        # Beside the file, or, for a multi-step Harbor trial's own agent/trajectory.json,
        # in the step folder that ran it.
        logs = [path.parent / "openclaw-sessions" / name]
        logs += sorted(path.parent.parent.glob(f"steps/*/agent/openclaw-sessions/{name}"))
        log_path = next((p for p in logs if p.is_file()), None)
        if log_path is None:
            return {}
        source = read_source(log_path)
    except (OSError, IngestError):
        return {}  # the ATIF stands as written; the log is only a better copy of its results
    if not isinstance(source, Source):
        return {}
    texts: dict[str, tuple[str, ...]] = {}
    for record in source.records:
        message = record.value.get("message") if isinstance(record.value, dict) else None
        if not isinstance(message, dict) or message.get("role") != "toolResult":
            continue
        call_id = message.get("toolCallId")
        content = message.get("content")
        parts = [
            p["text"]
            for p in (content if isinstance(content, list) else ())
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        details = message.get("details")
        aggregated = details.get("aggregated") if isinstance(details, dict) else None
        found = ["\n".join(parts), "".join(parts)] if parts else []
        if isinstance(content, str):
            found.append(content)
        if isinstance(aggregated, str):
            found.append(aggregated)
        if isinstance(call_id, str) and found:
            texts[call_id] = tuple(found)
    return texts


def _step_call(step: dict[str, Any]) -> str | None:
    extra = step.get("extra")
    call_id = extra.get("tool_call_id") if isinstance(extra, dict) else None
    return call_id if isinstance(call_id, str) else None
