"""A folder of thousands of sessions is ingested in time linear in its size.

atif-make looks beside every log it converts (Claude Code teammates, Codex threads); a batch
shares one ``Folders`` index, so each folder is listed once and each conversion reads only
what it links. The results must be what atif-make gives on its own.
"""

from __future__ import annotations

import json
import pathlib
from pathlib import Path
from typing import Any

import pytest
from atif_make import convert
from atif_make.parsers import claude_code as atif_claude_code
from atif_make.parsers import codex as atif_codex

from trajectories.core.formats import Folders, Loaded, load
from trajectories.core.formats import folders as folders_module
from trajectories.core.formats.converter import to_dict

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "formats"
CODEX = FIXTURES / "codex-rollout.jsonl"
CODEX_ID = "019c0000-1111-7222-8333-444455556666"
BRIEF = "Audit the lexer for unicode bugs and report each one with a failing input."


def transcript(session: str, turns: list[tuple[str, Any]]) -> str:
    """A Claude Code session transcript of (type, message content) turns."""
    rows = []
    for n, (kind, content) in enumerate(turns, start=1):
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=f"msg_{session[:4]}_{n}", model="claude-sonnet-4-5")
        rows.append(
            {
                "parentUuid": f"{session}-{n - 1}" if n > 1 else None,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/work/app",
                "sessionId": session,
                "version": "2.1.0",
                "type": kind,
                "message": message,
                "uuid": f"{session}-{n}",
                "timestamp": f"2026-03-01T10:00:{n:02d}.000Z",
            }
        )
    return "\n".join(json.dumps(row) for row in rows) + "\n"


def caller(session: str = "c0ffee00-0000-4000-8000-000000000001") -> str:
    task = {"description": "Audit the lexer", "prompt": BRIEF, "name": "lexer-auditor"}
    return transcript(
        session,
        [
            ("user", "Split the review between two agents"),
            ("assistant", [{"type": "tool_use", "id": "toolu_t1", "name": "Task", "input": task}]),
            ("user", [{"type": "tool_result", "tool_use_id": "toolu_t1", "content": "started"}]),
            ("assistant", [{"type": "text", "text": "The auditor is on it."}]),
        ],
    )


def teammate(session: str = "7ea77a7e-0000-4000-8000-000000000002") -> str:
    return transcript(
        session,
        [
            ("user", f"<teammate-message>You are lexer-auditor. {BRIEF}</teammate-message>"),
            ("assistant", [{"type": "text", "text": "No unicode bugs found."}]),
        ],
    )


def filler(n: int) -> str:
    session = f"f111e700-0000-4000-8000-{n:012d}"
    return transcript(session, [("user", f"Task number {n}"), ("assistant", "Done.")])


def loaded(path: Path, folders: Folders | None = None) -> Loaded:
    result = load(path, folders=folders)
    assert isinstance(result, Loaded), result
    return result


def refs(result: Loaded) -> list[dict[str, Any]]:
    return [
        ref
        for step in result.atif["steps"]
        for r in (step.get("observation") or {}).get("results") or ()
        for ref in r.get("subagent_trajectory_ref") or ()
    ]


def test_the_teammate_cap_is_atif_makes() -> None:
    assert folders_module.TEAM_CAP == atif_claude_code._TEAM_CAP


# --------------------------------------------------------------------------- Claude Code


def test_a_teammate_in_a_small_folder_is_linked_as_atif_make_links_it(tmp_path: Path) -> None:
    path = tmp_path / "c0ffee00-0000-4000-8000-000000000001.jsonl"
    path.write_text(caller())
    (tmp_path / "7ea77a7e-0000-4000-8000-000000000002.jsonl").write_text(teammate())

    result = loaded(path, Folders())
    [ref] = refs(result)
    assert ref["trajectory_path"] == "7ea77a7e-0000-4000-8000-000000000002.jsonl"
    assert ref["extra"]["via"] == "teammate" and ref["extra"]["name"] == "lexer-auditor"
    assert result.atif == to_dict(convert(path, "claude-code-transcript")[0])


def test_a_damaged_caller_still_finds_its_teammate_through_the_view(tmp_path: Path) -> None:
    rows = caller().splitlines()
    path = tmp_path / "c0ffee00-0000-4000-8000-000000000001.jsonl"
    path.write_text("\n".join([*rows[:2], "Killed", *rows[2:]]) + "\n")
    (tmp_path / "7ea77a7e-0000-4000-8000-000000000002.jsonl").write_text(teammate())

    result = loaded(path, Folders())
    assert [w.line for w in result.warnings] == [3]
    [ref] = refs(result)
    assert ref["trajectory_path"] == "7ea77a7e-0000-4000-8000-000000000002.jsonl"
    assert str(path) in result.atif["notes"]


def test_a_damaged_neighbour_does_not_cost_the_session_beside_it(tmp_path: Path) -> None:
    """atif-make's teammate search reads each neighbour's first lines as objects; 42 is not one."""
    path = tmp_path / "c0ffee00-0000-4000-8000-000000000001.jsonl"
    path.write_text(caller())
    broken = tmp_path / "7ea77a7e-0000-4000-8000-000000000002.jsonl"
    broken.write_text("42\n" + teammate())
    with pytest.raises(AttributeError):
        convert(path, "claude-code-transcript")

    result = loaded(path, Folders())
    assert refs(result) == []
    [note] = result.side_data["normalised"]
    assert note.startswith("converted without linking the sessions beside it")
    assert "a record has an unexpected shape" in note  # why, in words, not a class name
    neighbour = loaded(broken, Folders())
    assert [w.line for w in neighbour.warnings] == [1]


def test_past_the_cap_nothing_is_linked_and_no_sibling_is_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c0ffee00-0000-4000-8000-000000000001.jsonl"
    path.write_text(caller())
    (tmp_path / "7ea77a7e-0000-4000-8000-000000000002.jsonl").write_text(teammate())
    for n in range(folders_module.TEAM_CAP):
        (tmp_path / f"f111e700-0000-4000-8000-{n:012d}.jsonl").write_text(filler(n))
    expected = to_dict(convert(path, "claude-code-transcript")[0])

    resolved = []
    original = pathlib.Path.resolve

    def counting(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return original(self, strict)

    monkeypatch.setattr(pathlib.Path, "resolve", counting)
    folders = Folders()
    result = loaded(path, folders)
    for n in range(10):
        loaded(tmp_path / f"f111e700-0000-4000-8000-{n:012d}.jsonl", folders)

    assert result.atif == expected and refs(result) == []
    # Each file resolves itself (atif-make's guard against link loops), not its 202 siblings.
    assert len(resolved) <= 11 * 2, len(resolved)


# --------------------------------------------------------------------------- Codex


def rollout(own: str, parent: str | None = None) -> str:
    rows = CODEX.read_text().replace(CODEX_ID, own).splitlines()
    meta = json.loads(rows[0])
    if parent:
        meta["payload"].update(parent_thread_id=parent, source={"subagent": {"other": "guardian"}})
    return "\n".join([json.dumps(meta), *rows[1:]]) + "\n"


def name(own: str) -> str:
    return f"rollout-2026-04-01T08-00-00-{own}.jsonl"


PARENT = "019c0000-aaaa-7222-8333-000000000001"
CHILD = "019c0000-aaaa-7222-8333-000000000002"
GRANDCHILD = "019c0000-aaaa-7222-8333-000000000003"


def threads(where: Path) -> Path:
    where.mkdir(exist_ok=True)
    (where / name(PARENT)).write_text(rollout(PARENT))
    (where / name(CHILD)).write_text(rollout(CHILD, PARENT))
    (where / name(GRANDCHILD)).write_text(rollout(GRANDCHILD, CHILD))
    return where / name(PARENT)


def test_codex_threads_in_a_crowded_folder_are_found_as_in_a_small_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = loaded(threads(tmp_path / "small"))
    crowded = threads(tmp_path / "crowded")
    for n in range(folders_module.CODEX_DIRECT + 8):
        own = f"019c0000-bbbb-7222-8333-{n:012d}"
        (tmp_path / "crowded" / name(own)).write_text(rollout(own))

    read = []
    original = atif_codex._rollout_meta
    monkeypatch.setattr(atif_codex, "_rollout_meta", lambda p: read.append(p) or original(p))
    folders = Folders()
    result = loaded(crowded, folders)
    for other in sorted((tmp_path / "crowded").glob("rollout-*.jsonl")):
        loaded(other, folders)

    assert [s["path"] for s in result.side_data["subagents"]] == [name(CHILD)]
    assert result.side_data["subagents"] == small.side_data["subagents"]
    assert result.atif["steps"] == small.atif["steps"]
    # atif-make read only the headers of the threads it links, never those of the 40 others.
    assert read and {p.name for p in read} <= {name(CHILD), name(GRANDCHILD)}


def test_a_thread_s_file_is_found_by_its_name_in_the_index(tmp_path: Path) -> None:
    threads(tmp_path)
    folders = Folders()
    assert folders.codex_thread_file(tmp_path, CHILD) == name(CHILD)
    assert folders.codex_thread_file(tmp_path, "019c-not-there") is None
    assert folders.codex_descendants(tmp_path / name(PARENT), PARENT) == sorted(
        [name(CHILD), name(GRANDCHILD)]
    )
