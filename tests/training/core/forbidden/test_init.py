"""The forbidden-action catalogue names a detector for every rule the schema allows."""

from __future__ import annotations

from training.core.forbidden import CATALOGUE
from training.core.spec import FORBIDDEN_NAMES


def test_the_catalogue_has_a_detector_for_every_name_the_schema_allows():
    assert set(CATALOGUE) == set(FORBIDDEN_NAMES)
