"""What an export is made of: frozen items the Django side assembles from its rows.

An item is one rollout: its ATIF document, where it came from (the source file's sha256), the
kept task it attempted and that task's split, the behaviour and spec version it is exported
for, and the eval harness's result on it. Preference pairs hold two items and the labels'
agreement; RFT exports take task references instead of rollouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


class ExportKind(StrEnum):
    SFT = "sft"  # TRL conversational language modeling, tool calls with object arguments
    OPENAI = "openai"  # OpenAI chat fine-tuning JSONL: arguments as JSON strings, weights
    DPO = "dpo"  # TRL preference: prompt / chosen / rejected, split at the divergence
    KTO = "kto"  # TRL unpaired preference: prompt / completion / label
    RFT = "rft"  # GRPO prompt rows referencing kept Harbor tasks


class Split(StrEnum):
    TRAIN = "train"
    HELD_OUT = "held_out"


@dataclass(frozen=True)
class EvalResult:
    """The eval harness's verdict on one rollout for the exported behaviour."""

    passed: bool
    reward: float
    eval_run_id: str


@dataclass(frozen=True)
class ExportItem:
    trajectory_id: str  # the rollout's id (manifests and rows name it so; messages say "rollout")
    atif: Mapping[str, Any]
    source_sha256: str
    task_id: str
    split: Split
    behaviour: str
    spec_version: int
    eval: EvalResult | None  # None: the harness has not run on it, which refuses the export
    # People's verdict on it, where labellers decided a pair it was in (KTO's label then): True
    # when their majority chose it, False when they chose the other side; None: nobody did.
    label: bool | None = None


@dataclass(frozen=True)
class PreferencePair:
    """Two rollouts of one task and which one people (or the verified reward) preferred."""

    pair_id: str
    chosen: ExportItem
    rejected: ExportItem
    labels: int = 0  # how many labellers decided it; 0 when the verified reward did
    agreement: float | None = None  # their agreement on this pair (share of the majority)


@dataclass(frozen=True)
class TaskRef:
    """A kept Harbor task for an RFT export: its folder is copied beside the rows, under
    ``tasks/<task_id>``, by the caller; its ``instruction.md`` is the prompt."""

    task_id: str
    path: Path
    split: Split
    behaviour: str
    spec_version: int
    eval_run_ids: tuple[str, ...] = ()  # the baseline evals on it, for the manifest


@dataclass(frozen=True)
class ExportRequest:
    kind: ExportKind
    behaviour: str
    spec_version: int
    items: tuple[ExportItem, ...] = ()  # sft, openai, kto
    pairs: tuple[PreferencePair, ...] = ()  # dpo
    tasks: tuple[TaskRef, ...] = ()  # rft
    export_id: str = ""
    # From the caller, so that the data itself never carries the time it was written.
    created_at: str = ""
    agreement: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"krippendorff_alpha": 0.7}
    # What the caller could not give and why, in words ("2 graded rollouts have no agent
    # trajectory"): a refusal for want of rows says it instead of "nothing given".
    absent: tuple[str, ...] = ()
    # How the tasks' rewards are decided: the kinds used ("equivalence", "check-only" where the
    # behaviour opted in, "authored") and the check-only tasks left out; in the manifest.
    grading: Mapping[str, Any] = field(default_factory=dict)
    # The provenance rule's inputs and what it left out, by reason (training.core.provenance):
    # {"rule": {...}, "tasks_left_out": {reason: n}, "rollouts_left_out": {reason: n}}.
    provenance: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExportResult:
    out_dir: Path
    manifest_path: Path
    sha256: str  # of manifest.json, which names every file's sha256: the dataset snapshot's hash
    rows: int
    manifest: Mapping[str, Any]
