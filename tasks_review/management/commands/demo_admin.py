from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from groundwork.access.roles import ADMIN


class Command(BaseCommand):
    help = "Create the demo admin account (once) and print its password."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args, **options) -> None:
        username = options["username"]
        secret_file = settings.VAR_DIR / f"demo-{username}-password.txt"
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is not None and secret_file.exists():
            password = secret_file.read_text().strip()
        else:
            password = secrets.token_urlsafe(12)
            if user is None:
                user = User.objects.create_superuser(username=username, email="", password=password)
            else:  # the password file was lost: issue a new password rather than leave it unknown
                user.set_password(password)
                user.save(update_fields=["password"])
            settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
            secret_file.write_text(password + "\n")
            secret_file.chmod(0o600)
        user.groups.add(Group.objects.get(name=ADMIN))
        self.stdout.write(
            f"demo admin: username {username!r}, password {password!r} (also in {secret_file})"
        )
