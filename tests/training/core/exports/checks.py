"""How the export tests build requests and read a written export back: the rows as JSONL and as
`datasets` reads the parquet and the folder, checked against TRL's documented message and tool
shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from datasets import Dataset, load_dataset

from tests.training.core.exports.builders import (
    BEHAVIOUR,
    VERSION,
    Session,
    failing_session,
    item,
    passing_session,
)
from training.core.exports import (
    ExportKind,
    ExportRequest,
    PreferencePair,
    Split,
    TaskRef,
)

FILES = ("README.md", "data.jsonl", "data/train-00000-of-00001.parquet", "manifest.json")
ROLES = {"system", "user", "assistant", "tool"}


def request(kind: ExportKind, **kw: Any) -> ExportRequest:
    return ExportRequest(kind, BEHAVIOUR, VERSION, **kw)


def jsonl(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]


def read_back(out: Path, cache: Path) -> tuple[Dataset, Dataset, Dataset]:
    """The parquet as `Dataset.from_parquet` and `load_dataset("parquet")` read it, and the
    export folder as `load_dataset` reads it through its dataset card."""
    parquet = str(out / "data/train-00000-of-00001.parquet")
    direct = Dataset.from_parquet(parquet, cache_dir=str(cache))
    loaded = load_dataset("parquet", data_files=parquet, split="train", cache_dir=str(cache))
    folder = load_dataset(str(out), split="train", cache_dir=str(cache))
    assert isinstance(direct, Dataset)
    return direct, loaded, folder


def assert_same_rows_everywhere(out: Path, cache: Path) -> list[dict[str, Any]]:
    rows = jsonl(out)
    for dataset in read_back(out, cache):
        assert [dict(r) for r in dataset] == rows
    return rows


def check_trl_message(message: dict[str, Any]) -> None:
    """A message as TRL's dataset formats document it (dataset_formats, "Conversational" and
    "Tool Calling"): role and string content; assistant tool calls of type function with a name
    and arguments as an object; tool results naming their tool."""
    assert message["role"] in ROLES and isinstance(message["content"], str)
    for call in message.get("tool_calls", []):
        assert message["role"] == "assistant"
        assert call["type"] == "function"
        assert isinstance(call["function"]["name"], str)
        assert isinstance(call["function"]["arguments"], dict)
    if message["role"] == "tool":
        assert message["name"] and message["tool_call_id"]


def check_tools(tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> None:
    """Tools as JSON schemas (what transformers' get_json_schema produces), every call's
    arguments valid against its tool's parameters."""
    by_name = {}
    for tool in tools:
        assert tool["type"] == "function"
        parameters = tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        by_name[tool["function"]["name"]] = parameters
    for message in messages:
        for call in message.get("tool_calls", []):
            jsonschema.validate(call["function"]["arguments"], by_name[call["function"]["name"]])


def sft_items() -> list:
    return [
        item("1", passing_session()),
        item("2", failing_session(), passed=False),
        item("3", passing_session(), task="calc-sub"),
    ]


def branching_pair(pair_id: str = "p1", agreement: float | None = 1.0) -> PreferencePair:
    """Both rollouts read the failing test; then one fixes the code and the other the test."""
    good = (
        Session()
        .say("I'll run the failing test first.")
        .call("Bash", "FAILED tests/test_calc.py::test_add", command="pytest -q")
        .call("Edit", "updated", file_path="calc.py", old_string="a - b", new_string="a + b")
        .say("Fixed calc.add.")
    )
    bad = (
        Session(agent="codex", model="gpt")
        .say("I'll run the failing test first.")
        .call("Bash", "FAILED tests/test_calc.py::test_add", command="pytest -q")
        .call("Edit", "updated", file_path="tests/test_calc.py", old_string="3", new_string="1")
        .say("The test expectation was wrong.")
    )
    return PreferencePair(
        pair_id,
        item(f"{pair_id}-good", good),
        item(f"{pair_id}-bad", bad, passed=False),
        labels=3,
        agreement=agreement,
    )


def rft_task(root: Path, task_id: str, split: Split = Split.TRAIN) -> TaskRef:
    folder = root / "store" / task_id.replace("/", "-")
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text(f"Make the tests of {task_id} pass.\n")
    (folder / "task.toml").write_text('schema_version = "1.4"\n')
    (folder / "tests" / "test.sh").write_text("#!/bin/sh\npytest -q\n")
    return TaskRef(task_id, folder, split, BEHAVIOUR, VERSION, eval_run_ids=("12", "9"))


def all_requests(root: Path) -> dict[ExportKind, ExportRequest]:
    return {
        ExportKind.SFT: request(ExportKind.SFT, items=tuple(sft_items())),
        ExportKind.OPENAI: request(ExportKind.OPENAI, items=tuple(sft_items())),
        ExportKind.KTO: request(ExportKind.KTO, items=tuple(sft_items())),
        ExportKind.DPO: request(
            ExportKind.DPO, pairs=(branching_pair("p1"), branching_pair("p2", 0.67))
        ),
        ExportKind.RFT: request(ExportKind.RFT, tasks=(rft_task(root, "calc-sub"),)),
    }
