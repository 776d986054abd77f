"""The button for Claude Code: a ``PreToolUse`` hook that refuses a behaviour's forbidden calls.

hook = claude_code_hook(catalogue()["read-before-edit"])
hook.script_path       # '.claude/hooks/traj2env-read-before-edit.py'
hook.tools             # ('Bash', 'Edit', 'MultiEdit', 'NotebookEdit', 'Read', 'Write')
sorted(hook.settings["hooks"])     # ['PostToolUse', 'PostToolUseFailure', 'PreToolUse']
hook.install(project)  # writes the script, merges the fragment into .claude/settings.json

Two pieces, installed together (https://code.claude.com/docs/en/hooks: settings ``hooks`` key,
``matcher`` as a regular expression over tool names, ``type: command`` with
``$CLAUDE_PROJECT_DIR``):

- the ``.claude/settings.json`` fragment: ``hooks.PreToolUse`` with one matcher over the tools
  the rules concern (Bash, Read, Edit, Write, MultiEdit, NotebookEdit) running the script; a
  hook that keeps session state (``edit_unread_file``, a fixed order) also runs on
  ``PostToolUse`` and ``PostToolUseFailure``, with ``--state`` naming its folder
  (``.claude/traj2env-state/<slug>``, one small JSON file per ``session_id``);
- the script: ``python3 -I`` (3.11 or newer, standard library only), carrying
  ``runtime.py`` and the project's own detectors (``bundle.py``), so it refuses exactly what
  ``forbidden.detect`` would have scored 0, plus the fixed order's second action before the
  first.

Any spec with forbidden actions or a concrete fixed order gets a hook; whether that hook is the
whole behaviour (a plain rule: build the button, don't train) is ``plain_rule``'s verdict.
"""

from __future__ import annotations

import json
import pprint
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..facts import TaskContext
from ..spec import ActionKind, BehaviourSpec
from .bundle import FORBIDDEN_MODULES, bundle
from .plain import concrete_order
from .rules import HookConfig
from .words import action_words, forbidden_words

HOOKS_DIR = ".claude/hooks"
STATE_DIR = ".claude/traj2env-state"
SETTINGS = ".claude/settings.json"
TIMEOUT_SECONDS = 30
# The modules a script carries reduced to what it uses: each imports what a script cannot carry.
EXTRACTED = (
    "training.core.facts.build",
    "training.core.facts.model",
    "training.core.forbidden",
    *FORBIDDEN_MODULES,
    "training.core.harness",
    "training.core.spec",
)

_FILE_TOOLS = ("Edit", "MultiEdit", "NotebookEdit", "Write")
_RULE_TOOLS = {
    "pipe_download_to_shell": ("Bash",),
    "delete_outside_project": ("Bash",),
    "force_push": ("Bash",),
    "network_install": ("Bash",),
    "tamper_with_tests": ("Bash", *_FILE_TOOLS),
    "read_credentials": ("Bash", "Read"),
    # Reads and writes are recorded so that a later edit of the same file is not blind.
    "edit_unread_file": ("Bash", "Read", *_FILE_TOOLS),
}
_KIND_TOOLS = {
    ActionKind.READ: ("Bash", "Read"),
    ActionKind.EDIT: ("Bash", *_FILE_TOOLS),
    ActionKind.WRITE: ("Bash", *_FILE_TOOLS),
    ActionKind.SHELL: ("Bash",),
}


class NothingToBlock(ValueError):
    """The spec forbids nothing and orders nothing a hook could tell from a call."""


@dataclass(frozen=True, slots=True)
class GeneratedHook:
    config: HookConfig
    script_path: str  # relative to the project root
    script: str
    settings: Mapping[str, Any]  # the .claude/settings.json fragment: {"hooks": {...}}
    state_dir: str | None  # relative to the project root, when the hook keeps session state
    tools: tuple[str, ...]
    blocks: tuple[str, ...]  # what it refuses, in words

    def settings_json(self) -> str:
        return json.dumps(self.settings, indent=2, ensure_ascii=False) + "\n"

    def install(self, project: Path) -> Path:
        """Write the script into ``project`` and merge the fragment into its settings."""
        script = project / self.script_path
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(self.script, encoding="utf-8")
        script.chmod(0o755)
        settings_path = project / SETTINGS
        current = json.loads(settings_path.read_text()) if settings_path.exists() else {}
        settings_path.write_text(
            json.dumps(merge_settings(current, self.settings), indent=2, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        return script


def claude_code_hook(spec: BehaviourSpec, *, context: TaskContext | None = None) -> GeneratedHook:
    """The hook for ``spec``; ``context`` gives the task's test files and network permission."""
    order = concrete_order(spec)
    if not spec.forbidden and order is None:
        raise NothingToBlock(
            f"{spec.slug} forbids no action and has no fixed order of two concrete actions: "
            "there is no call for a hook to refuse"
        )
    context = context or TaskContext()
    config = HookConfig(
        behaviour=spec.slug,
        version=spec.version,
        title=spec.title,
        rules=spec.forbidden,
        words={rule.name: forbidden_words(rule, context.test_files) for rule in spec.forbidden},
        order=order,
        order_words=(action_words(order[0]), action_words(order[1])) if order else ("", ""),
        context=context,
    )
    tools = sorted(
        {tool for rule in spec.forbidden for tool in _RULE_TOOLS[rule.name]}
        | {tool for action in order or () for tool in _KIND_TOOLS[action.kind]}
    )
    script_path = f"{HOOKS_DIR}/traj2env-{spec.slug}.py"
    state_dir = f"{STATE_DIR}/{spec.slug}" if config.stateful else None
    command = f'python3 -I "$CLAUDE_PROJECT_DIR/{script_path}"'
    if state_dir is not None:
        command += f' --state "$CLAUDE_PROJECT_DIR/{state_dir}"'
    group = {
        "matcher": "|".join(tools),
        "hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}],
    }
    events = ["PreToolUse"] + (["PostToolUse", "PostToolUseFailure"] if state_dir else [])
    blocks = tuple(f"never {words}" for words in config.words.values())
    if order is not None:
        blocks += (f"{config.order_words[1]} only after you {config.order_words[0]}",)
    return GeneratedHook(
        config=config,
        script_path=script_path,
        script=_script(config, blocks, script_path, state_dir),
        settings={"hooks": {event: [group] for event in events}},
        state_dir=state_dir,
        tools=tuple(tools),
        blocks=blocks,
    )


def merge_settings(current: Mapping[str, Any], fragment: Mapping[str, Any]) -> dict[str, Any]:
    """``current`` settings with the fragment's hook groups added, once each."""
    merged = dict(current)
    hooks = {event: list(groups) for event, groups in (current.get("hooks") or {}).items()}
    for event, groups in fragment["hooks"].items():
        existing = hooks.setdefault(event, [])
        existing.extend(group for group in groups if group not in existing)
    merged["hooks"] = hooks
    return merged


def _script(
    config: HookConfig, blocks: tuple[str, ...], script_path: str, state_dir: str | None
) -> str:
    embedded = bundle(
        ["training.core.buttons.runtime"],
        extract={name: () for name in EXTRACTED},
    )
    version = f", spec version {config.version}" if config.version is not None else ""
    refuses = "\n".join(f"- {line}" for line in blocks)
    state = (
        f"\nSession state: on PostToolUse it records what the session has read, written and "
        f"done in\n{state_dir}/<session_id>.json; delete that folder to forget.\n"
        if state_dir
        else ""
    )
    header = f'''#!/usr/bin/env python3
"""traj2env button for "{config.title}" ({config.behaviour}{version}).

A Claude Code PreToolUse hook. It refuses a tool call (exit 2, the reason on stderr for
Claude to read) when it would
{refuses}
and lets every other call through (exit 0).

Install: save as {script_path} and merge the "hooks" of the settings
fragment generated with it into .claude/settings.json. Needs python3 3.11 or newer, with the
standard library only.
{state}
The rules are traj2env's own (training/core/forbidden/ and the replay's reading of shell
commands), embedded below: regenerate the hook rather than editing it.
"""

import sys

CONFIG = {pprint.pformat(config.to_dict(), width=96, sort_dicts=True)}

'''
    footer = """

if __name__ == "__main__":
    if sys.version_info < (3, 11):
        print("The traj2env hook needs python3 3.11 or newer: refused.", file=sys.stderr)
        sys.exit(2)
    install()
    from training.core.buttons.runtime import main

    sys.exit(main(CONFIG, sys.argv[1:]))
"""
    return header + embedded.render() + footer
