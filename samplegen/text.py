"""Text the logs are made of: JSON lines, an exact one-place edit, hunks as diff(1) counts them."""

from __future__ import annotations

import difflib
import json


def jsonl(lines: list[dict]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} must occur exactly once"
    return text.replace(old, new)


def unified_hunks(old: str, new: str, context: int) -> list[tuple[int, int, int, int, list[str]]]:
    """(old_start, old_lines, new_start, new_lines, lines) hunks, as diff(1) counts them."""
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[a1:a2]]
                continue
            lines += ["-" + line for line in a[a1:a2]]
            lines += ["+" + line for line in b[b1:b2]]
        hunks.append((i1 + 1, i2 - i1, j1 + 1, j2 - j1, lines))
    return hunks
