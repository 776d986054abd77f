"""Check, redact, write: ``data.jsonl``, the same rows as a Hugging Face dataset (parquet), a
dataset card and ``manifest.json``.

Same inputs, same bytes: rows in a fixed order with sorted keys and fixed separators, no clock
in the data (the manifest's creation time is the caller's), and parquet written by pyarrow
straight from the dataset's Arrow table, whose only variable is the pyarrow version recorded in
its footer and in the manifest (``datasets``' own ``to_parquet`` does the same plus a progress
bar).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

from training.core.exports.crosscheck import DETECTOR, second_check
from training.core.exports.errors import (
    BadExportInput,
    HeldOutTask,
    MissingEvalResult,
    NothingToExport,
    SecretFoundBySecondCheck,
    SecretSurvived,
)
from training.core.exports.items import (
    ExportItem,
    ExportKind,
    ExportRequest,
    ExportResult,
    Split,
)
from training.core.exports.kinds import BUILDERS, TRAINERS, Built, features, natural
from trajectories.core.redact import redact_data, still_has_secrets
from trajectories.core.words import with_article

FORMAT = "traj2env-training-export/1"
JSONL = "data.jsonl"
PARQUET = "data/train-00000-of-00001.parquet"
CARD = "README.md"
MANIFEST = "manifest.json"


def canonical_line(row: Any) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _rollouts(request: ExportRequest) -> list[ExportItem]:
    return list(request.items) + [i for p in request.pairs for i in (p.chosen, p.rejected)]


def _check_input(request: ExportRequest) -> None:
    kind = request.kind
    given = {
        "items": bool(request.items),
        "pairs": bool(request.pairs),
        "tasks": bool(request.tasks),
    }
    wanted = {ExportKind.DPO: "pairs", ExportKind.RFT: "tasks"}.get(kind, "items")
    extra = [name for name, present in given.items() if present and name != wanted]
    if extra:
        raise BadExportInput(
            f"{with_article(str(kind).upper())} export takes {wanted}, not {', '.join(extra)}"
        )
    for who, behaviour, version in [
        *((f"rollout {i.trajectory_id}", i.behaviour, i.spec_version) for i in _rollouts(request)),
        *((f"task {t.task_id}", t.behaviour, t.spec_version) for t in request.tasks),
    ]:
        if (behaviour, version) != (request.behaviour, request.spec_version):
            raise BadExportInput(
                f"{who} is for {behaviour} v{version}, "
                f"not {request.behaviour} v{request.spec_version}"
            )
    duplicates = [
        f"{what} {name}"
        for what, names in (
            ("rollout", [i.trajectory_id for i in request.items]),
            ("pair", [p.pair_id for p in request.pairs]),
            ("task", [t.task_id for t in request.tasks]),
        )
        for name, n in Counter(names).items()
        if n > 1
    ]
    if duplicates:
        raise BadExportInput(f"given twice: {', '.join(sorted(duplicates))}")
    for p in request.pairs:
        if p.chosen.trajectory_id == p.rejected.trajectory_id:
            raise BadExportInput(f"pair {p.pair_id} sets a rollout against itself")
        if p.chosen.task_id != p.rejected.task_id:
            raise BadExportInput(f"pair {p.pair_id} joins rollouts of two tasks")


def _check_policy(request: ExportRequest) -> None:
    rollouts = _rollouts(request)
    if not rollouts and not request.tasks:
        why = "; ".join(request.absent) or "the request names no rollouts, pairs or tasks"
        raise NothingToExport(f"no {request.kind} rows for {request.behaviour}: {why}")
    missing = [i.trajectory_id for i in rollouts if i.eval is None]
    if missing:
        raise MissingEvalResult(missing)
    held_out = [i.task_id for i in rollouts if i.split is not Split.TRAIN]
    held_out += [t.task_id for t in request.tasks if t.split is not Split.TRAIN]
    if held_out:
        raise HeldOutTask(held_out)


def _versions() -> dict[str, str]:
    versions = {"python": f"{sys.version_info.major}.{sys.version_info.minor}"}
    for package in ("datasets", "detect-secrets", "pyarrow"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "absent"
    return versions


def _card(request: ExportRequest, rows: int) -> str:
    trainer = TRAINERS[request.kind]
    return (
        "---\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        "  - split: train\n"
        "    path: data/train-*.parquet\n"
        "---\n\n"
        f"# {request.behaviour} v{request.spec_version}: {request.kind} training data\n\n"
        f"{rows} rows for {trainer['trainer']} ({trainer['type']}), columns "
        f"{', '.join(trainer['columns'])}. The same rows are in `{JSONL}`; provenance, "
        f"redaction and tool versions in `{MANIFEST}`.\n"
    )


def _parquet(kind: ExportKind, rows: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Dataset

    table = Dataset.from_list(rows, features=features(kind)).data.table
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def _file_entry(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _second_check(lines: list[str], built: Built) -> None:
    """Refuse the export when the independent detector finds a credential in a row, naming the
    row and the rollouts it came from (the redactor's own check shares its rules, so a shape
    they do not know would pass both)."""
    for index, line in enumerate(lines):
        found = second_check(line)
        if found:
            ids = sorted(
                (s["trajectory_id"] for s in built.sources.values() if index in s["rows"]),
                key=natural,
            )
            origin = f" (rollout {', '.join(ids)})" if ids else ""
            raise SecretFoundBySecondCheck(found, f"{JSONL} row {index + 1}{origin}", DETECTOR)


def write_export(request: ExportRequest, out_dir: Path) -> ExportResult:
    """Write one training export into ``out_dir``, or raise without writing anything: a
    ``BadExportInput`` for a request that contradicts itself, an ``ExportRefused`` (no eval
    result, a held-out task, nothing to export, a secret that survived redaction or that a
    second, independent detector finds) otherwise."""
    _check_input(request)
    _check_policy(request)
    built = BUILDERS[request.kind](request)
    if not built.rows:
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(built.left_out.items()))
        raise NothingToExport(
            f"no {request.kind} rows for {request.behaviour}"
            + (f": everything was left out ({reasons})" if reasons else "")
        )

    redacted = redact_data(built.rows)
    lines = [canonical_line(row) for row in redacted.value]
    jsonl = "".join(line + "\n" for line in lines)
    found = still_has_secrets(jsonl)
    if found:
        raise SecretSurvived(found, JSONL)
    _second_check(lines, built)
    rows = [json.loads(line) for line in lines]  # the parquet holds exactly what the JSONL does

    parquet = _parquet(request.kind, rows)
    card = _card(request, len(rows))

    sources = [built.sources[k] for k in sorted(built.sources, key=natural)]
    included = [s for s in sources if s["rows"]]
    eval_runs = {s["eval_run_id"] for s in sources if s["eval_run_id"] is not None}
    for task in request.tasks:
        eval_runs.update(task.eval_run_ids)
    task_ids = {s["task_id"] for s in included} | {t.task_id for t in request.tasks}
    manifest: dict[str, Any] = {
        "behaviour": {"slug": request.behaviour, "spec_version": request.spec_version},
        "counts": {
            "copied_context_steps_dropped": built.copied_context_steps,
            "left_out": dict(sorted(built.left_out.items())),
            "rows": len(rows),
            "tasks": len(task_ids),
            "trajectories": len(included),
        },
        "created_at": request.created_at or None,
        "eval_run_ids": sorted(eval_runs, key=natural),
        "export_id": request.export_id or None,
        "files": {
            CARD: _file_entry(card.encode()),
            JSONL: _file_entry(jsonl.encode()),
            PARQUET: _file_entry(parquet),
        },
        "format": FORMAT,
        "kind": request.kind.value,
        "redaction": {
            "after_redaction": "no secret found in the rows as written",
            "second_check": f"{DETECTOR} found nothing in the rows",
            "replacements": redacted.counts,
            "total": redacted.total,
        },
        "sources": sources,
        "split": Split.TRAIN.value,
        "task_ids": sorted(task_ids, key=natural),
        "tools": _versions(),
        "trainer": dict(TRAINERS[request.kind]),
    }
    if request.grading:
        manifest["grading"] = dict(request.grading)
    if request.provenance:
        manifest["provenance"] = dict(request.provenance)
    if built.labels is not None:
        manifest["labels"] = built.labels
    if built.harbor is not None:
        manifest["harbor_dataset"] = built.harbor
    text = json.dumps(manifest, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
    found = still_has_secrets(text)
    if found:
        raise SecretSurvived(found, MANIFEST)
    found = second_check(text)
    if found:
        raise SecretFoundBySecondCheck(found, MANIFEST, DETECTOR)

    # Everything is checked before the first byte is written: a refused export leaves no files.
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "data").mkdir(exist_ok=True)
    (out_dir / JSONL).write_text(jsonl, encoding="utf-8")
    (out_dir / PARQUET).write_bytes(parquet)
    (out_dir / CARD).write_text(card, encoding="utf-8")
    manifest_path = out_dir / MANIFEST
    manifest_path.write_text(text, encoding="utf-8")
    return ExportResult(
        out_dir=out_dir,
        manifest_path=manifest_path,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        rows=len(rows),
        manifest=manifest,
    )
