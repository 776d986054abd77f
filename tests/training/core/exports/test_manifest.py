"""The same inputs give the same bytes, the manifest says what went in, recorded runs export and
read back, and the package's docstring examples run."""

from __future__ import annotations

import doctest
import hashlib
import json
import random

import pytest

import training.core.exports as exports_package
from tests.training.core.exports.builders import (
    BEHAVIOUR,
    VERSION,
    Session,
    item,
)
from tests.training.core.exports.checks import (
    FILES,
    all_requests,
    assert_same_rows_everywhere,
    check_tools,
    check_trl_message,
    jsonl,
    request,
)
from training.core.exports import (
    ExportKind,
    ExportRequest,
    NothingToExport,
    PreferencePair,
    write_export,
)
from training.core.exports import crosscheck as crosscheck_module


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
