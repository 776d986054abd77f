"""Is a behaviour a plain if/then rule? Then build the button, don't train.

>>> from training.core.catalogue import catalogue
>>> verdict = plain_rule(catalogue()["read-before-edit"])
>>> verdict.plain, verdict.form
(True, 'order')
>>> plain_rule(catalogue()["no-test-tampering"]).plain
False

A spec is a plain rule in two shapes, and only then does a hook enforce all of it:

- **forbidden only**: no expected actions and no evidence, only forbidden actions. A hook that
  refuses each forbidden call is the whole behaviour.
- **fixed order**: exactly two expected actions, order required, no evidence, each concrete: a
  file action (read, write, edit) or a shell action named by what the agent types
  (``argv_prefix`` or ``command``), with no ``outcome`` and no ``check``, which are known only
  once the command has run. The hook refuses the second until the first has happened (read X
  before editing X); forbidden actions, if any, are refused as well.

Anything else (evidence the agent must produce, more steps, an order left free, an outcome)
needs the agent to do something, which a hook cannot make it do; the verdict says which part.
Even then a hook may still refuse the spec's forbidden actions as a "script" decision:
``hookable`` lists what it would cover.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..spec import ActionKind, BehaviourSpec, ExpectedAction
from .words import FORBIDDEN_SHORT, action_words, forbidden_words

Form = Literal["forbidden", "order"]


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    plain: bool
    reason: str  # one or two sentences for the decision page
    form: Form | None = None
    hookable: tuple[str, ...] = ()  # what a hook can enforce: forbidden names, and "order"


def plain_rule(spec: BehaviourSpec) -> RuleVerdict:
    forbidden = tuple(rule.name for rule in spec.forbidden)
    never = "; ".join(forbidden_words(rule) for rule in spec.forbidden)
    still = (
        f" A hook can still refuse its forbidden actions ({_short(forbidden)}) as a script "
        "decision."
        if forbidden
        else ""
    )
    if spec.evidence:
        asked = "; ".join(item.label for item in spec.evidence)
        return RuleVerdict(
            False,
            f"Not a plain rule: it asks for evidence the agent has to produce ({asked}), and a "
            f"hook can only refuse actions.{still}",
            hookable=forbidden,
        )
    actions = spec.expected_actions
    if not actions:
        if not forbidden:
            return RuleVerdict(False, "Not a plain rule: it neither expects nor forbids anything.")
        return RuleVerdict(
            True,
            f"A plain rule: it only forbids actions (never {never}). Build the button, don't "
            "train: a hook that refuses these calls enforces the whole behaviour.",
            form="forbidden",
            hookable=forbidden,
        )
    if len(actions) != 2:
        listed = "; ".join(a.label for a in actions)
        return RuleVerdict(
            False,
            f"Not a plain rule: it expects {len(actions)} actions ({listed}); a plain rule orders "
            f"exactly two.{still}",
            hookable=forbidden,
        )
    if not spec.order_required:
        return RuleVerdict(
            False,
            "Not a plain rule: its two actions may come in any order, so no single call breaks "
            f"it.{still}",
            hookable=forbidden,
        )
    order = concrete_order(spec)
    if order is None:
        problems = "; ".join(p for p in (_not_concrete(a) for a in actions) if p)
        return RuleVerdict(False, f"Not a plain rule: {problems}.{still}", hookable=forbidden)
    first, then = order
    also = f", and never {never}" if never else ""
    return RuleVerdict(
        True,
        f"A plain rule: {action_words(first)} before you {action_words(then)}{also}. Build the "
        f"button, don't train: a hook refuses to {action_words(then)} until the agent has "
        f"{_past(first)}" + (f", and refuses {_short(forbidden)}." if forbidden else "."),
        form="order",
        hookable=(*forbidden, "order"),
    )


def concrete_order(spec: BehaviourSpec) -> tuple[ExpectedAction, ExpectedAction] | None:
    """The two actions a hook keeps in order, when the spec is a fixed-order plain rule."""
    actions = spec.expected_actions
    if spec.evidence or len(actions) != 2 or not spec.order_required:
        return None
    if any(_not_concrete(a) for a in actions):
        return None
    return actions[0], actions[1]


def _not_concrete(action: ExpectedAction) -> str | None:
    """Why a hook cannot tell this action from the call alone, or None when it can."""
    if action.kind is not ActionKind.SHELL:
        return None
    if action.outcome is not None:
        return (
            f"“{action.label}” asks for a command that {action.outcome}, which is known only "
            "after it ran"
        )
    if action.check is not None:
        return f"“{action.label}” asks for a kind of check ({action.check}), not a command"
    if action.argv_prefix is None and action.command is None:
        return f"“{action.label}” names no command"
    return None


def _short(names: tuple[str, ...]) -> str:
    words = [FORBIDDEN_SHORT[name] for name in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _past(action: ExpectedAction) -> str:
    words = action_words(action)
    for verb, past in (("read ", "read "), ("edit ", "edited "), ("write ", "written ")):
        if words.startswith(verb):
            return past + words.removeprefix(verb)
    return "done this: " + words
