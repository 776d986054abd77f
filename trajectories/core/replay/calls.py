"""The tool calls of an ATIF trajectory, each with its recorded result, in step order.

    calls = collect_calls(steps, side_data.get("tool_results", {}))
    calls[0].name, calls[0].args, calls[0].result   # "Bash", {"command": …}, Result(text=…)

``collect_calls`` pairs every call with its result (by ``source_call_id``, or in order on the
calling step when results carry no id); ``link_sessions`` hands each Codex ``write_stdin`` poll
to the command whose session it reads; ``guess_root`` finds the project directory when the
trajectory does not record one. The replay and the eval harness's facts walk the same calls.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .results import Result, codex_session, content_text, has_media, metadata_trailer
from .tools import EditOp, NoOp, Op, PollOp, ReadOp, ShellOp, WriteOp


@dataclass
class ToolCall:
    step_index: int
    step_id: Any
    tool_call_id: str
    name: str
    args: Mapping[str, Any]
    result: Result | None = None
    op: Op = field(default_factory=NoOp)
    # Codex: texts of the write_stdin polls that carried this command's later output, and
    # those polls' arguments (their max_output_tokens bound what each text could show).
    polls: list[str] = field(default_factory=list)
    poll_args: list[Mapping[str, Any]] = field(default_factory=list)


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def collect_calls(
    steps: Sequence[Mapping[str, Any]], side_results: Mapping[str, Any]
) -> list[ToolCall]:
    calls: list[ToolCall] = []
    by_id: dict[str, ToolCall] = {}
    for index, step in enumerate(steps):
        step_calls: list[ToolCall] = []
        for order, raw in enumerate(step.get("tool_calls") or []):
            if not isinstance(raw, Mapping):
                continue
            call_id = raw.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id or call_id in by_id:
                call_id = f"step{index}-call{order}"
            args = raw.get("arguments")
            call = ToolCall(
                step_index=index,
                step_id=step.get("step_id", index + 1),
                tool_call_id=call_id,
                name=str(raw.get("function_name") or ""),
                args=args if isinstance(args, Mapping) else {},
            )
            calls.append(call)
            step_calls.append(call)
            by_id[call_id] = call
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, Mapping) else None
        step_extra = step.get("extra") if isinstance(step.get("extra"), Mapping) else {}
        for raw_result in results or []:
            if not isinstance(raw_result, Mapping):
                continue
            target = by_id.get(str(raw_result.get("source_call_id") or ""))
            extra = dict(as_mapping(raw_result.get("extra")))
            if target is None and raw_result.get("source_call_id") is None:
                # Results without a call id: in order on the calling step, or (OpenClaw-style
                # ATIF, one result per step) via the step's own pointer to its call.
                waiting = [c for c in step_calls if c.result is None]
                if waiting:
                    target = waiting[0]
                elif not step_calls and isinstance(step_extra, Mapping):
                    target = by_id.get(str(step_extra.get("tool_call_id") or ""))
                    for key, value in step_extra.items():
                        extra.setdefault(key, value)
            if target is None or target.result is not None:
                continue
            content = raw_result.get("content")
            text = content_text(content)
            side = side_results.get(target.tool_call_id)
            target.result = Result(
                text=text,
                extra=extra,
                side=side if side is not None else metadata_trailer(text),
                media=has_media(content),
            )
    return calls


def link_sessions(calls: Sequence[ToolCall]) -> None:
    """Attach each Codex write_stdin poll to the exec_command whose session it reads.

    Done before replaying so that a command's exit status, which may only arrive in its last
    poll, is known when its file effects are applied.
    """
    open_sessions: dict[int, ToolCall] = {}
    for call in calls:
        if call.result is None:
            continue
        if isinstance(call.op, ShellOp):
            session = codex_session(call.result.text)
            if session is not None:
                open_sessions[session] = call
        elif isinstance(call.op, PollOp):
            owner = open_sessions.get(call.op.session)
            if owner is None:
                continue
            owner.polls.append(call.result.text)
            owner.poll_args.append(call.args)
            if codex_session(call.result.text) is None and "Process exited" in call.result.text:
                del open_sessions[call.op.session]


def guess_root(
    agent_info: Mapping[str, Any],
    side_cwd: Mapping[str, Any],
    calls: Sequence[ToolCall],
) -> str:
    extra = as_mapping(agent_info.get("extra"))
    cwds = extra.get("cwds")
    for cwd in (extra.get("cwd"), *(cwds if isinstance(cwds, list) else ())):
        if isinstance(cwd, str) and cwd.startswith("/"):
            return cwd
    for value in side_cwd.values():
        if isinstance(value, str) and value.startswith("/"):
            return value
    for call in calls:
        workdir = call.args.get("workdir")
        if isinstance(workdir, str) and workdir.startswith("/"):
            return workdir
    # No recorded directory: the deepest directory holding every absolute path a file tool
    # touched (`/repo` for Reads of /repo/a/x.go and /repo/b/y.yaml).
    touched = [
        op.path
        for op in (c.op for c in calls)
        if isinstance(op, ReadOp | WriteOp | EditOp) and op.path.startswith("/")
    ]
    if touched:
        common = posixpath.commonpath([posixpath.dirname(p) for p in touched])
        if common != "/":
            return common
    return "/"  # nothing says where the project is: paths stay absolute, minus the slash
