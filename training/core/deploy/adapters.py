"""An adapter version as registered: who made it from what, where its weights are, and checks.

>>> adapter = AdapterVersion(
...     name="failing-test-repair-lora", version="1.2.0", behaviour="failing-test-repair",
...     eval_suite="repair-held-out", base_model="Qwen/Qwen2.5-Coder-7B-Instruct",
...     training_plan="plan-7", dataset_sha256="a" * 64,
...     artifact_uri="s3://adapters/failing-test-repair-lora/1.2.0", artifact_sha256="b" * 64,
...     rank=16, registrar="alice")
>>> adapter.key, adapter.served_name
('failing-test-repair-lora@1.2.0', 'failing-test-repair-lora-v1.2.0')
>>> from dataclasses import replace
>>> registration_conflicts(adapter, replace(adapter, registrar="bob"))
()
>>> registration_conflicts(adapter, replace(adapter, artifact_sha256="c" * 64))
('artifact_sha256',)

Versions are immutable: the database refuses a second row with the same (name, version), and
``registration_conflicts`` says whether a repeated registration is the same version (idempotent)
or a different one reusing the number (refused). The registrar is not part of the identity: the
same weights registered again by someone else are still the same version, and the record keeps
its first registrar, the one the approval rule is about.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from pathlib import Path
from urllib.parse import unquote, urlsplit

from trajectories.core import limits

SLUG = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# N, N.N or N.N.N without leading zeros, so "1.01" and "1.1" cannot both exist as different
# versions that people read as one.
VERSION = re.compile(r"^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){0,2}$")
# Where trained weights live. Plain http is refused: the sha256 is checked after download, but
# a tampered artifact should not even be fetchable from a spoofed host.
ARTIFACT_SCHEMES = ("file", "s3", "gs", "hf", "https")


# The longest value each field takes (the columns agree); a longer one is refused, not cut.
LENGTHS = {
    "name": limits.NAME,
    "version": 20,
    "behaviour": limits.NAME,
    "eval_suite": limits.NAME,
    "base_model": limits.TITLE,
    "training_plan": limits.TITLE,
    "dataset_sha256": 64,
    "artifact_uri": limits.LINE,
    "artifact_sha256": 64,
    "registrar": 150,
}


class AdapterError(ValueError):
    """A registration that cannot be accepted; ``field`` names the (first) field at fault,
    ``problems`` every (field, message), so a form shows them all at once."""

    def __init__(
        self, field: str, message: str, *, problems: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.field = field
        self.message = message
        self.problems = problems or ((field, message),)
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


@dataclass(frozen=True, slots=True)
class AdapterVersion:
    name: str  # starts with the behaviour's slug: every served model name says what it changes
    version: str
    behaviour: str  # the behaviour it was trained for (slug)
    eval_suite: str  # the eval suite whose held-out tasks gate it (slug)
    base_model: str
    training_plan: str  # the plan's id
    dataset_sha256: str  # the training export's snapshot
    artifact_uri: str
    artifact_sha256: str
    rank: int  # LoRA rank r, for the server's maximum rank
    registrar: str

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            field, message = problems[0]
            raise AdapterError(field, message, problems=tuple(problems))

    @property
    def key(self) -> str:
        """The identity a database row, a gate verdict and an audit event refer to."""
        return f"{self.name}@{self.version}"

    @property
    def served_name(self) -> str:
        """The model name vLLM and LiteLLM serve this version under. Unique per (name, version):
        a version never contains ``-v``, so no other pair can produce the same string."""
        return f"{self.name}-v{self.version}"


def local_rank_problem(adapter: AdapterVersion) -> str | None:
    """Why a ``file://`` adapter's PEFT config disagrees with its registered rank, or None. A
    folder this host cannot see is not checked: it may exist on the vLLM host alone."""
    parts = urlsplit(adapter.artifact_uri)
    if parts.scheme != "file":
        return None
    folder = Path(unquote(parts.path))
    if not folder.is_dir():
        return None
    try:
        config = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
        r = config["r"]
        pattern = dict(config.get("rank_pattern") or {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return (
            f"{adapter.key}: {folder} has no adapter_config.json with a LoRA rank r that can be "
            "read; vLLM loads a PEFT adapter folder"
        )
    if r != adapter.rank:
        return (
            f"{adapter.key} is registered with rank {adapter.rank}, but its adapter_config.json "
            f"says r {r}; register a new version with rank {r}"
        )
    larger = {m: v for m, v in pattern.items() if isinstance(v, int) and v > adapter.rank}
    if larger:
        worst = max(larger.values())
        return (
            f"{adapter.key} is registered with rank {adapter.rank}, but its adapter_config.json's "
            f"rank_pattern gives {', '.join(sorted(larger))} rank {worst}; vLLM needs the largest "
            f"rank, register a new version with rank {worst}"
        )
    return None


def version_key(version: str) -> tuple[int, int, int]:
    """Numeric order of versions: ``1.10`` comes after ``1.9``, ``1`` equals ``1.0.0``."""
    if not VERSION.match(version):
        raise AdapterError("version", f"{version!r} is not N, N.N or N.N.N")
    parts = [int(p) for p in version.split(".")] + [0, 0]
    return parts[0], parts[1], parts[2]


def _problems(a: AdapterVersion) -> list[tuple[str, str]]:
    """Every field at fault, in the form's order; a field over its length (or holding a NUL
    character) is judged on that alone (a 200 KB value is not matched against patterns)."""
    found: dict[str, str] = {}
    for name, limit in LENGTHS.items():
        value = getattr(a, name)
        if isinstance(value, str) and limits.NUL in value:
            found[name] = "holds a NUL character (code 0), which cannot be stored"
        elif isinstance(value, str) and len(value) > limit:
            found[name] = f"is {len(value):,} characters long; at most {limit:,} are allowed"

    def refuse(name: str, message: str) -> None:
        found.setdefault(name, message)

    for name in ("behaviour", "eval_suite", "name"):
        if name not in found and not SLUG.match(getattr(a, name)):
            refuse(name, "use lowercase letters, digits and single . _ - between them")
    if "name" not in found and "behaviour" not in found:
        if a.name != a.behaviour and not a.name.startswith(a.behaviour + "-"):
            refuse("name", f"must start with its behaviour's slug {a.behaviour!r} and a dash")
    if "version" not in found and not VERSION.match(a.version):
        refuse("version", "use N, N.N or N.N.N with no leading zeros")
    for name in ("dataset_sha256", "artifact_sha256"):
        if name not in found and not SHA256.match(getattr(a, name)):
            refuse(name, "must be 64 lowercase hexadecimal digits")
    for name in ("base_model", "training_plan", "registrar"):
        value = getattr(a, name)
        if not value or value != value.strip():
            refuse(name, "is required, without surrounding spaces")
    if isinstance(a.rank, bool) or not isinstance(a.rank, int) or a.rank < 1:
        refuse("rank", "must be a positive integer")
    if "artifact_uri" not in found:
        try:
            _check_uri(a.artifact_uri)
        except AdapterError as error:
            refuse(error.field, error.message)
    order = [f.name for f in fields(AdapterVersion)]
    return sorted(found.items(), key=lambda item: order.index(item[0]))


IDENTITY_FIELDS = tuple(f.name for f in fields(AdapterVersion) if f.name != "registrar")


def registration_conflicts(existing: AdapterVersion, candidate: AdapterVersion) -> tuple[str, ...]:
    """The identity fields in which ``candidate`` differs from the ``existing`` registration of
    the same (name, version); empty when registering it again changes nothing."""
    if existing.key != candidate.key:
        raise ValueError(f"{candidate.key} is not a registration of {existing.key}")
    return tuple(
        name for name in IDENTITY_FIELDS if getattr(existing, name) != getattr(candidate, name)
    )


def _check_uri(uri: str) -> None:
    parts = urlsplit(uri)
    if parts.scheme not in ARTIFACT_SCHEMES:
        raise AdapterError(
            "artifact_uri",
            f"scheme must be one of {', '.join(ARTIFACT_SCHEMES)}, not {limits.echo(uri)}",
        )
    # URIs are stored and shown on pages: credentials or signed query strings would leak.
    if parts.username or parts.password or parts.query or parts.fragment:
        raise AdapterError("artifact_uri", "must not carry credentials, a query or a fragment")
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise AdapterError("artifact_uri", "file URIs need an absolute path (file:///...)")
        if len(parts.path) < 2:
            raise AdapterError("artifact_uri", "file URIs need a path below /")
    elif not parts.netloc or parts.path in ("", "/"):
        raise AdapterError("artifact_uri", f"{parts.scheme} URIs need a host or bucket and a path")
