import json
import os
import re
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


def test_the_docker_clusters_retry_must_exceed_its_timeout():
    proc = _settings_in_subprocess(Q_DOCKER_TIMEOUT="100", Q_DOCKER_RETRY="50")
    assert proc.returncode != 0
    assert "Q_DOCKER_RETRY must be larger than Q_DOCKER_TIMEOUT" in proc.stderr


def test_the_docker_cluster_needs_a_worker_and_a_bounded_attempt_count():
    for name in ("Q_DOCKER_WORKERS", "Q_DOCKER_MAX_ATTEMPTS"):
        proc = _settings_in_subprocess(**{name: "0"})
        assert proc.returncode != 0 and f"{name}=0 must be at least 1" in proc.stderr


def test_a_worker_for_an_unknown_cluster_fails_loudly():
    proc = _settings_in_subprocess(Q_CLUSTER_NAME="dokcer")
    assert proc.returncode != 0
    assert "Q_CLUSTER_NAME='dokcer' names no cluster" in proc.stderr


def _worker_conf(**env: str) -> dict:
    """What django-q2 itself makes of the settings in a worker started with ``env``."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, json; django.setup(); from django_q.conf import Conf; "
            "print(json.dumps({k: getattr(Conf, k) for k in "
            "('CLUSTER_NAME', 'PREFIX', 'WORKERS', 'TIMEOUT', 'RETRY', 'MAX_ATTEMPTS')}))",
        ],
        cwd=REPO,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("Q_")},
            "DJANGO_SETTINGS_MODULE": "project.settings",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_each_cluster_serves_its_own_queue_with_its_own_limits():
    limits = {"Q_DOCKER_WORKERS": "1", "Q_DOCKER_TIMEOUT": "900", "Q_DOCKER_RETRY": "1000"}
    assert _worker_conf(**limits) == {
        "CLUSTER_NAME": "traj2env",
        "PREFIX": "traj2env",
        "WORKERS": 2,
        "TIMEOUT": 1800,
        "RETRY": 2000,
        "MAX_ATTEMPTS": 3,
    }
    # PREFIX signs the jobs: both clusters must share it to read what the other queued.
    assert _worker_conf(Q_CLUSTER_NAME="docker", Q_DOCKER_MAX_ATTEMPTS="2", **limits) == {
        "CLUSTER_NAME": "docker",
        "PREFIX": "traj2env",
        "WORKERS": 1,
        "TIMEOUT": 900,
        "RETRY": 1000,
        "MAX_ATTEMPTS": 2,
    }


# The production settings docs/DEPLOY.md documents: behind a TLS proxy, HSTS chosen.
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k3y-" + "x7Qp2Lm9Rt4Vw8Zb1Nc6Hd3Jf5Gs0Ky" * 2,
    "ALLOWED_HOSTS": "traj2env.example.com",
    "TRAJ2ENV_HTTPS": "1",
    "TRAJ2ENV_PROXY_SSL_HEADER": "1",
    "TRAJ2ENV_HSTS_SECONDS": "31536000",
    "TRAJ2ENV_HSTS_INCLUDE_SUBDOMAINS": "1",
    "TRAJ2ENV_HSTS_PRELOAD": "1",
}


def _run_django(var: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh Django process with only ``env`` deciding DEBUG and the key."""
    # DJANGO_ALLOW_ASYNC_UNSAFE: the browser tests' (the deploy check refuses it, rightly).
    dropped = {"DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    base = {k: v for k, v in os.environ.items() if k not in dropped}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); " + code],
        cwd=REPO,
        env={**base, "DJANGO_SETTINGS_MODULE": "project.settings", "TRAJ2ENV_VAR": str(var), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_documented_production_settings_pass_the_deploy_check(tmp_path):
    proc = _run_django(
        tmp_path,
        "from django.core.management import call_command; "
        "call_command('check', deploy=True, fail_level='WARNING')",
        **PRODUCTION,
    )
    assert proc.returncode == 0, proc.stderr
    assert "no issues" in proc.stdout


def test_without_debug_a_missing_secret_key_stops_start_up_with_its_name(tmp_path):
    proc = _run_django(tmp_path, "", DEBUG="0")
    assert proc.returncode != 0
    assert "SECRET_KEY is required when DEBUG is off" in proc.stderr


def test_the_key_kept_in_var_serves_when_secret_key_is_unset(tmp_path):
    (tmp_path / "secret-key").write_text("kept-by-up-sh\n")
    proc = _run_django(
        tmp_path, "from django.conf import settings; print(settings.SECRET_KEY)", DEBUG="0"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "kept-by-up-sh"


def test_a_development_machine_starts_without_a_key_and_with_plain_http_cookies(tmp_path):
    proc = _run_django(
        tmp_path,
        "from django.conf import settings; "
        "print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, "
        "settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS)",
        DEBUG="1",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False", "False", "0"]


def test_whitenoise_serves_collected_static_files_hashed_and_compressed(tmp_path):
    proc = _run_django(
        tmp_path,
        "import json; from django.core.management import call_command; "
        "call_command('collectstatic', interactive=False, verbosity=0); "
        "from django.templatetags.static import static; from django.test import Client; "
        "url = static('js/keys.js'); r = Client().get(url, headers={"
        "'host': 'traj2env.example.com', 'x-forwarded-proto': 'https', "
        "'accept-encoding': 'gzip'}); "
        "print(json.dumps([url, r.status_code, r.get('Content-Encoding'), "
        "r.get('Cache-Control')]))",
        **PRODUCTION,
    )
    assert proc.returncode == 0, proc.stderr
    url, status, encoding, cache = json.loads(proc.stdout.strip().splitlines()[-1])
    assert re.fullmatch(r"/static/js/keys\.[0-9a-f]{12}\.js", url)
    assert status == 200 and encoding == "gzip"
    assert "immutable" in cache
