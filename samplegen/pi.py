"""The wordstats story as a pi session.

Written in pi's v1 linear layout, ``~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl``: a
session header, then one message line per user, assistant and tool result.
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from pathlib import Path

from .ids import Clock, token
from .stories import WORDSTATS_FIX, Story
from .text import jsonl, replace_once

# claude-opus-4-5, dollars per million tokens, as pi prices it.
PI_PRICES = {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25}


def pi_edit_diff(old: str, new: str) -> str:
    """pi's edit-result diff: numbered lines, four of context, elisions as '...'."""
    a, b = old.splitlines(), new.splitlines()
    width = len(str(max(len(a), len(b))))
    out = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(4):
        if group[0][1] > 0:
            out.append(" " * (width + 2) + "...")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [f" {n + 1:>{width}} {a[n]}" for n in range(a1, a2)]
                continue
            out += [f"-{n + 1:>{width}} {a[n]}" for n in range(a1, a2)]
            out += [f"+{n + 1:>{width}} {b[n]}" for n in range(b1, b2)]
        if group[-1][2] < len(a):
            out.append(" " * (width + 2) + "...")
    return "\n".join(out)


def write(story: Story) -> str:
    session = Path(story.sample).stem.split("_", 1)[1]
    clock = Clock(datetime(2026, 3, 4, 15, 21, 7, 402000, tzinfo=UTC))
    lines: list[dict] = [
        {
            "type": "session",
            "id": session,
            "timestamp": clock.iso(),
            "cwd": story.cwd,
            "provider": "anthropic",
            "modelId": "claude-opus-4-5",
            "thinkingLevel": "off",
        }
    ]
    files = dict(story.start)

    def message(body: dict, seconds: float) -> None:
        lines.append({"type": "message", "timestamp": clock.tick(seconds), "message": body})

    def assistant(
        parts: list[dict], fresh: int, read: int, write: int, out: int, stop: str, seconds: float
    ) -> None:
        started = clock.millis()
        cost = {
            "input": fresh * PI_PRICES["input"] / 1e6,
            "output": out * PI_PRICES["output"] / 1e6,
            "cacheRead": read * PI_PRICES["cacheRead"] / 1e6,
            "cacheWrite": write * PI_PRICES["cacheWrite"] / 1e6,
        }
        # Added left to right, as pi does (and as sum() no longer does since 3.12).
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        message(
            {
                "role": "assistant",
                "content": parts,
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-opus-4-5",
                "usage": {
                    "input": fresh,
                    "output": out,
                    "cacheRead": read,
                    "cacheWrite": write,
                    "totalTokens": fresh + out + read + write,
                    "cost": cost,
                },
                "stopReason": stop,
                "timestamp": started,
            },
            seconds,
        )

    def tool_result(call: str, name: str, text: str, error: bool, details=None) -> None:
        body = {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            body["details"] = details
        body["isError"] = error
        body["timestamp"] = clock.millis() + 2
        message(body, 0.004)

    def call(label: str, name: str, arguments: dict) -> dict:
        ident = "toolu_01" + token(f"{session}/{label}", 22)
        return {"type": "toolCall", "id": ident, "name": name, "arguments": arguments}

    message(
        {
            "role": "user",
            "content": [{"type": "text", "text": story.request}],
            "timestamp": clock.millis() - 4,
        },
        0.0,
    )

    writes = [
        call(f"write-{path}", "write", {"path": f"{story.cwd}/{path}", "content": content})
        for path, content in story.start.items()
    ]
    intro = {"type": "text", "text": "I'll write the module and its tests, then run them."}
    assistant([intro, *writes], 3, 0, 5120, 1342, "toolUse", 21.4)
    for part in writes:
        path = part["arguments"]["path"]
        size = len(part["arguments"]["content"].encode())
        tool_result(part["id"], "write", f"Successfully wrote {size} bytes to {path}", False)

    run1 = call("bash-1", "bash", {"command": story.command})
    assistant([run1], 1, 5120, 1431, 74, "toolUse", 2.6)
    tool_result(run1["id"], "bash", story.fail_output + "\n\nCommand exited with code 1", True, {})

    path = "wordstats.py"
    absolute = f"{story.cwd}/{path}"
    look = call("read-1", "read", {"path": absolute})
    note = {
        "type": "text",
        "text": "`test_ties_are_alphabetical` fails: `Counter.most_common` keeps insertion "
        'order for equal counts, so "pear" (seen first) comes before "apple". Let me look '
        "at `top_words` again.",
    }
    assistant([note, look], 1, 6551, 683, 112, "toolUse", 4.9)
    tool_result(look["id"], "read", files[path], False)

    old, new = WORDSTATS_FIX
    fix = call(
        "edit-1",
        "edit",
        {"path": absolute, "oldText": old.rstrip("\n"), "newText": new.rstrip("\n")},
    )
    lead = {"type": "text", "text": "Sorting by (-count, word) gives the documented order:"}
    assistant([lead, fix], 1, 7234, 402, 198, "toolUse", 3.8)
    files[path] = replace_once(files[path], old, new)
    assert files == story.final
    tool_result(
        fix["id"],
        "edit",
        f"Successfully replaced text in {absolute}. Changed {len(old.rstrip())} characters "
        f"to {len(new.rstrip())} characters.",
        False,
        {"diff": pi_edit_diff(story.start[path], story.final[path])},
    )

    run2 = call("bash-2", "bash", {"command": story.command})
    assistant([run2], 1, 7636, 318, 70, "toolUse", 2.2)
    tool_result(run2["id"], "bash", story.pass_output, False)

    done = {
        "type": "text",
        "text": "All 6 tests pass. `wordstats.py` has `words`, `word_count` and `top_words`; "
        "`top_words` now sorts by descending count and then alphabetically, which the first "
        "run showed `most_common` alone doesn't do for ties.",
    }
    assistant([done], 1, 7954, 361, 63, "stop", 3.1)
    return jsonl(lines)
