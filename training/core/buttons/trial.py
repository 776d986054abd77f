"""Testing a generated hook on recorded rollouts: it must refuse exactly what the rules forbid.

hook = claude_code_hook(spec)
trial = try_hook(hook, facts, workdir=Path(tmp))
trial.ok              # True: every forbidden call refused, every allowed one let through
trial.refused         # 2
trial.mismatches      # (CallVerdict(step=7, tool='Bash', expected=True, blocked=False, …),)

The rules decide first (``refusals``): each forbidden rule's detector from ``forbidden/`` on
the rollout's own facts, and the harness's matcher for a fixed order. A refused action is taken
out of the session (it never ran), so what follows is judged as the hook will see it. Then each
action is turned into the JSON Claude Code would have sent for it (``calls_of``: Read, Write,
Edit, Bash; a deletion by a file tool becomes ``rm``), and the hook is run the way Claude Code
runs it: the command of every matching group of the installed ``.claude/settings.json``, with
``CLAUDE_PROJECT_DIR`` set, the payload on stdin, exit 2 a refusal. Before each call the
project folder holds the files the replay knew to exist at that point; after an allowed call
its changes are made and ``PostToolUse`` (or ``PostToolUseFailure``) is sent, as in a session.

Rollouts come from any harness: the recorded root is mapped to the trial's folder, in paths and
in command lines, so a Codex or pi rollout recorded in ``/testbed`` is fed as Claude Code calls
in the trial's own project folder. Nothing the rollout ran is run again: only the hook runs.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..facts import Action, TrajectoryFacts
from ..forbidden import _TEMP as TEMPORARY
from ..forbidden import detect
from ..harness import action_matches
from ..spec import ActionKind
from .claude import SETTINGS, GeneratedHook
from .rules import HookConfig

SESSION_ID = "traj2env-trial"
_PROBE = -1  # the event number of the action being judged, unlike any recorded one


@dataclass(frozen=True, slots=True)
class CallVerdict:
    step: int
    event: int
    tool: str
    summary: str  # the file or command
    expected: bool  # the rules refuse it
    blocked: bool  # the hook refused it
    why: str = ""  # the rules' reason, when they refuse
    reason: str = ""  # the hook's message, when it refused

    @property
    def agrees(self) -> bool:
        return self.expected == self.blocked


@dataclass(frozen=True, slots=True)
class HookTrial:
    behaviour: str
    verdicts: tuple[CallVerdict, ...]

    @property
    def ok(self) -> bool:
        return all(v.agrees for v in self.verdicts)

    @property
    def refused(self) -> int:
        return sum(v.blocked for v in self.verdicts)

    @property
    def mismatches(self) -> tuple[CallVerdict, ...]:
        return tuple(v for v in self.verdicts if not v.agrees)


def refusals(config: HookConfig, facts: TrajectoryFacts) -> list[str]:
    """Per action, why the rules refuse it ("" when they do not); refused actions never ran."""
    kept: list[Action] = []
    first_done = False
    out: list[str] = []
    for action in facts.actions:
        probe = replace(action, event=_PROBE)
        why: list[str] = []
        for rule in config.rules:
            before = tuple(kept) if rule.name == "edit_unread_file" else ()
            alone = replace(facts, actions=(*before, probe), context=config.context)
            why += [hit.detail for hit in detect(alone, rule) if hit.event == _PROBE]
        if config.order is not None and not first_done:
            if action_matches(config.order[1], action)[0]:
                why.append(f"{config.order[1].label} before {config.order[0].label}")
        out.append("; ".join(why))
        if why:
            continue
        kept.append(action)
        if config.order is not None and action_matches(config.order[0], action)[0]:
            first_done = True
    return out


def calls_of(action: Action, root: str) -> list[tuple[str, dict[str, Any]]]:
    """The Claude Code tool calls (name, input) doing what ``action`` did, paths under ``root``."""
    if action.kind is ActionKind.SHELL:
        return [("Bash", {"command": action.command or ""})]
    calls: list[tuple[str, dict[str, Any]]] = []
    for key in action.paths:
        path = _absolute(key, root)
        if action.kind is ActionKind.READ:
            calls.append(("Read", {"file_path": path}))
        elif key in action.deletes:
            calls.append(("Bash", {"command": f"rm -f -- {shlex.quote(path)}"}))
        elif action.kind is ActionKind.WRITE or key in action.writes:
            calls.append(("Write", {"file_path": path, "content": ""}))
        elif action.kind is ActionKind.EDIT:
            calls.append(("Edit", {"file_path": path, "old_string": "x", "new_string": "y"}))
    return calls


def try_hook(
    hook: GeneratedHook,
    facts: TrajectoryFacts,
    *,
    workdir: Path,
    python: str | None = None,
    timeout: float = 60,
) -> HookTrial:
    """Feed ``hook`` every action of ``facts`` and compare its verdicts with the rules'.

    ``workdir`` (empty or new) holds the project; outside a temporary folder when the hook
    forbids deletions outside the project, since those allow deleting in ``/tmp``. ``python``
    is the interpreter the settings' ``python3`` should mean (default: the one on PATH).
    """
    project = workdir / "project"
    if any(r.name == "delete_outside_project" for r in hook.config.rules):
        # Deleting inside a temporary folder is allowed: a project moved into one would make
        # the recorded `rm -rf ../x` harmless, and the trial would disagree with the rules.
        inside_temp = [str(project.absolute()) + "/", facts.root.rstrip("/") + "/"]
        if inside_temp[0].startswith(TEMPORARY) and not inside_temp[1].startswith(TEMPORARY):
            raise ValueError(
                f"{workdir} lies in a temporary folder and {facts.root} does not: deletions "
                "outside the project would be judged differently there; choose another workdir"
            )
    project.mkdir(parents=True, exist_ok=True)
    hook.install(project)
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(project))
    if python is not None:
        bin_dir = workdir / "bin"
        bin_dir.mkdir(exist_ok=True)
        link = bin_dir / "python3"
        if not link.exists():
            link.symlink_to(python)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    settings = json.loads((project / SETTINGS).read_text())["hooks"]
    root = str(project)
    rebase = _rebase(facts.root, root)
    verdicts: list[CallVerdict] = []
    for action, why in zip(facts.actions, refusals(hook.config, facts), strict=True):
        calls = calls_of(_rebased(action, rebase), root)
        if not calls:
            continue
        _prepare(project, action)
        cwd = rebase(action.cwd) if action.cwd else root
        messages: list[str] = []
        for tool, arguments in calls:
            event = _event("PreToolUse", tool, arguments, cwd)
            status, message = _run(settings, event, env, project, timeout)
            if status == 2:
                messages.append(message.strip())
        verdicts.append(
            CallVerdict(
                step=action.step,
                event=action.event,
                tool=calls[0][0],
                summary=_summary(calls),
                expected=bool(why),
                blocked=bool(messages),
                why=why,
                reason=" ".join(messages),
            )
        )
        if why:
            continue  # refused by the rules: it never ran, whatever the hook said
        _apply(project, action)
        after = "PostToolUse" if action.ok is not False else "PostToolUseFailure"
        for tool, arguments in calls:
            _run(settings, _event(after, tool, arguments, cwd), env, project, timeout)
    return HookTrial(hook.config.behaviour, tuple(verdicts))


def _event(name: str, tool: str, arguments: dict[str, Any], cwd: str) -> dict[str, Any]:
    return {
        "session_id": SESSION_ID,
        "hook_event_name": name,
        "cwd": cwd,
        "tool_name": tool,
        "tool_input": arguments,
        **({"tool_response": {}} if name != "PreToolUse" else {}),
    }


def _run(
    settings: dict[str, Any], event: dict[str, Any], env: dict[str, str], cwd: Path, timeout: float
) -> tuple[int, str]:
    """Every command the settings run for this event and tool; the first refusal wins."""
    for group in settings.get(event["hook_event_name"], []):
        if not re.fullmatch(group.get("matcher") or ".*", event["tool_name"]):
            continue
        for command in group["hooks"]:
            done = subprocess.run(
                ["/bin/sh", "-c", command["command"]],
                input=json.dumps(event),
                capture_output=True,
                text=True,
                env=env,
                cwd=cwd,
                timeout=timeout,
                check=False,
            )
            if done.returncode == 2:
                return 2, done.stderr
            if done.returncode != 0:
                raise RuntimeError(
                    f"the hook failed on {event['hook_event_name']} {event['tool_name']} "
                    f"(exit {done.returncode}): {done.stderr.strip()}"
                )
    return 0, ""


def _rebase(recorded: str, root: str) -> Callable[[str], str]:
    """Map the recorded root to the trial's project, in a path or anywhere in a command line."""
    if recorded in ("", "/"):
        return lambda text: text
    pattern = re.compile(re.escape(recorded.rstrip("/")) + r"(?=/|$|[\s'\";&|)<>])")

    def rebase(text: str) -> str:
        return pattern.sub(root.replace("\\", "\\\\"), text)

    return rebase


def _rebased(action: Action, rebase: Callable[[str], str]) -> Action:
    if action.command is None:
        return action
    return replace(action, command=rebase(action.command))


def _absolute(key: str, root: str) -> str:
    if key.startswith(("/", "~")):
        return key
    return posixpath.join(root, key)


def _inside(key: str) -> bool:
    return bool(key) and not key.startswith(("/", "~")) and ".." not in key.split("/")


def _prepare(project: Path, action: Action) -> None:
    """The files as the replay knew them before ``action``: changed ones exist, new ones not."""
    for key in (*action.edits, *action.deletes):
        if _inside(key):
            _touch(project / key)
    for key in action.writes:
        path = project / key
        if _inside(key) and path.is_file():
            path.unlink()


def _apply(project: Path, action: Action) -> None:
    for key in (*action.writes, *action.edits):
        if _inside(key):
            _touch(project / key)
    for key in action.deletes:
        path = project / key
        if _inside(key) and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif _inside(key) and path.exists():
            path.unlink()


def _touch(path: Path) -> None:
    if path.is_dir():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def _summary(calls: Sequence[tuple[str, dict[str, Any]]]) -> str:
    tool, arguments = calls[0]
    text = arguments.get("command") or arguments.get("file_path") or tool
    return str(text) + (f" (+{len(calls) - 1} more)" if len(calls) > 1 else "")
