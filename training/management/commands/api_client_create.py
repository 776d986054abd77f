"""manage.py api_client_create NAME: a bearer token for the route, usage and kill endpoints.

The token is printed once, alone on stdout so a script can capture it; only its hash is kept.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from groundwork.access.errors import Refused
from training.services.deploy_clients import api_client_create


class Command(BaseCommand):
    help = "Create an API client for serving infrastructure and print its token once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="who uses it, e.g. the serving host")

    def handle(self, *args, name: str, **options) -> None:
        try:
            client, token = api_client_create(user=None, name=name)
        except Refused as error:
            raise CommandError(str(error)) from None
        self.stdout.write(token)
        self.stderr.write(
            f"API client {client.name!r} created. Keep the token now: it is not shown again. "
            "Send it as 'Authorization: Bearer <token>'."
        )
