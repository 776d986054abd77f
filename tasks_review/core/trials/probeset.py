"""A kept task's hidden equivalence probes, as data: what ``probes.py`` derives at keep time,
``tests/probes.json`` holds, the grader (``kit/probing.py``) runs and the host judges again.

A task whose probes include at least one *discriminating* input (the reference and the starting
code disagree on it) is **equivalence-graded**: its reward needs the submission's functions to
agree with the reference's there, decided by a process that never loads submission code. A
task without one is **check-only**: graded by its recorded check alone, marked so on the desk,
in task.toml and report.json, and kept out of training unless a behaviour opts in.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harbor.models.task.config import TaskConfig

from .kit import probing

EQUIVALENCE = "equivalence"
CHECK_ONLY = "check-only"
PROBES_FILE = probing.PROBES
CALL_TIMEOUT = 1.0


@dataclass(frozen=True, slots=True)
class ProbeSet:
    language: str = ""  # "python" or "node"; "" when there is none
    workdir: str = "."  # the folder the runner starts in, relative to the project
    paths: tuple[str, ...] = (".",)  # import folders (Python), relative to the project
    probes: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()  # why there are few or none
    # Folders of the pristine image anyone or a user other than root may write: the grader
    # removes what the probe process left there (kit/probing.py: sweep_roots).
    writable: tuple[str, ...] = ()

    @property
    def discriminating(self) -> int:
        return sum(1 for p in self.probes if p.get("discriminating"))

    @property
    def hidden_discriminating(self) -> int:
        """Discriminating probes on derived inputs: the ones no visible test shows, so no
        lookup table of the tests' own inputs can answer them."""
        return sum(1 for p in self.probes if p.get("discriminating") and p.get("derived"))

    @property
    def kind(self) -> str:
        return EQUIVALENCE if self.hidden_discriminating else CHECK_ONLY

    def to_json(self) -> dict[str, Any]:
        """probes.json: the inputs, the reference's outcomes, which ones discriminate."""
        return {
            "version": probing.FORMAT,
            "language": self.language,
            "workdir": self.workdir,
            "paths": list(self.paths),
            "call_timeout": CALL_TIMEOUT,
            "probes": [dict(p) for p in self.probes],
            "writable": list(self.writable),
        }

    def to_bytes(self) -> bytes | None:
        """probes.json's bytes, the same wherever it is written (grading.json holds their
        sha256); None when the task has no probe to check (no file)."""
        if not self.discriminating:
            return None
        return (json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n").encode()

    def record(self) -> dict[str, Any]:
        """grading.json's ``probes``: how many there are and the file's sha256."""
        return probing.record(self.to_bytes())

    def summary(self) -> dict[str, Any]:
        """What the row, report.json and task.toml say of it (never an input or a value)."""
        return {
            "grading": self.kind,
            "language": self.language,
            "probes": len(self.probes),
            "discriminating": self.discriminating,
            "hidden_discriminating": self.hidden_discriminating,
            "notes": list(self.notes),
        }

    def check(self, ran: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """How a submission did (``kit/probing.check``); None when there is nothing to check."""
        return probing.check(self.to_json(), dict(ran or {})) if self.discriminating else None

    @classmethod
    def none(cls, why: str) -> ProbeSet:
        return cls(notes=(why,))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeSet:
        return cls(
            language=str(data.get("language") or ""),
            workdir=str(data.get("workdir") or "."),
            paths=tuple(str(p) for p in data.get("paths") or (".",)),
            probes=tuple(dict(p) for p in data.get("probes") or ()),
            writable=tuple(str(p) for p in data.get("writable") or ()),
        )


def record_probes(task_dir: Path | str, probes: ProbeSet | None) -> None:
    """Write tests/probes.json (root's alone in the verifier, 0600 here), or remove a stale one
    when the task has no discriminating probe."""
    path = Path(task_dir) / "tests" / PROBES_FILE
    data = probes.to_bytes() if probes is not None else None
    if data is None:
        path.unlink(missing_ok=True)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".probes-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def record_grading(task_dir: Path | str, probes: ProbeSet | None) -> None:
    """task.toml's ``[metadata.verifier]`` says how the task is graded (equivalence or
    check-only) and how many probes it has, written by Harbor's own model and writer."""
    path = Path(task_dir) / "task.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    summary = (probes or ProbeSet.none("")).summary()
    verifier = data.setdefault("metadata", {}).setdefault("verifier", {})
    wanted = {
        "grading": summary["grading"],
        "probes": summary["probes"],
        "discriminating_probes": summary["discriminating"],
    }
    if summary["grading"] == CHECK_ONLY and summary["notes"]:
        wanted["why"] = summary["notes"][0]  # said where the task is read, not only on the desk
    if all(verifier.get(k) == v for k, v in wanted.items()) and ("why" in wanted) == (
        "why" in verifier
    ):
        return
    verifier.pop("why", None)
    verifier.update(wanted)
    text = TaskConfig.model_validate(data).model_dump_toml()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".task-")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def read_probes(task_dir: Path | str) -> ProbeSet | None:
    path = Path(task_dir) / "tests" / PROBES_FILE
    try:
        return ProbeSet.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
