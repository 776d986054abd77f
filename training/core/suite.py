"""Suites written for the trainer seed's harness, scored by ours: ``evaluate --suite FILE``.

code, payload = evaluate_suite_file(Path("suite.json"))
payload["summary"]       # {"taskCount": 3, "passed": 2, "failed": 1, "averageReward": 0.833, …}
code                     # 0 gate passed, 1 gate failed, 2 bad input (payload["error"] says why)

The format (see TRAINER-HARNESS.md) is checked by ``suite.schema.json``. Scoring keeps the
seed's shape (matched actions and evidence over all of them, in order when
``actionOrderRequired``; pass at ``passReward`` or ``defaultPassReward``) with our rules:

- A needle matches an argument value whole, as a path suffix (``src/app.js`` matches
  ``/repo/src/app.js``, not ``src/app.js.bak``) or as command tokens (``npm test`` matches
  ``cd web && npm test -- --run``), never as a substring of the serialised arguments.
- An evidence needle matches an artifact's kind, name, path or status whole, or its content,
  stdout or stderr at word boundaries ("0 failed" does not match "10 failed").
- A task with no expectations, or an evidence item with nothing to match, is bad input.
- Every trajectory is scored, not only the last per task; a task passes when it has at least
  one trajectory and all of them pass. ``averageReward`` is the mean of the tasks' mean rewards
  (a task without trajectories counts 0).
- Self-reported success without matching evidence scores 0 and is flagged ``selfReportOnly``:
  no evidence matched, yet the final state claims success or repeats an evidence needle.

Unhooks are the seed's: an object with a name, a command or procedure and ``validated: true``
counts; a bare string is a suggestion. (Our own deployments prove an unhook by a recorded
drill; a suite only carries the boolean.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .claims import claims_success
from .facts.shell import shell_pipelines
from .spec import RewardOptions, schema_problems

SCHEMA_PATH = Path(__file__).with_name("suite.schema.json")
EXIT_GATE_PASSED = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
_WHOLE_FIELDS = ("kind", "name", "status")
_TEXT_FIELDS = ("content", "stdout", "stderr")
SUGGESTED_UNHOOKS = (
    "reset sandbox fixture",
    "revert workspace snapshot",
    "disable adapter and fall back to base model",
    "drop generated trajectories that cannot be replayed deterministically",
)


class SuiteError(ValueError):
    """A suite that cannot be scored; ``problems`` name where (JSON path) and what."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid suite:\n" + "\n".join(f"  {p}" for p in problems))


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def evaluate_suite_file(path: Path) -> tuple[int, dict[str, Any]]:
    """Read, validate and score a suite file: (exit code, the JSON object to print)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        return EXIT_BAD_INPUT, {"error": f"cannot read {path}: {error.strerror or error}"}
    except UnicodeDecodeError as error:
        where = f"byte 0x{error.object[error.start]:02x} at offset {error.start}"
        return EXIT_BAD_INPUT, {"error": f"{path} is not UTF-8 text ({where})"}
    # json and the schema validator both recurse per level: a deep file is bad input, not a crash.
    too_deep = {"error": f"{path} is nested too deeply to read as a suite"}
    try:
        document = json.loads(text)
    except RecursionError:
        return EXIT_BAD_INPUT, too_deep
    except ValueError as error:
        return EXIT_BAD_INPUT, {"error": f"{path} is not JSON: {error}"}
    try:
        report = evaluate_suite(document)
    except RecursionError:
        return EXIT_BAD_INPUT, too_deep
    except SuiteError as error:
        return EXIT_BAD_INPUT, {"error": f"{path} is not a valid suite", "problems": error.problems}
    return exit_code(report), report


def exit_code(report: Mapping[str, Any]) -> int:
    """0 when the eval gate passed, 1 when it failed (bad input is 2, before any report)."""
    return EXIT_GATE_PASSED if report["summary"]["evalGatePassed"] else EXIT_GATE_FAILED


def evaluate_suite(suite: Any) -> dict[str, Any]:
    """Score every trajectory of a suite and build the seed-shaped report; raises SuiteError."""
    problems = schema_problems(_validator(), suite)
    if problems:
        raise SuiteError(problems)
    tasks: list[Mapping[str, Any]] = suite["tasks"]
    trajectories: list[Mapping[str, Any]] = suite.get("trajectories", [])
    _check_meaning(tasks, trajectories)
    options = RewardOptions.from_seed(suite.get("rewardSpec"))
    by_task: dict[str, list[tuple[int, Mapping[str, Any]]]] = {t["id"]: [] for t in tasks}
    for index, trajectory in enumerate(trajectories):
        by_task[trajectory["taskId"]].append((index, trajectory))

    rows: list[dict[str, Any]] = []
    training_rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for task in tasks:
        scored = [
            score_trajectory(task, trajectory, options, index=index)
            for index, trajectory in by_task[task["id"]]
        ]
        rewards = [s["reward"] for s in scored]
        passed = sum(s["pass"] for s in scored)
        rows.append(
            {
                "taskId": task["id"],
                "instruction": task.get("instruction", ""),
                "trajectoryCount": len(scored),
                "passedTrajectories": passed,
                "reward": round(sum(rewards) / len(rewards), 3) if rewards else 0.0,
                "pass": bool(scored) and passed == len(scored),
                "passAt1": round(passed / len(scored), 3) if scored else 0.0,
                "trajectories": scored,
            }
        )
        for s in scored:
            chosen = s["pass"] and not s["selfReportOnly"]
            training_rows.append(
                {
                    "taskId": task["id"],
                    "trajectory": s["trajectory"],
                    "reward": s["reward"],
                    "preference": "chosen" if chosen else "rejected",
                }
            )
        if not scored:
            warnings.append(f"task {task['id']!r} has no trajectory: it fails the gate")
        if not _evidence_of(task):
            warnings.append(
                f"task {task['id']!r} has no artifact-backed evidence: its reward rests on "
                "actions alone"
            )

    unhooks = suite.get("unhooks", [])
    validated = [u for u in unhooks if _validated(u)]
    unhooks_ready = bool(validated) if options.require_validated_unhooks else True
    passed_tasks = sum(row["pass"] for row in rows)
    gate = passed_tasks == len(tasks)
    if not gate:
        warnings.append("eval gate failed; do not deploy an adapted agent from this report")
    if not unhooks_ready:
        warnings.append(
            "no validated unhooks supplied; do not deploy an adapted agent from this report"
        )
    summary = {
        "taskCount": len(tasks),
        "trajectoryCount": len(trajectories),
        "passed": passed_tasks,
        "failed": len(tasks) - passed_tasks,
        "averageReward": round(sum(row["reward"] for row in rows) / len(rows), 3),
        "evalGatePassed": gate,
        "unhooksReady": unhooks_ready,
        "validatedUnhookCount": len(validated),
        "deployable": gate and unhooks_ready,
        "warnings": warnings,
    }
    return {
        "agent": suite.get("agent", {}),
        "rewardSpec": options.to_seed(),
        "summary": summary,
        "rows": rows,
        "trainingRows": training_rows,
        "validatedUnhooks": validated,
        "suggestedUnhooks": [u for u in unhooks if isinstance(u, str)] or list(SUGGESTED_UNHOOKS),
        # The seed's harness reports warnings beside the summary; tools written for it read them
        # there.
        "warnings": warnings,
    }


def score_trajectory(
    task: Mapping[str, Any],
    trajectory: Mapping[str, Any],
    options: RewardOptions,
    *,
    index: int = 0,
) -> dict[str, Any]:
    """One trajectory against its task: the seed's row for it, scored by our rules."""
    actions = trajectory.get("actions", [])
    artifacts = trajectory.get("artifacts", [])
    expected_actions = task.get("expectedActions", [])
    evidence = _evidence_of(task)
    action_results = _match_actions(expected_actions, actions, options.order_required)
    evidence_results: list[dict[str, Any]] = [
        {
            "kind": item.get("kind") or "any",
            "contains": _needles(item.get("contains")),
            "exitCode": item.get("exitCode"),
            "matched": any(_artifact_matches(a, item) for a in artifacts),
        }
        for item in evidence
    ]
    matched_evidence = sum(e["matched"] for e in evidence_results)
    earned = sum(a["matched"] for a in action_results) + matched_evidence
    possible = len(expected_actions) + len(evidence)
    score = round(earned / possible, 3)
    final_state = str(trajectory.get("finalState", ""))
    repeats_needle = any(
        _in_text(needle, final_state)
        for item in evidence
        for needle in _needles(item.get("contains"))
    )
    self_report_only = (
        bool(evidence) and matched_evidence == 0 and (claims_success(final_state) or repeats_needle)
    )
    reward = 0.0 if self_report_only else score
    threshold = float(task.get("passReward", options.pass_threshold))
    artifact_text = "\n".join(
        str(a.get(f))
        for a in artifacts
        for f in (*_WHOLE_FIELDS, "path", *_TEXT_FIELDS)
        if a.get(f)
    )
    return {
        "trajectory": trajectory.get("id", index),
        "reward": reward,
        "score": score,
        "pass": reward >= threshold and not self_report_only,
        "actionResults": action_results,
        "evidenceResults": evidence_results,
        "selfReportOnly": self_report_only,
        "failureModes": [
            mode
            for mode in task.get("failureModes", [])
            if not mode.get("clearWhenContains") or mode["clearWhenContains"] not in artifact_text
        ],
    }


def _check_meaning(
    tasks: Sequence[Mapping[str, Any]], trajectories: Sequence[Mapping[str, Any]]
) -> None:
    """What the schema cannot say: unique ids, known task ids, no vacuous expectations."""
    problems: list[str] = []
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        if task["id"] in seen:
            problems.append(f"$.tasks[{i}].id: {task['id']!r} is used by an earlier task")
        seen.add(task["id"])
        if not task.get("expectedActions") and not _evidence_of(task):
            problems.append(
                f"$.tasks[{i}]: task {task['id']!r} has no expectedActions and no evidence; "
                "it would score every trajectory 1"
            )
        for j, item in enumerate(task.get("expectedEvidence", [])):
            # What _artifact_matches filters on: an empty kind, status or list of needles
            # filters nothing, so {"contains": []} matched every artifact.
            where = f"$.tasks[{i}].expectedEvidence[{j}]"
            if not (
                item.get("kind")
                or "exitCode" in item
                or item.get("status")
                or _needles(item.get("contains"))
            ):
                problems.append(
                    f"{where}: matches any artifact; give it a kind, contains, exitCode or status"
                )
            problems += _empty_needles(item.get("contains"), f"{where}.contains")
        for j, item in enumerate(task.get("expectedActions", [])):
            where = f"$.tasks[{i}].expectedActions[{j}].argsContains"
            problems += _empty_needles(item.get("argsContains"), where)
    for i, trajectory in enumerate(trajectories):
        if trajectory["taskId"] not in seen:
            problems.append(f"$.trajectories[{i}].taskId: {trajectory['taskId']!r} names no task")
    if problems:
        raise SuiteError(problems)


def _empty_needles(value: Any, where: str) -> list[str]:
    if "" not in _needles(value):
        return []
    return [f"{where}: an empty needle matches nothing useful; drop it or write what to find"]


def _evidence_of(task: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    explicit: list[Mapping[str, Any]] = task.get("expectedEvidence", [])
    if explicit:
        return explicit
    if task.get("expectedFinalContains"):
        item: dict[str, Any] = {"contains": [task["expectedFinalContains"]]}
        if task.get("expectedFinalKind"):
            item["kind"] = task["expectedFinalKind"]
        return [item]
    return []


def _validated(unhook: Any) -> bool:
    return (
        isinstance(unhook, Mapping)
        and bool(unhook.get("name"))
        and bool(unhook.get("command") or unhook.get("procedure"))
        and unhook.get("validated") is True
    )


def _needles(value: Any) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [json.dumps(v) if isinstance(v, bool) else str(v) for v in values]


# -- actions -------------------------------------------------------------------------------------


def _match_actions(
    expected: Sequence[Mapping[str, Any]], actions: Sequence[Mapping[str, Any]], ordered: bool
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    cursor = 0
    for item in expected:
        needles = _needles(item.get("argsContains"))
        found = -1
        for index in range(cursor if ordered else 0, len(actions)):
            action = actions[index]
            if action.get("tool") == item["tool"] and _args_match(action.get("args"), needles):
                found = index
                break
        if found >= 0 and ordered:
            cursor = found + 1
        results.append(
            {
                "tool": item["tool"],
                "argsContains": needles,
                "matched": found >= 0,
                "matchedIndex": found,
            }
        )
    return results


def _args_match(args: Any, needles: Sequence[str]) -> bool:
    values = list(_scalars(args))
    return all(any(_needle_matches(needle, value) for value in values) for needle in needles)


def _scalars(value: Any) -> Any:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, bool):
        yield json.dumps(value)
    elif value is not None:
        yield str(value)


def _needle_matches(needle: str, value: str) -> bool:
    if value == needle or _path_suffix(needle, value):
        return True
    wanted = _tokens(needle)
    if not wanted:
        return False
    have = _tokens(value)
    if len(wanted) == 1:
        return any(t == wanted[0] or _path_suffix(wanted[0], t) for t in have)
    return any(have[i : i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1))


def _path_suffix(needle: str, value: str) -> bool:
    return "/" in value and value.endswith("/" + needle.lstrip("/"))


@cache
def _tokens(text: str) -> list[str]:
    return [word for pipeline in shell_pipelines(text) for argv in pipeline for word in argv]


# -- evidence ------------------------------------------------------------------------------------


def _artifact_matches(artifact: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    if item.get("kind") and artifact.get("kind") != item["kind"]:
        return False
    if "exitCode" in item and artifact.get("exitCode") != item["exitCode"]:
        return False
    if item.get("status") and artifact.get("status") != item["status"]:
        return False
    return all(_artifact_has(artifact, needle) for needle in _needles(item.get("contains")))


def _artifact_has(artifact: Mapping[str, Any], needle: str) -> bool:
    for name in _WHOLE_FIELDS:
        if artifact.get(name) == needle:
            return True
    path = artifact.get("path")
    if isinstance(path, str) and (path == needle or _path_suffix(needle, path)):
        return True
    return any(_in_text(needle, str(artifact.get(name) or "")) for name in _TEXT_FIELDS)


def _in_text(needle: str, text: str) -> bool:
    """``needle`` in ``text``, not as a piece of a longer word or number."""
    if not needle or not text:
        return False
    start = r"(?<![\w])" if re.match(r"\w", needle) else ""
    end = r"(?![\w])" if re.search(r"\w$", needle) else ""
    return re.search(start + re.escape(needle) + end, text) is not None
