"""The "prompt" decision: a behaviour spec as an AGENTS.md / CLAUDE.md rule, in plain words.

>>> from training.core.catalogue import catalogue
>>> print(prompt_rule(catalogue()["read-before-edit"]))
## Read a file before editing it
<BLANKLINE>
Every file the agent changes that already existed was read first; an edit made blind is \
forbidden.
<BLANKLINE>
Do these in this order:
1. Read a file: read any file.
2. Edit a file: edit any file.
<BLANKLINE>
Never:
- change a file that already existed without reading it first.
<BLANKLINE>
(traj2env behaviour read-before-edit, spec version 1)

What to do and in what order (the expected actions), what to leave behind (the evidence, as
the harness checks it: a passing run after the last edit, a file's final state, the verified
reward) and what never to do (each forbidden action with its parameters). The same spec gives
the same text, byte for byte, so eval runs can be grouped by the prompt version that produced
them; the closing line names the spec version the text came from.
"""

from __future__ import annotations

from ..spec import ActionKind, BehaviourSpec, ExpectedAction
from .words import action_words, evidence_words, forbidden_words


def prompt_rule(spec: BehaviourSpec) -> str:
    lines = [f"## {spec.title}", ""]
    if spec.description:
        lines += [spec.description, ""]
    if spec.expected_actions:
        if len(spec.expected_actions) == 1:
            lines.append("Do this:")
            lines.append(f"- {_action_line(spec.expected_actions[0])}")
        elif spec.order_required:
            lines.append("Do these in this order:")
            lines += [f"{i}. {_action_line(a)}" for i, a in enumerate(spec.expected_actions, 1)]
        else:
            lines.append("Do all of these, in any order:")
            lines += [f"- {_action_line(a)}" for a in spec.expected_actions]
        lines.append("")
    if spec.evidence:
        lines.append("Before you say you are done, make sure of this evidence:")
        lines += [f"- {evidence_words(item)}." for item in spec.evidence]
        lines.append("")
    if spec.forbidden:
        lines.append("Never:")
        lines += [f"- {forbidden_words(rule)}." for rule in spec.forbidden]
        lines.append("")
    version = f", spec version {spec.version}" if spec.version is not None else ""
    lines.append(f"(traj2env behaviour {spec.slug}{version})")
    return "\n".join(lines)


def _action_line(action: ExpectedAction) -> str:
    words = action_words(action)
    label = action.label
    # Labels load_spec made from the matchers ("edit src/**", "shell test check passed") say
    # nothing the words do not say better.
    generated = f"{action.kind} {action.path or 'any file'}"
    if label == generated or (action.kind is ActionKind.SHELL and label.startswith("shell")):
        return f"{words[0].upper()}{words[1:]}."
    return f"{label[0].upper()}{label[1:]}: {words}."
