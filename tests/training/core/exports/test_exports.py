"""Every export kind written, read back with Hugging Face `datasets` and checked against TRL's
documented columns and message shapes; the same inputs giving the same bytes; redaction counted
in the manifest; and the refusals."""

from __future__ import annotations

import base64
import doctest
import hashlib
import json
import random
import string
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from datasets import Dataset, load_dataset

import training.core.exports as exports_package
from tests.training.core.exports.builders import (
    BEHAVIOUR,
    VERSION,
    Session,
    failing_session,
    item,
    passing_session,
)
from training.core.exports import (
    BadExportInput,
    ExportKind,
    ExportRefused,
    ExportRequest,
    HeldOutTask,
    MissingEvalResult,
    NothingToExport,
    PreferencePair,
    SecretSurvived,
    Split,
    TaskRef,
    task_dir_name,
    write_export,
)
from training.core.exports import crosscheck as crosscheck_module
from training.core.exports import writer as writer_module

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


def test_sft_rows_are_trl_conversations_of_the_rollouts_that_passed(tmp_path):
    result = write_export(request(ExportKind.SFT, items=tuple(sft_items())), tmp_path / "out")
    rows = assert_same_rows_everywhere(tmp_path / "out", tmp_path / "cache")
    assert result.rows == 2 and all(set(r) == {"messages", "tools"} for r in rows)
    for row in rows:
        for message in row["messages"]:
            check_trl_message(message)
        check_tools(row["tools"], row["messages"])
        assert [m["role"] for m in row["messages"]][:3] == ["user", "assistant", "tool"]
        assert row["messages"][-1] == {
            "content": "Fixed: add() subtracted; the focused test passes now.",
            "role": "assistant",
        }
    manifest = result.manifest
    assert manifest["counts"]["left_out"] == {"eval_failed": 1}
    assert [(s["trajectory_id"], s["rows"]) for s in manifest["sources"]] == [
        ("1", [0]),
        ("2", []),
        ("3", [1]),
    ]
    assert manifest["trainer"]["columns"] == ["messages", "tools"]


def test_openai_rows_have_string_arguments_and_weights(tmp_path):
    result = write_export(request(ExportKind.OPENAI, items=tuple(sft_items())), tmp_path / "out")
    rows = assert_same_rows_everywhere(tmp_path / "out", tmp_path / "cache")
    sft = write_export(request(ExportKind.SFT, items=tuple(sft_items())), tmp_path / "sft")
    assert result.rows == sft.rows == 2
    for row, trl_row in zip(rows, jsonl(sft.out_dir), strict=True):
        assert row["tools"] == trl_row["tools"]
        for message, trl in zip(row["messages"], trl_row["messages"], strict=True):
            assert message["role"] == trl["role"]
            if message["role"] == "assistant":
                assert message["weight"] == 1
            else:
                assert "weight" not in message
            if message["role"] == "tool":
                assert message["tool_call_id"] == trl["tool_call_id"]
            for call, trl_call in zip(
                message.get("tool_calls", []), trl.get("tool_calls", []), strict=True
            ):
                assert isinstance(call["function"]["arguments"], str)
                assert (
                    json.loads(call["function"]["arguments"]) == trl_call["function"]["arguments"]
                )
                assert call["id"] == trl_call["id"]


def test_kto_labels_come_from_the_harness_and_split_at_the_agents_first_turn(tmp_path):
    result = write_export(request(ExportKind.KTO, items=tuple(sft_items())), tmp_path / "out")
    rows = assert_same_rows_everywhere(tmp_path / "out", tmp_path / "cache")
    assert [r["label"] for r in rows] == [True, False, True]
    for row in rows:
        assert set(row) == {"prompt", "completion", "label", "tools"}
        assert [m["role"] for m in row["prompt"]] == ["user"]
        assert row["completion"][0]["role"] == "assistant"
        for message in row["prompt"] + row["completion"]:
            check_trl_message(message)
    assert result.manifest["counts"] == {
        "copied_context_steps_dropped": 0,
        "left_out": {},
        "rows": 3,
        "tasks": 2,
        "trajectories": 3,
    }


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


def test_dpo_rows_split_at_the_divergence_with_the_shared_prefix_as_prompt(tmp_path):
    same = passing_session()
    identical = PreferencePair("p3", item("p3-a", same), item("p3-b", same, passed=False))
    strangers = PreferencePair(  # different requests: nothing shared to prompt with
        "p2", item("p2-a", passing_session("Please fix add().")), item("p2-b", failing_session())
    )
    result = write_export(
        request(
            ExportKind.DPO,
            pairs=(branching_pair(), strangers, identical),
            agreement={"krippendorff_alpha": 0.71},
        ),
        tmp_path / "out",
    )
    rows = assert_same_rows_everywhere(tmp_path / "out", tmp_path / "cache")
    assert result.rows == 1
    (row,) = rows
    assert set(row) == {"prompt", "chosen", "rejected", "tools"}
    # The prompt is the request, the shared first turn's call and its result; the completions
    # start where the model's next turn differs.
    assert [m["role"] for m in row["prompt"]] == ["user", "assistant", "tool"]
    assert row["prompt"][1]["tool_calls"][0]["function"]["arguments"] == {"command": "pytest -q"}
    assert row["chosen"][0]["tool_calls"][0]["function"]["arguments"]["file_path"] == "calc.py"
    assert row["rejected"][0]["tool_calls"][0]["function"]["arguments"]["file_path"] == (
        "tests/test_calc.py"
    )
    for message in row["prompt"] + row["chosen"] + row["rejected"]:
        check_trl_message(message)
    labels = result.manifest["labels"]
    assert labels["agreement"] == {"krippendorff_alpha": 0.71}
    assert [(p["pair_id"], p["row"], p["left_out"]) for p in labels["pairs"]] == [
        ("p1", 0, None),
        ("p2", None, "no_shared_prompt"),
        ("p3", None, "identical"),
    ]
    assert result.manifest["counts"]["left_out"] == {"identical": 1, "no_shared_prompt": 1}


def test_dpo_moves_shared_words_before_the_split_into_both_completions(tmp_path):
    # Both say the same sentence, then call different tools in the same model turn: the
    # sentence belongs to each completion, and the prompt ends on the user's request.
    a = Session().say("Let me look.").call("Read", file_path="calc.py")
    b = Session().say("Let me look.").call("Bash", command="cat calc.py")
    pair = PreferencePair("p", item("a", a), item("b", b, passed=False))
    write_export(request(ExportKind.DPO, pairs=(pair,)), tmp_path)
    (row,) = jsonl(tmp_path)
    assert [m["role"] for m in row["prompt"]] == ["user"]
    assert row["chosen"][0]["content"] == row["rejected"][0]["content"] == "Let me look."


def rft_task(root: Path, task_id: str, split: Split = Split.TRAIN) -> TaskRef:
    folder = root / "store" / task_id.replace("/", "-")
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text(f"Make the tests of {task_id} pass.\n")
    (folder / "task.toml").write_text('schema_version = "1.4"\n')
    (folder / "tests" / "test.sh").write_text("#!/bin/sh\npytest -q\n")
    return TaskRef(task_id, folder, split, BEHAVIOUR, VERSION, eval_run_ids=("12", "9"))


def test_rft_rows_reference_the_kept_tasks_laid_out_for_trls_harbor_integration(tmp_path):
    tasks = (rft_task(tmp_path, "calc-sub"), rft_task(tmp_path, "clawbench/t3-report"))
    result = write_export(request(ExportKind.RFT, tasks=tasks), tmp_path / "out")
    rows = assert_same_rows_everywhere(tmp_path / "out", tmp_path / "cache")
    assert rows == [
        {
            "prompt": [{"content": "Make the tests of calc-sub pass.\n", "role": "user"}],
            "task_dir": "tasks/calc-sub",
            "task_id": "calc-sub",
            "task_index": 0,
        },
        {
            "prompt": [
                {"content": "Make the tests of clawbench/t3-report pass.\n", "role": "user"}
            ],
            "task_dir": "tasks/clawbench_t3-report",
            "task_id": "clawbench/t3-report",
            "task_index": 1,
        },
    ]
    harbor = result.manifest["harbor_dataset"]
    assert [t["dir"] for t in harbor["tasks"]] == [
        f"tasks/{task_dir_name(t.task_id)}" for t in tasks
    ]
    assert harbor["tasks"][0]["eval_run_ids"] == ["9", "12"]
    assert len({t["sha256"] for t in harbor["tasks"]}) == 2
    assert result.manifest["eval_run_ids"] == ["9", "12"]


def test_a_task_folders_digest_changes_with_any_file(tmp_path):
    task = rft_task(tmp_path, "calc-sub")
    first = write_export(request(ExportKind.RFT, tasks=(task,)), tmp_path / "a")
    (task.path / "tests" / "test.sh").write_text("#!/bin/sh\nexit 0\n")
    second = write_export(request(ExportKind.RFT, tasks=(task,)), tmp_path / "b")
    digest = [r.manifest["harbor_dataset"]["tasks"][0]["sha256"] for r in (first, second)]
    assert digest[0] != digest[1]


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


@pytest.mark.parametrize("kind", list(ExportKind))
def test_the_same_inputs_give_the_same_bytes(tmp_path, kind):
    base = all_requests(tmp_path)[kind]
    shuffled = random.Random(3)
    reordered = ExportRequest(
        base.kind,
        base.behaviour,
        base.spec_version,
        items=tuple(shuffled.sample(base.items, len(base.items))),
        pairs=tuple(shuffled.sample(base.pairs, len(base.pairs))),
        tasks=base.tasks,
    )
    first = write_export(base, tmp_path / "first")
    second = write_export(reordered, tmp_path / "second")
    for name in FILES:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()
    assert (
        first.sha256
        == second.sha256
        == hashlib.sha256((tmp_path / "first" / "manifest.json").read_bytes()).hexdigest()
    )
    for name, entry in first.manifest["files"].items():
        assert (
            hashlib.sha256((tmp_path / "first" / name).read_bytes()).hexdigest() == entry["sha256"]
        )


@pytest.mark.parametrize("kind", list(ExportKind))
def test_the_manifest_says_what_went_in(tmp_path, kind):
    req = all_requests(tmp_path)[kind]
    req = ExportRequest(
        req.kind,
        req.behaviour,
        req.spec_version,
        items=req.items,
        pairs=req.pairs,
        tasks=req.tasks,
        export_id="exp-4",
        created_at="2026-12-01T10:00:00Z",
    )
    manifest = json.loads(write_export(req, tmp_path / "out").manifest_path.read_text())
    assert manifest["kind"] == kind.value
    assert manifest["behaviour"] == {"slug": BEHAVIOUR, "spec_version": VERSION}
    assert (manifest["export_id"], manifest["created_at"]) == ("exp-4", "2026-12-01T10:00:00Z")
    assert manifest["split"] == "train"
    assert set(manifest["tools"]) == {"python", "datasets", "detect-secrets", "pyarrow"}
    assert manifest["counts"]["rows"] == len(jsonl(tmp_path / "out"))
    assert manifest["task_ids"] and "replacements" in manifest["redaction"]
    rollouts = list(req.items) + [i for p in req.pairs for i in (p.chosen, p.rejected)]
    assert {s["trajectory_id"]: s["source_sha256"] for s in manifest["sources"]} == {
        i.trajectory_id: i.source_sha256 for i in rollouts
    }
    expected_runs = {i.eval.eval_run_id for i in rollouts if i.eval} | {
        r for t in req.tasks for r in t.eval_run_ids
    }
    assert set(manifest["eval_run_ids"]) == expected_runs
    if kind is ExportKind.DPO:
        assert manifest["labels"]["mean_pair_agreement"] == pytest.approx((1.0 + 0.67) / 2)
        assert manifest["labels"]["labels"] == 6


_rng = random.Random(99)


def rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def planted_session() -> tuple[Session, dict[str, int]]:
    """A rollout that met secrets everywhere: in the request, in arguments, in tool output,
    under a secret-named argument, and in the agent's words. Built at run time, never spelled
    out in the source."""
    key_body = "\n".join(rand(64, string.ascii_letters + string.digits + "+/") for _ in range(5))
    private_key = f"-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----"
    jwt = (
        ".".join(
            base64.urlsafe_b64encode(json.dumps(p).encode()).decode().rstrip("=")
            for p in ({"alg": "HS256"}, {"sub": "u1"})
        )
        + "."
        + rand(43)
    )
    session = (
        Session("Deploy with my token ghp_" + rand(36) + " and mail ann@corp.eu when done.")
        .call("Bash", "Exported.", command="export OPENAI_API_KEY=sk-proj-" + rand(64))
        .call("Read", private_key, file_path="~/.ssh/id_rsa")
        .call("Login", "ok", username="ann", password="pa55-" + rand(8))
        .call("Bash", "200 OK", command=f"curl -H 'Authorization: Bearer {jwt}' https://api.x.io")
        .say("Connected to postgres://app:" + rand(12) + "@db.internal/app as requested.")
    )
    expected = {
        "email": 1,
        "github_token": 1,
        "jwt": 1,
        "openai_api_key": 1,
        "private_key": 1,
        "secret_assignment": 1,
        "url_password": 1,
    }
    return session, expected


def test_every_secret_in_an_export_is_redacted_and_counted_in_the_manifest(tmp_path):
    session, expected = planted_session()
    secrets = [
        step["message"].split()[4] for step in session.steps[:1]
    ]  # the GitHub token from the request
    result = write_export(request(ExportKind.SFT, items=(item("1", session),)), tmp_path)
    written = (tmp_path / "data.jsonl").read_text()
    assert result.manifest["redaction"]["replacements"] == expected
    assert result.manifest["redaction"]["total"] == sum(expected.values())
    assert secrets[0].startswith("ghp_") and secrets[0] not in written
    assert "PRIVATE KEY" not in written and "pa55-" not in written and "ann@corp.eu" not in written
    parquet = (tmp_path / "data/train-00000-of-00001.parquet").read_bytes()
    assert secrets[0].encode() not in parquet


def test_copied_context_is_left_out_of_every_kind_and_counted(tmp_path):
    session = passing_session()
    session.steps[1]["is_copied_context"] = True  # the first prose step
    session.steps[1]["message"] = "COPIED SUMMARY"
    for kind in (ExportKind.SFT, ExportKind.OPENAI, ExportKind.KTO):
        result = write_export(request(kind, items=(item("1", session),)), tmp_path / kind.value)
        assert "COPIED SUMMARY" not in (tmp_path / kind.value / "data.jsonl").read_text()
        assert result.manifest["counts"]["copied_context_steps_dropped"] == 1


def test_an_export_is_refused_when_the_harness_has_not_run_on_a_rollout(tmp_path):
    items = (item("1", passing_session()), item("2", passing_session(), passed=None))
    with pytest.raises(MissingEvalResult) as refused:
        write_export(request(ExportKind.SFT, items=items), tmp_path / "out")
    assert refused.value.trajectory_ids == ("2",) and "rollout 2" in refused.value.reason
    assert "trajectory" not in refused.value.reason  # the ids are the rollouts', not the logs'
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", list(ExportKind))
def test_a_held_out_task_never_enters_a_training_export(tmp_path, kind):
    req = all_requests(tmp_path)[kind]
    if kind is ExportKind.RFT:
        req = request(kind, tasks=req.tasks + (rft_task(tmp_path, "hidden", Split.HELD_OUT),))
    elif kind is ExportKind.DPO:
        pair = req.pairs[0]
        hidden = PreferencePair(
            "p9",
            item("h1", passing_session(), task="hidden", split=Split.HELD_OUT),
            item("h2", failing_session(), task="hidden", passed=False, split=Split.HELD_OUT),
        )
        req = request(kind, pairs=(pair, hidden))
    else:
        req = request(
            kind,
            items=req.items + (item("9", passing_session(), task="hidden", split=Split.HELD_OUT),),
        )
    with pytest.raises(HeldOutTask) as refused:
        write_export(req, tmp_path / "out")
    assert refused.value.task_ids == ("hidden",)
    assert "held-out" in refused.value.reason and not (tmp_path / "out").exists()


def test_an_export_is_refused_when_a_secret_survives_in_what_would_be_written(tmp_path):
    # A task id is provenance, not data: it reaches the manifest as given.
    leaky = item("1", passing_session(), task="fix-for-ann@corp.eu")
    with pytest.raises(SecretSurvived) as refused:
        write_export(request(ExportKind.SFT, items=(leaky,)), tmp_path / "out")
    assert refused.value.kinds == ("email",) and "manifest.json" in refused.value.reason
    assert not (tmp_path / "out").exists()


def test_the_check_after_redaction_catches_what_redaction_missed(tmp_path, monkeypatch):
    # The one seam: a redactor that misses everything. The check over the rows as they would be
    # written must still refuse.
    monkeypatch.setattr(
        writer_module,
        "redact_data",
        lambda rows: type("R", (), {"value": rows, "counts": {}, "total": 0})(),
    )
    session = passing_session("Use key AKIA" + rand(16, string.ascii_uppercase) + " please.")
    with pytest.raises(SecretSurvived) as refused:
        write_export(request(ExportKind.SFT, items=(item("1", session),)), tmp_path / "out")
    assert refused.value.kinds == ("aws_access_key_id",) and "data.jsonl" in refused.value.reason
    assert not (tmp_path / "out").exists()


def _blind_redactor(monkeypatch) -> None:
    """The redactor and its after-the-fact check both miss everything (they share rules)."""
    monkeypatch.setattr(
        writer_module,
        "redact_data",
        lambda rows: type("R", (), {"value": rows, "counts": {}, "total": 0})(),
    )
    monkeypatch.setattr(writer_module, "still_has_secrets", lambda text: ())


def _key_block() -> str:
    body = "\n".join(rand(64, string.ascii_letters + string.digits + "+/") for _ in range(4))
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"


BLIND_SPOTS = {
    "github token": (lambda: "push with ghp_" + rand(36), "token starting ghp_"),
    "aws key id": (lambda: "use AKIA" + rand(16, string.ascii_uppercase), "token starting AKIA"),
    "private key": (_key_block, "private key block"),
    "api key header": (
        lambda: "curl -H 'x-api-key: " + rand(32) + "' api",
        "value named x-api-key",
    ),
}


@pytest.mark.parametrize("shape", BLIND_SPOTS)
def test_a_secret_the_redactor_is_blind_to_is_refused_by_an_independent_second_check(
    tmp_path, monkeypatch, shape
):
    _blind_redactor(monkeypatch)
    planted, named = BLIND_SPOTS[shape]
    items = (item("1", passing_session()), item("2", passing_session(planted())))
    with pytest.raises(ExportRefused) as refused:
        write_export(request(ExportKind.SFT, items=items), tmp_path / "out")
    assert refused.value.code == "secret_second_check"
    reason = refused.value.reason
    assert "data.jsonl row 2 (rollout 2)" in reason and named in reason, reason
    assert "atif-scan" in reason and "nothing was written" in reason
    assert not (tmp_path / "out").exists()


def test_the_second_check_reads_the_manifest_too(tmp_path, monkeypatch):
    _blind_redactor(monkeypatch)
    leaky = item("1", passing_session(), task="fix-with-ghp_" + rand(36))
    with pytest.raises(ExportRefused) as refused:
        write_export(request(ExportKind.SFT, items=(leaky,)), tmp_path / "out")
    assert refused.value.code == "secret_second_check" and "manifest.json" in refused.value.reason
    assert not (tmp_path / "out").exists()


def test_the_manifest_names_the_second_check_that_found_nothing(tmp_path):
    session, _ = planted_session()
    result = write_export(request(ExportKind.SFT, items=(item("1", session),)), tmp_path)
    second = result.manifest["redaction"]["second_check"]
    assert second.startswith("atif-scan ") and second.endswith("found nothing in the rows")


def test_nothing_to_export_is_a_refusal_with_the_reasons(tmp_path):
    with pytest.raises(NothingToExport, match="names no rollouts, pairs or tasks"):
        write_export(request(ExportKind.SFT), tmp_path)
    said = "2 graded rollouts have no agent trajectory"
    with pytest.raises(NothingToExport, match=f"run-tests-first: {said}"):
        write_export(replace(request(ExportKind.SFT), absent=(said,)), tmp_path)
    with pytest.raises(NothingToExport, match="1 eval_failed"):
        write_export(
            request(ExportKind.SFT, items=(item("2", failing_session(), passed=False),)), tmp_path
        )


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda root: request(ExportKind.SFT, pairs=(branching_pair(),)),
            "an SFT export takes items",
        ),
        (
            lambda root: request(ExportKind.DPO, items=(item("1", passing_session()),)),
            "a DPO export takes pairs",
        ),
        (
            lambda root: request(ExportKind.SFT, items=(item("1", passing_session(), version=2),)),
            "v2",
        ),
        (
            lambda root: request(ExportKind.SFT, items=(item("1", passing_session()),) * 2),
            "given twice: rollout 1",
        ),
        (
            lambda root: request(
                ExportKind.DPO,
                pairs=(
                    PreferencePair("p", item("1", passing_session()), item("1", failing_session())),
                ),
            ),
            "sets a rollout against itself",
        ),
        (
            lambda root: request(
                ExportKind.DPO,
                pairs=(
                    PreferencePair(
                        "p",
                        item("1", passing_session()),
                        item("2", failing_session(), task="other"),
                    ),
                ),
            ),
            "two tasks",
        ),
        (
            lambda root: request(
                ExportKind.RFT,
                tasks=(TaskRef("t", root / "missing", Split.TRAIN, BEHAVIOUR, VERSION),),
            ),
            "instruction.md",
        ),
    ],
    ids=[
        "pairs-for-sft",
        "items-for-dpo",
        "other-version",
        "duplicate",
        "self-pair",
        "cross-task",
        "no-instruction",
    ],
)
def test_contradictory_requests_are_bad_input(tmp_path, build, message):
    with pytest.raises(BadExportInput, match=message):
        write_export(build(tmp_path), tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.corpus
def test_recorded_runs_export_and_read_back(corpus, tmp_path):
    trials = [
        "evolving-skills/jobs_copy/2026-04-13__06-09-31/pyutils__line_profiler.a646bf0f.__UPWAM6C",
        "evolving-skills/jobs_copy/2026-04-13__06-59-50/pyutils__line_profiler.a646bf0f.__hsfb47w",
        "evolving-skills/jobs_copy/2026-04-13__06-09-31/mozilla__bleach.73871d76.func_ba__kwVZBCH",
    ]
    items = []
    for n, trial in enumerate(trials, 1):
        raw = (corpus / trial / "agent/trajectory.json").read_bytes()
        result = json.loads((corpus / trial / "result.json").read_text())
        reward = result["verifier_result"]["rewards"]["reward"]
        session = Session()
        session.steps = json.loads(raw)["steps"]
        made = item(str(n), session, task=result["task_name"], passed=reward >= 1.0)
        items.append(made)
    sft = write_export(request(ExportKind.SFT, items=tuple(items)), tmp_path / "sft")
    rows = assert_same_rows_everywhere(tmp_path / "sft", tmp_path / "cache")
    assert sft.rows == 2 and sft.manifest["counts"]["left_out"] == {"eval_failed": 1}
    for row in rows:
        for message in row["messages"]:
            check_trl_message(message)
            assert not message["content"].startswith("Executed ")  # converter placeholders
        check_tools(row["tools"], row["messages"])
    # The two passing runs of line_profiler were prompted differently: no DPO row between them.
    pair = PreferencePair("p", items[0], items[1])
    with pytest.raises(NothingToExport, match="no_shared_prompt"):
        write_export(request(ExportKind.DPO, pairs=(pair,)), tmp_path / "dpo")


@pytest.mark.parametrize("module", [exports_package, crosscheck_module])
def test_the_docstring_examples_run(module):
    failures, tried = doctest.testmod(module, report=False)
    assert tried > 0 and failures == 0
