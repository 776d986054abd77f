"""The repair family on the real trajectories in ../shared/corpus (skipped when absent)."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from tasks_review.core.mining import DropReason, find_repair_candidates
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.formats import NotTrajectory, discover, load
from trajectories.core.replay import StateIndex, Status, replay

pytestmark = pytest.mark.corpus

CODEX_VITEST = (
    "codex/codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
PI = "pi/badlogic-pi-mono"
PDFMINER = (
    "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc"
)


@cache
def mined(path: Path):
    loaded = load(path)
    assert not isinstance(loaded, NotTrajectory), path
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    index = StateIndex.build(result)
    candidates, drops = find_repair_candidates(result, index, blobs, loaded.atif)
    return result, index, blobs, candidates, drops


def test_codex_vitest_repair_is_dropped_because_codex_never_showed_the_whole_files(corpus):
    # Codex read both plugin files with `sed -n`, which the replay now takes as reads, but no
    # read showed either file whole, so the content its two apply_patch calls updated is not
    # known and no starting state can be laid down:
    # - codemie-code.plugin.ts: `sed -n` ranges 330-400, 250-340, 150-210 (and 70-150 inside a
    #   `sed … && sed …` line): lines 1-69 and after 400 were never shown;
    # - opencode.plugin.ts: `sed -n '1,230p'` printed all 230 lines of its range (the file goes
    #   on, the last line is inside a doc comment), and its aggregated_output was also cut
    #   ("…331 chars truncated…").
    result, index, _, candidates, drops = mined(corpus / CODEX_VITEST)
    assert candidates == []
    (drop,) = drops
    assert (drop.fail_command_index, drop.pass_command_index) == (31, 32)
    failing = result.commands[drop.fail_command_index]
    assert "Compaction Config" in failing.command and failing.exit_code == 1
    assert result.commands[drop.pass_command_index].exit_code == 0
    assert drop.reason is DropReason.FIX_TOUCHES_LOST_FILE
    plugins = (
        "src/agents/plugins/codemie-code.plugin.ts",
        "src/agents/plugins/opencode/opencode.plugin.ts",
    )
    assert drop.detail == "content unknown at the start or the reference: " + ", ".join(plugins)
    start = index.state_before_event(failing.event_index)
    assert [start[p].status for p in plugins] == [Status.PARTIAL, Status.PARTIAL]
    reads = [
        (c.command, result.events[c.event_index].changes[p].reason)
        for c in result.commands[: failing.index]
        for p in plugins
        if p in result.events[c.event_index].changes
    ]
    assert reads == [
        (
            "sed -n '1,230p' src/agents/plugins/opencode/opencode.plugin.ts",
            "read in part by sed",
        ),
        ("sed -n '330,400p' src/agents/plugins/codemie-code.plugin.ts", "read in part by sed"),
    ]


@pytest.mark.parametrize(
    "name, pairs",
    [("before-compaction.jsonl", [(19, 20), (25, 29)]), ("compact.jsonl", [(123, 131)])],
)
def test_pi_npm_run_check_repairs_drop_because_package_json_was_never_seen(corpus, name, pairs):
    # pi never showed package.json: the task could not define `npm run check`.
    _, _, _, candidates, drops = mined(corpus / PI / name)
    assert candidates == []
    unseen = [d for d in drops if d.reason is DropReason.CHECK_MANIFEST_UNSEEN]
    assert [(d.fail_command_index, d.pass_command_index) for d in unseen] == pairs
    for drop in unseen:
        assert "npm run check needs package.json" in drop.detail


def test_pi_repairs_whose_fix_touched_unread_files_are_dropped(corpus):
    _, _, _, _, drops = mined(corpus / PI / "compact.jsonl")
    assert [(d.fail_command_index, d.pass_command_index, d.reason) for d in drops] == [
        (123, 131, DropReason.CHECK_MANIFEST_UNSEEN),
        (141, 143, DropReason.FIX_TOUCHES_LOST_FILE),
        (183, 186, DropReason.FIX_TOUCHES_LOST_FILE),
        (187, 188, DropReason.FIX_TOUCHES_LOST_FILE),
    ]


def test_pi_check_fixed_by_rebuilding_a_sibling_package_is_no_change(corpus):
    # session.jsonl: the type errors came from a stale build; `npm run build` fixed them.
    _, _, _, candidates, drops = mined(corpus / PI / "session.jsonl")
    assert candidates == []
    assert [d.reason for d in drops] == [DropReason.NO_CHANGE]


@pytest.mark.parametrize(
    "relative",
    [
        "agent/trajectory.json",
        "agent/sessions/projects/-testbed/ca4291e5-5178-4fdb-972b-f6b4d6c26a65.jsonl",
    ],
)
def test_evolving_skills_missing_pytest_is_a_package_install_fix(corpus, relative):
    result, _, _, candidates, drops = mined(corpus / PDFMINER / relative)
    assert candidates == []
    (drop,) = drops
    assert "No module named pytest" in result.commands[drop.fail_command_index].output
    assert drop.reason is DropReason.PACKAGE_INSTALL_FIX
    assert "pip install pytest" in drop.detail


def test_no_evolving_skills_session_yields_a_candidate(corpus):
    # The other sessions ran pytest through `| tail`/`| head`, so their statuses are masked.
    reasons: Counter[str] = Counter()
    for path in discover([corpus / "evolving-skills"]):
        if isinstance(load(path), NotTrajectory):
            continue
        _, _, _, candidates, drops = mined(path)
        assert candidates == [], path
        reasons.update(str(d.reason) for d in drops)
    assert reasons == Counter({"package_install_fix": 2})


@pytest.mark.parametrize(
    "relative, pairs",
    [
        ("claude-code/entireio-cli-checkpoints/42/d34ec97ff8/0/full.jsonl", [(0, 1)]),
        ("claude-code/entireio-cli-checkpoints/13/340918e71b/0/full.jsonl", [(37, 38), (46, 47)]),
    ],
)
def test_entireio_go_repairs_drop_because_go_mod_was_never_seen(corpus, relative, pairs):
    # The sessions read and edited packages of github.com/entireio/cli but never showed its
    # go.mod: Go builds no package outside a module, and the module path cannot be made up.
    _, _, _, candidates, drops = mined(corpus / relative)
    assert candidates == []
    go = [d for d in drops if d.language == "go" and d.command.startswith("go ")]
    assert [(d.fail_command_index, d.pass_command_index) for d in go] == pairs
    for drop in go:
        assert drop.reason is DropReason.CHECK_MANIFEST_UNSEEN
        assert (
            drop.detail
            == "a Go check needs go.mod in . or above, which the trajectory never showed"
        )


EVOLVING = (
    "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc"
)
ENTIRE = "claude-code/entireio-cli-checkpoints"
# Every repair the corpus holds and what mining makes of it. The three Go repairs were
# candidates before Go checks needed a go.mod the trajectory showed; setup-prefixed pairing,
# services and script resolution change nothing else here (the corpus's prefixed checks all
# went through a pipe: `pytest … 2>&1 | tail`).
CORPUS_OUTCOMES = [
    (f"{ENTIRE}/00/c9e2351016/3/full.jsonl", (0, 1), "check_manifest_unseen"),
    (f"{ENTIRE}/13/340918e71b/0/full.jsonl", (37, 38), "check_manifest_unseen"),
    (f"{ENTIRE}/13/340918e71b/0/full.jsonl", (40, 41), "check_manifest_unseen"),
    (f"{ENTIRE}/13/340918e71b/0/full.jsonl", (42, 43), "check_manifest_unseen"),
    (f"{ENTIRE}/13/340918e71b/0/full.jsonl", (46, 47), "check_manifest_unseen"),
    (f"{ENTIRE}/13/340918e71b/0/full.jsonl", (48, 49), "check_manifest_unseen"),
    (f"{ENTIRE}/13/340918e71b/0/full.jsonl", (50, 51), "check_manifest_unseen"),
    (f"{ENTIRE}/42/d34ec97ff8/0/full.jsonl", (0, 1), "check_manifest_unseen"),
    (f"{ENTIRE}/4c/06989c549b/0/full.jsonl", (0, 1), "check_manifest_unseen"),
    (f"{ENTIRE}/4d/e153fa6df6/0/full.jsonl", (0, 1), "check_manifest_unseen"),
    (CODEX_VITEST, (31, 32), "fix_touches_lost_file"),
    (
        f"{EVOLVING}/agent/sessions/projects/-testbed/ca4291e5-5178-4fdb-972b-f6b4d6c26a65.jsonl",
        (0, 3),
        "package_install_fix",
    ),
    (f"{EVOLVING}/agent/trajectory.json", (0, 3), "package_install_fix"),
    (f"{PI}/before-compaction.jsonl", (12, 14), "fix_touches_lost_file"),
    (f"{PI}/before-compaction.jsonl", (19, 20), "check_manifest_unseen"),
    (f"{PI}/before-compaction.jsonl", (25, 29), "check_manifest_unseen"),
    (f"{PI}/compact.jsonl", (123, 131), "check_manifest_unseen"),
    (f"{PI}/compact.jsonl", (141, 143), "fix_touches_lost_file"),
    (f"{PI}/compact.jsonl", (183, 186), "fix_touches_lost_file"),
    (f"{PI}/compact.jsonl", (187, 188), "fix_touches_lost_file"),
    (f"{PI}/session.jsonl", (41, 65), "no_change"),
]


def corpus_outcomes(corpus: Path) -> list[tuple[str, tuple[int, int], str]]:
    found = []
    for path in discover([corpus]):
        if isinstance(load(path), NotTrajectory):
            continue
        _, _, _, candidates, drops = mined(path)
        relative = str(path.relative_to(corpus))
        for c in candidates:
            found.append((relative, (c.fail_command_index, c.pass_command_index), "candidate"))
        for d in drops:
            found.append((relative, (d.fail_command_index, d.pass_command_index), str(d.reason)))
    return sorted(found)


def test_every_corpus_repair_is_mined_to_its_known_outcome(corpus):
    assert corpus_outcomes(corpus) == sorted(CORPUS_OUTCOMES)


def test_every_corpus_trajectory_mines_without_error_and_keys_are_unique_per_repair(corpus):
    for path in discover([corpus]):
        if isinstance(load(path), NotTrajectory):
            continue
        _, _, _, candidates, drops = mined(path)
        keys = [c.key for c in candidates]
        assert len(keys) == len(set(keys)), path
        for drop in drops:
            assert drop.stage == "mine" and drop.detail
