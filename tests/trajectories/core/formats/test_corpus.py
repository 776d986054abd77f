"""The ingest format layer on the real public trajectories in ../shared/corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from atif_make import convert

from trajectories.core.formats import IngestError, Loaded, NotTrajectory, discover, load
from trajectories.core.formats.converter import to_dict

pytestmark = pytest.mark.corpus

LoadOutcome = Loaded | NotTrajectory | IngestError

PDFMINER = (
    "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc"
)
PDFMINER_SESSION = (
    f"{PDFMINER}/agent/sessions/projects/-testbed/ca4291e5-5178-4fdb-972b-f6b4d6c26a65"
)
PDFMINER_SUBAGENT = f"{PDFMINER_SESSION}/subagents/agent-a90795522da6172b3.jsonl"
CODEX_FIX = (
    "codex/codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
CODEX_EVENTS = (
    "codex/codemie-code/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)
OPENCLAW = "openclaw-harbor-15735640198/clawbench-19-kimi2.6"


def expected_format(relative: str) -> str | None:
    """What each corpus file is, from where the corpus README files it."""
    name = relative.rsplit("/", 1)[-1]
    if relative.startswith("pi/") or "/openclaw-sessions/" in relative:
        return "pi"
    if relative.startswith("codex/"):
        return "codex"
    if relative.endswith(".jsonl") and (
        relative.startswith("claude-code/") or "/agent/sessions/" in relative
    ):
        return "claude-code"
    if relative.startswith("atif/") or name == "trajectory.json":
        return "atif"
    return None


@pytest.fixture(scope="module")
def outcomes(corpus: Path) -> dict[str, LoadOutcome]:
    found: dict[str, LoadOutcome] = {}
    for path in discover([corpus]):
        relative = path.relative_to(corpus).as_posix()
        try:
            found[relative] = load(path)
        except IngestError as error:
            found[relative] = error
    return found


def loaded(outcomes: dict[str, LoadOutcome], relative: str) -> Loaded:
    outcome = outcomes[relative]
    assert isinstance(outcome, Loaded), outcome
    return outcome


def test_no_corpus_file_is_an_ingest_error(outcomes: dict[str, LoadOutcome]) -> None:
    errors = {k: str(v) for k, v in outcomes.items() if isinstance(v, IngestError)}
    assert errors == {}


def test_every_corpus_trajectory_loads_with_its_format_and_steps(
    outcomes: dict[str, LoadOutcome],
) -> None:
    wrong = {}
    for relative, outcome in outcomes.items():
        fmt = expected_format(relative)
        if fmt is None:
            continue
        if not isinstance(outcome, Loaded) or outcome.format != fmt or outcome.meta.steps < 1:
            wrong[relative] = outcome
    assert wrong == {}
    counts = {
        fmt: sum(1 for r in outcomes if expected_format(r) == fmt)
        for fmt in ("atif", "claude-code", "codex", "pi")
    }
    assert counts == {"atif": 22, "claude-code": 23, "codex": 3, "pi": 6}


def test_every_other_corpus_file_is_not_a_trajectory_with_a_reason(
    outcomes: dict[str, LoadOutcome],
) -> None:
    others = {r: o for r, o in outcomes.items() if expected_format(r) is None}
    assert len(others) >= 30
    for relative, outcome in others.items():
        assert isinstance(outcome, NotTrajectory), relative
        assert outcome.reason.startswith("not a trajectory: "), relative
    swe = [o for r, o in others.items() if r.endswith(".traj")]
    assert {o.reason for o in swe} == {"not a trajectory: SWE-agent .traj (unsupported format)"}


def test_corpus_output_is_json_safe_and_atif_files_need_no_repair(
    outcomes: dict[str, LoadOutcome],
) -> None:
    for relative, outcome in outcomes.items():
        if isinstance(outcome, Loaded):
            json.dumps(outcome.atif, allow_nan=False)
            json.dumps(outcome.side_data, allow_nan=False)
            if outcome.format == "atif" and "openclaw" in relative:
                # OpenClaw's export cut the results' trailing white space; the log beside
                # it gives it back (test_twins_corpus), and that is the only repair.
                [note] = outcome.side_data["normalised"]
                assert note.startswith("restored the trailing white space"), relative
            elif outcome.format == "atif":
                assert "normalised" not in outcome.side_data, relative


def test_the_pdfminer_subagent_names_its_parent_session(outcomes: dict[str, LoadOutcome]) -> None:
    meta = loaded(outcomes, PDFMINER_SUBAGENT).meta
    assert meta.is_subagent
    assert meta.parent_session_id == "ca4291e5-5178-4fdb-972b-f6b4d6c26a65"
    assert meta.parent_session_id == loaded(outcomes, f"{PDFMINER_SESSION}.jsonl").meta.session_id


def test_the_pdfminer_session_points_at_its_subagent_file_instead_of_embedding_it(
    outcomes: dict[str, LoadOutcome], corpus: Path
) -> None:
    session = loaded(outcomes, f"{PDFMINER_SESSION}.jsonl")
    assert "subagent_trajectories" not in session.atif
    [subagent] = session.side_data["subagents"]
    where = (corpus / PDFMINER_SESSION).parent / subagent["path"]
    assert where == corpus / PDFMINER_SUBAGENT
    assert subagent["tool_call_id"] in {
        c["tool_call_id"] for s in session.atif["steps"] for c in s.get("tool_calls") or ()
    }


@pytest.mark.parametrize(
    ("relative", "task", "reward"),
    [
        (f"{PDFMINER_SESSION}.jsonl", "pdfminer__pdfminer.six.1a8bd2f7.func_basic__2p4c9qvt", 1.0),
        (
            f"{PDFMINER}/agent/trajectory.json",
            "pdfminer__pdfminer.six.1a8bd2f7.func_basic__2p4c9qvt",
            1.0,
        ),
        (
            "evolving-skills/jobs_copy/2026-04-13__06-09-31/mozilla__bleach.73871d76.func_ba__kwVZBCH"
            "/agent/learning/trajectory.json",
            "mozilla__bleach.73871d76.func_basic__sxigc5v7",
            0.0,
        ),
        (
            f"{OPENCLAW}/t3-data-pipeline-report__25HCHpE/steps/run/agent/openclaw-sessions"
            "/ade56673-37d9-4d03-a525-072041d6bcc2.jsonl",
            "clawbench/t3-data-pipeline-report",
            0.4075,
        ),
    ],
    ids=["claude-code", "atif", "atif-zero-reward", "pi-multi-step-trial"],
)
def test_trajectories_in_harbor_trial_folders_carry_task_and_reward(
    outcomes: dict[str, LoadOutcome], relative: str, task: str, reward: float
) -> None:
    meta = loaded(outcomes, relative).meta
    assert (meta.harbor_task, meta.harbor_reward) == (task, reward)


def test_every_trajectory_in_a_trial_folder_has_a_task(outcomes: dict[str, LoadOutcome]) -> None:
    for relative, outcome in outcomes.items():
        if isinstance(outcome, Loaded) and relative.startswith(("evolving-skills/", "openclaw")):
            assert outcome.meta.harbor_task, relative
            assert outcome.meta.harbor_reward is not None, relative
        elif isinstance(outcome, Loaded):
            assert outcome.meta.harbor_task is None, relative


def _active_branch_calls(path: Path) -> tuple[set[str], int]:
    """Tool-call ids on the path from the last entry to the root, read independently."""
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by_id = {e["id"]: e for e in entries if "id" in e and e.get("type") != "session"}
    current = [e for e in entries if e.get("type") != "session"][-1]["id"]
    branch = []
    while current is not None:
        branch.append(by_id[current])
        current = by_id[current].get("parentId")
    found = {
        part["id"]
        for e in branch
        if e.get("type") == "message"
        for part in e["message"].get("content") or ()
        if isinstance(part, dict) and part.get("type") == "toolCall"
    }
    return found, len(branch)


def test_pi_v3_sessions_follow_the_active_branch(
    outcomes: dict[str, LoadOutcome], corpus: Path
) -> None:
    trees = [r for r in outcomes if "/openclaw-sessions/" in r]
    assert len(trees) == 2
    for relative in trees:
        result = loaded(outcomes, relative)
        expected, length = _active_branch_calls(corpus / relative)
        got = {c["tool_call_id"] for s in result.atif["steps"] for c in s.get("tool_calls") or ()}
        assert got == expected, relative
        assert result.side_data["pi_tree"]["on_branch"] == length
        assert result.atif["agent"]["extra"]["session_version"] == 3


def test_pi_v1_sessions_recover_two_objects_written_on_one_line(
    outcomes: dict[str, LoadOutcome],
) -> None:
    session = loaded(outcomes, "pi/badlogic-pi-mono/session.jsonl")
    # Line 440 holds an assistant "Done." and the user's "ok" that followed it.
    stamps = {s.get("timestamp"): s for s in session.atif["steps"]}
    assert stamps["2025-12-17T20:52:31.250Z"]["message"] == "Done."
    assert stamps["2025-12-17T21:20:35.077Z"]["message"] == "ok"
    compact = loaded(outcomes, "pi/badlogic-pi-mono/compact.jsonl")
    assert compact.meta.steps > 500
    assert compact.side_data["media"]  # its screenshots travel with it


def test_pi_v1_sessions_keep_failed_checks_as_errors(outcomes: dict[str, LoadOutcome]) -> None:
    session = loaded(outcomes, "pi/badlogic-pi-mono/before-compaction.jsonl")
    errors = [
        r
        for s in session.atif["steps"]
        for r in (s.get("observation") or {}).get("results") or ()
        if (r.get("extra") or {}).get("is_error")
    ]
    assert any("Command exited with code" in (r.get("content") or "") for r in errors)
    assert any("compaction" in (s.get("extra") or {}) for s in session.atif["steps"])


def test_claude_code_edits_in_the_corpus_keep_their_original_file(
    outcomes: dict[str, LoadOutcome],
) -> None:
    edits = 0
    for outcome in outcomes.values():
        if not isinstance(outcome, Loaded) or outcome.format != "claude-code":
            continue
        raw = outcome.side_data["tool_results"]
        for step in outcome.atif["steps"]:
            for call in step.get("tool_calls") or ():
                result = raw.get(call["tool_call_id"])
                # A rejected edit's raw result is the rejection message, a string.
                if call["function_name"] == "Edit" and isinstance(result, dict):
                    edits += 1
                    assert "originalFile" in result
                    assert "structuredPatch" in result
                    assert call["tool_call_id"] in outcome.side_data["cwd"]
    assert edits >= 50


def test_codex_rollout_keeps_the_failing_then_passing_test_runs(
    outcomes: dict[str, LoadOutcome],
) -> None:
    side = loaded(outcomes, CODEX_FIX).side_data
    runs = [c for c in side["commands"].values() if str(c["command"]).startswith("npm test")]
    assert [c["exit_code"] for c in runs] == [1, 0, 0]
    assert all(c["output"] for c in runs)
    assert len(side["patches"]) == 3 and all(p["success"] for p in side["patches"].values())
    assert len(side["polls"]) >= 50


def test_codex_rollout_with_user_words_only_in_events_gets_user_steps(
    outcomes: dict[str, LoadOutcome],
) -> None:
    result = loaded(outcomes, CODEX_EVENTS)
    users = [s for s in result.atif["steps"] if s["source"] == "user"]
    assert len(users) == 3
    assert result.meta.title.startswith("analyze trascript and summarzie action items")
    stamps = [s["timestamp"] for s in result.atif["steps"] if s.get("timestamp")]
    assert stamps == sorted(stamps)


def test_the_linear_serialiser_writes_what_atif_make_writes_for_every_corpus_log(
    outcomes: dict[str, LoadOutcome], corpus: Path
) -> None:
    checked = 0
    for relative, outcome in outcomes.items():
        if isinstance(outcome, Loaded) and outcome.format in ("claude-code", "codex"):
            trajectory, _ = convert(corpus / relative)
            assert to_dict(trajectory) == trajectory.to_dict(), relative
            checked += 1
    assert checked == 26
