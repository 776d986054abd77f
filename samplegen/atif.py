"""The bytesize story as an ATIF-v1.7 trajectory (Harbor's format): one JSON document."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from .ids import Clock, token, uid
from .stories import Story

ATIF_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the project directory. The result is the "
            "combined stdout and stderr, preceded by an 'Exit code N' line.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a file with the given content.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
]


def write(story: Story) -> str:
    clock = Clock(datetime(2026, 3, 5, 9, 42, 18, 115000, tzinfo=UTC))
    model = "claude-sonnet-4-5"
    steps: list[dict] = []
    totals = {"prompt": 0, "completion": 0, "cached": 0}

    def step(source: str, message: str, seconds: float, **more) -> dict:
        entry = {"step_id": len(steps) + 1, "timestamp": clock.tick(seconds), "source": source}
        if source == "agent":
            entry["model_name"] = model
        entry["message"] = message
        entry.update(more)
        if "metrics" in more:
            totals["prompt"] += more["metrics"]["prompt_tokens"]
            totals["completion"] += more["metrics"]["completion_tokens"]
            totals["cached"] += more["metrics"]["cached_tokens"]
        steps.append(entry)
        return entry

    def metrics(prompt: int, cached: int, completion: int) -> dict:
        return {"prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached}

    def write(label: str, path: str, content: str) -> tuple[dict, dict]:
        call = "call_" + token(f"atif/bytesize/{label}", 24)
        absolute = f"{story.cwd}/{path}"
        return (
            {
                "tool_call_id": call,
                "function_name": "write_file",
                "arguments": {"path": absolute, "content": content},
            },
            {
                "source_call_id": call,
                "content": f"Wrote {len(content.encode())} bytes to {absolute}",
            },
        )

    def bash(label: str, output: str, code: int) -> tuple[dict, dict]:
        call = "call_" + token(f"atif/bytesize/{label}", 24)
        return (
            {
                "tool_call_id": call,
                "function_name": "bash",
                "arguments": {"command": story.command},
            },
            {
                "source_call_id": call,
                "content": f"Exit code {code}\n{output}",
                "extra": {"exit_code": code},
            },
        )

    step(
        "system",
        "You are a careful coding agent working in "
        f"{story.cwd}. Use the bash and write_file tools; run the project's tests before "
        "you finish.",
        0.0,
    )
    step("user", story.request, 0.01)

    made = [write(f"write-{path}", path, content) for path, content in story.start.items()]
    step(
        "agent",
        "I'll add package.json with a `node --test` script, the `formatBytes` "
        "implementation in index.js, and tests in test/format.test.js.",
        11.7,
        tool_calls=[c for c, _ in made],
        observation={"results": [r for _, r in made]},
        metrics=metrics(2414, 0, 1036),
        llm_call_count=1,
    )

    c, r = bash("bash-1", story.fail_output, 1)
    step(
        "agent",
        "Running the test suite.",
        3.4,
        tool_calls=[c],
        observation={"results": [r]},
        metrics=metrics(3561, 2414, 58),
        llm_call_count=1,
    )

    c, r = write("write-fix", "index.js", story.final["index.js"])
    step(
        "agent",
        "`formatBytes(1024)` returned '1024 B': the loop only moves to the next "
        "unit while the value is strictly greater than 1024, so exactly 1024 stays in bytes. "
        "It should be `>=`.",
        6.2,
        reasoning_content="The boundary case fails; 1536 and 2 MiB pass because they are "
        "above the threshold. Change the comparison, keep everything else.",
        tool_calls=[c],
        observation={"results": [r]},
        metrics=metrics(4419, 3561, 402),
        llm_call_count=1,
    )

    c, r = bash("bash-2", story.pass_output, 0)
    step(
        "agent",
        "",
        2.9,
        tool_calls=[c],
        observation={"results": [r]},
        metrics=metrics(4905, 4419, 41),
        llm_call_count=1,
    )

    step(
        "agent",
        "Done. `formatBytes` formats sizes with binary units and one decimal place "
        "above bytes and rejects negative input; `node --test` passes all 4 tests after "
        "fixing the 1024-byte boundary (`>` -> `>=`).",
        3.8,
        metrics=metrics(5722, 4905, 77),
        llm_call_count=1,
    )

    doc = {
        "schema_version": "ATIF-v1.7",
        "session_id": uid("atif/bytesize/session"),
        "trajectory_id": "bytesize-repair",
        "agent": {
            "name": "generic-agent",
            "version": "0.9.2",
            "model_name": model,
            "tool_definitions": ATIF_TOOLS,
            "extra": {"cwd": story.cwd},
        },
        "steps": steps,
        "notes": "Sample trajectory bundled with traj2env: add a helper, a failing check, "
        "a fix, the same check passing.",
        "final_metrics": {
            "total_prompt_tokens": totals["prompt"],
            "total_completion_tokens": totals["completion"],
            "total_cached_tokens": totals["cached"],
            "total_steps": len(steps),
        },
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
