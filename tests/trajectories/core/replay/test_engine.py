"""Replay rebuilds the project's files at every tool call, and says what it cannot know.

Each test replays a small hand-written trajectory and asserts the exact end state:
``{path: content}`` for known files, ``LOST`` / ``PARTIAL`` for files we only know changed or
only saw in part, and ``UNCERTAIN`` for tree markers (``src/**``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import (
    ChangeKind,
    Entry,
    ReplayResult,
    StateIndex,
    Status,
    event_after_step,
    is_tree,
    locate,
    replay,
    state_from,
)
from trajectories.core.replay.synthetic import AtifBuilder, claude_code_session

ROOT = "/repo"
LOST, PARTIAL, UNCERTAIN = "<lost>", "<partial>", "<uncertain>"


def run(
    b: AtifBuilder, *, side: bool = True, root: str | None = ROOT
) -> tuple[ReplayResult, MemoryBlobs]:
    atif, side_data = b.build()
    blobs = MemoryBlobs()
    return replay(atif, side_data if side else None, root=root, blobs=blobs), blobs


def render(state: Mapping[str, Entry] | ReplayResult, blobs: MemoryBlobs) -> dict[str, str]:
    """A state as {path: text | LOST | PARTIAL | UNCERTAIN}."""
    entries = state.final_state if isinstance(state, ReplayResult) else state
    out = {}
    for path, entry in entries.items():
        if is_tree(path):
            out[path] = UNCERTAIN
        elif entry.status is Status.KNOWN:
            assert entry.sha is not None
            out[path] = blobs.get(entry.sha).decode()
        else:
            out[path] = LOST if entry.status is Status.LOST else PARTIAL
    return out


def files_of(b: AtifBuilder, *, side: bool = True, root: str | None = ROOT) -> dict[str, str]:
    result, blobs = run(b, side=side, root=root)
    return render(result, blobs)


def cc() -> AtifBuilder:
    return AtifBuilder("claude-code", root=ROOT)


def bash(
    b: AtifBuilder, command: str, output: str = "", *, code: int = 0, cwd: str | None = None
) -> str:
    """A Claude Code Bash call that exited with ``code`` (flagged the way Claude Code does)."""
    if code:
        text = f"Exit code {code}\n{output}"
        return b.call("Bash", {"command": command}, text, error=True, cwd=cwd)
    return b.call("Bash", {"command": command}, output, cwd=cwd)


def numbered(text: str, start: int = 1) -> str:
    """Claude Code's Read output for ``text`` (cat -n with the → separator)."""
    lines = text.split("\n")
    return "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(lines))


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


# -- Codex apply_patch ---------------------------------------------------------------------------


def codex() -> AtifBuilder:
    return AtifBuilder("codex", root=ROOT)


def patch(
    b: AtifBuilder, body: str, output: str = '{"output":"Success.","metadata":{"exit_code":0}}'
):
    b.call("apply_patch", {"input": f"*** Begin Patch\n{body}*** End Patch\n"}, output)


BASE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


def test_apply_patch_add_file():
    b = codex()
    patch(b, "*** Add File: src/new.py\n+a = 1\n+b = 2\n")
    assert files_of(b) == {"src/new.py": "a = 1\nb = 2\n"}


def test_apply_patch_update_uses_context_anchors():
    b = codex()
    patch(b, "*** Add File: m.py\n" + "".join(f"+{line}\n" for line in BASE.splitlines()))
    patch(b, "*** Update File: m.py\n@@ def g():\n-    return 1\n+    return 2\n")
    assert files_of(b) == {
        "m.py": BASE.replace("    return 1\n", "    return 2\n").replace(
            "def f():\n    return 2", "def f():\n    return 1"
        )
    }


def test_apply_patch_tolerates_whitespace_and_typographic_punctuation_like_codex():
    b = codex()
    patch(b, "*** Add File: m.py\n+say(\u201chi\u201d)   \n+end\n")
    patch(b, '*** Update File: m.py\n@@\n-say("hi")\n+say("bye")\n end\n')
    assert files_of(b) == {"m.py": 'say("bye")\nend\n'}


def test_apply_patch_delete_and_move():
    b = codex()
    patch(b, "*** Add File: a.py\n+a\n*** Add File: b.py\n+b\n")
    patch(b, "*** Delete File: a.py\n*** Update File: b.py\n*** Move to: pkg/c.py\n@@\n-b\n+c\n")
    assert files_of(b) == {"pkg/c.py": "c\n"}


def test_apply_patch_hunk_that_does_not_apply_loses_the_file():
    b = codex()
    patch(b, "*** Add File: a.py\n+a\n")
    patch(b, "*** Update File: a.py\n@@\n-nothing like this\n+b\n")
    result, _ = run(b)
    assert render(result, MemoryBlobs()) == {"a.py": LOST}
    reason = result.events[1].changes["a.py"].reason
    assert reason == "apply_patch update on did not match the known content"


def test_apply_patch_update_of_an_unknown_file_is_lost():
    b = codex()
    patch(b, "*** Update File: a.py\n@@\n-a\n+b\n")
    assert files_of(b) == {"a.py": LOST}


def test_failed_apply_patch_changes_nothing():
    b = codex()
    patch(
        b,
        "*** Add File: a.py\n+a\n",
        output='{"output":"apply_patch verification failed","metadata":{"exit_code":1}}',
    )
    assert files_of(b) == {}


def test_apply_patch_prefers_what_codex_reported_applying():
    b = codex()
    patch(b, "*** Add File: a.py\n+a\n+b\n")
    call_id = b.call("apply_patch", {"input": "*** Begin Patch\n(garbled)\n*** End Patch"}, "ok")
    b.extra_side["patches"] = {
        call_id: {
            "success": True,
            "changes": {
                "/repo/a.py": {"type": "update", "unified_diff": "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"}
            },
        }
    }
    assert files_of(b) == {"a.py": "a\nc\n"}


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


# -- shell writes parsed with certainty ---------------------------------------------------------


@pytest.mark.parametrize(
    "command, expected",
    [
        ("cat > a.txt <<'EOF'\nhello $USER\nEOF", {"a.txt": "hello $USER\n"}),
        ("cat <<-EOF > a.txt\n\tindented\n\tEOF", {"a.txt": "indented\n"}),
        ("cat > a.txt <<EOF\nhello $USER\nEOF", {"a.txt": LOST}),
        ("echo hello > a.txt", {"a.txt": "hello\n"}),
        ("echo -n 'no newline' > a.txt", {"a.txt": "no newline"}),
        ('echo "$HOME" > a.txt', {"a.txt": LOST}),
        ("printf 'x=%s\\n' 1 2 > a.txt", {"a.txt": "x=1\nx=2\n"}),
        ("printf '%d%%\\n' 42 > a.txt", {"a.txt": "42%\n"}),
        ("echo hello | tee a.txt b.txt", {"a.txt": "hello\n", "b.txt": "hello\n"}),
        ("mkdir -p out && touch out/empty.txt", {}),
        ("echo x >/dev/null 2>&1", {}),
        ("echo one > a.txt > b.txt", {"a.txt": "", "b.txt": "one\n"}),
        ("python gen.py > a.txt", {"a.txt": LOST, "**": UNCERTAIN}),
    ],
)
def test_shell_writes(command, expected):
    b = cc()
    bash(b, command)
    assert files_of(b) == expected


def test_append_to_known_content_stays_known_and_to_unknown_is_lost():
    b = cc()
    bash(b, "echo one > a.txt && echo two >> a.txt && echo three >> b.txt")
    assert files_of(b) == {"a.txt": "one\ntwo\n", "b.txt": LOST}


def test_rm_mv_cp_and_touch_on_known_files():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    b.call("Write", {"file_path": "/repo/src/x.py", "content": "x\n"}, "ok")
    b.call("Write", {"file_path": "/repo/src/y.py", "content": "y\n"}, "ok")
    bash(b, "cp a.py copy.py && mv a.py moved.py && mv src lib && cp -r lib lib2")
    bash(b, "rm -rf lib2 && rm lib/y.py && touch lib/y.py && touch copy.py")
    assert files_of(b) == {
        "copy.py": "a\n",
        "moved.py": "a\n",
        "lib/x.py": "x\n",
        "lib/y.py": "",
    }


def test_mv_into_a_directory_and_rm_by_glob():
    b = cc()
    for name in ("a.py", "b.py", "c.txt"):
        b.call("Write", {"file_path": f"/repo/{name}", "content": name}, "ok")
    bash(b, "mkdir -p pkg && mv a.py b.py pkg/ && rm pkg/*.py && mv c.txt pkg")
    assert files_of(b) == {"pkg/c.txt": "c.txt"}


def test_mv_of_an_unknown_file_loses_the_destination():
    b = cc()
    bash(b, "mv old.py new.py")
    result, _ = run(b)
    assert render(result, MemoryBlobs()) == {"new.py": LOST}
    assert result.events[0].changes["old.py"].kind is ChangeKind.DELETED


def test_a_failed_command_turns_its_certain_writes_into_lost():
    b = cc()
    bash(b, "echo x > a.txt && false", code=1)
    assert files_of(b) == {"a.txt": LOST}


def test_refused_command_changes_nothing():
    b = cc()
    b.call(
        "Bash",
        {"command": "rm -rf /repo"},
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        error=True,
    )
    assert files_of(b) == {}


@pytest.mark.parametrize(
    "command, expected",
    [
        ("sed -i 's/a/b/' a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("sed -i.bak -e 's/a/b/' a.py b.py", {"a.py": LOST, "b.py": LOST}),
        ("sed -n '1,5p' a.py", {"a.py": "a\n", "b.py": "b\n"}),
        ("perl -pi -e 's/a/b/' *.py", {"a.py": LOST, "b.py": LOST}),
        ("git checkout -- a.py", {"a.py": LOST, "b.py": "b\n"}),
        ("git stash", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
        ("ruff check --fix b.py", {"a.py": "a\n", "b.py": LOST}),
        ("black .", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
        ("python build.py", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
        ("./scripts/generate", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
        ("npm run format", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
        ("echo x > $OUT", {"a.py": LOST, "b.py": LOST, "**": UNCERTAIN}),
    ],
)
def test_commands_that_may_touch_files_mark_them_lost(command, expected):
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    b.call("Write", {"file_path": "/repo/b.py", "content": "b\n"}, "ok")
    bash(b, command)
    assert files_of(b) == expected


def test_uncertain_tree_covers_unseen_files_until_they_are_read():
    b = cc()
    b.call("Write", {"file_path": "/repo/src/a.py", "content": "a\n"}, "ok")
    bash(b, "cd src && python codegen.py")
    b.call("Read", {"file_path": "/repo/src/a.py"}, numbered("regenerated\n"))
    assert files_of(b) == {"src/a.py": "regenerated\n", "src/**": UNCERTAIN}


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat a.py",
        "grep -rn TODO . | head",
        "rg foo",
        "find . -name '*.py'",
        "git status && git diff && git log --oneline -5",
        "wc -l a.py",
        "python -c 'import sys; print(sys.version)'",
        "node -e 'console.log(1)'",
        "pytest -q",
        "npm test",
        "go test ./...",
        "cargo clippy",
        "tsc --noEmit",
        "if [ -f a.py ]; then echo yes; fi",
        "for f in *.py; do wc -l $f; done",
        "which python && python --version",
        "pip install requests",
        "source .venv/bin/activate && pytest",
        "curl -s https://example.com",
    ],
)
def test_read_only_commands_and_checks_mark_nothing_lost(command):
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, command)
    assert files_of(b) == {"a.py": "a\n"}


def test_inline_code_that_writes_makes_the_tree_uncertain():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a\n"}, "ok")
    bash(b, "python3 -c \"open('a.py', 'w').write('b')\"")
    assert files_of(b) == {"a.py": LOST, "**": UNCERTAIN}


def test_npm_install_loses_lockfile_and_node_modules_only():
    b = cc()
    b.call("Write", {"file_path": "/repo/index.js", "content": "x\n"}, "ok")
    bash(b, "npm install left-pad")
    assert files_of(b) == {
        "index.js": "x\n",
        "package-lock.json": LOST,
        "package.json": LOST,
        "node_modules/**": UNCERTAIN,
    }


def test_script_bodies_echoed_by_the_runner_decide_its_effects():
    # npm prints each script before running it: a check that formats with --write rewrites
    # sources, one that only type-checks does not.
    b = cc()
    b.call("Write", {"file_path": "/repo/a.ts", "content": "x\n"}, "ok")
    bash(b, "npm run check", "\n> app@1.0.0 check\n> tsc --noEmit\n\n")
    assert files_of(b) == {"a.ts": "x\n"}
    bash(b, "npm run check", "\n> app@1.0.0 check\n> biome check --write . && tsc --noEmit\n")
    assert files_of(b) == {"a.ts": LOST, "**": UNCERTAIN}


def test_lint_script_whose_commands_were_not_echoed_may_have_rewritten_files():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.ts", "content": "x\n"}, "ok")
    bash(b, "npm run lint 2>&1 | tail -3", "All good")
    assert files_of(b) == {"a.ts": LOST, "**": UNCERTAIN}


def test_formatter_that_reports_changing_nothing_leaves_files_known():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.ts", "content": "x\n"}, "ok")
    bash(b, "npx biome check --write .", "Checked 12 files in 3ms. No fixes applied.")
    assert files_of(b) == {"a.ts": "x\n"}
    bash(b, "npx biome check --write .", "Checked 12 files in 3ms. Fixed 1 file.")
    assert files_of(b) == {"a.ts": LOST, "**": UNCERTAIN}


def test_git_apply_of_a_known_patch_file():
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n one\n-two\n+deux\n"
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "one\ntwo\n"}, "ok")
    b.call("Write", {"file_path": "/repo/fix.patch", "content": diff}, "ok")
    bash(b, "git apply fix.patch")
    assert files_of(b)["a.py"] == "one\ndeux\n"


def test_nested_shell_scripts_are_walked():
    b = cc()
    bash(b, "bash -c 'cd sub && echo hi > f.txt'")
    assert files_of(b) == {"sub/f.txt": "hi\n"}


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


# -- paths and working directories ------------------------------------------------------------


def test_absolute_and_relative_paths_share_one_key():
    b = cc()
    b.call("Write", {"file_path": "/repo/src/a.py", "content": "1\n"}, "ok")
    bash(b, "echo 2 > src/./a.py")
    assert files_of(b) == {"src/a.py": "2\n"}


@pytest.mark.parametrize(
    "path, flag",
    [
        ("/etc/passwd", "escapes_root"),
        ("/repo/../../etc/passwd", "escapes_root"),
        ("/tmp/scratch.py", "escapes_root"),
        ("C:\\Users\\me\\app.py", "windows_path"),
        ("src\\app.py", "windows_path"),
    ],
)
def test_paths_outside_the_root_and_windows_paths_are_flagged_never_written(path, flag):
    b = cc()
    b.call("Write", {"file_path": path, "content": "x"}, "ok")
    result, _ = run(b)
    assert result.final_state == {}
    (change,) = result.events[0].changes.values()
    assert getattr(change, flag) is True
    assert change.flagged


def test_shell_writes_outside_the_root_are_flagged():
    b = cc()
    bash(b, "echo x > ../../outside.txt && echo y > /tmp/t.txt")
    result, _ = run(b)
    assert result.final_state == {}
    assert all(c.escapes_root for c in result.events[0].changes.values())


def test_home_directory_resolves_when_the_root_lies_in_it():
    b = AtifBuilder("claude-code", root="/home/me/proj")
    bash(b, "echo x > ~/proj/a.txt && echo y > ~/.bashrc")
    assert files_of(b, root="/home/me/proj") == {"a.txt": "x\n"}


def test_cd_persists_between_claude_code_bash_calls():
    b = cc()
    bash(b, "cd pkg")
    bash(b, "echo x > a.txt && (cd sub && echo y > b.txt) && echo z > c.txt")
    assert files_of(b) == {"pkg/a.txt": "x\n", "pkg/sub/b.txt": "y\n", "pkg/c.txt": "z\n"}


def test_recorded_cwd_in_side_data_wins():
    b = cc()
    bash(b, "cd pkg")
    bash(b, "echo x > a.txt", cwd="/repo/other")
    assert files_of(b) == {"other/a.txt": "x\n"}


def test_codex_and_pi_commands_start_in_their_workdir_each_time():
    b = codex()
    b.call("exec_command", {"cmd": "cd pkg"}, "Process exited with code 0\nOutput:\n")
    b.call("exec_command", {"cmd": "echo x > a.txt"}, "Process exited with code 0\nOutput:\n")
    b.call(
        "exec_command",
        {"cmd": "echo y > b.txt", "workdir": "/repo/w"},
        "Process exited with code 0\nOutput:\n",
    )
    assert files_of(b) == {"a.txt": "x\n", "w/b.txt": "y\n"}


def test_root_is_inferred_from_the_files_touched_when_unrecorded():
    b = AtifBuilder("claude-code", root=None)
    b.call("Write", {"file_path": "/work/app/src/a.py", "content": "a"}, "ok")
    b.call("Write", {"file_path": "/work/app/tests/b.py", "content": "b"}, "ok")
    result, _ = run(b, root=None)
    assert result.root == "/work/app"
    assert set(result.final_state) == {"src/a.py", "tests/b.py"}


def test_plain_atif_from_harbor_terminus_replays_keystrokes():
    b = AtifBuilder("terminus-2", root=None)
    b.call("bash_command", {"keystrokes": "cd /app\n", "duration": 0.1}, "")
    b.call("bash_command", {"keystrokes": "printf 'Hello, world!\\n' > hello.txt\n"}, "")
    b.call("bash_command", {"keystrokes": "q"}, "")  # input to a pager, not a command
    result, blobs = run(b, root=None)
    assert render(result, blobs) == {"app/hello.txt": "Hello, world!\n"}
    assert [c.command for c in result.commands] == [
        "cd /app",
        "printf 'Hello, world!\\n' > hello.txt",
    ]


# -- events and the state index ------------------------------------------------------------------


def test_events_follow_step_order_then_call_order():
    b = cc()
    b.user("go")
    b.call("Write", {"file_path": "/repo/a", "content": "a"}, "ok")
    b.steps[-1]["tool_calls"].append(
        {
            "tool_call_id": "second",
            "function_name": "Write",
            "arguments": {"file_path": "/repo/b", "content": "b"},
        }
    )
    b.steps[-1]["observation"]["results"].append({"source_call_id": "second", "content": "ok"})
    result, _ = run(b)
    assert [(e.index, e.step_index, e.step_id, list(e.changes)) for e in result.events] == [
        (0, 1, 2, ["a"]),
        (1, 1, 2, ["b"]),
    ]


def test_state_at_step_and_diff_against_the_previous_step():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "1"}, "ok")
    b.user("next")
    b.call("Write", {"file_path": "/repo/a.py", "content": "2"}, "ok")
    bash(b, "rm a.py")
    result, blobs = run(b)
    index = StateIndex.build(result, every=2)
    assert render(index.state_at_step(0), blobs) == {"a.py": "1"}
    assert render(index.state_at_step(1), blobs) == {"a.py": "1"}
    assert render(index.state_at_step(2), blobs) == {"a.py": "2"}
    assert index.state_at_step(3) == {}
    (changed,) = index.diff(2)
    assert changed.path == "a.py"
    assert changed.old is not None and changed.new is not None
    assert blobs.get(changed.old.sha or "") == b"1" and blobs.get(changed.new.sha or "") == b"2"
    (removed,) = index.diff(3)
    assert removed.new is None
    assert index.diff(1) == []
    assert index.diff_event(2) == index.diff(3)


def test_state_before_an_event_is_what_a_command_ran_against():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "1"}, "ok")
    bash(b, "pytest", "1 failed", code=1)
    b.call("Write", {"file_path": "/repo/a.py", "content": "2"}, "ok")
    bash(b, "pytest", "1 passed")
    result, blobs = run(b)
    index = StateIndex.build(result)
    failing, passing = result.checks
    assert render(index.state_before_event(failing.event_index), blobs) == {"a.py": "1"}
    assert render(index.state_before_event(passing.event_index), blobs) == {"a.py": "2"}


def test_index_round_trips_through_json():
    syn = claude_code_session(300, seed=3)
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=MemoryBlobs())
    index = StateIndex.build(result, every=16)
    stored = json.loads(json.dumps(index.to_dict()))
    loaded = StateIndex.from_dict(stored)
    for step in range(-1, result.n_steps, 7):
        assert loaded.state_at_step(step) == index.state_at_step(step)


def test_one_lookup_loads_one_checkpoint_and_one_block():
    syn = claude_code_session(500, seed=4)
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=MemoryBlobs())
    index = StateIndex.build(result, every=32)
    stored = json.loads(json.dumps(index.to_dict()))
    step = 411
    event = event_after_step(stored["step_events"], step)
    block, offset = locate(stored["every"], event)
    state = state_from(stored["checkpoints"][block], stored["blocks"][block][:offset])
    assert state == index.state_at_step(step)
    assert offset < stored["every"]


def test_lookup_cost_does_not_grow_with_position():
    syn = claude_code_session(20_000, seed=5)
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=MemoryBlobs())
    index = StateIndex.build(result, every=64)
    applied: list[int] = []

    class Counting(list):
        def __iter__(self):
            applied.append(len(self))
            return super().__iter__()

    index.deltas = [Counting(d) for d in index.deltas]
    costs = {}
    for step in (10, 5_000, 19_999):
        applied.clear()
        index.state_at_step(step)
        costs[step] = len(applied)
    assert all(cost < 64 for cost in costs.values()), costs
    assert max(costs.values()) - min(costs.values()) < 64


def test_synthetic_session_replays_to_its_ground_truth():
    syn = claude_code_session(2_000, seed=11)
    blobs = MemoryBlobs()
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=blobs)
    assert render(result, blobs) == syn.files
    assert [(c.step_index, c.exit_code) for c in result.checks] == syn.checks
    assert {c.check.kind for c in result.checks if c.check} == {"test"}


def test_summary_reports_files_commands_and_checks():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a"}, "ok")
    b.call("Edit", {"file_path": "/repo/b.py", "old_string": "x", "new_string": "y"}, "ok")
    bash(b, "cd api && go test ./...", "FAIL", code=1)
    bash(b, "ls")
    result, _ = run(b)
    summary = result.summary()
    assert json.loads(json.dumps(summary)) == summary
    assert summary["files_known"] == 1 and summary["files_lost"] == 1
    assert summary["commands"] == 2
    assert summary["checks"] == [
        {
            "step": 2,
            "event": 2,
            "command": "cd api && go test ./...",
            "cwd": "api",
            "exit_code": 1,
            "kind": "test",
            "language": "go",
            "runner": "go",
            "masked": False,
        }
    ]


# -- property: random access equals a naive full replay -------------------------------------------

NAMES = ["a.txt", "b.txt", "d/c.txt", "d/e.txt"]

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("edit"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("read"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("read_part"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("rm"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("mv"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("echo"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("append"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("sed"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("touch"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("script"), st.sampled_from(["", "d"]), st.integers(0, 0)),
    st.tuples(st.just("user"), st.just(""), st.integers(0, 0)),
)


def simulate(ops: list[tuple[str, str, int]]) -> tuple[AtifBuilder, list[dict[str, str]]]:
    """Play ``ops`` on a pretend disk and say, after each step, what replay must know."""
    disk: dict[str, str] = {}
    known: dict[str, str] = {}  # what replay should report (text | LOST | PARTIAL | UNCERTAIN)
    absent: set[str] = set()
    b = cc()
    snapshots = []
    for kind, name, n in ops:
        path = f"/repo/{name}"
        if kind == "write":
            disk[name] = known[name] = f"w{n}\n"
            absent.discard(name)
            b.call("Write", {"file_path": path, "content": disk[name]}, "ok")
        elif kind == "edit" and disk.get(name, "").split("\n")[0]:
            old = disk[name].split("\n")[0]
            disk[name] = disk[name].replace(old, f"{old}e{n}", 1)
            known[name] = disk[name] if known.get(name) not in (None, LOST, PARTIAL) else LOST
            b.call("Edit", {"file_path": path, "old_string": old, "new_string": f"{old}e{n}"}, "ok")
        elif kind == "read" and name in disk:
            known[name] = disk[name]
            b.call("Read", {"file_path": path}, numbered(disk[name]))
        elif kind == "read_part" and name in disk:
            if known.get(name) in (None, LOST, PARTIAL):
                known[name] = PARTIAL
            b.call(
                "Read",
                {"file_path": path, "offset": 1, "limit": 1},
                numbered(disk[name].split("\n")[0]),
            )
        elif kind == "rm" and name in disk:
            del disk[name]
            known.pop(name, None)
            absent.add(name)
            bash(b, f"rm {name}")
        elif kind == "mv" and name in disk:
            target = NAMES[n]
            if target == name:
                continue
            disk[target] = disk.pop(name)
            was = known.pop(name, None)
            known[target] = was if was not in (None, LOST, PARTIAL) else LOST
            absent.add(name)
            absent.discard(target)
            bash(b, f"mv {name} {target}")
        elif kind == "echo":
            disk[name] = known[name] = f"e{n}\n"
            absent.discard(name)
            bash(b, f"echo e{n} > {name}")
        elif kind == "append":
            base = known.get(name, "" if name in absent else None)
            disk[name] = disk.get(name, "") + f"a{n}\n"
            known[name] = base + f"a{n}\n" if base not in (None, LOST, PARTIAL) else LOST
            absent.discard(name)
            bash(b, f"echo a{n} >> {name}")
        elif kind == "sed" and name in disk:
            disk[name] = disk[name] + "s\n"
            known[name] = LOST
            bash(b, f"sed -i 's/$/s/' {name}")
        elif kind == "touch":
            if name not in disk:
                disk[name] = ""
                if name in absent:
                    known[name] = ""
                absent.discard(name)
            bash(b, f"touch {name}")
        elif kind == "script":
            marker = f"{name}/**" if name else "**"
            for key in list(known):
                if is_tree(key) and (not name or key.startswith(name + "/")):
                    del known[key]
                elif not name or key.startswith(name + "/"):
                    known[key] = LOST
            known[marker] = UNCERTAIN
            bash(b, "python tool.py" if not name else "(cd d && python tool.py)")
        elif kind == "user":
            b.user()
        else:
            continue
        snapshots.append(dict(known))
    return b, snapshots


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=25), st.integers(1, 5))
def test_state_at_every_step_equals_a_naive_full_replay(ops, every):
    b, expected = simulate(ops)
    atif, side = b.build()
    blobs = MemoryBlobs()
    result = replay(atif, side, root=ROOT, blobs=blobs)
    index = StateIndex.build(result, every=every)
    for step in range(len(atif["steps"])):
        truncated = {**atif, "steps": atif["steps"][: step + 1]}
        naive = replay(truncated, side, root=ROOT, blobs=blobs).final_state
        assert index.state_at_step(step) == naive
        assert render(naive, blobs) == expected[step]
