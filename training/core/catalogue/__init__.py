"""The seed catalogue of behaviours: one JSON spec per file beside this module.

specs = catalogue()
specs["failing-test-repair"].evidence     # (CheckPassed(...), VerifiedReward(...))

The Django side loads these once (a migration or a command) as version 1 of each behaviour;
users then edit them on pages, each edit a new version.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ..spec import BehaviourSpec, SpecError, load_spec

FOLDER = Path(__file__).parent


@cache
def catalogue() -> dict[str, BehaviourSpec]:
    """Every seed behaviour by slug; a spec that fails validation raises ``SpecError``."""
    specs: dict[str, BehaviourSpec] = {}
    for path in sorted(FOLDER.glob("*.json")):
        try:
            spec = load_spec(path.read_text(encoding="utf-8"))
        except SpecError as error:
            raise SpecError([f"{path.name}: {p}" for p in error.problems]) from None
        if spec.slug != path.stem:
            raise SpecError([f"{path.name}: slug {spec.slug!r} differs from the file name"])
        specs[spec.slug] = spec
    return specs
