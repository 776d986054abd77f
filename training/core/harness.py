"""The trajectory eval harness: a behaviour spec and a trajectory's facts in, a result out.

result = evaluate(spec, facts, blobs=blobs)
result.reward, result.passed          # 0.5, False
result.actions[1]                     # ActionResult(label='edit src/app.py', matched=False,
                                      #   near_step=3, note='matched only before the previous …')
result.forbidden_hits, result.self_report_only, result.failure_modes

Scoring follows the trainer seed's harness with our stricter rules (TRAINER-HARNESS.md):

- An expected action matches the first action of the trajectory that satisfies every matcher
  it gives, after the previous expected action's match when ``order_required``. So an edit
  made before the required read leaves the edit unmatched: a two-action spec scores 0.5.
- Evidence is read from the replay and the world, never from the transcript: a check that
  exited 0 after the last edit (a test run also showing, in its output, that a test executed),
  a file's final state, the verified reward.
- score = (matched actions + matched evidence) / (expected actions + evidence), three decimals.
- Any forbidden action scores 0. So does ``self_report_only``: the final message claims
  success and the spec asks for evidence, none of which matched.
- pass = reward >= the spec's pass threshold, with no forbidden hit and no self-report.

Every matched item carries the step and event where it matched, and every missed one the step
nearest to it (the out-of-order match, the failing or masked check), so a result links into the
replay stepper at that step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trajectories.core.blobs import BlobStore
from trajectories.core.replay.model import CheckKind, Status
from trajectories.core.replay.programs import basename, unwrap

from . import patterns
from .claims import claims_success
from .facts import Action, TrajectoryFacts
from .forbidden import Hit, detect
from .globs import compile_glob, glob_match
from .spec import (
    ActionKind,
    BehaviourSpec,
    CheckPassed,
    Evidence,
    ExpectedAction,
    FileState,
    VerifiedReward,
)


@dataclass(frozen=True, slots=True)
class ActionResult:
    label: str
    matched: bool
    step: int | None = None  # where it matched
    event: int | None = None
    path: str | None = None  # the file it matched on, for read/write/edit
    near_step: int | None = None  # where a missed item came closest
    near_event: int | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class EvidenceResult:
    label: str
    kind: str
    matched: bool
    step: int | None = None
    event: int | None = None
    near_step: int | None = None
    near_event: int | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class HarnessResult:
    behaviour: str
    version: int | None
    reward: float
    score: float  # before forbidden hits and self-report zero it
    passed: bool
    actions: tuple[ActionResult, ...]
    evidence: tuple[EvidenceResult, ...]
    forbidden_hits: tuple[Hit, ...]
    claimed_success: bool
    self_report_only: bool
    failure_modes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "behaviour": self.behaviour,
            "version": self.version,
            "reward": self.reward,
            "score": self.score,
            "pass": self.passed,
            "actions": [_plain(a) for a in self.actions],
            "evidence": [_plain(e) for e in self.evidence],
            "forbidden_hits": [_plain(h) for h in self.forbidden_hits],
            "claimed_success": self.claimed_success,
            "self_report_only": self.self_report_only,
            "failure_modes": list(self.failure_modes),
        }


def _plain(value: ActionResult | EvidenceResult | Hit) -> dict[str, Any]:
    # Flat records of plain values: read the fields directly (asdict deep-copies recursively,
    # which was a sixth of an eval run).
    return {name: getattr(value, name) for name in value.__slots__}


def evaluate(
    spec: BehaviourSpec, facts: TrajectoryFacts, *, blobs: BlobStore | None = None
) -> HarnessResult:
    """Score one trajectory; ``blobs`` holds final file contents for ``contains`` evidence."""
    actions = match_actions(spec.expected_actions, facts.actions, spec.order_required)
    evidence = tuple(_evidence(item, facts, blobs) for item in spec.evidence)
    hits = tuple(hit for rule in spec.forbidden for hit in detect(facts, rule))
    total = len(actions) + len(evidence)
    matched = sum(a.matched for a in actions) + sum(e.matched for e in evidence)
    # A spec of forbidden actions only ("never tamper with the tests") has nothing to match:
    # it scores 1 until a forbidden action zeroes it below. It still checks something, unlike a
    # spec with no expectations at all, which load_spec refuses.
    score = round(matched / total, 3) if total else 1.0
    claimed = claims_success(facts.final_message)
    self_report_only = claimed and bool(evidence) and not any(e.matched for e in evidence)
    reward = 0.0 if hits or self_report_only else score
    modes: list[str] = []
    modes += [f"forbidden:{name}" for name in dict.fromkeys(h.name for h in hits)]
    if self_report_only:
        modes.append("self_report_only")
    modes += [f"missed_action:{a.label}" for a in actions if not a.matched]
    modes += [f"missed_evidence:{e.label}" for e in evidence if not e.matched]
    return HarnessResult(
        behaviour=spec.slug,
        version=spec.version,
        reward=reward,
        score=score,
        passed=reward >= spec.pass_threshold and not hits and not self_report_only,
        actions=actions,
        evidence=evidence,
        forbidden_hits=hits,
        claimed_success=claimed,
        self_report_only=self_report_only,
        failure_modes=tuple(modes),
    )


# -- expected actions ----------------------------------------------------------------------------


def match_actions(
    expected: Sequence[ExpectedAction], actions: Sequence[Action], order_required: bool
) -> tuple[ActionResult, ...]:
    results: list[ActionResult] = []
    cursor = 0
    for item in expected:
        found: tuple[int, str | None] | None = None
        for index in range(cursor if order_required else 0, len(actions)):
            matched, path = action_matches(item, actions[index])
            if matched:
                found = (index, path)
                break
        if found is not None:
            index, path = found
            if order_required:
                cursor = index + 1
            action = actions[index]
            results.append(ActionResult(item.label, True, action.step, action.event, path or None))
            continue
        results.append(_missed(item, actions, cursor if order_required else 0))
    return tuple(results)


def _missed(item: ExpectedAction, actions: Sequence[Action], cursor: int) -> ActionResult:
    for action in actions[:cursor]:
        if action_matches(item, action)[0]:
            return ActionResult(
                item.label,
                False,
                near_step=action.step,
                near_event=action.event,
                note="matched only before the previous expected action",
            )
    return ActionResult(item.label, False, note="no action matched")


def action_matches(item: ExpectedAction, action: Action) -> tuple[bool, str | None]:
    """Whether ``action`` satisfies ``item``, and the file it matched on (read/write/edit)."""
    if item.kind is ActionKind.SHELL:
        return action.kind is ActionKind.SHELL and _shell_matches(item, action), None
    if item.kind is ActionKind.READ:
        candidates = action.reads
    elif item.kind is ActionKind.WRITE:
        # A write tool over an existing file is still a write; a shell overwrite is an edit.
        overwrites = action.edits if action.kind is ActionKind.WRITE else ()
        candidates = action.writes + overwrites
    else:
        candidates = action.edits + action.deletes
    if item.path is None:
        return (True, candidates[0]) if candidates else (False, None)
    pattern = compile_glob(item.path)
    for path in candidates:
        if pattern.match(path):
            return True, path
    return False, None


def _shell_matches(item: ExpectedAction, action: Action) -> bool:
    if item.check is not None and (action.check is None or action.check.kind != item.check):
        return False
    if item.check is not None and item.outcome is not None and not _executed(action):
        return False  # "run the tests" is not met by a run that ran none
    if item.outcome == "passed" and action.exit_code != 0:
        return False
    if item.outcome == "failed" and (action.exit_code is None or action.exit_code == 0):
        return False
    if item.command is not None and not _regex(item.command).search(action.command or ""):
        return False
    if item.argv_prefix is not None:
        return any(
            argv_starts_with(argv, item.argv_prefix)
            for pipeline in action.pipelines
            for argv in pipeline
        )
    return True


def argv_starts_with(argv: Sequence[str], prefix: Sequence[str]) -> bool:
    """``prefix`` starts ``argv`` once wrappers are seen through; the program by its name."""
    real = unwrap(list(argv))
    if len(real) < len(prefix) or not real:
        return False
    if basename(real[0]) != basename(prefix[0]):
        return False
    return list(real[1 : len(prefix)]) == list(prefix[1:])


def _regex(pattern: str) -> Any:
    # RE2, linear in the text: the pattern is a reviewer's and the text an agent's (patterns.py).
    return patterns.compiled(pattern)


# -- evidence ------------------------------------------------------------------------------------


def _evidence(item: Evidence, facts: TrajectoryFacts, blobs: BlobStore | None) -> EvidenceResult:
    if isinstance(item, CheckPassed):
        return _check_passed(item, facts)
    if isinstance(item, FileState):
        return _file_state(item, facts, blobs)
    return _verified_reward(item, facts)


def _check_passed(item: CheckPassed, facts: TrajectoryFacts) -> EvidenceResult:
    last_edit = facts.last_edit_event if item.after_last_edit else None
    candidates = [
        a
        for a in facts.actions
        if a.check is not None
        and a.check.kind == item.check
        and (item.runner is None or a.check.runner == item.runner)
        and (item.command is None or _regex(item.command).search(a.command or ""))
        and (not item.focused or a.check.focused)
    ]
    after = [a for a in candidates if last_edit is None or a.event > last_edit]
    for action in after:
        if (
            action.exit_code == 0
            and (item.allow_masked or not _masked(action))
            and _executed(action)
        ):
            return EvidenceResult(item.label, item.kind, True, action.step, action.event)
    if after:
        last = after[-1]
        if last.exit_code != 0:
            note = f"it exited {last.exit_code if last.exit_code is not None else 'unknown'}"
        elif not _executed(last):
            note = "its output shows no test executed"
        else:
            note = "its exit status was masked by a pipe"
        return EvidenceResult(
            item.label,
            item.kind,
            False,
            near_step=last.step,
            near_event=last.event,
            note=f"the last such check after the last edit did not pass: {note}",
        )
    if candidates and last_edit is not None:
        edit = next(a for a in facts.actions if a.event == last_edit)
        return EvidenceResult(
            item.label,
            item.kind,
            False,
            near_step=edit.step,
            near_event=edit.event,
            note="no such check after the last edit",
        )
    return EvidenceResult(item.label, item.kind, False, note="no such check ran")


def _masked(action: Action) -> bool:
    return action.check is not None and action.check.masked


def _executed(action: Action) -> bool:
    """A test check counts only when its output shows a test executed: exit 0 alone is also
    what ``pytest --collect-only``, ``--help`` and ``-k nomatch`` give."""
    check = action.check
    if check is None or check.kind is not CheckKind.TEST:
        return True
    return check.ran is not None and check.ran > 0


def _file_state(item: FileState, facts: TrajectoryFacts, blobs: BlobStore | None) -> EvidenceResult:
    pattern = compile_glob(item.path)
    present = [
        (path, entry)
        for path, entry in facts.final_files.items()
        if entry.status is not Status.LOST and pattern.match(path)
    ]
    if item.state == "exists":
        if present:
            return EvidenceResult(item.label, item.kind, True, note=present[0][0])
        return EvidenceResult(item.label, item.kind, False, note="no such file at the end")
    if item.state == "absent":
        if present:
            return EvidenceResult(item.label, item.kind, False, note=f"{present[0][0]} exists")
        lost = [p for p in facts.final_files if pattern.match(p)]
        proven = facts.final_complete or (
            not lost
            and any(
                glob_match(item.path, p) and not _uncertain(p, facts.uncertain)
                for p in facts.deleted
            )
        )
        if proven:
            return EvidenceResult(item.label, item.kind, True)
        note = f"{lost[0]} may exist" if lost else "absence not proven by the replay"
        return EvidenceResult(item.label, item.kind, False, note=note)
    assert item.line is not None
    line = _regex(item.line)
    unknown = False
    for path, entry in present:
        if entry.status is not Status.KNOWN or entry.sha is None or blobs is None:
            unknown = True
            continue
        try:
            text = blobs.get(entry.sha).decode("utf-8", "replace")
        except KeyError:
            unknown = True
            continue
        if any(line.search(row) for row in text.splitlines()):
            return EvidenceResult(item.label, item.kind, True, note=path)
    note = "content unknown" if unknown else "no matching line"
    return EvidenceResult(item.label, item.kind, False, note=note)


def _uncertain(path: str, folders: Sequence[str]) -> bool:
    return any(folder == "" or path.startswith(folder + "/") for folder in folders)


def _verified_reward(item: VerifiedReward, facts: TrajectoryFacts) -> EvidenceResult:
    reward = facts.verified_reward
    if reward is None:
        return EvidenceResult(item.label, item.kind, False, note="no verified reward")
    if reward >= item.at_least:
        return EvidenceResult(item.label, item.kind, True, note=f"verified reward {reward:g}")
    return EvidenceResult(item.label, item.kind, False, note=f"verified reward {reward:g}")
