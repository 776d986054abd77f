"""Set up Django on a throwaway SQLite database for a benchmark run."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Benchmarks measure the product as deployed, DEBUG off, which needs a key (manage.py processes a
# benchmark starts inherit it).
os.environ.setdefault("SECRET_KEY", "traj2env-benchmarks-only-key")


def setup() -> Path:
    sys.path.insert(0, str(REPO))
    var = Path(tempfile.mkdtemp(prefix="traj2env-bench-"))
    os.environ["TRAJ2ENV_VAR"] = str(var)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    # Pages name static files by their hashed names, which collectstatic's manifest holds.
    call_command("collectstatic", interactive=False, verbosity=0)
    return var
