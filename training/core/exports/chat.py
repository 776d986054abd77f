"""ATIF steps as chat turns, and the turns as TRL or OpenAI messages.

>>> steps = [
...     {"step_id": 1, "source": "user", "message": "Fix add()"},
...     {"step_id": 2, "source": "agent", "message": "Running the tests.", "tool_calls": [
...         {"tool_call_id": "c1", "function_name": "Bash", "arguments": {"command": "pytest"}}],
...      "observation": {"results": [{"source_call_id": "c1", "content": "1 failed"}]}},
...     {"step_id": 3, "source": "agent", "message": "Old summary", "is_copied_context": True},
... ]
>>> kept, dropped = training_steps(steps)
>>> turns = to_turns(kept)
>>> [trl_message(t) for t in turns]  # doctest: +NORMALIZE_WHITESPACE
[{'content': 'Fix add()', 'role': 'user'},
 {'content': 'Running the tests.', 'role': 'assistant', 'tool_calls': [{'function':
   {'arguments': {'command': 'pytest'}, 'name': 'Bash'}, 'id': 'c1', 'type': 'function'}]},
 {'content': '1 failed', 'role': 'tool', 'name': 'Bash', 'tool_call_id': 'c1'}]
>>> openai_message(turns[1])["tool_calls"][0]["function"]["arguments"]
'{"command": "pytest"}'
>>> dropped
1

Written here rather than taken from a converter: atif-make converts agent logs *to* ATIF, and
TRL's and OpenAI's formats are dicts of a few keys; what needs care is which steps become which
turns. An agent step's text and its tool calls are one assistant turn, and consecutive agent
steps merge (Claude Code writes one step per call of a single model turn); each observation
result answering a call is a tool turn; a result answering no call (a terminal agent's screen)
is what the model read next, a user turn. Reasoning is left out: chat templates drop it from
history, and it is not what the model is asked to reproduce.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trajectories.core.replay.results import readable_text

Step = Mapping[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Turn:
    role: str  # system | user | assistant | tool
    content: str
    step: int  # index of the (kept) step the turn starts in
    last_step: int  # and of the step it ends in (consecutive agent steps merge into one turn)
    tool_calls: tuple[ToolCall, ...] = ()
    name: str = ""  # the tool, on a tool turn
    tool_call_id: str = ""
    generated: bool = True  # False: an agent step with llm_call_count 0 (not model output)


def training_steps(steps: Iterable[Step]) -> tuple[list[Step], int]:
    """The steps that may be trained on, and how many were left out because ATIF marks them
    ``is_copied_context`` (copied from an earlier trajectory, already trained on)."""
    kept, dropped = [], 0
    for step in steps:
        if step.get("is_copied_context"):
            dropped += 1
        else:
            kept.append(step)
    return kept, dropped


def to_turns(steps: Sequence[Step]) -> list[Turn]:
    names: dict[str, str] = {}  # call id -> tool name, across steps (results may come later)
    turns: list[Turn] = []
    for index, step in enumerate(steps):
        source = step.get("source")
        text = readable_text(step.get("message"))
        if source == "agent":
            calls = tuple(
                ToolCall(
                    str(c.get("tool_call_id", "")),
                    str(c.get("function_name", "")),
                    dict(c.get("arguments") or {}),
                )
                for c in step.get("tool_calls") or []
            )
            names.update((c.id, c.name) for c in calls)
            if calls and _placeholder(text, calls):
                text = ""
            generated = step.get("llm_call_count") != 0
            if text or calls:
                if turns and turns[-1].role == "assistant":
                    last = turns[-1]
                    turns[-1] = replace(
                        last,
                        content="\n\n".join(t for t in (last.content, text) if t),
                        tool_calls=last.tool_calls + calls,
                        last_step=index,
                        generated=last.generated or generated,
                    )
                else:
                    turns.append(Turn("assistant", text, index, index, calls, generated=generated))
        elif text:
            turns.append(Turn("system" if source == "system" else "user", text, index, index))
        for result in (step.get("observation") or {}).get("results") or []:
            output = readable_text(result.get("content"))
            call_id = result.get("source_call_id")
            if call_id:
                call_id = str(call_id)
                name = names.get(call_id, "")
                turns.append(Turn("tool", output, index, index, name=name, tool_call_id=call_id))
            elif output:
                turns.append(Turn("user", output, index, index))
    return turns


def _placeholder(text: str, calls: Sequence[ToolCall]) -> bool:
    """Whether an agent step's message is one a converter wrote for a call the model made
    without words ("Executed Glob call_4ef8", "Executed Bash (no result)"): training on it
    would teach the model to announce every call that way."""
    for line in text.splitlines() or [""]:
        words = line.split()
        if not words or words[0] != "Executed":
            return False
        rest = set(words[1:]) - {"(no", "result)"}
        if not rest or not rest <= {c.name for c in calls} | {c.id for c in calls}:
            return False
    return bool(text)


def trl_message(turn: Turn) -> dict[str, Any]:
    """TRL's conversational message: tool calls carry their arguments as objects, tool results
    name their tool (https://huggingface.co/docs/trl/dataset_formats, "Tool Calling")."""
    message: dict[str, Any] = {"content": turn.content, "role": turn.role}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "function": {"arguments": dict(c.arguments), "name": c.name},
                "id": c.id,
                "type": "function",
            }
            for c in turn.tool_calls
        ]
    if turn.role == "tool":
        message["name"] = turn.name
        message["tool_call_id"] = turn.tool_call_id
    return message


def openai_message(turn: Turn) -> dict[str, Any]:
    """OpenAI's chat fine-tuning message: arguments as a JSON string, tool results answering a
    call id, and on assistant messages a ``weight`` (1 trains on it, 0 keeps it as context)."""
    message: dict[str, Any] = {"role": turn.role}
    if turn.content or not turn.tool_calls:
        message["content"] = turn.content
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "function": {
                    "arguments": json.dumps(dict(c.arguments), ensure_ascii=False),
                    "name": c.name,
                },
                "id": c.id,
                "type": "function",
            }
            for c in turn.tool_calls
        ]
    if turn.role == "tool":
        message["tool_call_id"] = turn.tool_call_id
    if turn.role == "assistant":
        message["weight"] = 1 if turn.generated else 0
    return message


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    return "array"


def defined_tools(atif: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The agent's own tool definitions (OpenAI function schemas in ATIF), by name."""
    tools: dict[str, dict[str, Any]] = {}
    for definition in (atif.get("agent") or {}).get("tool_definitions") or []:
        function = definition.get("function", definition)
        name = function.get("name")
        if name:
            tools[str(name)] = {"function": dict(function), "type": "function"}
    return tools


def inferred_tools(calls: Iterable[ToolCall]) -> dict[str, dict[str, Any]]:
    """A JSON schema per tool from the arguments it was called with, where the trajectory does
    not define its tools: each argument typed by the values seen, required when always given."""
    seen: dict[str, list[Mapping[str, Any]]] = {}
    for call in calls:
        seen.setdefault(call.name, []).append(call.arguments)
    tools = {}
    for name, arguments in seen.items():
        types: dict[str, set[str]] = {}
        for args in arguments:
            for key, value in args.items():
                types.setdefault(key, set()).add(_json_type(value))
        properties = {
            key: {"type": sorted(kinds)[0] if len(kinds) == 1 else sorted(kinds)}
            for key, kinds in sorted(types.items())
        }
        required = sorted(k for k in types if all(k in args for args in arguments))
        parameters = {"properties": properties, "required": required, "type": "object"}
        tools[name] = {"function": {"name": name, "parameters": parameters}, "type": "function"}
    return tools


def tool_calls(turns: Iterable[Turn]) -> list[ToolCall]:
    return [call for turn in turns for call in turn.tool_calls]
