"""What a generated hook enforces, and one call judged by the forbidden-action catalogue.

config = HookConfig(behaviour="no-force-push", version=1, title="Never force-push",
                    rules=(ForbiddenRule("force_push"),), words={"force_push": "force-push"})
HookConfig.from_dict(config.to_dict()) == config      # what a script embeds as CONFIG
forbidden_reasons(config, action, root="/repo")       # ['git push -f origin main: never …']

Shared by the hooks' run-time modules (``runtime.py`` for Claude Code, ``precommit.py`` for
git), so both are embedded with it and judge a call the same way: each rule's own detector from
``forbidden.CATALOGUE``, run on that one action as if it were the whole trajectory, with the
files known to this session before it for ``edit_unread_file``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from training.core.facts.model import Action, TaskContext
from training.core.forbidden import CATALOGUE
from training.core.spec import ActionKind, ExpectedAction, ForbiddenRule

if TYPE_CHECKING:
    from training.core.facts.model import TrajectoryFacts


@dataclass(frozen=True, slots=True)
class HookConfig:
    """What one generated hook enforces; ``to_dict`` is what the script embeds."""

    behaviour: str
    version: int | None
    title: str
    rules: tuple[ForbiddenRule, ...] = ()
    words: Mapping[str, str] = field(default_factory=dict)  # rule name → what it forbids
    order: tuple[ExpectedAction, ExpectedAction] | None = None
    order_words: tuple[str, str] = ("", "")  # the two actions in words
    context: TaskContext = field(default_factory=TaskContext)

    @property
    def stateful(self) -> bool:
        return self.order is not None or any(r.name == "edit_unread_file" for r in self.rules)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "behaviour": self.behaviour,
            "version": self.version,
            "title": self.title,
            "rules": [
                {"name": r.name, "tests": list(r.tests), "paths": list(r.paths)} for r in self.rules
            ],
            "words": dict(self.words),
            "context": {
                "test_files": list(self.context.test_files),
                "network_allowed": self.context.network_allowed,
            },
        }
        if self.order is not None:
            out["order"] = [_action_dict(a) for a in self.order]
            out["order_words"] = list(self.order_words)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HookConfig:
        order = data.get("order")
        context = data.get("context") or {}
        first_words, then_words = data.get("order_words") or ("", "")
        return cls(
            behaviour=data["behaviour"],
            version=data.get("version"),
            title=data["title"],
            rules=tuple(
                ForbiddenRule(r["name"], tuple(r.get("tests", ())), tuple(r.get("paths", ())))
                for r in data.get("rules", ())
            ),
            words=dict(data.get("words", {})),
            order=(_action_from(order[0]), _action_from(order[1])) if order else None,
            order_words=(first_words, then_words),
            context=TaskContext(
                test_files=tuple(context.get("test_files", ())),
                network_allowed=context.get("network_allowed"),
            ),
        )


@dataclass(frozen=True, slots=True)
class _Facts:
    """The part of ``TrajectoryFacts`` a detector reads: the root, the actions, the context
    (a hook knows no final files: the tree is what the calls named)."""

    root: str
    actions: tuple[Action, ...]
    context: TaskContext
    final_files: tuple[str, ...] = ()
    deleted: frozenset[str] = frozenset()
    final_complete: bool = False  # a hook sees no world: the words decide


def forbidden_reasons(
    config: HookConfig, action: Action, *, root: str, known: Iterable[str] = ()
) -> list[str]:
    """Why the config's forbidden rules refuse ``action``: the detector's detail and the rule."""
    reasons: list[str] = []
    earlier = tuple(sorted(known))
    for rule in config.rules:
        history: tuple[Action, ...] = ()
        if rule.name == "edit_unread_file" and earlier:
            # One read of every file the session has read, written or edited: all the detector
            # needs to know of the calls before this one.
            history = (Action(ActionKind.READ, 0, action.event - 1, "earlier", reads=earlier),)
        # The full facts class is not embedded in a hook; the detectors read only these fields.
        facts = cast("TrajectoryFacts", _Facts(root, (*history, action), config.context))
        for hit in CATALOGUE[rule.name](facts, rule):
            if hit.event == action.event:
                reasons.append(f"{hit.detail}: never {config.words.get(rule.name, rule.name)}")
    return list(dict.fromkeys(reasons))


def _action_dict(action: ExpectedAction) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": str(action.kind), "label": action.label}
    if action.path is not None:
        out["path"] = action.path
    if action.command is not None:
        out["command"] = action.command
    if action.argv_prefix is not None:
        out["argv_prefix"] = list(action.argv_prefix)
    return out


def _action_from(data: Mapping[str, Any]) -> ExpectedAction:
    prefix = data.get("argv_prefix")
    return ExpectedAction(
        kind=ActionKind(data["kind"]),
        label=data["label"],
        path=data.get("path"),
        command=data.get("command"),
        argv_prefix=tuple(prefix) if prefix is not None else None,
    )


def failure_said(error: BaseException) -> str:
    """Why a hook could not decide, in words for the person who reads its message in a session
    or a terminal, never an exception's class name (``JSONDecodeError(...)``).

    >>> failure_said(json.JSONDecodeError("Expecting value", "{not", 1))
    'its input is not JSON (Expecting value, line 1 column 2)'
    >>> failure_said(PermissionError(13, "Permission denied", "/state/s1.json"))
    'Permission denied: /state/s1.json'
    >>> failure_said(subprocess.CalledProcessError(128, ["git", "diff", "--cached"]))
    '`git diff --cached` exited 128'
    >>> failure_said(ValueError("this hook keeps session state and needs --state DIR"))
    'this hook keeps session state and needs --state DIR'
    >>> failure_said(KeyError("tool_input"))
    "its input lacks 'tool_input'"
    """
    if isinstance(error, json.JSONDecodeError):
        return f"its input is not JSON ({error.msg}, line {error.lineno} column {error.colno})"
    if isinstance(error, subprocess.CalledProcessError):
        command = error.cmd if isinstance(error.cmd, str) else " ".join(map(str, error.cmd))
        return f"`{command}` exited {error.returncode}"
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    if isinstance(error, KeyError) and error.args:
        return f"its input lacks {error.args[0]!r}"
    return str(error).strip() or "an unexpected error inside the hook"
