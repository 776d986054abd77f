"""Secrets in a task being written: what the verifier grades must hold none (the candidate is
refused), and the starting project's text goes through the one redactor with its counts kept in
task.toml's metadata.

    why = graded_secret(candidate, blobs)        # "the reference's a.py holds a secret (...)"
    files, counts = redacted_project(candidate, blobs)
    redaction_counts(task_dir)                    # {"github_token": 1}
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from trajectories.core.blobs import BlobStore
from trajectories.core.redact import merge_counts, redact, still_has_secrets

from .mining.repair import RepairCandidate
from .trials.plan import is_discovered, is_guarded

REDACTION_KEY = "redaction"


def _credentials(data: bytes) -> tuple[str, ...]:
    # E-mail addresses are personal data, not credentials: tests of mail code need them, and
    # the redactor's other types are what would open an account.
    text = data.decode("utf-8", "surrogateescape")
    return tuple(kind for kind in still_has_secrets(text) if kind != "email")


def graded_secret(candidate: RepairCandidate, blobs: BlobStore) -> str | None:
    """Why the candidate cannot be written, when a credential is in what is graded byte for byte:
    the check, the files the oracle writes and the reference files the grader restores
    (solve.sh, grading.json, test.sh). Redacting there would change what passes."""
    found = _credentials(candidate.task_command.encode("utf-8", "surrogateescape"))
    if found:
        return f"the check's command holds a secret ({', '.join(found)})"
    written = {*candidate.added, *candidate.modified}
    for path, sha in sorted(candidate.ref_files.items()):
        graded = path in written or is_guarded(path) or is_discovered(path, candidate.task_command)
        if graded:
            found = _credentials(blobs.get(sha))
            if found:
                return f"the reference's {path} holds a secret ({', '.join(found)})"
    return None


def redacted_project(
    candidate: RepairCandidate, blobs: BlobStore
) -> tuple[dict[str, bytes], dict[str, int]]:
    """The starting files with every secret in their text replaced, and the counts by type.
    Bytes that are not UTF-8 pass through unchanged (surrogateescape); a file with a NUL in its
    first 8000 bytes is binary (git's own test) and is copied as it is."""
    files: dict[str, bytes] = {}
    counts: list[dict[str, int]] = []
    for path, sha in candidate.start_files.items():
        data = blobs.get(sha)
        if b"\x00" not in data[:8000]:
            result = redact(data.decode("utf-8", "surrogateescape"))
            if result.counts:
                data = result.value.encode("utf-8", "surrogateescape")
                counts.append(result.counts)
        files[path] = data
    return files, merge_counts(counts)


def redaction_counts(task_dir: Path | str) -> dict[str, int]:
    """The replacements the writer made in a task, by type (empty when none)."""
    config = tomllib.loads((Path(task_dir) / "task.toml").read_text())
    return dict(config.get("metadata", {}).get(REDACTION_KEY, {}))
