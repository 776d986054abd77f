"""`manage.py seed_behaviours` adds the catalogue once and says what it added."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from training.core.catalogue import catalogue
from training.models import Behaviour

pytestmark = pytest.mark.django_db


def test_seeding_twice_adds_the_catalogue_once():
    out = StringIO()
    call_command("seed_behaviours", stdout=out)
    assert f"added {len(catalogue())} of {len(catalogue())}" in out.getvalue()
    assert set(Behaviour.objects.values_list("slug", flat=True)) == set(catalogue())
    out = StringIO()
    call_command("seed_behaviours", stdout=out)
    assert "added 0" in out.getvalue() and "(all present)" in out.getvalue()
