"""The invoice-tools story as a Claude Code transcript.

Written as ``~/.claude/projects/<project>/<session>.jsonl``: one JSON line per message,
each pointing at its parent, with the ``toolUseResult`` side data Claude Code keeps.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from .ids import Clock, token, uid
from .stories import INVOICE_FIX, Story
from .text import jsonl, unified_hunks


def write(story: Story) -> str:
    version, model, branch = "2.1.34", "claude-opus-4-6", "main"
    session = Path(story.sample).stem
    clock = Clock(datetime(2026, 3, 3, 14, 7, 12, 408000, tzinfo=UTC))
    lines: list[dict] = []
    parent: str | None = None
    slug = "tidy-rolling-ledger"

    def base(label: str, with_slug: bool = True) -> dict:
        nonlocal parent
        line = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": story.cwd,
            "sessionId": session,
            "version": version,
            "gitBranch": branch,
        }
        if with_slug:
            line["slug"] = slug
        parent = uid(f"{session}/{label}")
        return line

    def usage(fresh: int, read: int, created: int, out: int) -> dict:
        return {
            "input_tokens": fresh,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0,
                "ephemeral_1h_input_tokens": created,
            },
            "output_tokens": out,
            "service_tier": "standard",
            "inference_geo": "not_available",
        }

    def assistant(label: str, msg: str, part: dict, use: dict, stop=None, seconds=1.4) -> str:
        line = base(label, with_slug=bool(lines) and label != "a1-text")
        line.update(
            {
                "message": {
                    "model": model,
                    "id": "msg_01" + token(f"{session}/{msg}", 22),
                    "type": "message",
                    "role": "assistant",
                    "content": [part],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": use,
                },
                "requestId": "req_011C" + token(f"{session}/{msg}/req", 20),
                "type": "assistant",
                "uuid": parent,
                "timestamp": clock.tick(seconds),
            }
        )
        lines.append(line)
        return parent

    def result(label: str, call: str, source: str, content: str, tool_result, error=None):
        line = base(label)
        block = {"tool_use_id": call, "type": "tool_result", "content": content}
        if error is not None:
            block["is_error"] = error
        line.update(
            {
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "uuid": parent,
                "timestamp": clock.tick(0.6),
                "toolUseResult": tool_result,
                "sourceToolAssistantUUID": source,
            }
        )
        lines.append(line)

    def call_id(label: str) -> str:
        return "toolu_01" + token(f"{session}/{label}", 22)

    # The prompt, with the bookkeeping line Claude Code writes before it.
    prompt_uuid = uid(f"{session}/prompt")
    lines.append(
        {
            "type": "file-history-snapshot",
            "messageId": prompt_uuid,
            "snapshot": {
                "messageId": prompt_uuid,
                "trackedFileBackups": {},
                "timestamp": clock.iso(),
            },
            "isSnapshotUpdate": False,
        }
    )
    prompt = base("prompt", with_slug=False)
    prompt.update(
        {
            "type": "user",
            "message": {"role": "user", "content": story.request},
            "uuid": parent,
            "timestamp": clock.tick(0.02),
            "thinkingMetadata": {"maxThinkingTokens": 31999},
            "todos": [],
            "permissionMode": "acceptEdits",
        }
    )
    lines.append(prompt)

    # Turn 1: one response that writes the three files.
    first = usage(3, 18338, 7214, 11)
    assistant(
        "a1-text",
        "m1",
        {
            "type": "text",
            "text": "I'll create an `invoice` package with the totals module, export it from "
            "`__init__.py`, and add a unittest suite under `tests/`.",
        },
        first,
        seconds=2.9,
    )
    writes = []
    for index, path in enumerate(story.start):
        call = call_id(f"write-{path}")
        absolute = f"{story.cwd}/{path}"
        done = index == 2
        source = assistant(
            f"a1-write-{path}",
            "m1",
            {
                "type": "tool_use",
                "id": call,
                "name": "Write",
                "input": {"file_path": absolute, "content": story.start[path]},
            },
            usage(3, 18338, 7214, 1187 if done else 11),
            stop="tool_use" if done else None,
            seconds=6.8 if index == 0 else 1.1,
        )
        writes.append((path, call, source, absolute))
    for path, call, source, absolute in writes:
        result(
            f"r-write-{path}",
            call,
            source,
            f"File created successfully at: {absolute}",
            {
                "type": "create",
                "filePath": absolute,
                "content": story.start[path],
                "structuredPatch": [],
                "originalFile": None,
            },
        )

    # Turn 2: run the tests; one fails.
    bash_input = {"command": story.command, "description": "Run the invoice unit tests"}
    run1 = call_id("bash-1")
    source = assistant(
        "a2-bash",
        "m2",
        {"type": "tool_use", "id": run1, "name": "Bash", "input": bash_input},
        usage(1, 25552, 1301, 96),
        stop="tool_use",
        seconds=2.7,
    )
    failed = story.fail_output.rstrip("\n")
    result(
        "r-bash-1",
        run1,
        source,
        f"Exit code 1\n{failed}",
        f"Error: Exit code 1\n{failed}",
        error=True,
    )

    # Turn 3: explain and fix the bug.
    old, new = INVOICE_FIX
    assistant(
        "a3-text",
        "m3",
        {
            "type": "text",
            "text": "One failure: `tax_rate` is documented as a percentage, but `invoice_total` "
            "multiplies the subtotal by it directly, so 20 % is applied as x20 (24.99 + 499.80 "
            "= 524.79). The tax has to be divided by 100.",
        },
        usage(1, 26853, 512, 9),
        seconds=4.1,
    )
    edit = call_id("edit-1")
    path = "invoice/totals.py"
    absolute = f"{story.cwd}/{path}"
    source = assistant(
        "a3-edit",
        "m3",
        {
            "type": "tool_use",
            "id": edit,
            "name": "Edit",
            "input": {
                "replace_all": False,
                "file_path": absolute,
                "old_string": old.rstrip("\n"),
                "new_string": new.rstrip("\n"),
            },
        },
        usage(1, 26853, 512, 254),
        stop="tool_use",
        seconds=1.9,
    )
    result(
        "r-edit-1",
        edit,
        source,
        f"The file {absolute} has been updated successfully.",
        {
            "filePath": absolute,
            "oldString": old.rstrip("\n"),
            "newString": new.rstrip("\n"),
            "originalFile": story.start[path],
            "structuredPatch": [
                {"oldStart": a, "oldLines": b, "newStart": c, "newLines": d, "lines": body}
                for a, b, c, d, body in unified_hunks(story.start[path], story.final[path], 3)
            ],
            "userModified": False,
            "replaceAll": False,
        },
    )

    # Turn 4: the same command again; it passes.
    run2 = call_id("bash-2")
    source = assistant(
        "a4-bash",
        "m4",
        {"type": "tool_use", "id": run2, "name": "Bash", "input": bash_input},
        usage(1, 27365, 389, 94),
        stop="tool_use",
        seconds=2.3,
    )
    passed = story.pass_output.rstrip("\n")
    result(
        "r-bash-2",
        run2,
        source,
        passed,
        {"stdout": passed, "stderr": "", "interrupted": False, "isImage": False},
        error=False,
    )

    assistant(
        "a5-text",
        "m5",
        {
            "type": "text",
            "text": "All 5 tests pass.\n\n"
            "- `invoice/totals.py`: `line_total(quantity, unit_price)` and "
            "`invoice_total(lines, tax_rate=0)`, using `Decimal` and rounding half-up to the "
            "cent; `tax_rate` is a percentage.\n"
            "- `invoice/__init__.py`: re-exports both functions.\n"
            "- `tests/test_totals.py`: 5 unittest cases, run with "
            f"`{story.command}`.",
        },
        usage(1, 27754, 402, 118),
        stop="end_turn",
        seconds=3.6,
    )
    return jsonl(lines)
