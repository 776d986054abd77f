"""The fix of a repair: the files at either end, and what reads in the window tell."""

from __future__ import annotations

import dataclasses

import pytest

from tasks_review.core.mining import DropReason, find_repair_candidates
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, replay

from .repair_helpers import ROOT, Mined, Session, assert_drop, python_story, texts


def test_a_file_first_read_between_the_runs_was_there_at_the_start():
    helper = "def double(x):\n    return 2 * x\n"
    mined = (
        python_story()
        .read("helpers.py", helper)
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    candidate = mined.only
    assert texts(candidate.start_files, mined.blobs)["helpers.py"] == helper
    assert texts(candidate.ref_files, mined.blobs)["helpers.py"] == helper
    assert candidate.changed == ("calc.py",)


def test_files_seen_only_in_part_and_left_alone_are_listed_unknown_and_left_out():
    mined = (
        python_story()
        .read_part("big_module.py", ["import os", "import sys"])
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    candidate = mined.only
    assert candidate.unknown_paths == ("big_module.py",)
    assert "big_module.py" not in candidate.start_files
    assert "big_module.py" not in candidate.ref_files


def test_writes_to_scratch_space_outside_the_project_are_not_part_of_the_fix():
    mined = (
        python_story()
        .write("/tmp/debug_calc.py", "print(1)\n")
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
        .mine()
    )
    assert mined.only.changed == ("calc.py",)


def _with_read_change(session: Session, path: str, **fields) -> Mined:
    """Mine ``session`` after rewriting the change its reads recorded for ``path``."""
    atif, side = session.builder.build()
    blobs = MemoryBlobs()
    result = replay(atif, side, root=session.root, blobs=blobs)
    events = tuple(
        dataclasses.replace(
            event,
            changes={
                key: dataclasses.replace(change, **fields) if key == path else change
                for key, change in event.changes.items()
            },
        )
        for event in result.events
    )
    result = dataclasses.replace(result, events=events)
    candidates, drops = find_repair_candidates(result, StateIndex.build(result), blobs, atif)
    return Mined(candidates, drops, blobs)


def test_the_miner_tells_reads_from_writes_by_the_observed_flag_not_the_reason():
    helper = "def double(x):\n    return 2 * x\n"
    story = (
        python_story()
        .read("helpers.py", helper)
        .edit("calc.py", "a - b", "a + b")
        .run("python -m pytest -q", output="1 passed")
    )
    as_read = _with_read_change(story, "helpers.py", reason="looked at", observed=True).only
    assert as_read.changed == ("calc.py",) and "helpers.py" in as_read.start_files
    # The same change with the old reason text but not marked observed is a write in the fix.
    as_write = _with_read_change(story, "helpers.py", reason="read in full", observed=False).only
    assert as_write.added == ("helpers.py",) and "helpers.py" not in as_write.start_files


# -- Codex: files read with the shell, then patched ----------------------------------------------

PLUGIN_A = (
    "export function buildConfig() {\n  return {\n    share: 'disabled',\n"
    "    provider: {},\n  };\n}\n"
)
PLUGIN_B = (
    "export const plugin = {\n  config() {\n    return {\n        share: 'disabled',\n"
    "        provider: {},\n    };\n  },\n};\n"
)
PLUGIN_TEST = (
    "import { describe, expect, it } from 'vitest';\nimport { buildConfig } from './a.plugin';\n\n"
    "describe('Compaction Config', () => {\n  it('defaults to 90%', () => {\n"
    "    expect(buildConfig().compaction).toEqual({ auto: true, threshold: 0.9 });\n  });\n});\n"
)
PACKAGE = '{\n  "name": "plugins",\n  "scripts": {\n    "test": "vitest"\n  }\n}\n'
VITEST = 'npm test -- --run src/plugins.test.ts -t "Compaction Config"'
HUNK_A = (
    "*** Update File: src/a.plugin.ts\n@@\n     share: 'disabled',\n"
    "+    compaction: { auto: true, threshold: 0.9 },\n     provider: {},\n"
)
HUNK_B = (
    "*** Update File: src/b.plugin.ts\n@@\n         share: 'disabled',\n"
    "+        compaction: { auto: true, threshold: 0.9 },\n         provider: {},\n"
)


class CodexSession(Session):
    """A Codex rollout as ingest gives it: exec_command results behind Codex's envelope."""

    def __init__(self, root: str = ROOT) -> None:
        super().__init__(root, agent="codex")

    def run(self, command: str, *, fail: bool = False, output: str = "") -> CodexSession:
        code = 1 if fail else 0
        text = (
            f"Chunk ID: 9c1e2f\nWall time: 0.2000 seconds\nProcess exited with code {code}\n"
            f"Original token count: {(len(output) + 3) // 4}\nOutput:\n{output}"
        )
        self.builder.call("exec_command", {"cmd": command, "workdir": self.root}, text)
        return self

    def patch(self, body: str) -> CodexSession:
        self.builder.call(
            "apply_patch",
            {"input": f"*** Begin Patch\n{body}*** End Patch\n"},
            "Success. Updated the following files:\n",
        )
        return self


def codex_vitest_story(read_b: str = "head -n 400 src/b.plugin.ts", *, early: bool = True):
    """Codex reads the project with the shell, the vitest case fails, two patches fix it."""
    session = (
        CodexSession()
        .user("Make the default context compaction threshold 90%.")
        .run("cat package.json", output=PACKAGE)
        .run("sed -n '1,200p' src/a.plugin.ts", output=PLUGIN_A)
        .run("cat src/plugins.test.ts", output=PLUGIN_TEST)
    )
    if early:
        session.run(read_b, output=PLUGIN_B)
    session.run(VITEST, fail=True, output="FAIL src/plugins.test.ts > Compaction Config\n")
    if not early:
        session.run(read_b, output=PLUGIN_B)
    return session.patch(HUNK_A).patch(HUNK_B).run(VITEST, output=" Test Files  1 passed (1)\n")


@pytest.mark.parametrize("early", [True, False])
def test_codex_shell_reads_then_apply_patch_make_a_repair_candidate(early):
    # Read in full before the failing run, or between the runs (it was there all along).
    mined = codex_vitest_story(early=early).mine()
    candidate = mined.only
    assert (candidate.runner, candidate.language, candidate.check_kind) == ("npm", "node", "test")
    assert (candidate.fail_command_index, candidate.pass_command_index) == (
        (4, 5) if early else (3, 5)
    )
    start = texts(candidate.start_files, mined.blobs)
    ref = texts(candidate.ref_files, mined.blobs)
    assert start == {
        "package.json": PACKAGE,
        "src/a.plugin.ts": PLUGIN_A,
        "src/b.plugin.ts": PLUGIN_B,
        "src/plugins.test.ts": PLUGIN_TEST,
    }
    assert candidate.modified == ("src/a.plugin.ts", "src/b.plugin.ts")
    assert not candidate.added and not candidate.deleted
    assert ref == start | {
        "src/a.plugin.ts": PLUGIN_A.replace(
            "    provider", "    compaction: { auto: true, threshold: 0.9 },\n    provider"
        ),
        "src/b.plugin.ts": PLUGIN_B.replace(
            "        provider",
            "        compaction: { auto: true, threshold: 0.9 },\n        provider",
        ),
    }


@pytest.mark.parametrize(
    "read_b",
    [
        "sed -n '1,8p' src/b.plugin.ts",  # all 8 lines of the range: the file may go on
        "sed -n '2,40p' src/b.plugin.ts",  # not from the first line
        "head -n 400 src/b.plugin.ts | cat",  # not a simple read
    ],
)
def test_codex_repair_on_a_file_seen_only_in_part_is_dropped(read_b):
    drop = codex_vitest_story(read_b).mine().dropped
    assert_drop(drop, DropReason.FIX_TOUCHES_LOST_FILE, "src/b.plugin.ts")
    assert "src/a.plugin.ts" not in drop.detail
