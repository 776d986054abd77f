"""Replay on the real public trajectories in ../shared/corpus.

Ingest (``trajectories.core.formats.load``) turns each file into ATIF plus side data; these
tests skip when that module or the corpus is absent.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import (
    ChangeKind,
    ReplayResult,
    ShellCommand,
    StateIndex,
    Status,
    replay,
)
from trajectories.core.replay.reads import parse_read

formats = pytest.importorskip("trajectories.core.formats")

pytestmark = pytest.mark.corpus

CODEX_ROLLOUT = (
    "codex/codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
PI_SESSIONS = ["session.jsonl", "large-session.jsonl", "compact.jsonl", "before-compaction.jsonl"]
ENTIREIO = "claude-code/entireio-cli-checkpoints"


@cache
def loaded(path: Path):  # noqa: ANN201 - formats.Loaded
    return formats.load(path)


@cache
def replayed(path: Path) -> ReplayResult:
    result = loaded(path)
    return replay(result.atif, result.side_data, root=result.meta.cwd, blobs=MemoryBlobs())


def trajectories(corpus: Path) -> Iterator[Path]:
    for path in formats.discover([corpus]):
        if not isinstance(loaded(path), formats.NotTrajectory):
            yield path


def fail_then_pass(commands: list[ShellCommand]) -> list[tuple[ShellCommand, ShellCommand]]:
    """Pairs (failing check, next passing run of the same kind of check in the same place).

    A masked failure (`mise run fmt && mise run test` failing in fmt) is not the check's own.
    """
    pairs = []
    for i, failing in enumerate(commands):
        if failing.check is None or not failing.exit_code or failing.check.masked:
            continue
        for later in commands[i + 1 :]:
            same = (
                later.check is not None
                and later.check.kind == failing.check.kind
                and later.check.cwd == failing.check.cwd
                and later.check.target == failing.check.target
            )
            if same and later.exit_code is not None:
                if later.exit_code == 0:
                    pairs.append((failing, later))
                break
    return pairs


def test_every_corpus_trajectory_replays_and_indexes(corpus):
    paths = list(trajectories(corpus))
    assert len(paths) > 40
    for path in paths:
        result = replayed(path)
        index = StateIndex.build(result, every=16)
        assert index.state_at_step(result.n_steps - 1) == dict(result.final_state), path
        assert len(result.events) == sum(
            len(s.get("tool_calls") or []) for s in loaded(path).atif["steps"]
        ), path


def test_no_full_read_contradicts_known_content_unless_a_user_turn_intervened(corpus):
    # A full read (a Read tool or a shell read such as `cat f`) that disagrees with content the
    # replay claimed to know means the replay was wrong, unless a person changed the file
    # between turns ("i undid your changes").
    full_reads = 0
    for path in trajectories(corpus):
        result = replayed(path)
        steps = loaded(path).atif["steps"]
        index = StateIndex.build(result, every=32)
        last_set: dict[str, int] = {}
        for event in result.events:
            for key, change in event.changes.items():
                if change.observed and change.kind is ChangeKind.WRITTEN:
                    full_reads += 1
                    before = index.state_before_event(event.index).get(key)
                    if before is not None and before.status is Status.KNOWN:
                        if before.sha != change.sha:
                            between = steps[last_set[key] + 1 : event.step_index]
                            assert any(s.get("source") == "user" for s in between), (
                                path,
                                event.index,
                                key,
                            )
                last_set[key] = event.step_index
    assert full_reads > 100


def test_shell_reads_never_lose_anything_and_only_codex_reads_establish_content(corpus):
    seen: dict[tuple[str, str], int] = {}
    for path in trajectories(corpus):
        result = replayed(path)
        for command in result.commands:
            if parse_read(command.command) is None:
                continue
            changes = result.events[command.event_index].changes.values()
            assert all(c.observed for c in changes), (path, command.index)
            for change in changes:
                kind = (result.agent or "", str(change.kind))
                seen[kind] = seen.get(kind, 0) + 1
                if change.kind is ChangeKind.WRITTEN:
                    assert result.agent == "codex", (path, command.index)
                    assert change.reason.startswith("read in full by ")
    # Codex shows whole files (cat package.json) and parts; pi and Claude Code only parts.
    assert {kind for kind in seen} >= {
        ("codex", "written"),
        ("codex", "partial"),
        ("pi", "partial"),
    }


def test_claude_code_reads_without_side_data_match_the_recorded_file_content(corpus):
    # Stripping Read's `cat -n` prefixes must give exactly what toolUseResult.file.content says.
    compared = 0
    for path in trajectories(corpus):
        result = loaded(path)
        if result.format != "claude-code":
            continue
        with_side = replayed(path)
        without = replay(result.atif, None, root=result.meta.cwd, blobs=MemoryBlobs())
        for a, b in zip(with_side.events, without.events, strict=True):
            if a.tool != "Read":
                continue
            for key, change in a.changes.items():
                other = b.changes.get(key)
                full = change.observed and change.kind is ChangeKind.WRITTEN
                if full and other is not None and other.sha:
                    assert other.sha == change.sha, (path, a.index, key)
                    compared += 1
    assert compared > 30


@pytest.mark.parametrize(
    "name, fixed_by",
    [
        ("large-session.jsonl", "edit"),
        ("compact.jsonl", "edit"),
        ("before-compaction.jsonl", "edit"),
        # Here the type errors came from a stale build of a sibling package: rebuilding it
        # (`npm run build` in packages/agent) made the same check pass without an edit.
        ("session.jsonl", "npm run build"),
    ],
)
def test_pi_npm_run_check_fails_then_passes(corpus, name, fixed_by):
    result = replayed(corpus / "pi" / "badlogic-pi-mono" / name)
    checks = [c for c in result.commands if c.check and c.check.target == "check"]
    pairs = fail_then_pass(checks)
    assert pairs, name
    for failing, _ in pairs:
        assert failing.check and failing.check.runner == "npm" and failing.check.language == "node"
        assert failing.exit_code in (1, 2) and "npm run check" in failing.command
    fixes = []
    for failing, passing in pairs:
        for event in result.events[failing.event_index + 1 : passing.event_index]:
            if event.tool in ("edit", "write") and event.changes:
                fixes.append("edit")
            elif event.command_index is not None:
                command = result.commands[event.command_index].command
                if command.endswith("npm run build 2>&1"):
                    fixes.append("npm run build")
    assert fixed_by in fixes, name


def test_pi_check_that_formats_with_biome_is_uncertain_only_when_biome_fixed_something(corpus):
    # pi-mono's `npm run check` is `biome check --write . && …`; npm echoes that body, and
    # biome reports "No fixes applied." or "Fixed N files." for each package it checks.
    result = replayed(corpus / "pi" / "badlogic-pi-mono" / "before-compaction.jsonl")
    runs = [c for c in result.commands if c.check and "> biome check --write" in c.output]
    fixed = [c for c in runs if re.search(r"Fixed \d+ files?", c.output)]
    clean = [c for c in runs if "Fixed" not in c.output and "No fixes applied" in c.output]
    assert fixed and clean
    for command in fixed:
        assert "**" in result.events[command.event_index].changes, command.index
    for command in clean:
        biome_runs = command.output.count("> biome check --write")
        if command.output.count("No fixes applied") >= biome_runs:
            assert "**" not in result.events[command.event_index].changes, command.index


def test_codex_vitest_case_fails_then_passes_after_two_apply_patch_edits(corpus):
    result = replayed(corpus / CODEX_ROLLOUT)
    vitest = [c for c in result.commands if c.check and "Compaction Config" in c.command]
    failing, passing = vitest
    assert (failing.exit_code, passing.exit_code) == (1, 0)
    assert failing.check == passing.check
    assert failing.check is not None
    assert (failing.check.kind, failing.check.runner, failing.check.language) == (
        "test",
        "npm",
        "node",
    )
    assert "vitest --run" in failing.output and "FAIL" in failing.output
    between = result.events[failing.event_index + 1 : passing.event_index]
    patches = [e for e in between if e.tool == "apply_patch"]
    assert [list(e.changes) for e in patches] == [
        ["src/agents/plugins/codemie-code.plugin.ts"],
        ["src/agents/plugins/opencode/opencode.plugin.ts"],
    ]
    build = [c for c in result.commands if c.command == "npm run build"]
    assert [(c.exit_code, c.check and c.check.kind) for c in build] == [(0, "build")]


def test_codex_patches_on_files_seen_only_in_part_are_lost_not_invented(corpus):
    # Codex read the plugin files with `sed -n` ranges that never showed a whole file:
    # codemie-code.plugin.ts only lines 70-400, opencode.plugin.ts lines 1-230 of more. The
    # test file it saw only inside `sed … && rg …` lines, which are not simple reads.
    result = replayed(corpus / CODEX_ROLLOUT)
    index = StateIndex.build(result)
    first_patch = min(e.index for e in result.events if e.tool == "apply_patch")
    last_patch = max(e.index for e in result.events if e.tool == "apply_patch")
    before = {k: e.status for k, e in index.state_before_event(first_patch).items()}
    assert before == {
        "docs/AGENTS.md": Status.PARTIAL,
        "src/agents/plugins/codemie-code-hooks/shell-hooks-source.ts": Status.PARTIAL,
        "src/agents/plugins/codemie-code.plugin.ts": Status.PARTIAL,
        "src/agents/plugins/opencode/opencode.plugin.ts": Status.PARTIAL,
        "src/utils/config.ts": Status.PARTIAL,
    }
    after = {k: e.status for k, e in index.state_after_event(last_patch).items()}
    assert after == before | {
        "src/agents/plugins/__tests__/codemie-code-reasoning.test.ts": Status.LOST,
        "src/agents/plugins/codemie-code.plugin.ts": Status.LOST,
        "src/agents/plugins/opencode/opencode.plugin.ts": Status.LOST,
    }


def test_codex_sed_read_that_filled_its_range_is_partial_even_where_uncut(corpus):
    # `sed -n '1,230p' opencode.plugin.ts`: the end event's aggregated_output was cut
    # ("…331 chars truncated…"); the model's view (the write_stdin poll) was complete, and
    # showed all 230 lines of the range, ending inside a doc comment: the file goes on.
    result = replayed(corpus / CODEX_ROLLOUT)
    (read,) = [c for c in result.commands if c.command.startswith("sed -n '1,230p'")]
    assert "chars truncated…" in read.output
    poll = next(
        r["content"]
        for s in loaded(corpus / CODEX_ROLLOUT).atif["steps"]
        for r in (s.get("observation") or {}).get("results") or []
        if "Process exited with code 0" in str(r["content"])
        and "Original token count: 2583" in str(r["content"])
    )
    shown = poll.split("\nOutput:\n", 1)[1]
    assert "truncated" not in shown and shown.count("\n") == 230
    change = result.events[read.event_index].changes[
        "src/agents/plugins/opencode/opencode.plugin.ts"
    ]
    assert (change.kind, change.observed) == (ChangeKind.PARTIAL, True)


def test_codex_cat_establishes_package_json_byte_for_byte(corpus):
    result = replayed(corpus / CODEX_ROLLOUT)
    (cat,) = [c for c in result.commands if c.command == "cat package.json"]
    change = result.events[cat.event_index].changes["package.json"]
    assert (change.kind, change.observed, change.reason) == (
        ChangeKind.WRITTEN,
        True,
        "read in full by cat",
    )
    assert cat.output.startswith('{\n  "name": "@codemieai/code",')
    assert cat.output.endswith('"node": ">=20.0.0"\n  }\n}\n')  # the final newline kept
    assert change.sha == hashlib.sha256(cat.output.encode()).hexdigest()


def test_codex_build_script_that_runs_a_node_script_makes_the_tree_uncertain(corpus):
    # npm echoes `tsc && tsc-alias && npm run copy-plugin` and `node scripts/copy-plugins.js`.
    result = replayed(corpus / CODEX_ROLLOUT)
    (build,) = [c for c in result.commands if c.command == "npm run build"]
    assert "> node scripts/copy-plugins.js" in build.output
    reasons = {c.reason for c in result.events[build.event_index].changes.values()}
    assert reasons == {"script may write files: node scripts/copy-plugins.js"}


@pytest.mark.parametrize(
    "session, failing_command",
    [
        ("42/d34ec97ff8/0", "go test ./cmd/entire/cli/trailers/... -v -run TestParseCheckpoint"),
        ("00/c9e2351016/3", "mise run test"),
        ("4c/06989c549b/0", "mise run test"),
        ("4d/e153fa6df6/0", "mise run test -- ./redact/..."),
        ("13/340918e71b/0", "mise run test 2>&1"),
    ],
)
def test_entireio_go_tests_fail_then_pass(corpus, session, failing_command):
    result = replayed(corpus / ENTIREIO / session / "full.jsonl")
    tests = [c for c in result.commands if c.check and c.check.kind == "test"]
    pairs = fail_then_pass(tests)
    assert any(f.command == failing_command for f, _ in pairs), [f.command for f, _ in pairs]
    for failing, passing in pairs:
        assert failing.check is not None and failing.check.language == "go"
        assert failing.exit_code == 1 and passing.exit_code == 0
        assert "FAIL" in failing.output and not failing.check.masked


def test_entireio_state_before_the_failing_go_test_is_known(corpus):
    # The files the agent read and edited before the failing run are all known.
    result = replayed(corpus / ENTIREIO / "42/d34ec97ff8/0/full.jsonl")
    index = StateIndex.build(result)
    failing = next(c for c in result.commands if c.check and c.exit_code == 1)
    state = index.state_before_event(failing.event_index)
    assert {k: e.status for k, e in state.items()} == {
        "cmd/entire/cli/trailers/trailers.go": Status.KNOWN,
        "cmd/entire/cli/trailers/trailers_test.go": Status.KNOWN,
        "cmd/entire/cli/checkpoint/id/id.go": Status.KNOWN,
    }


def test_entireio_formatter_run_makes_the_tree_uncertain(corpus):
    result = replayed(corpus / ENTIREIO / "42/d34ec97ff8/0/full.jsonl")
    fmt = next(c for c in result.commands if c.command.startswith("mise run fmt"))
    assert "[fmt] $ gofmt -w ." in fmt.output
    assert "**" in result.events[fmt.event_index].changes


def test_harbor_export_of_claude_code_reads_exit_codes_from_text(corpus):
    path = (
        corpus
        / "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc"
        / "agent/trajectory.json"
    )
    result = replayed(path)
    pytest_runs = [(c.exit_code, c.check and c.check.masked) for c in result.checks]
    assert pytest_runs[0] == (1, False)  # "No module named pytest"
    assert pytest_runs[1] == (0, False)
