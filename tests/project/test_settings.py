import os
import subprocess
import sys
from pathlib import Path

import pytest

from project import settings as s

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("raw, expected", [("1", True), ("yes", True), ("off", False), ("", False)])
def test_booleans_accept_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("X_FLAG", raw)
    assert s.env_bool("X_FLAG", False) is expected


def test_a_bad_boolean_fails_loudly(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(Exception, match="X_FLAG='maybe' is not a boolean"):
        s.env_bool("X_FLAG", False)


def test_a_bad_number_fails_loudly(monkeypatch):
    monkeypatch.setenv("X_NUM", "ten")
    with pytest.raises(Exception, match="not a whole number"):
        s.env_int("X_NUM", 1)


def _settings_in_subprocess(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; from django.conf import settings; "
            "django.setup(); print(settings.DATABASES['default']['ENGINE'])",
        ],
        cwd=REPO,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_malformed_database_url_stops_start_up_with_its_name():
    proc = _settings_in_subprocess(DATABASE_URL="nonsense://")
    assert proc.returncode != 0
    assert "DATABASE_URL is not a valid database URL" in proc.stderr


def test_database_url_selects_postgresql():
    proc = _settings_in_subprocess(DATABASE_URL="postgres://u:p@127.0.0.1:5432/traj2env")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "django.db.backends.postgresql"


def test_q2_retry_must_exceed_timeout():
    proc = _settings_in_subprocess(Q_TIMEOUT="100", Q_RETRY="50")
    assert proc.returncode != 0
    assert "Q_RETRY must be larger than Q_TIMEOUT" in proc.stderr
