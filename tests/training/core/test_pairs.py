"""Step alignment of two rollouts of one task, and the candidate preference pairs, on synthetic
trajectories and on recorded Harbor runs."""

from __future__ import annotations

import doctest
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from training.core import pairs as pairs_module
from training.core.pairs import (
    AlignedRow,
    PairBasis,
    Rollout,
    align,
    candidate_pairs,
    step_key,
)


def user(text: str) -> dict[str, Any]:
    return {"source": "user", "message": text}


def say(text: str, reasoning: str | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "agent", "message": text}
    if reasoning is not None:
        step["reasoning_content"] = reasoning
    return step


def call(name: str, call_id: str = "c1", output: str = "ok", **arguments: Any) -> dict[str, Any]:
    return {
        "source": "agent",
        "message": f"Executed {name} {call_id}",
        "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments}],
        "observation": {"results": [{"source_call_id": call_id, "content": output}]},
    }


def rows(alignment) -> list[tuple[int | None, int | None, bool]]:
    return [(r.a, r.b, r.same) for r in alignment.rows]


def test_two_equal_trajectories_align_row_for_row_without_a_divergence():
    steps = [user("fix add"), call("Bash", command="pytest"), say("Fixed.")]
    alignment = align(steps, [dict(s) for s in steps])
    assert (alignment.prefix, alignment.divergence, alignment.identical) == (3, None, True)
    assert rows(alignment) == [(0, 0, True), (1, 1, True), (2, 2, True)]


def test_run_noise_does_not_end_the_shared_prefix():
    # Another run of the same actions: its own call ids (also inside the message), timestamps,
    # metrics, whitespace and tool output timings.
    a = [user("fix add"), call("Bash", "toolu_01", "1 failed in 0.31s", command="pytest -q")]
    b = [
        {**user("fix  add\n"), "timestamp": "2026-05-01T10:00:00Z"},
        {
            **call("Bash", "call_function_x7_1", "1 failed in 0.29s", command="pytest -q"),
            "metrics": {"prompt_tokens": 900},
            "extra": {"cwd": "/testbed"},
        },
    ]
    assert align(a, b).identical


def test_different_reasoning_is_a_different_step():
    a = [user("fix add"), say("", reasoning="Run the tests first."), call("Bash", command="pytest")]
    b = [user("fix add"), say("", reasoning="Read calc.py first."), call("Bash", command="pytest")]
    alignment = align(a, b)
    assert (alignment.prefix, alignment.divergence) == (1, 1)
    assert rows(alignment) == [(0, 0, True), (1, 1, False), (2, 2, True)]


def test_arguments_compare_as_json_not_as_key_order():
    a = [call("Edit", path="calc.py", old="-", new="+")]
    b = [call("Edit", new="+", old="-", path="calc.py")]
    assert step_key(a[0]) == step_key(b[0])
    assert not align(a, [call("Edit", path="calc.py", old="-", new="*")]).identical


def test_a_trajectory_that_stops_early_diverges_where_it_ends():
    a = [user("fix add"), call("Bash", command="pytest")]
    b = [*a, call("Edit", path="calc.py"), say("Done.")]
    alignment = align(a, b)
    assert (alignment.prefix, alignment.divergence) == (2, 2)
    assert rows(alignment) == [(0, 0, True), (1, 1, True), (None, 2, False), (None, 3, False)]


def test_the_tails_line_up_by_action_when_the_prose_differs():
    a = [
        user("fix add"),
        say("Let me look around."),
        call("Bash", command="ls"),
        call("Bash", command="pytest"),
        say("All green."),
    ]
    b = [
        user("fix add"),
        say("I will run the tests."),
        call("Bash", command="pytest"),
        call("Edit", path="calc.py"),
        call("Bash", command="pytest"),
        say("Fixed it."),
    ]
    alignment = align(a, b)
    assert alignment.divergence == 1
    assert rows(alignment) == [
        (0, 0, True),
        (1, 1, False),  # prose against prose
        (2, 2, False),  # a listed the files where b ran the tests
        (None, 3, False),  # only b edited
        (3, 4, True),  # both ended by running pytest
        (4, 5, False),  # and saying so in their own words
    ]


def test_every_step_appears_once_in_order_on_each_side():
    rng = random.Random(7)
    actions = [call("Bash", command=c) for c in ("ls", "pytest", "cat a.py", "git diff")]
    prose = [say(t) for t in ("Looking.", "Thinking.", "Next.")]
    for _ in range(50):
        a = [user("task")] + [rng.choice(actions + prose) for _ in range(rng.randint(0, 30))]
        b = [user("task")] + [rng.choice(actions + prose) for _ in range(rng.randint(0, 30))]
        alignment = align(a, b)
        side_a = [r.a for r in alignment.rows if r.a is not None]
        side_b = [r.b for r in alignment.rows if r.b is not None]
        assert side_a == list(range(len(a))) and side_b == list(range(len(b)))
        assert all(
            r.same == (step_key(a[r.a]) == step_key(b[r.b]))
            for r in alignment.rows
            if r.a is not None and r.b is not None
        )
        assert alignment.rows[: alignment.prefix] == tuple(
            AlignedRow(i, i, True) for i in range(alignment.prefix)
        )


def test_long_trajectories_still_match_their_frequent_steps():
    # difflib's autojunk would drop a key that fills more than 1% of a 200+ step sequence.
    body = [say("Thinking."), call("Bash", command="pytest")] * 150
    a = [user("task"), say("First a.")] + body
    b = [user("task"), say("First b."), call("Bash", command="ls")] + body
    alignment = align(a, b)
    matched = sum(1 for r in alignment.rows if r.same)
    assert matched == 1 + len(body)


def rollout(tid: str, reward: float | None, passed: bool | None = None, **kw: Any) -> Rollout:
    passed = (reward or 0) >= 1.0 if passed is None else passed
    return Rollout(tid, kw.pop("task", "t1"), reward=reward, passed=passed, **kw)


def test_pairs_with_different_outcomes_come_first_then_rewards_then_path_quality():
    rollouts = [
        rollout("1", 1.0),
        rollout("2", 1.0),
        rollout("3", 0.0),
        rollout("4", 0.5),
        rollout("5", None),  # never verified: not paired
        rollout("6", 0.0),
    ]
    found = [(p.a.trajectory_id, p.b.trajectory_id, p.basis) for p in candidate_pairs(rollouts)]
    assert found == [
        ("1", "3", PairBasis.OUTCOME),
        ("1", "6", PairBasis.OUTCOME),
        ("2", "3", PairBasis.OUTCOME),
        ("2", "6", PairBasis.OUTCOME),
        ("1", "4", PairBasis.OUTCOME),
        ("2", "4", PairBasis.OUTCOME),
        ("3", "4", PairBasis.REWARD),
        ("4", "6", PairBasis.REWARD),
        ("1", "2", PairBasis.PATH_QUALITY),
    ]  # 3 and 6 both failed with the same reward: no pair


def test_the_reward_prefers_one_side_except_on_path_quality():
    outcome, *_, quality = candidate_pairs(
        [rollout("8", 0.0), rollout("9", 1.0), rollout("10", 1.0)]
    )
    assert outcome.preferred is not None and outcome.preferred.trajectory_id == "9"
    assert outcome.reward_gap == 1.0
    assert quality.basis is PairBasis.PATH_QUALITY and quality.preferred is None
    assert (quality.a.trajectory_id, quality.b.trajectory_id) == ("9", "10")  # "10" after "9"


def test_pairs_never_join_a_trajectory_with_itself_or_with_its_copy():
    with pytest.raises(ValueError, match="given twice"):
        candidate_pairs([rollout("1", 1.0), rollout("1", 0.0)])
    same_bytes = [rollout("1", 1.0, source_sha256="ab"), rollout("2", 0.0, source_sha256="ab")]
    assert candidate_pairs(same_bytes) == []


def test_pairs_stay_within_a_task_and_the_order_does_not_depend_on_the_input():
    rollouts = [
        rollout(str(i), r, task=t, agent=a, model=m)
        for i, (r, t, a, m) in enumerate(
            [
                (1.0, "t2", "claude", "opus"),
                (0.0, "t1", "codex", "gpt"),
                (1.0, "t1", "codex", "o3"),
                (0.0, "t2", "pi", "kimi"),
                (0.2, "t1", "claude", "opus"),
            ]
        )
    ]
    expected = candidate_pairs(rollouts)
    assert all(p.a.task_id == p.b.task_id == p.task_id for p in expected)
    for seed in range(5):
        shuffled = rollouts[:]
        random.Random(seed).shuffle(shuffled)
        assert candidate_pairs(shuffled) == expected
    by_id = {(p.a.trajectory_id, p.b.trajectory_id): p for p in expected}
    assert by_id[("0", "3")].differs_in == ("agent", "model")
    assert by_id[("1", "2")].differs_in == ("model",)
    assert len(candidate_pairs(rollouts, per_task=1)) == 2


# Recorded Harbor runs (see ../shared/corpus/README.md).
BLEACH = [
    "evolving-skills/jobs_copy/2026-04-13__06-09-31/mozilla__bleach.73871d76.func_ba__kwVZBCH",
    "evolving-skills/jobs_copy/2026-04-13__06-59-50/mozilla__bleach.73871d76.func_ba__2HEi2yq",
]
LINE_PROFILER = [
    "evolving-skills/jobs_copy/2026-04-13__06-09-31/pyutils__line_profiler.a646bf0f.__UPWAM6C",
    "evolving-skills/jobs_copy/2026-04-13__06-59-50/pyutils__line_profiler.a646bf0f.__hsfb47w",
]
OPENCLAW_T4 = (
    "openclaw-harbor-15735640198/clawbench-19-kimi2.6/t4-browser-research-and-code__56zvvqY"
)


def trial_rollout(trial: Path) -> Rollout:
    result = json.loads((trial / "result.json").read_text())
    reward = result["verifier_result"]["rewards"]["reward"]
    raw = (trial / "agent" / "trajectory.json").read_bytes()
    atif = json.loads(raw)
    return Rollout(
        trial.name,
        result["task_name"],
        reward=reward,
        passed=reward >= 1.0,
        agent=atif["agent"]["name"],
        model=atif["agent"].get("model_name") or "",
        source_sha256=hashlib.sha256(raw).hexdigest(),
    )


def steps(corpus: Path, trial: str, inner: str = "agent/trajectory.json") -> list[dict[str, Any]]:
    return json.loads((corpus / trial / inner).read_text())["steps"]


@pytest.mark.corpus
def test_two_recorded_runs_of_one_task_diverge_at_their_prompts_and_line_up_by_action(corpus):
    a, b = (steps(corpus, t) for t in BLEACH)
    # The runs were given different versions of the prompt (its skill-writing rules changed
    # between them), so nothing is shared: the divergence is the request itself.
    assert a[0]["message"] != b[0]["message"]
    alignment = align(a, b)
    assert (alignment.prefix, alignment.divergence) == (0, 0)
    # Yet both began by globbing **/*.py, each with its own call id: the same step, side by side.
    first_same = next(r for r in alignment.rows if r.same)
    assert (first_same.a, first_same.b) == (3, 3)
    assert a[3]["tool_calls"][0]["arguments"] == {"pattern": "**/*.py"}
    assert [r.a for r in alignment.rows if r.a is not None] == list(range(len(a)))
    assert [r.b for r in alignment.rows if r.b is not None] == list(range(len(b)))


@pytest.mark.corpus
def test_two_conversions_of_one_recorded_run_align_as_identical(corpus):
    # The trial's top-level ATIF and the step's copy differ only in per-step `extra`.
    alignment = align(
        steps(corpus, OPENCLAW_T4), steps(corpus, OPENCLAW_T4, "steps/run/agent/trajectory.json")
    )
    assert alignment.identical and alignment.prefix == 25


@pytest.mark.corpus
def test_recorded_runs_pair_on_path_quality_when_both_pass_and_not_at_all_when_both_fail(corpus):
    rollouts = [trial_rollout(corpus / t) for t in BLEACH + LINE_PROFILER]
    found = candidate_pairs(rollouts)
    assert [(p.task_id, p.basis) for p in found] == [
        ("pyutils__line_profiler.a646bf0f.func_pm_ctrl_shuffle__cp1dr0aq", PairBasis.PATH_QUALITY)
    ]
    assert found[0].differs_in == ()  # same agent and model; two runs all the same


def test_the_module_docstring_example_runs():
    failures, tried = doctest.testmod(pairs_module, report=False)
    assert tried > 0 and failures == 0
