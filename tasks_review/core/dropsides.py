"""Which side a drop is on: one the product could act on, or a limit of the environment.

    limit_of("mine", "unsupported_language", "rust check (cargo); supported: go, node, python")
    # Limit(kind='language', name='rust', source='')

A limit is something this machine or its images lack: a source not reachable or not
configured (Go modules, npm packages, Python packages), a language the images do not support, an
interpreter, a program or a service they do not have. Every other drop (a file the log never
showed, a manifest unseen, no change, a leak, a baseline that disagrees, an "unknown" language)
is the product's: better replay, mining or task writing could keep the candidate. The side is
read from the drop's stage, reason and detail here and nowhere else, so a reason code can be
either: ``dependency_unavailable_offline`` for a ``replace => ../outside`` is the product's.

>>> limit_of("mine", "unsupported_language", "unknown check (make); supported: python") is None
True
>>> limit_of("prepare", "dependency_unavailable_offline",
...          "the check needs program cargo, which the image lacks and no offline source provides")
Limit(kind='program', name='cargo', source='')
>>> side_of("mine", "no_change", "the files were the same")
'product'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

PRODUCT, ENVIRONMENT = "product", "environment"
TOP = 10


@dataclass(frozen=True, slots=True)
class Limit:
    kind: str  # source | language | interpreter | program | service
    name: str  # "Go modules", "rust", "python ==3.14", "cargo", "redis"
    source: str = ""  # where it would come from, when that is known

    def describe(self) -> str:
        return f"{self.kind} {self.name}" + (f" ({self.source})" if self.source else "")


_LANGUAGE = re.compile(r"^(\S+) check \(")
_SERVICE = re.compile(r"^the check needs (.+?), which the task's image cannot run")
_LACKING = re.compile(r"^the check needs (.+?), which the image lacks")
_PYTHON_VERSION = re.compile(r"(?:requires-python|Python)\s*(?:version\s*)?([<>=!~]=?\s*[\d.]+)")
# What deps.unavailable says of one dependency, and the source it names.
_WHY = (
    ("no offline source provides Go modules", "Go modules", "a Go module proxy"),
    ("no npm cache", "npm packages", "an npm registry"),
    ("the npm cache has no matching version", "npm packages", "an npm registry"),
    ("no wheelhouse", "Python packages", "PyPI"),
    ("the wheelhouse has no matching version", "Python packages", "PyPI"),
    ("URL dependency cannot be fetched offline", "URL dependencies", "the network"),
)
# The project's own requirements being malformed is no limit of the environment.
_PROJECT_FAULTS = ("not a PEP 508 requirement", "not an exact pin", "no sha256 hash", "outside")


def limit_of(stage: str, reason: str, detail: str) -> Limit | None:
    """The environment's limit a drop ran into, or None when it is the product's to act on."""
    if reason == "unsupported_language":
        found = _LANGUAGE.match(detail)
        name = found.group(1) if found else "unknown"
        return None if name == "unknown" else Limit("language", name)
    if reason == "service_unavailable":
        found = _SERVICE.match(detail)
        return Limit("service", found.group(1) if found else detail[:60])
    if reason != "dependency_unavailable_offline" or any(f in detail for f in _PROJECT_FAULTS):
        return None
    if stage == "mine":  # rules.go_downloads: modules neither vendored nor replaced locally
        return Limit("source", "Go modules", "a Go module proxy")
    lacking = _LACKING.match(detail)
    if lacking:
        return _lacking(lacking.group(1).split(", ")[0])
    for said, name, source in _WHY:
        if said in detail:
            return Limit("source", name, source)
    version = _PYTHON_VERSION.search(detail)
    if version:
        return Limit("interpreter", f"python {version.group(1).replace(' ', '')}")
    if stage == "write":  # the wheelhouse: PyPI through uv, date-pinned
        return Limit("source", "Python packages", "PyPI")
    return None


def _lacking(item: str) -> Limit:
    """One of the prepare probe's lacking items: "program x", "python module x", "service x",
    "go 1.24 or newer"."""
    for prefix, kind in (("python module ", "program"), ("program ", "program")):
        if item.startswith(prefix):
            return Limit(kind, item[len(prefix) :] if kind == "program" else item)
    if item.startswith("service "):
        return Limit("service", item[len("service ") :])
    return Limit("interpreter", item)


def side_of(stage: str, reason: str, detail: str) -> str:
    return PRODUCT if limit_of(stage, reason, detail) is None else ENVIRONMENT


def drop_sides(drops: Iterable[tuple[str, str, str]]) -> dict[str, Any]:
    """report.json's ``summary.drops`` from (stage, reason, detail) of each drop: the product's
    drops by reason, and the environment's limits grouped by what is missing."""
    product: Counter[str] = Counter()
    limits: Counter[Limit] = Counter()
    for stage, reason, detail in drops:
        limit = limit_of(stage, reason, detail)
        if limit is None:
            product[reason] += 1
        else:
            limits[limit] += 1
    return {
        PRODUCT: {
            "count": sum(product.values()),
            "top": [{"reason": r, "count": n} for r, n in _ranked(product)],
        },
        ENVIRONMENT: {
            "count": sum(limits.values()),
            "limits": [{**asdict(limit), "count": n} for limit, n in _ranked(limits)],
        },
    }


def _ranked(counts: Counter[Any]) -> list[tuple[Any, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[:TOP]


def sides_line(sides: dict[str, Any]) -> list[str]:
    """The two lines ``generate`` prints: the product's drops and the environment's limits."""
    product, environment = sides[PRODUCT], sides[ENVIRONMENT]
    top = ", ".join(f"{d['reason']} ×{d['count']}" for d in product["top"][:5])
    limits = ", ".join(
        f"{Limit(d['kind'], d['name'], d['source']).describe()} ×{d['count']}"
        for d in environment["limits"][:5]
    )
    return [
        f"{product['count']} product-side drops" + (f" (top: {top})" if top else ""),
        f"{environment['count']} environment limits" + (f" ({limits})" if limits else ""),
    ]
