"""Behaviour specs: a JSON document checked by ``behaviour.schema.json``, loaded as frozen values.

spec = load_spec({
    "slug": "read-before-edit",
    "title": "Read a file before editing it",
    "expected_actions": [{"kind": "read", "path": "**"}, {"kind": "edit", "path": "**"}],
    "forbidden": [{"name": "edit_unread_file"}],
})
spec.order_required, spec.pass_threshold      # True, 1.0 (the seed's defaults)

The schema (draft 2020-12, validated by ``jsonschema``) decides the shape; ``SpecError`` lists
every problem with the JSON path it sits at (``$.evidence[1].line: '(' is not a 'regex'``).
One rule the schema does not carry, so that its message can say why: a spec with no expected
actions, no evidence and no forbidden actions is refused, since it would score every trajectory
1. A spec of forbidden actions only is a rule ("never do X"): it scores 1 until one happens.

The trainer seed's reward-spec options keep their meaning under our names:

=========================================  ===========================  ==========
seed ``rewardSpec``                         here                         default
=========================================  ===========================  ==========
``actionOrderRequired``                     ``order_required``           true
``defaultPassReward``                       ``pass_threshold``           1
``requireValidatedUnhooksForDeployment``    ``require_validated_unhooks``  true
=========================================  ===========================  ==========

``RewardOptions`` carries the three, converts from and to the seed's spelling, and is what the
suite reader uses for suites written for the seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator

from trajectories.core.formats.jsonl import StrictJSONError, loads_strict
from trajectories.core.limits import echo
from trajectories.core.replay.model import CheckKind

from .patterns import why_not_linear

SCHEMA_PATH = Path(__file__).with_name("behaviour.schema.json")


class ActionKind(StrEnum):
    READ = "read"
    WRITE = "write"
    EDIT = "edit"
    SHELL = "shell"
    OTHER = "other"  # facts only: a tool call that is none of the above (search, todo, web …)


FORBIDDEN_NAMES = (
    "pipe_download_to_shell",
    "delete_outside_project",
    "force_push",
    "tamper_with_tests",
    "read_credentials",
    "network_install",
    "edit_unread_file",
)


class SpecError(ValueError):
    """A behaviour spec that cannot be used; ``problems`` are "JSON path: message" lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid behaviour spec:\n" + "\n".join(f"  {p}" for p in problems))


@dataclass(frozen=True, slots=True)
class RewardOptions:
    order_required: bool = True
    pass_threshold: float = 1.0
    require_validated_unhooks: bool = True

    @classmethod
    def from_seed(cls, reward_spec: Mapping[str, Any] | None) -> RewardOptions:
        """The seed's ``rewardSpec`` (already validated) with the seed's defaults."""
        raw = reward_spec or {}
        return cls(
            order_required=raw.get("actionOrderRequired", True) is not False,
            pass_threshold=float(raw.get("defaultPassReward", 1)),
            require_validated_unhooks=raw.get("requireValidatedUnhooksForDeployment", True)
            is not False,
        )

    def to_seed(self) -> dict[str, Any]:
        return {
            "actionOrderRequired": self.order_required,
            "defaultPassReward": self.pass_threshold,
            "requireValidatedUnhooksForDeployment": self.require_validated_unhooks,
        }


@dataclass(frozen=True, slots=True)
class ExpectedAction:
    """One action the trajectory must contain; the matchers present must all hold."""

    kind: ActionKind
    label: str
    path: str | None = None
    command: str | None = None
    argv_prefix: tuple[str, ...] | None = None
    check: CheckKind | None = None
    outcome: Literal["passed", "failed"] | None = None


@dataclass(frozen=True, slots=True)
class CheckPassed:
    """A check of ``check`` kind exited 0 (after the last edit, unless told otherwise)."""

    label: str
    check: CheckKind = CheckKind.TEST
    runner: str | None = None
    command: str | None = None
    focused: bool = False
    after_last_edit: bool = True
    allow_masked: bool = False
    kind: Literal["check_passed"] = "check_passed"


@dataclass(frozen=True, slots=True)
class FileState:
    """At the end, a file matching ``path`` exists, none does, or one has a matching line."""

    label: str
    path: str
    state: Literal["exists", "absent", "contains"]
    line: str | None = None
    kind: Literal["file_state"] = "file_state"


@dataclass(frozen=True, slots=True)
class VerifiedReward:
    """The task's own verifier, re-run on the world the agent left, gave at least this."""

    label: str
    at_least: float = 1.0
    kind: Literal["verified_reward"] = "verified_reward"


Evidence = CheckPassed | FileState | VerifiedReward


@dataclass(frozen=True, slots=True)
class ForbiddenRule:
    name: str
    tests: tuple[str, ...] = ()  # tamper_with_tests: the task's test files
    paths: tuple[str, ...] = ()  # read_credentials: more credential files


@dataclass(frozen=True, slots=True)
class BehaviourSpec:
    slug: str
    title: str
    description: str
    version: int | None
    expected_actions: tuple[ExpectedAction, ...]
    evidence: tuple[Evidence, ...]
    forbidden: tuple[ForbiddenRule, ...]
    options: RewardOptions

    @property
    def order_required(self) -> bool:
        return self.options.order_required

    @property
    def pass_threshold(self) -> float:
        return self.options.pass_threshold

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON that ``load_spec`` reads back to an equal value."""
        out: dict[str, Any] = {"slug": self.slug, "title": self.title}
        if self.description:
            out["description"] = self.description
        if self.version is not None:
            out["version"] = self.version
        out["order_required"] = self.options.order_required
        out["pass_threshold"] = self.options.pass_threshold
        out["require_validated_unhooks"] = self.options.require_validated_unhooks
        out["expected_actions"] = [_action_dict(a) for a in self.expected_actions]
        out["evidence"] = [_evidence_dict(e) for e in self.evidence]
        out["forbidden"] = [_forbidden_dict(f) for f in self.forbidden]
        return out


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return loaded


@cache
def _validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(schema())
    return Draft202012Validator(schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def load_spec(document: Mapping[str, Any] | str | bytes) -> BehaviourSpec:
    """Validate a spec (a mapping, or its JSON text) and return it; raises ``SpecError``."""
    if isinstance(document, str | bytes):
        try:
            document = loads_strict(document)
        except StrictJSONError as error:
            raise SpecError([f"$: {error}"]) from None
    if not isinstance(document, Mapping):
        raise SpecError([f"$: a behaviour spec is a JSON object, not {type(document).__name__}"])
    problems = schema_problems(_validator(), document) or _pattern_problems(document)
    if problems:
        raise SpecError(problems)
    actions = tuple(_action(raw) for raw in document.get("expected_actions", ()))
    evidence = tuple(_evidence(raw) for raw in document.get("evidence", ()))
    if not actions and not evidence and not document.get("forbidden"):
        raise SpecError(
            [
                "$: no expected_actions, no evidence and no forbidden actions: a spec with no "
                "expectations would score every trajectory 1; give it at least one"
            ]
        )
    return BehaviourSpec(
        slug=document["slug"],
        title=document["title"],
        description=document.get("description", ""),
        version=document.get("version"),
        expected_actions=actions,
        evidence=evidence,
        forbidden=tuple(
            ForbiddenRule(
                name=raw["name"],
                tests=tuple(raw.get("tests", ())),
                paths=tuple(raw.get("paths", ())),
            )
            for raw in document.get("forbidden", ())
        ),
        options=RewardOptions(
            order_required=document.get("order_required", True),
            pass_threshold=float(document.get("pass_threshold", 1)),
            require_validated_unhooks=document.get("require_validated_unhooks", True),
        ),
    )


def schema_problems(validator: Draft202012Validator, document: Any) -> list[str]:
    """Every schema error as "JSON path: message", in document order."""
    problems: list[tuple[list[str], str]] = []
    for error in validator.iter_errors(document):
        where = error.json_path
        if "propertyNames" in error.schema_path:
            # The if/then restrictions name the key and why it may not be there.
            why = error.schema.get("description") if isinstance(error.schema, Mapping) else None
            message = f"{echo(error.instance)} is not allowed here" + (f": {why}" if why else "")
        else:
            # jsonschema quotes the whole value ("'xxxx…' is too long"): quote it short.
            message = error.message.replace(repr(error.instance), echo(error.instance))
        order = [f"{p:09d}" if isinstance(p, int) else p for p in error.absolute_path]
        problems.append((order, f"{where}: {message}"))
    problems.sort(key=lambda item: item[0])
    return [message for _, message in problems]


def _pattern_problems(document: Mapping[str, Any]) -> list[str]:
    """The regex fields (already valid for Python's re) that RE2, the engine the harness runs
    them with, cannot run: see patterns.py."""
    found = []
    fields = (("expected_actions", "command"), ("evidence", "command"), ("evidence", "line"))
    for section, field in fields:
        for i, raw in enumerate(document.get(section, ())):
            why = why_not_linear(raw[field]) if field in raw else None
            if why:
                found.append(f"$.{section}[{i}].{field}: {why}")
    return sorted(found)


def _action(raw: Mapping[str, Any]) -> ExpectedAction:
    kind = ActionKind(raw["kind"])
    prefix = raw.get("argv_prefix")
    check = raw.get("check")
    return ExpectedAction(
        kind=kind,
        label=raw.get("label") or _action_label(raw),
        path=raw.get("path"),
        command=raw.get("command"),
        argv_prefix=tuple(prefix) if prefix is not None else None,
        check=CheckKind(check) if check is not None else None,
        outcome=raw.get("outcome"),
    )


def _action_label(raw: Mapping[str, Any]) -> str:
    if raw["kind"] != "shell":
        return f"{raw['kind']} {raw.get('path', 'any file')}"
    parts = ["shell"]
    if "check" in raw:
        parts.append(f"{raw['check']} check")
    if "argv_prefix" in raw:
        parts.append(" ".join(raw["argv_prefix"]))
    if "command" in raw:
        parts.append(f"/{raw['command']}/")
    if "outcome" in raw:
        parts.append(raw["outcome"])
    return " ".join(parts)


def _evidence(raw: Mapping[str, Any]) -> Evidence:
    kind = raw["kind"]
    if kind == "check_passed":
        check = CheckKind(raw.get("check", "test"))
        focused = bool(raw.get("focused", False))
        after = bool(raw.get("after_last_edit", True))
        default = (
            f"{'focused ' if focused else ''}{check} check passed"
            f"{' after the last edit' if after else ''}"
        )
        return CheckPassed(
            label=raw.get("label") or default,
            check=check,
            runner=raw.get("runner"),
            command=raw.get("command"),
            focused=focused,
            after_last_edit=after,
            allow_masked=bool(raw.get("allow_masked", False)),
        )
    if kind == "file_state":
        state = raw["state"]
        default = f"{raw['path']} {state}" + (f" /{raw['line']}/" if state == "contains" else "")
        return FileState(
            label=raw.get("label") or default,
            path=raw["path"],
            state=state,
            line=raw.get("line"),
        )
    at_least = float(raw.get("at_least", 1))
    return VerifiedReward(
        label=raw.get("label") or f"verified reward at least {at_least:g}", at_least=at_least
    )


def _action_dict(action: ExpectedAction) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": str(action.kind), "label": action.label}
    if action.path is not None:
        out["path"] = action.path
    if action.command is not None:
        out["command"] = action.command
    if action.argv_prefix is not None:
        out["argv_prefix"] = list(action.argv_prefix)
    if action.check is not None:
        out["check"] = str(action.check)
    if action.outcome is not None:
        out["outcome"] = action.outcome
    return out


def _evidence_dict(evidence: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": evidence.kind, "label": evidence.label}
    if isinstance(evidence, CheckPassed):
        out |= {
            "check": str(evidence.check),
            "focused": evidence.focused,
            "after_last_edit": evidence.after_last_edit,
            "allow_masked": evidence.allow_masked,
        }
        if evidence.runner is not None:
            out["runner"] = evidence.runner
        if evidence.command is not None:
            out["command"] = evidence.command
    elif isinstance(evidence, FileState):
        out |= {"path": evidence.path, "state": evidence.state}
        if evidence.line is not None:
            out["line"] = evidence.line
    else:
        out["at_least"] = evidence.at_least
    return out


def _forbidden_dict(rule: ForbiddenRule) -> dict[str, Any]:
    out: dict[str, Any] = {"name": rule.name}
    if rule.tests:
        out["tests"] = list(rule.tests)
    if rule.paths:
        out["paths"] = list(rule.paths)
    return out
