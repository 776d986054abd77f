"""File tools replay into exact file changes, and say what they cannot know.

Each test replays a small hand-written trajectory and asserts the exact end state (see
``helpers``): Claude Code's Write/Edit/MultiEdit/Read, pi's tools, the text editor tool, and
tools that may change files in ways nobody recorded.
"""

from __future__ import annotations

import json

import pytest

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import LOST, PARTIAL, ROOT, UNCERTAIN, cc, codex, files_of, numbered, render, run

# -- Claude Code file tools ----------------------------------------------------------------------


def test_write_establishes_content():
    b = cc()
    b.call("Write", {"file_path": "/repo/app.py", "content": "print(1)\n"}, "File created")
    assert files_of(b) == {"app.py": "print(1)\n"}


def test_edit_applies_old_and_new_string_to_known_content():
    b = cc()
    b.call("Write", {"file_path": "/repo/app.py", "content": "a = 1\nb = 1\n"}, "ok")
    b.call(
        "Edit", {"file_path": "/repo/app.py", "old_string": "b = 1", "new_string": "b = 2"}, "ok"
    )
    assert files_of(b) == {"app.py": "a = 1\nb = 2\n"}


def test_edit_replace_all_replaces_every_occurrence():
    b = cc()
    b.call("Write", {"file_path": "/repo/app.py", "content": "x x x\n"}, "ok")
    b.call(
        "Edit",
        {"file_path": "/repo/app.py", "old_string": "x", "new_string": "y", "replace_all": True},
        "ok",
    )
    assert files_of(b) == {"app.py": "y y y\n"}


def test_multiedit_applies_its_edits_in_order():
    b = cc()
    b.call("Write", {"file_path": "/repo/app.py", "content": "one\ntwo\n"}, "ok")
    edits = [
        {"old_string": "one", "new_string": "uno"},
        {"old_string": "uno\ntwo", "new_string": "uno\ndos"},
    ]
    b.call("MultiEdit", {"file_path": "/repo/app.py", "edits": edits}, "ok")
    assert files_of(b) == {"app.py": "uno\ndos\n"}


def test_edit_on_an_unknown_base_is_lost():
    b = cc()
    b.call("Edit", {"file_path": "/repo/app.py", "old_string": "a", "new_string": "b"}, "ok")
    result, _ = run(b)
    assert render(result, MemoryBlobs()) == {"app.py": LOST}
    assert result.events[0].changes["app.py"].reason == "edit on content the replay does not know"


def test_edit_with_original_file_in_side_data_becomes_known():
    b = cc()
    side = {"originalFile": "a = 1\n", "structuredPatch": [], "userModified": False}
    b.call(
        "Edit",
        {"file_path": "/repo/app.py", "old_string": "a = 1", "new_string": "a = 2"},
        "ok",
        side=side,
    )
    assert files_of(b) == {"app.py": "a = 2\n"}
    assert files_of(b, side=False) == {"app.py": LOST}


def test_edit_falls_back_to_structured_patch_when_old_string_differs():
    # Claude Code matched curly quotes the model wrote as straight ones; the patch is the truth.
    b = cc()
    side = {
        "originalFile": "say(\u201chi\u201d)\n",
        "structuredPatch": [
            {
                "oldStart": 1,
                "oldLines": 1,
                "newStart": 1,
                "newLines": 1,
                "lines": ["-say(\u201chi\u201d)", "+say(\u201cbye\u201d)"],
            }
        ],
    }
    b.call(
        "Edit",
        {"file_path": "/repo/a.py", "old_string": 'say("hi")', "new_string": 'say("bye")'},
        "ok",
        side=side,
    )
    assert files_of(b) == {"a.py": "say(\u201cbye\u201d)\n"}


def test_edit_with_an_empty_old_string_creates_the_file():
    # Claude Code accepts an empty old_string only when creating a file, so success means the
    # file now holds exactly new_string.
    b = cc()
    b.call("Edit", {"file_path": "/repo/new.py", "old_string": "", "new_string": "x = 1\n"}, "ok")
    assert files_of(b) == {"new.py": "x = 1\n"}


def test_edit_that_does_not_match_the_known_content_is_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    b.call("Edit", {"file_path": "/repo/a.py", "old_string": "zzz", "new_string": "b"}, "ok")
    assert files_of(b) == {"a.py": LOST}


def test_failed_edit_changes_nothing():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    b.call(
        "Edit",
        {"file_path": "/repo/a.py", "old_string": "a", "new_string": "b"},
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        error=True,
    )
    assert files_of(b) == {"a.py": "a\n"}


def test_write_without_a_recorded_result_is_lost():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, None)
    assert files_of(b) == {"a.py": LOST}


def test_write_the_user_modified_is_lost():
    b = cc()
    b.call(
        "Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok", side={"userModified": True}
    )
    assert files_of(b) == {"a.py": LOST}


# -- reads -----------------------------------------------------------------------------------


def test_full_read_establishes_content_with_line_numbers_stripped():
    text = "def f():\n\treturn 1\n"
    b = cc()
    listing = numbered(text) + "\n\n<system-reminder>\nBe careful.\n</system-reminder>\n"
    b.call("Read", {"file_path": "/repo/f.py"}, listing)
    assert files_of(b) == {"f.py": text}


def test_full_read_accepts_tab_separated_line_numbers():
    b = cc()
    b.call("Read", {"file_path": "/repo/f.py"}, "1\tx = 1\n2\ty = 2\n3\t")
    assert files_of(b) == {"f.py": "x = 1\ny = 2\n"}


@pytest.mark.parametrize(
    "arguments, listing",
    [
        ({"file_path": "/repo/f.py", "offset": 10, "limit": 2}, numbered("a\nb", start=10)),
        ({"file_path": "/repo/f.py", "limit": 2}, numbered("a\nb")),
        ({"file_path": "/repo/f.py"}, numbered("a\nb") + "...[trimmed]"),
        ({"file_path": "/repo/f.py"}, numbered("\n".join(["x"] * 2000))),
        ({"file_path": "/repo/f.py"}, numbered("a\nb", start=5)),
    ],
    ids=["offset", "limit-reached", "trimmed-upstream", "2000-line-cap", "not-from-line-1"],
)
def test_partial_or_truncated_read_gives_partial_knowledge(arguments, listing):
    b = cc()
    b.call("Read", arguments, listing)
    assert files_of(b) == {"f.py": PARTIAL}


def test_read_with_a_limit_the_file_did_not_reach_is_full():
    b = cc()
    b.call("Read", {"file_path": "/repo/f.py", "limit": 50}, numbered("a\nb\n"))
    assert files_of(b) == {"f.py": "a\nb\n"}


def test_partial_read_of_a_known_file_keeps_it_known():
    b = cc()
    b.call("Write", {"file_path": "/repo/f.py", "content": "a\nb\n"}, "ok")
    b.call("Read", {"file_path": "/repo/f.py", "offset": 2, "limit": 1}, numbered("b", start=2))
    assert files_of(b) == {"f.py": "a\nb\n"}


def test_full_read_replaces_lost_content():
    b = cc()
    b.call("Edit", {"file_path": "/repo/f.py", "old_string": "a", "new_string": "b"}, "ok")
    b.call("Read", {"file_path": "/repo/f.py"}, numbered("b\n"))
    assert files_of(b) == {"f.py": "b\n"}


def test_read_uses_side_data_file_content_and_line_counts():
    b = cc()
    full = {"file": {"content": "a\nb\n", "startLine": 1, "numLines": 3, "totalLines": 3}}
    part = {"file": {"content": "c", "startLine": 3, "numLines": 1, "totalLines": 9}}
    b.call("Read", {"file_path": "/repo/a.py"}, "(listing not needed)", side=full)
    b.call("Read", {"file_path": "/repo/b.py"}, "(listing not needed)", side=part)
    assert files_of(b) == {"a.py": "a\nb\n", "b.py": PARTIAL}


def test_read_of_an_empty_file():
    b = cc()
    b.call(
        "Read",
        {"file_path": "/repo/empty.py"},
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
    )
    assert files_of(b) == {"empty.py": ""}


def test_read_that_only_says_the_file_is_unchanged_teaches_nothing():
    b = cc()
    b.call("Read", {"file_path": "/repo/a.py"}, "File unchanged since last read.")
    assert files_of(b) == {}


def test_harbor_metadata_trailer_serves_as_side_data():
    # Harbor's Claude Code export appends the raw toolUseResult after the text.
    meta = {"originalFile": "x = 1\n", "structuredPatch": []}
    b = cc()
    b.call(
        "Edit",
        {"file_path": "/repo/a.py", "old_string": "x = 1", "new_string": "x = 2"},
        "The file /repo/a.py has been updated.\n\n[metadata] " + json.dumps(meta),
    )
    assert files_of(b) == {"a.py": "x = 2\n"}


# -- pi -----------------------------------------------------------------------------------------


def pi() -> AtifBuilder:
    return AtifBuilder("pi", root=ROOT)


def test_pi_write_edit_and_multi_edit():
    b = pi()
    b.call(
        "write", {"path": "/repo/a.ts", "content": "let a = 1;\nlet b = 1;\n"}, "ok", error=False
    )
    b.call("edit", {"path": "a.ts", "oldText": "a = 1", "newText": "a = 2"}, "ok", error=False)
    edits = [{"oldText": "b = 1", "newText": "b = 3"}]
    b.call("edit", {"path": "/repo/a.ts", "edits": edits}, "ok", error=False)
    assert files_of(b) == {"a.ts": "let a = 2;\nlet b = 3;\n"}


def test_pi_failed_edit_changes_nothing():
    b = pi()
    b.call("write", {"path": "/repo/a.ts", "content": "x\n"}, "ok", error=False)
    b.call(
        "edit", {"path": "/repo/a.ts", "oldText": "y", "newText": "z"}, "Could not find", error=True
    )
    assert files_of(b) == {"a.ts": "x\n"}


def test_pi_read_is_plain_text_and_truncation_makes_it_partial():
    b = pi()
    b.call("read", {"path": "/repo/a.ts"}, "const a = 1;\n", error=False)
    b.call(
        "read", {"path": "/repo/b.ts"}, "x\n\n[120 more lines in file. Use offset=2001 to continue]"
    )
    b.call("read", {"path": "/repo/c.ts", "offset": 40, "limit": 5}, "line 40", error=False)
    assert files_of(b) == {"a.ts": "const a = 1;\n", "b.ts": PARTIAL, "c.ts": PARTIAL}


# -- other tools --------------------------------------------------------------------------------


def test_text_editor_tool_create_replace_insert_and_view():
    b = AtifBuilder("openhands", root=ROOT)
    tool = "str_replace_editor"
    b.call(tool, {"command": "create", "path": "/repo/a.py", "file_text": "a\nc\n"}, "ok")
    b.call(
        tool, {"command": "str_replace", "path": "/repo/a.py", "old_str": "c", "new_str": "d"}, "ok"
    )
    b.call(
        tool, {"command": "insert", "path": "/repo/a.py", "insert_line": 1, "new_str": "b"}, "ok"
    )
    view = "Here's the result of running `cat -n` on /repo/v.py:\n     1\tv = 1\n     2\t"
    b.call(tool, {"command": "view", "path": "/repo/v.py"}, view)
    b.call(tool, {"command": "view", "path": "/repo/w.py", "view_range": [5, 9]}, "     5\tw")
    assert files_of(b) == {"a.py": "a\nb\nd\n", "v.py": "v = 1\n", "w.py": PARTIAL}


def test_subagents_that_may_edit_make_the_tree_uncertain_explorers_do_not():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a"}, "ok")
    b.call("Task", {"subagent_type": "Explore", "prompt": "look around"}, "found it")
    assert files_of(b) == {"a.py": "a"}
    b.call("Task", {"subagent_type": "general-purpose", "prompt": "fix it"}, "fixed")
    assert files_of(b) == {"a.py": LOST, "**": UNCERTAIN}


def test_unknown_tools_change_nothing_unless_they_look_like_file_writes():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a"}, "ok")
    b.call("WebFetch", {"url": "https://example.com"}, "html")
    b.call("TodoWrite", {"todos": [{"content": "x", "status": "pending"}]}, "ok")
    b.call("mcp__fs__write_file", {"path": "/repo/b.py", "text": "?"}, "ok")
    b.call("NotebookEdit", {"notebook_path": "/repo/n.ipynb", "new_source": "x"}, "ok")
    assert files_of(b) == {"a.py": "a", "b.py": LOST, "n.ipynb": LOST}


def test_codex_exec_json_file_changes_without_content():
    b = codex()
    b.call("Write", {"file_path": "/repo/old.py", "content": "x"}, "ok")
    changes = [{"path": "/repo/new.py", "kind": "add"}, {"path": "/repo/old.py", "kind": "delete"}]
    b.call("apply_patch", {"changes": changes}, "completed", extra={"exit_code": 0})
    assert files_of(b) == {"new.py": LOST}
