"""Codex apply_patch on the replayed files: applied where the content is known, lost where not."""

from __future__ import annotations

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import LOST, codex, files_of, render, run


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
