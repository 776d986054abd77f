"""What the decision page shows: the base agent's eval results beside the trainer seed's ladder of
interventions, the "build the button, don't train" verdict with its generated hooks, the prompt
rule, eval runs compared by prompt version, and the decisions so far."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from training.core.buttons import (
    GeneratedHook,
    GitHook,
    HookTrial,
    NothingToBlock,
    RuleVerdict,
    claude_code_hook,
    git_hooks,
    plain_rule,
    prompt_rule,
    try_hook,
)
from training.core.facts import TrajectoryFacts
from training.core.spec import BehaviourSpec, load_spec
from training.core.stats import GroupStats, ScoredRollout, aggregate
from trajectories.core.words import with_article

from ..models import Behaviour, BehaviourVersion, Decision, EvalResult, EvalRun

# How many finished eval runs the prompt-version comparison lays side by side.
COMPARED_RUNS = 6


@dataclass(frozen=True)
class Rung:
    """One step of the trainer seed's ladder, lightest first: "pick the lightest intervention
    that passes: rule, script, skill, small adapter, then RFT"."""

    key: str
    name: str
    what: str
    evidence: str = ""  # what the eval runs say about it here, when they say anything
    chosen: bool = False  # the standing decision takes this step


LADDER = (
    ("prompt", "Rule or prompt", "An AGENTS.md / CLAUDE.md rule the agent reads."),
    ("script", "Script or hook", "A hook or script that refuses the wrong call."),
    ("skill", "Skill", "A packaged procedure the agent can call on."),
    ("sft", "SFT", "Behaviour cloning: the rollouts that passed, to do it consistently."),
    ("preference", "Preference or RFT", "DPO / KTO from labels, or RFT on the tasks' verifiers."),
    ("adapter", "LoRA / QLoRA adapter", "A small adapter on a frozen base model."),
)


def chosen_rungs(decision: Decision | None) -> set[str]:
    if decision is None:
        return set()
    if decision.kind == Decision.Kind.TRAIN:
        return {"sft" if decision.method == Decision.Method.SFT else "preference", "adapter"}
    return {decision.kind} & {"prompt", "script"}


def spec_of(version: BehaviourVersion) -> BehaviourSpec:
    return load_spec({**version.spec, "version": version.number})


def latest_run(version: BehaviourVersion) -> EvalRun | None:
    return version.runs.filter(status=EvalRun.Status.DONE).order_by("-id").first()


def base_groups(run: EvalRun | None) -> list[dict[str, Any]]:
    """The run's result groups for rollouts with no adapter: the base agent."""
    if run is None:
        return []
    return [g for g in run.summary.get("groups", []) if not g.get("adapter")]


def outcomes(run: EvalRun) -> list[ScoredRollout]:
    rows = EvalResult.objects.filter(run=run).values_list(
        "task__candidate_id",
        "reward",
        "passed",
        "rollout__agent",
        "rollout__model",
        "rollout__adapter",
        "rollout__prompt_version",
        "forbidden_hits",
        "self_report_only",
    )
    return [
        ScoredRollout(
            str(t), reward, passed, agent, model, adapter, prompt, None, hits, self_report
        )
        for t, reward, passed, agent, model, adapter, prompt, hits, self_report in rows
    ]


@dataclass(frozen=True)
class PromptRow:
    run: EvalRun
    prompt_version: str  # "" is the agent's own prompt, before any rule was added
    stats: GroupStats


def prompt_comparison(behaviour: Behaviour) -> list[PromptRow]:
    """The latest finished runs' results grouped by prompt version: a prompt rule's effect,
    before and after, on the same tasks."""
    runs = EvalRun.objects.filter(version__behaviour=behaviour, status=EvalRun.Status.DONE)
    rows = []
    for run in runs.select_related("version").order_by("-id")[:COMPARED_RUNS]:
        for stats in aggregate(outcomes(run), k=run.k, by=("prompt_version",)):
            rows.append(PromptRow(run, str(stats.key[0]), stats))
    return rows


def ladder(run: EvalRun | None, made: Button, decision: Decision | None = None) -> list[Rung]:
    """The ladder with what this behaviour's evals say at each step."""
    prompted: list[GroupStats] = []
    adapted: list[GroupStats] = []
    if run is not None:
        for stats in aggregate(outcomes(run), k=run.k, by=("adapter", "prompt_version")):
            adapter, prompt = stats.key
            if adapter:
                adapted.append(stats)
            elif prompt:
                prompted.append(stats)
    said = {
        "prompt": _best("prompt version", prompted, 1),
        "script": made.verdict.reason if made.hook else "No call for a hook to refuse.",
        "adapter": _best("adapter", adapted, 0),
    }
    chosen = chosen_rungs(decision)
    return [Rung(k, name, what, said.get(k, ""), k in chosen) for k, name, what in LADDER]


def _best(what: str, groups: Sequence[GroupStats], field: int) -> str:
    if not groups:
        return f"No rollouts with {with_article(what)} in the latest eval run."
    best = max(groups, key=lambda g: g.pass_at_1)
    return (
        f"Best {what} {best.key[field]!s}: pass@1 {best.pass_at_1:.0%} over {best.rollouts} "
        f"rollout{'s' if best.rollouts != 1 else ''}."
    )


@dataclass(frozen=True)
class Button:
    verdict: RuleVerdict
    hook: GeneratedHook | None
    git: tuple[GitHook, ...]
    prompt: str


def button(spec: BehaviourSpec) -> Button:
    try:
        hook: GeneratedHook | None = claude_code_hook(spec)
    except NothingToBlock:
        hook = None
    return Button(plain_rule(spec), hook, git_hooks(spec), prompt_rule(spec))


def files(made: Button) -> dict[str, tuple[str, str]]:
    """The generated files a user downloads, by name: (content, content type)."""
    out = {"AGENTS.md": (made.prompt + "\n", "text/markdown; charset=utf-8")}
    if made.hook is not None:
        out["settings.json"] = (made.hook.settings_json(), "application/json")
        out[Path(made.hook.script_path).name] = (made.hook.script, "text/x-python; charset=utf-8")
    for hook in made.git:
        out[hook.name] = (hook.script, "text/plain; charset=utf-8")
    return out


@dataclass(frozen=True)
class HookTrialRow:
    rollout_id: int
    passed: bool | None  # the harness's verdict in the latest run, when it scored the rollout
    trial: HookTrial


def hook_trials(version: BehaviourVersion, hook: GeneratedHook) -> list[HookTrialRow]:
    """The hook fed every call of the behaviour's latest scored failing rollout (the one with
    the most forbidden hits) and passing rollout: each trial says whether it refused exactly what
    the rules forbid. Two, because every call starts the hook as a process, within a request."""
    run = latest_run(version)
    if run is None:
        return []
    scored = (
        EvalResult.objects.filter(run=run, rollout__facts__isnull=False)
        .select_related("rollout")
        .order_by("-forbidden_hits", "rollout_id")
    )
    chosen = [scored.filter(passed=False).first(), scored.filter(passed=True).first()]
    rows = []
    for result in (r for r in chosen if r is not None):
        facts = TrajectoryFacts.from_dict(result.rollout.facts)
        home = Path(settings.HOOK_TRIAL_DIR)
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="hook-trial-", dir=home) as folder:
            # This interpreter, not whatever `python3` PATH finds (a version manager's shim
            # would cost more than the hook itself on every call).
            trial = try_hook(hook, facts, workdir=Path(folder), python=sys.executable, timeout=10)
        rows.append(HookTrialRow(result.rollout_id, result.passed, trial))
    return rows


def history(behaviour: Behaviour) -> list[Decision]:
    return list(behaviour.decisions.select_related("decided_by", "version").order_by("-id"))
