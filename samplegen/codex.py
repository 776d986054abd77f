"""The slugify story as a Codex rollout.

Written as ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``: session meta, turn context,
response items and events, with files written through ``apply_patch``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from .ids import BASE62, Clock, token, uuid7
from .stories import Story
from .text import jsonl, unified_hunks


def add_file_patch(files: dict[str, str]) -> str:
    parts = ["*** Begin Patch"]
    for path, content in files.items():
        parts.append(f"*** Add File: {path}")
        parts += ["+" + line for line in content.splitlines()]
    parts.append("*** End Patch")
    return "\n".join(parts) + "\n"


def update_file_patch(path: str, old: str, new: str) -> str:
    parts = ["*** Begin Patch", f"*** Update File: {path}"]
    for *_, body in unified_hunks(old, new, 1):
        parts += ["@@", *body]
    parts.append("*** End Patch")
    return "\n".join(parts) + "\n"


CODEX_PERMISSIONS = """\
<permissions instructions>
Filesystem sandboxing defines which files can be read or written. `sandbox_mode` is \
`workspace-write`: The sandbox permits reading files, and editing files in `cwd` and \
`writable_roots`. Network access is restricted.
</permissions instructions>"""

CODEX_ENVIRONMENT = """\
<environment_context>
  <cwd>{cwd}</cwd>
  <shell>bash</shell>
  <current_date>2026-03-02</current_date>
  <timezone>Etc/UTC</timezone>
</environment_context>"""


def write(story: Story) -> str:
    start = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)
    session = uuid7("codex/slugify/session", start)
    turn = uuid7("codex/slugify/turn-1", start + timedelta(milliseconds=2460))
    model, cli = "gpt-5.2-codex", "0.106.0"
    clock = Clock(start)
    lines: list[dict] = []
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    total["reasoning_output_tokens"] = 0
    total["total_tokens"] = 0

    def emit(kind: str, payload: dict, seconds: float = 0.001) -> None:
        lines.append({"timestamp": clock.tick(seconds), "type": kind, "payload": payload})

    def tokens(fresh: int, cached: int, out: int, reasoning: int) -> None:
        last = {
            "input_tokens": fresh + cached,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": fresh + cached + out,
        }
        for key, value in last.items():
            total[key] += value
        info = {
            "total_token_usage": dict(total),
            "last_token_usage": last,
            "model_context_window": 258400,
        }
        emit("event_msg", {"type": "token_count", "info": info, "rate_limits": None}, 0.09)

    def reasoning(label: str, summary: str | None, seconds: float) -> None:
        blob = "gAAAAABp" + token(f"{session}/{label}", 240, BASE62 + "-_")
        emit(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": summary}] if summary else [],
                "content": None,
                "encrypted_content": blob,
            },
            seconds,
        )

    def say(text: str, phase: str, seconds: float) -> None:
        emit(
            "event_msg",
            {"type": "agent_message", "message": text, "phase": phase, "memory_citation": None},
            seconds,
        )
        emit(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
                "phase": phase,
            },
            0.005,
        )

    def apply_patch(
        label: str,
        patch: str,
        changes: dict,
        summary: str,
        seconds: float,
        usage: tuple[int, int, int, int],
    ) -> None:
        call = "call_" + token(f"{session}/{label}", 24)
        emit(
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call,
                "name": "apply_patch",
                "input": patch,
            },
            seconds,
        )
        tokens(*usage)
        out = f"Success. Updated the following files:\n{summary}"
        emit(
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": call,
                "turn_id": turn,
                "stdout": out,
                "stderr": "",
                "success": True,
                "changes": changes,
                "status": "completed",
            },
            0.21,
        )
        emit(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": call,
                "output": json.dumps(
                    {"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.0}}
                ),
            },
            0.002,
        )

    def run(
        label: str,
        output: str,
        code: int,
        wall: float,
        seconds: float,
        usage: tuple[int, int, int, int],
    ) -> None:
        call = "call_" + token(f"{session}/{label}", 24)
        args = {
            "cmd": story.command,
            "workdir": story.cwd,
            "yield_time_ms": 10000,
            "max_output_tokens": 12000,
        }
        emit(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps(args),
                "call_id": call,
            },
            seconds,
        )
        tokens(*usage)
        emit(
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": call,
                "process_id": str(40000 + int(token(label, 4, "0123456789"))),
                "turn_id": turn,
                "command": ["/bin/bash", "-lc", story.command],
                "cwd": story.cwd,
                "parsed_cmd": [{"type": "unknown", "cmd": story.command}],
                "source": "unified_exec_startup",
                "stdout": "",
                "stderr": "",
                "aggregated_output": output,
                "exit_code": code,
                "duration": {"secs": int(wall), "nanos": round((wall % 1) * 1e9)},
                "formatted_output": "",
                "status": "completed" if code == 0 else "failed",
            },
            wall,
        )
        text = (
            f"Chunk ID: {token(label + '/chunk', 6, '0123456789abcdef')}\n"
            f"Wall time: {wall:.4f} seconds\n"
            f"Process exited with code {code}\n"
            f"Original token count: {len(output) // 4}\n"
            f"Output:\n{output}"
        )
        emit(
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": text},
            0.004,
        )

    emit(
        "session_meta",
        {
            "id": session,
            "timestamp": clock.iso(),
            "cwd": story.cwd,
            "originator": "codex_cli_rs",
            "cli_version": cli,
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {
                "text": "You are Codex, a coding agent based on GPT-5. You and the user share "
                "one workspace, and your job is to collaborate with them until their goal is "
                "genuinely handled."
            },
        },
        2.45,
    )
    emit(
        "event_msg",
        {
            "type": "task_started",
            "turn_id": turn,
            "started_at": int(clock.now.timestamp()),
            "model_context_window": 258400,
            "collaboration_mode_kind": "default",
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "developer",
            "content": [
                {
                    "type": "input_text",
                    "text": CODEX_PERMISSIONS,
                }
            ],
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": CODEX_ENVIRONMENT.format(cwd=story.cwd),
                }
            ],
        },
    )
    emit(
        "turn_context",
        {
            "turn_id": turn,
            "cwd": story.cwd,
            "current_date": "2026-03-02",
            "timezone": "Etc/UTC",
            "approval_policy": "on-request",
            "sandbox_policy": {
                "type": "workspace-write",
                "network_access": False,
                "exclude_tmpdir_env_var": False,
                "exclude_slash_tmp": False,
            },
            "model": model,
            "personality": "pragmatic",
            "effort": "medium",
            "summary": "auto",
            "truncation_policy": {"mode": "tokens", "limit": 10000},
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": story.request}],
        },
    )
    emit(
        "event_msg",
        {
            "type": "user_message",
            "message": story.request,
            "images": [],
            "local_images": [],
            "text_elements": [],
        },
    )

    reasoning("r1", None, 3.2)
    say(
        "I'll scaffold `package.json` with an `npm test` script that runs `node --test`, the "
        "`slugify` module, and a node:test suite, then run the tests.",
        "commentary",
        0.3,
    )
    apply_patch(
        "patch-1",
        add_file_patch(story.start),
        {
            f"{story.cwd}/{path}": {"type": "add", "content": content}
            for path, content in story.start.items()
        },
        "".join(f"A {path}\n" for path in story.start),
        9.6,
        (9210, 0, 742, 168),
    )
    run("run-1", story.fail_output, 1, 0.4127, 2.1, (1102, 9088, 61, 0))

    reasoning(
        "r2",
        "**Spotting the missing global flag**\n\nOnly the first whitespace run became a "
        "hyphen: the second `replace` has no `g` flag.",
        2.8,
    )
    say(
        "`joins every word of a longer title` fails with `'node-test runner basics'`: the "
        "whitespace regex has no `g` flag, so only the first gap is replaced. Adding it.",
        "commentary",
        0.2,
    )
    path = "src/slugify.js"
    old, new = story.start[path], story.final[path]
    diff = "".join(
        f"@@ -{a},{b} +{c},{d} @@\n" + "".join(line + "\n" for line in body)
        for a, b, c, d, body in unified_hunks(old, new, 1)
    )
    apply_patch(
        "patch-2",
        update_file_patch(path, old, new),
        {f"{story.cwd}/{path}": {"type": "update", "unified_diff": diff, "move_path": None}},
        f"M {path}\n",
        2.4,
        (1507, 10112, 148, 52),
    )
    run("run-2", story.pass_output, 0, 0.3818, 1.7, (214, 11520, 34, 0))

    final = (
        "Created a dependency-free `slugify` package:\n\n"
        "- `package.json`: `npm test` runs `node --test`.\n"
        "- `src/slugify.js`: lower-cases, drops anything but ASCII letters, digits, spaces "
        "and hyphens, and joins words with single hyphens.\n"
        "- `test/slugify.test.js`: 4 node:test cases.\n\n"
        "The first run caught a missing `g` flag on the whitespace regex; after the fix "
        "`npm test` passes 4/4."
    )
    tokens(1381, 11648, 97, 0)
    say(final, "final_answer", 2.6)
    emit(
        "event_msg",
        {
            "type": "task_complete",
            "turn_id": turn,
            "last_agent_message": final,
            "completed_at": int(clock.now.timestamp()),
            "duration_ms": int((clock.now - start).total_seconds() * 1000) - 2450,
            "time_to_first_token_ms": 3214,
        },
        0.05,
    )
    return jsonl(lines)
