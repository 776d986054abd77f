"""The rows of each export kind, before redaction; one builder per kind in ``BUILDERS``.

Column names and message shapes follow TRL's dataset formats
(https://huggingface.co/docs/trl/dataset_formats): conversational language modeling
(``messages``, plus ``tools`` as JSON schemas) for SFTTrainer, preference with an explicit prompt
(``prompt`` / ``chosen`` / ``rejected``) for DPOTrainer, unpaired preference (``prompt`` /
``completion`` / ``label``) for KTOTrainer, and prompt-only rows for GRPOTrainer, which with
TRL's Harbor integration (https://huggingface.co/docs/trl/harbor) reference the task folders under
``tasks/``. OpenAI's chat fine-tuning format is the SFT conversation with arguments as JSON
strings and a ``weight`` on assistant messages.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.core.exports.chat import (
    Turn,
    defined_tools,
    inferred_tools,
    openai_message,
    to_turns,
    tool_calls,
    training_steps,
    trl_message,
)
from training.core.exports.errors import BadExportInput
from training.core.exports.items import ExportItem, ExportKind, ExportRequest
from training.core.pairs import align


@dataclass
class Built:
    rows: list[dict[str, Any]] = field(default_factory=list)
    # Provenance of every trajectory given, by id: where it came from and the rows it is in.
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    left_out: Counter[str] = field(default_factory=Counter)
    copied_context_steps: int = 0
    labels: dict[str, Any] | None = None  # preference exports
    harbor: dict[str, Any] | None = None  # RFT exports


@dataclass(frozen=True)
class _Rollout:
    item: ExportItem
    turns: list[Turn]
    agent: str


def natural(identifier: str) -> tuple[int, int, str]:
    """Database ids arrive as strings; "10" sorts after "9"."""
    return (0, int(identifier), "") if identifier.isdigit() else (1, 0, identifier)


def _convert(item: ExportItem, built: Built) -> _Rollout:
    steps, dropped = training_steps(item.atif.get("steps") or [])
    built.copied_context_steps += dropped
    agent = str((item.atif.get("agent") or {}).get("name") or "")
    return _Rollout(item, to_turns(steps), agent)


def _source(built: Built, item: ExportItem, row: int | None, left_out: str = "") -> None:
    entry = built.sources.setdefault(
        item.trajectory_id,
        {
            "eval_run_id": item.eval.eval_run_id if item.eval else None,
            "passed": item.eval.passed if item.eval else None,
            "reward": item.eval.reward if item.eval else None,
            "rows": [],
            "source_sha256": item.source_sha256,
            "task_id": item.task_id,
            "trajectory_id": item.trajectory_id,
        },
    )
    if row is not None:
        entry["rows"].append(row)
    elif left_out and not entry["rows"]:
        entry["left_out"] = left_out


def _tools_by_agent(rollouts: Iterable[_Rollout]) -> dict[str, list[dict[str, Any]]]:
    """Each agent's tools: its own definitions where a trajectory carries them, and for every
    other tool it called a schema inferred from all of that agent's calls in the export (one
    trajectory's calls alone would list only the tools it happened to use)."""
    defined: dict[str, dict[str, dict[str, Any]]] = {}
    calls: dict[str, list[Any]] = {}
    for r in rollouts:
        defined.setdefault(r.agent, {}).update(defined_tools(r.item.atif))
        calls.setdefault(r.agent, []).extend(tool_calls(r.turns))
    tools = {}
    for agent, agent_calls in calls.items():
        schemas = {**inferred_tools(agent_calls), **defined[agent]}
        tools[agent] = [schemas[name] for name in sorted(schemas)]
    return tools


def _items(request: ExportRequest, built: Built) -> list[_Rollout]:
    items = sorted(request.items, key=lambda i: (i.task_id, natural(i.trajectory_id)))
    return [_convert(item, built) for item in items]


def _conversations(
    request: ExportRequest, render: Callable[[Turn], dict[str, Any]], empty_tools: bool
) -> Built:
    built = Built()
    rollouts = _items(request, built)
    tools = _tools_by_agent(rollouts)
    for r in rollouts:
        assert r.item.eval is not None  # the writer refuses items without one
        if not r.item.eval.passed:
            _source(built, r.item, None, "eval_failed")
            built.left_out["eval_failed"] += 1
        elif not any(t.role == "assistant" for t in r.turns):
            _source(built, r.item, None, "no_assistant_turn")
            built.left_out["no_assistant_turn"] += 1
        else:
            row: dict[str, Any] = {"messages": [render(t) for t in r.turns]}
            if tools[r.agent] or empty_tools:
                row["tools"] = tools[r.agent]
            _source(built, r.item, len(built.rows))
            built.rows.append(row)
    return built


def sft_rows(request: ExportRequest) -> Built:
    """Rollouts that passed the eval harness, as TRL conversations with their tools."""
    return _conversations(request, trl_message, empty_tools=True)


def openai_rows(request: ExportRequest) -> Built:
    """Rollouts that passed, in OpenAI's chat fine-tuning format. ``tools`` is left out of a
    row whose agent called none (the parquet then reads it as None)."""
    return _conversations(request, openai_message, empty_tools=False)


def kto_rows(request: ExportRequest) -> Built:
    """Every rollout with its label: people's verdict where labellers decided a pair it was in,
    else the harness's. The prompt is what came before the agent's first turn, the completion
    everything the agent did and saw after it. The manifest counts whose word each label is."""
    built = Built()
    rollouts = _items(request, built)
    tools = _tools_by_agent(rollouts)
    sources = {"people": 0, "harness": 0}
    for r in rollouts:
        assert r.item.eval is not None
        first = next((i for i, t in enumerate(r.turns) if t.role == "assistant"), None)
        if first is None or first == 0:
            reason = "no_assistant_turn" if first is None else "no_prompt"
            _source(built, r.item, None, reason)
            built.left_out[reason] += 1
            continue
        _source(built, r.item, len(built.rows))
        people = r.item.label is not None
        sources["people" if people else "harness"] += 1
        built.rows.append(
            {
                "completion": [trl_message(t) for t in r.turns[first:]],
                "label": r.item.label if people else r.item.eval.passed,
                "prompt": [trl_message(t) for t in r.turns[:first]],
                "tools": tools[r.agent],
            }
        )
    built.labels = {"label_from": sources}
    return built


def _completion_start(turns: Sequence[Turn], divergence: int) -> int:
    """Where the completion begins: the first turn reaching the divergence step, moved back over
    shared assistant turns so that the prompt ends where the model is asked to speak."""
    k = next((i for i, t in enumerate(turns) if t.last_step >= divergence), len(turns))
    while k > 0 and turns[k - 1].role == "assistant":
        k -= 1
    return k


def dpo_rows(request: ExportRequest) -> Built:
    """Each pair split at its divergence step: the shared prefix is the prompt, each side's rest
    its completion. Pairs that share no prompt, or diverge at a user's words, are left out."""
    built = Built()
    per_pair = []
    pairs = sorted(request.pairs, key=lambda p: natural(p.pair_id))
    chosen = [_convert(p.chosen, built) for p in pairs]
    rejected = [_convert(p.rejected, built) for p in pairs]
    tools = _tools_by_agent(chosen + rejected)
    for pair, c, r in zip(pairs, chosen, rejected, strict=True):
        c_steps, _ = training_steps(c.item.atif.get("steps") or [])
        r_steps, _ = training_steps(r.item.atif.get("steps") or [])
        alignment = align(c_steps, r_steps)
        reason = ""
        if alignment.identical:
            reason = "identical"
        else:
            assert alignment.divergence is not None
            kc = _completion_start(c.turns, alignment.divergence)
            kr = _completion_start(r.turns, alignment.divergence)
            if kc == 0 or kr == 0:
                reason = "no_shared_prompt"
            elif kc == len(c.turns) or kr == len(r.turns):
                reason = "empty_completion"
            elif c.turns[kc].role != "assistant" or r.turns[kr].role != "assistant":
                reason = "diverges_at_user"
        row = None
        if reason:
            built.left_out[reason] += 1
        else:
            row = len(built.rows)
            built.rows.append(
                {
                    "chosen": [trl_message(t) for t in c.turns[kc:]],
                    "prompt": [trl_message(t) for t in c.turns[:kc]],
                    "rejected": [trl_message(t) for t in r.turns[kr:]],
                    "tools": tools[c.agent],
                }
            )
        _source(built, pair.chosen, row, reason)
        _source(built, pair.rejected, row, reason)
        per_pair.append(
            {
                "agreement": pair.agreement,
                "chosen": pair.chosen.trajectory_id,
                "divergence_step": alignment.divergence,
                "labels": pair.labels,
                "left_out": reason or None,
                "pair_id": pair.pair_id,
                "rejected": pair.rejected.trajectory_id,
                "row": row,
            }
        )
    agreements = [p.agreement for p in pairs if p.agreement is not None]
    built.labels = {
        "agreement": dict(request.agreement),
        "labels": sum(p.labels for p in pairs),
        "mean_pair_agreement": round(sum(agreements) / len(agreements), 6) if agreements else None,
        "pairs": per_pair,
    }
    return built


_UNSAFE = re.compile(r"[^A-Za-z0-9._\-]+")


def task_dir_name(task_id: str) -> str:
    """The folder under ``tasks/`` that holds a task in an RFT export (the caller copies it)."""
    return _UNSAFE.sub("_", task_id).strip("._") or "task"


def tree_sha256(root: Path) -> str:
    """One digest over a folder's files: their relative paths and contents, in path order."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            digest.update(f"{rel}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    return digest.hexdigest()


def rft_rows(request: ExportRequest) -> Built:
    """One prompt-only row per kept task, its instruction as the prompt, referencing the task's
    folder the way TRL's Harbor integration lays out a suite (``tasks/<task>/instruction.md``)."""
    built = Built()
    entries = []
    names: dict[str, str] = {}
    for index, task in enumerate(sorted(request.tasks, key=lambda t: natural(t.task_id))):
        instruction_path = task.path / "instruction.md"
        if not instruction_path.is_file():
            raise BadExportInput(f"task {task.task_id}: no instruction.md in {task.path}")
        name = task_dir_name(task.task_id)
        if names.setdefault(name, task.task_id) != task.task_id:
            raise BadExportInput(f"tasks {names[name]} and {task.task_id} share folder {name}")
        task_dir = f"tasks/{name}"
        built.rows.append(
            {
                "prompt": [{"content": instruction_path.read_text(), "role": "user"}],
                "task_dir": task_dir,
                "task_id": task.task_id,
                "task_index": index,
            }
        )
        entries.append(
            {
                "dir": task_dir,
                "eval_run_ids": sorted(task.eval_run_ids, key=natural),
                "sha256": tree_sha256(task.path),
                "task_id": task.task_id,
            }
        )
    built.harbor = {
        "root": "tasks",
        "tasks": entries,
        "trl": "trl.experimental.harbor.HarborSpec(<export dir>) reads tasks/<task>/",
    }
    return built


Builder = Callable[[ExportRequest], Built]

BUILDERS: Mapping[ExportKind, Builder] = {
    ExportKind.SFT: sft_rows,
    ExportKind.OPENAI: openai_rows,
    ExportKind.DPO: dpo_rows,
    ExportKind.KTO: kto_rows,
    ExportKind.RFT: rft_rows,
}

# What each kind is for TRL (or OpenAI), written into the manifest and the dataset card.
TRAINERS: Mapping[ExportKind, Mapping[str, Any]] = {
    ExportKind.SFT: {
        "trainer": "trl SFTTrainer",
        "type": "conversational language modeling, tool calling",
        "columns": ["messages", "tools"],
    },
    ExportKind.OPENAI: {
        "trainer": "OpenAI supervised fine-tuning (chat)",
        "type": "chat messages, tool calls, per-message weight",
        "columns": ["messages", "tools"],
    },
    ExportKind.DPO: {
        "trainer": "trl DPOTrainer",
        "type": "conversational preference, explicit prompt",
        "columns": ["prompt", "chosen", "rejected", "tools"],
    },
    ExportKind.KTO: {
        "trainer": "trl KTOTrainer",
        "type": "conversational unpaired preference",
        "columns": ["prompt", "completion", "label", "tools"],
    },
    ExportKind.RFT: {
        "trainer": "trl GRPOTrainer with trl.experimental.harbor",
        "type": "conversational prompt-only, referencing Harbor tasks",
        "columns": ["prompt", "task_id", "task_dir", "task_index"],
    },
}


def features(kind: ExportKind) -> Any:
    """The ``datasets`` features of a kind's parquet. Messages and tool schemas are ``Json()``
    values, as TRL's docs advise for tool calling (arguments are arbitrary objects); whole
    messages rather than structs, so that a message reads back with exactly its own keys instead
    of every key any message has, filled with None (which trips chat templates that test
    ``'tool_calls' in message``)."""
    from datasets import Features, Json, List, Value

    messages = List(Json())
    columns: dict[ExportKind, dict[str, Any]] = {
        ExportKind.SFT: {"messages": messages, "tools": List(Json())},
        ExportKind.OPENAI: {"messages": messages, "tools": List(Json())},
        ExportKind.DPO: {
            "chosen": messages,
            "prompt": messages,
            "rejected": messages,
            "tools": List(Json()),
        },
        ExportKind.KTO: {
            "completion": messages,
            "label": Value("bool"),
            "prompt": messages,
            "tools": List(Json()),
        },
        ExportKind.RFT: {
            "prompt": messages,
            "task_dir": Value("string"),
            "task_id": Value("string"),
            "task_index": Value("int64"),
        },
    }
    return Features(columns[kind])
