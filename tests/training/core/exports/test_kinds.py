"""Every export kind written, read back with Hugging Face `datasets` and checked against TRL's
documented columns and message shapes; copied context left out and counted."""

from __future__ import annotations

import json

from tests.training.core.exports.builders import (
    Session,
    failing_session,
    item,
    passing_session,
)
from tests.training.core.exports.checks import (
    assert_same_rows_everywhere,
    branching_pair,
    check_tools,
    check_trl_message,
    jsonl,
    request,
    rft_task,
    sft_items,
)
from training.core.exports import (
    ExportKind,
    PreferencePair,
    task_dir_name,
    write_export,
)


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


def test_copied_context_is_left_out_of_every_kind_and_counted(tmp_path):
    session = passing_session()
    session.steps[1]["is_copied_context"] = True  # the first prose step
    session.steps[1]["message"] = "COPIED SUMMARY"
    for kind in (ExportKind.SFT, ExportKind.OPENAI, ExportKind.KTO):
        result = write_export(request(kind, items=(item("1", session),)), tmp_path / kind.value)
        assert "COPIED SUMMARY" not in (tmp_path / kind.value / "data.jsonl").read_text()
        assert result.manifest["counts"]["copied_context_steps_dropped"] == 1
