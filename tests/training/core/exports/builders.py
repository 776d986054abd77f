"""Synthetic ATIF rollouts and export items for the export tests."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from training.core.exports import EvalResult, ExportItem, Split

BEHAVIOUR = "run-tests-first"
VERSION = 3


class Session:
    """An ATIF-v1.7 trajectory built step by step, Claude Code style: one agent step per call,
    its result in the same step."""

    def __init__(
        self,
        request: str = "tests/test_calc.py fails; please fix calc.add.",
        agent: str = "claude-code",
        model: str = "sonnet",
    ) -> None:
        self.agent = {"name": agent, "version": "2.1", "model_name": model}
        self.steps: list[dict[str, Any]] = []
        self.calls = 0
        self.user(request)

    def _add(self, step: dict[str, Any]) -> Session:
        step["step_id"] = len(self.steps) + 1
        self.steps.append(step)
        return self

    def user(self, text: str) -> Session:
        return self._add({"source": "user", "message": text})

    def say(self, text: str, **extra: Any) -> Session:
        return self._add({"source": "agent", "message": text, **extra})

    def call(self, name: str, output: str = "ok", message: str = "", **arguments: Any) -> Session:
        self.calls += 1
        call_id = f"toolu_{self.agent['name']}_{self.calls:02d}"
        return self._add(
            {
                "source": "agent",
                "message": message,
                "tool_calls": [
                    {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
                ],
                "observation": {"results": [{"source_call_id": call_id, "content": output}]},
            }
        )

    def atif(self) -> dict[str, Any]:
        return {"schema_version": "ATIF-v1.7", "agent": self.agent, "steps": self.steps}


def passing_session(request: str = "tests/test_calc.py fails; please fix calc.add.") -> Session:
    return (
        Session(request)
        .say("I'll run the failing test first.")
        .call("Bash", "FAILED tests/test_calc.py::test_add - assert 1 == 3", command="pytest -q")
        .call("Read", "def add(a, b):\n    return a - b\n", file_path="calc.py")
        .call(
            "Edit",
            "The file calc.py has been updated.",
            file_path="calc.py",
            old_string="return a - b",
            new_string="return a + b",
        )
        .call("Bash", "1 passed in 0.01s", command="pytest -q")
        .say("Fixed: add() subtracted; the focused test passes now.")
    )


def failing_session(request: str = "tests/test_calc.py fails; please fix calc.add.") -> Session:
    return (
        Session(request)
        .say("I'll run the failing test first.")
        .call("Bash", "FAILED tests/test_calc.py::test_add - assert 1 == 3", command="pytest -q")
        .call(
            "Edit",
            "The file tests/test_calc.py has been updated.",
            file_path="tests/test_calc.py",
            old_string="== 3",
            new_string="== 1",
        )
        .say("Done, the test passes.")
    )


def item(
    trajectory_id: str,
    session: Session,
    *,
    task: str = "calc-add",
    passed: bool | None = True,
    reward: float | None = None,
    split: Split = Split.TRAIN,
    behaviour: str = BEHAVIOUR,
    version: int = VERSION,
) -> ExportItem:
    atif = session.atif()
    raw = json.dumps(atif, sort_keys=True).encode()
    result = None
    if passed is not None:
        reward = (1.0 if passed else 0.0) if reward is None else reward
        result = EvalResult(passed=passed, reward=reward, eval_run_id=f"ev-{trajectory_id}")
    return ExportItem(
        trajectory_id=trajectory_id,
        atif=atif,
        source_sha256=hashlib.sha256(raw).hexdigest(),
        task_id=task,
        split=split,
        behaviour=behaviour,
        spec_version=version,
        eval=result,
    )
