"""The refusals: a rollout the harness has not scored, a held-out task, nothing to export, and
contradictory requests as bad input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.training.core.exports.builders import (
    BEHAVIOUR,
    VERSION,
    failing_session,
    item,
    passing_session,
)
from tests.training.core.exports.checks import (
    all_requests,
    branching_pair,
    request,
    rft_task,
)
from training.core.exports import (
    BadExportInput,
    ExportKind,
    HeldOutTask,
    MissingEvalResult,
    NothingToExport,
    PreferencePair,
    Split,
    TaskRef,
    write_export,
)


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
