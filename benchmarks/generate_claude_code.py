"""Write a long, realistic Claude Code session (JSONL) for the ingest and replay benchmarks.

Each round writes or edits a file of a small Python package, reads one back, and runs the tests,
which fail now and then and pass after the next edit — the shape of a real repair session, with
the raw `toolUseResult` side data Claude Code records.
"""

from __future__ import annotations

import argparse
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

CWD = "/home/dev/projects/ledger"
SESSION = "0b1e5c3a-2f4d-4c2e-9a57-5e1f0c9d2b10"


def _module(n: int, version: int) -> str:
    return "".join(
        f"def total_{n}_{i}(items):\n    return sum(items) + {version}\n\n" for i in range(12)
    )


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.parent: str | None = None
        self.clock = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def _emit(self, kind: str, message: dict, extra: dict | None = None) -> None:
        self.clock += timedelta(seconds=2)
        line_id = str(uuid.UUID(int=len(self.lines) + 1))
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": SESSION,
            "version": "2.1.12",
            "type": kind,
            "message": message,
            "uuid": line_id,
            "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
        }
        record.update(extra or {})
        self.lines.append(json.dumps(record))
        self.parent = line_id

    def user(self, text: str) -> None:
        self._emit("user", {"role": "user", "content": text})

    def call(
        self, name: str, args: dict, output: str, result: dict, *, error: bool = False
    ) -> None:
        call_id = f"toolu_{len(self.lines):08d}"
        self._emit(
            "assistant",
            {
                "model": "claude-sonnet-4-5",
                "id": f"msg_{len(self.lines):08d}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}],
                "usage": {"input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 2000},
            },
        )
        block = {"tool_use_id": call_id, "type": "tool_result", "content": output}
        if error:
            block["is_error"] = True
        self._emit("user", {"role": "user", "content": [block]}, {"toolUseResult": result})


def generate(steps: int) -> str:
    """About `steps` ATIF steps: each tool call becomes one agent step with its observation."""
    w = _Writer()
    w.user("Build the ledger package and keep its tests green as you go.")
    files: dict[str, str] = {}
    rnd = 0
    while len(w.lines) // 2 < steps:
        n = rnd % 40
        path = f"{CWD}/ledger/mod_{n}.py"
        if path not in files:
            files[path] = _module(n, 0)
            w.call(
                "Write",
                {"file_path": path, "content": files[path]},
                f"File created successfully at: {path}",
                {"type": "create", "filePath": path, "content": files[path], "structuredPatch": []},
            )
        else:
            old = files[path]
            new = _module(n, rnd)
            w.call(
                "Edit",
                {
                    "file_path": path,
                    "old_string": old.splitlines()[1],
                    "new_string": new.splitlines()[1],
                },
                f"The file {path} has been updated.",
                {
                    "filePath": path,
                    "oldString": old.splitlines()[1],
                    "newString": new.splitlines()[1],
                    "originalFile": old,
                    "structuredPatch": [],
                    "replaceAll": False,
                },
            )
            files[path] = old.replace(old.splitlines()[1], new.splitlines()[1], 1)
        body = files[path]
        numbered = "\n".join(f"{i + 1:>6}\u2192{line}" for i, line in enumerate(body.splitlines()))
        w.call(
            "Read",
            {"file_path": path},
            numbered,
            {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": body,
                    "numLines": body.count("\n"),
                    "startLine": 1,
                    "totalLines": body.count("\n"),
                },
            },
        )
        failing = rnd % 7 == 3
        out = (
            (
                "F.\n======================================================================\n"
                f"FAIL: test_total_{n} (tests.test_ledger.LedgerTest)\nAssertionError: 3 != 4\n\n"
                "Ran 2 tests in 0.001s\n\nFAILED (failures=1)"
            )
            if failing
            else "..\nRan 2 tests in 0.001s\n\nOK"
        )
        w.call(
            "Bash",
            {"command": "python3 -m unittest discover -s tests", "description": "Run tests"},
            ("Exit code 1\n" + out) if failing else out,
            {"stdout": out, "stderr": "", "interrupted": False, "isImage": False},
            error=failing,
        )
        rnd += 1
    return "\n".join(w.lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(generate(args.steps))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
