"""`manage.py seed_behaviours`: add the catalogue's behaviours that are missing (idempotent)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from training.core.catalogue import catalogue
from training.services.behaviours import behaviour_catalogue_seed


class Command(BaseCommand):
    help = (
        "Add the seed catalogue's behaviours that are missing; existing ones and their edits stay."
    )

    def handle(self, *args, **options) -> None:
        added = behaviour_catalogue_seed()
        names = ", ".join(b.slug for b in added)
        self.stdout.write(
            f"added {len(added)} of {len(catalogue())} catalogue behaviours"
            + (f": {names}" if names else " (all present)")
        )
