"""Screen one ATIF trajectory with atif-scan's built-in checks, offline.

This reproduces what `atif-scan FILE` (the CLI has no subcommand) does for one local
trajectory with no task, run listing or verifier files beside it: the built-in detectors,
the access roll-up rules and the built-in allowances, evaluated by `Engine` in an empty
`Context`. Deliberately left out, because each needs what we lack or must not do:

- task packs (`--packs auto`): they are recognised from Terminal-Bench/DeepSWE task names
  and Harbor job datasets, which a bare ATIF document does not carry;
- `--image-model`, `hf://` inputs and syncing: they call a model or the network;
- `--cite`: its excerpts are trace text; we keep only one short masked excerpt per finding.

A finding is an assessment atif-scan itself counts (`Assessment.counts`: a matched detector
or rule not excused by an allowance), i.e. exactly what scores the CLI report and what its
`--fail-on` compares against.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from atif_scan import Engine, Status, TraceError, builtin_detectors, load_bytes
from atif_scan.access import access_rules
from atif_scan.checks import Context
from atif_scan.data.model import Channel
from atif_scan.detectors.priming import builtin_allowances
from atif_scan.evidence.cite import cite, trace_secrets

from .redact import still_has_secrets

if TYPE_CHECKING:
    from atif_scan import Assessment, Locator, Trace

SEVERITIES = ("info", "low", "medium", "high", "critical")
SCANNER_VERSION = version("atif-scan")

# Findings are stored per trajectory and shown in lists: the evidence excerpt and the whole
# detail are capped so a finding on a 100 kB heredoc stays a one-line summary.
EXCERPT_CHARS = 100
DETAIL_CHARS = 300
OTHER_STEPS_SHOWN = 5

# atif-scan raises TraceError with fixed codes only (never input text); these say what is
# wrong in words a reviewer can act on. Unlisted codes fall back to the code itself.
REASONS = {
    "invalid_steps": "not an ATIF trajectory: there is no 'steps' list",
    "unsupported_schema_version": "schema_version is not an ATIF-v1.x version",
    "invalid_step": "a step has no valid 'source' (system, user or agent)",
    "invalid_copied_context": "a step's is_copied_context is not true or false",
    "invalid_calls": "a step's tool_calls is not a list",
    "invalid_call": "a tool call has no function_name",
    "invalid_call_id": "a tool call has no tool_call_id",
    "duplicate_call_id": "two tool calls in one step share a tool_call_id",
    "invalid_argument_keys": "tool call arguments are not a JSON object",
    "invalid_argument_value": "tool call arguments hold a value JSON cannot represent",
    "invalid_observation": "a step's observation is not an object with a 'results' list",
    "invalid_observation_result": "an observation result is not an object",
    "invalid_observation_call_id": "an observation's source_call_id is not a string",
    "trace_too_large": "the trajectory is larger than atif-scan's 256 MiB limit",
    "unreadable_trace": "the trajectory is not valid UTF-8 JSON",
}


class ScanError(ValueError):
    """atif-scan could not read or fully assess the document; `code` is its fixed code."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"atif-scan cannot scan this trajectory: {reason} ({code})")
        self.code = code
        self.reason = reason


def severity_rank(name: str) -> int:
    """Position of a severity name in SEVERITIES; unknown names are a caller bug."""
    try:
        return SEVERITIES.index(name)
    except ValueError:
        raise ValueError(f"unknown severity {name!r}; expected one of {SEVERITIES}") from None


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str
    title: str
    detail: str
    step_id: int | None  # ATIF step_id of the first evidence; None for whole-trace facts


@dataclass(frozen=True)
class ScanResult:
    findings: tuple[Finding, ...]
    scanner_version: str

    def blocks(self, threshold: str = "high") -> bool:
        """Whether any finding is at or above `threshold` (one of SEVERITIES)."""
        bar = severity_rank(threshold)
        return any(severity_rank(f.severity) >= bar for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "scanner_version": self.scanner_version,
            "findings": [asdict(f) for f in self.findings],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScanResult:
        """The inverse of `to_json`, for results read back from storage."""
        findings = tuple(Finding(**f) for f in data["findings"])
        for f in findings:
            severity_rank(f.severity)
        return cls(findings, data["scanner_version"])


# atif-scan's credential check reads observations only; the redactor reads every field (the
# user's requests and the tool arguments too) and reports under this check of our own.
CREDENTIALS_CHECK = "observation.credentials_exposed"
SECRETS_CHECK = "traj2env.secrets"


def secrets_finding(result: ScanResult, atif: dict[str, Any]) -> Finding | None:
    """A finding naming the secrets in ``atif`` when atif-scan or the redactor sees any
    (e-mail addresses aside: personal data, not credentials); None when there are none."""
    kinds = [k for k in still_has_secrets(json.dumps(atif)) if k != "email"]
    if not kinds and not any(f.check == CREDENTIALS_CHECK for f in result.findings):
        return None
    return Finding(
        check=SECRETS_CHECK,
        severity="low",
        title="Secrets in the trajectory",
        detail=", ".join(kinds) or "credential-like values in tool output",
        step_id=None,
    )


def _engine() -> Engine:
    # The CLI's default check set (`cli.inputs.load_checks` without packs, plugins or
    # policy files). Built per scan: it takes ~5 ms and keeps no state between traces.
    return Engine([*builtin_detectors(), *access_rules(), *builtin_allowances()])


def _load(atif: dict[str, Any]) -> Trace:
    """The trace, read through the same bytes path as a file given to the CLI, so the size
    cap and JSON rules match; Python values JSON cannot hold are rejected here too."""
    try:
        data = json.dumps(atif).encode()
    except (TypeError, ValueError, RecursionError):
        raise ScanError("not_json", "the document holds values JSON cannot represent") from None
    try:
        return load_bytes(data)
    except TraceError as error:
        code = str(error)
        raise ScanError(code, REASONS.get(code, "atif-scan rejected the document")) from None


def _excerpt(trace: Trace, at: Locator, known: frozenset[str]) -> str:
    """The matched text, masked for credentials by atif-scan's citation code, on one line."""
    if at.channel == Channel.METADATA:
        return ""  # the "text" would only echo the step_id and timestamp
    text = " ".join(str(cite(trace, at, known)["match"]).split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _detail(trace: Trace, assessment: Assessment, known: frozenset[str]) -> str:
    result = assessment.result
    parts = []
    if result.evidence:
        first = result.evidence[0]
        first_step = trace.step_numbers[first.step]
        where = f"{first.channel.value} at step {first_step}"
        excerpt = _excerpt(trace, first, known)
        parts.append(f"{where}: {excerpt}" if excerpt else where)
        others = sorted({trace.step_numbers[e.step] for e in result.evidence} - {first_step})
        if others:
            shown = ", ".join(str(s) for s in others[:OTHER_STEPS_SHOWN])
            more = len(others) - OTHER_STEPS_SHOWN
            parts.append(f"also step {shown}" + (f" and {more} more" if more > 0 else ""))
    if result.measure:
        parts.append(", ".join(f"{name}={value}" for name, value in result.measure))
    if not result.complete:
        # Engine marks matches partial when part of the session was not recorded.
        parts.append("recording partial, more may be unrecorded")
    detail = "; ".join(parts) or "whole trajectory"
    return detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1] + "…"


def scan(atif: dict[str, Any]) -> ScanResult:
    """Findings of atif-scan's built-in checks on one ATIF document (no model, no network)."""
    trace = _load(atif)
    assessments = _engine().evaluate(trace, Context())
    # The CLI exits 2 ("invalid input") when a check errors: its negatives can't be trusted,
    # so a clean-looking result would be a false pass.
    failed = sorted(a.spec.id for a in assessments if a.result.status == Status.ERROR)
    if failed:
        raise ScanError("check_error", f"check {', '.join(failed)} failed on this document")
    counted = [a for a in assessments if a.counts]
    # Masking needs every secret in the trace (one printed bare elsewhere still counts);
    # collecting them reads all text, so only when there is evidence to excerpt.
    needs_text = any(e.channel != Channel.METADATA for a in counted for e in a.result.evidence)
    known = trace_secrets(trace) if needs_text else frozenset()
    findings = [
        Finding(
            check=a.spec.id,
            severity=a.spec.severity.name.lower(),
            title=a.spec.title or a.spec.id,
            detail=_detail(trace, a, known),
            step_id=trace.step_numbers[a.result.evidence[0].step] if a.result.evidence else None,
        )
        for a in counted
    ]
    findings.sort(key=lambda f: (-severity_rank(f.severity), f.check))
    return ScanResult(tuple(findings), SCANNER_VERSION)


__all__ = ["SEVERITIES", "Finding", "ScanError", "ScanResult", "scan", "secrets_finding"]
