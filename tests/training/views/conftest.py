"""The evaluated behaviour most page tests look at (see ``helpers.make_evaluated``)."""

from __future__ import annotations

import pytest

from tests.training.views.helpers import make_evaluated


@pytest.fixture
def evaluated(people):
    return make_evaluated(people.bob)
