"""One settings module, driven by environment variables that fail loudly on bad values.

SQLite under var/ by default; DATABASE_URL switches to PostgreSQL (or what dj-database-url reads).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("TRAJ2ENV_VAR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)"
    )


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_fraction(name: str, default: float) -> float:
    """A share within 0..1, written as a decimal (0.05) or a percentage (5%)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    text = raw.strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if not 0 <= value <= 1:
        raise ImproperlyConfigured(f"{name}={raw!r} must be within 0..1 (or 0%..100%)")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def q_cluster_limits(prefix: str) -> dict[str, int]:
    """A django-q2 cluster's limits from PREFIX_WORKERS, _TIMEOUT, _RETRY and _MAX_ATTEMPTS."""
    limits = {
        "workers": env_int(f"{prefix}_WORKERS", 2, minimum=1),
        "timeout": env_int(f"{prefix}_TIMEOUT", 1800, minimum=10),
        "retry": env_int(f"{prefix}_RETRY", 2000, minimum=20),
        "max_attempts": env_int(f"{prefix}_MAX_ATTEMPTS", 3, minimum=1),
    }
    if limits["retry"] <= limits["timeout"]:
        raise ImproperlyConfigured(
            f"{prefix}_RETRY must be larger than {prefix}_TIMEOUT (django-q2 would run a job twice)"
        )
    return limits


DEBUG = env_bool("DEBUG", False)
# Outside DEBUG the key must be this machine's own: SECRET_KEY, or the file scripts/up.sh writes.
SECRET_KEY_FILE = VAR_DIR / "secret-key"
# Where "Test the hook" lays out its project folders: outside /tmp, since the rules let
# deletions in a temporary folder through, so a trial there would judge `rm -rf ../x` otherwise.
# A checkout (and so var/) under /tmp, as a CI clone may be, puts them in the user's cache.
HOOK_TRIAL_DIR = VAR_DIR / "hook-trials"
if str(HOOK_TRIAL_DIR.resolve()).startswith(("/tmp/", "/var/tmp/", "/private/tmp/")):
    HOOK_TRIAL_DIR = Path.home() / ".cache" / "traj2env" / "hook-trials"
SECRET_KEY = os.environ.get("SECRET_KEY", "").strip()
if not SECRET_KEY and SECRET_KEY_FILE.is_file():
    SECRET_KEY = SECRET_KEY_FILE.read_text().strip()
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            f"SECRET_KEY is required when DEBUG is off: set SECRET_KEY, or keep one in "
            f"{SECRET_KEY_FILE} (scripts/up.sh writes it), or set DEBUG=1 on a development machine"
        )
    SECRET_KEY = "traj2env-insecure-local-only-key"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])

# Served over HTTPS (directly or behind a TLS proxy): cookies only travel encrypted and plain
# HTTP is redirected. Off by default: the main command serves http://127.0.0.1.
HTTPS = env_bool("TRAJ2ENV_HTTPS", False)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
# HSTS binds browsers to HTTPS for this long (and, opted in, every subdomain and the preload
# list): hard to undo, so nothing is sent until a deployment chooses it.
SECURE_HSTS_SECONDS = env_int("TRAJ2ENV_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("TRAJ2ENV_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("TRAJ2ENV_HSTS_PRELOAD", False)
# Trust the proxy's X-Forwarded-Proto only when told to: a client reaching the app directly
# could otherwise claim HTTPS.
if env_bool("TRAJ2ENV_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "django_q",
    "groundwork",
    "trajectories",
    "tasks_review",
    "training",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files before sessions and login: they need neither.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A page's bare 405 (a POST-only address opened) becomes the site's page (error_pages.py).
    "project.error_pages.NotAllowedPage",
    # A NUL in the query string is a 400 before any view filters by it (query_guard.py).
    "project.query_guard.RefuseNulInQuery",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.csp",
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

_default_db = f"sqlite:///{VAR_DIR / 'traj2env.sqlite3'}"
try:
    DATABASES = {"default": dj_database_url.parse(os.environ.get("DATABASE_URL") or _default_db)}
except Exception as exc:  # dj-database-url raises several types for a malformed URL
    raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
# Seconds a connection is kept for the next request: the route endpoint answers in a few
# milliseconds, of which opening a connection would be most (measured in docs/BENCHMARKS.md).
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # WAL lets the web process read while a worker writes; the timeout rides out short write locks.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
    # Tests use a file as the product does (not Django's shared in-memory default): there, a
    # thread that meets another's write lock fails at once instead of waiting its timeout. One
    # per process, so two test runs never share one (tests/conftest.py removes them).
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# One cache that every web process shares, in the database (login throttling counts there);
# `manage.py createcachetable` makes its table (scripts/lib.sh's migrate runs it).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "traj2env_cache",
    }
}

# Content Security Policy: our own files only. Scripts may also be inline with the request's
# nonce (django-htmx's tags add it). Styles stay strict too: no template writes a style
# attribute (tree rows carry data-depth, static/js/tree.js turns it into their indent) and htmx
# is told not to inject its indicator <style> (the htmx-config meta tag in base.html).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "trajectories:list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise serves static files from the web process. Outside DEBUG: what collectstatic wrote,
# under content-hashed names (cached for ever) with gzip copies. In DEBUG: the source
# folders as they change, so nothing needs collecting first (tests run on this too).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

# django-q2: the ORM broker by default (embedded, no extra service); Redis when Q_REDIS_URL is set.
# Two clusters, one queue each: Docker work (pipeline runs, which build images, and their
# verifications) on `docker`, so a long trial matrix never delays a replay on the default one.
# A worker serves the cluster Q_CLUSTER_NAME names (`Q_CLUSTER_NAME=docker manage.py qcluster`);
# django-q2 then takes that cluster's ALT_CLUSTERS entry over the defaults below. Every cluster:
# timeout < retry, so a job is never handed to a second worker while the first still runs it;
# max_attempts bounds a job that keeps killing its worker.
Q_DOCKER_CLUSTER = "docker"
Q_CLUSTER: dict[str, Any] = {
    # The default cluster's queue, and the salt that signs every cluster's jobs.
    "name": "traj2env",
    **q_cluster_limits("Q"),
    "ack_failures": True,
    "catch_up": False,
    "label": "Jobs",
    "ALT_CLUSTERS": {Q_DOCKER_CLUSTER: q_cluster_limits("Q_DOCKER")},
}
_cluster_name = os.environ.get("Q_CLUSTER_NAME")
if _cluster_name and _cluster_name not in {Q_CLUSTER["name"], Q_DOCKER_CLUSTER}:
    # django-q2 would serve a queue of that name, which nothing fills.
    raise ImproperlyConfigured(
        f"Q_CLUSTER_NAME={_cluster_name!r} names no cluster (use {Q_CLUSTER['name']} or "
        f"{Q_DOCKER_CLUSTER})"
    )
if os.environ.get("Q_REDIS_URL"):
    Q_CLUSTER["redis"] = os.environ["Q_REDIS_URL"]
else:
    Q_CLUSTER["orm"] = "default"
# Tests and one-shot commands can run jobs inline instead of through a cluster.
Q_SYNC = env_bool("Q_SYNC", False)
Q_CLUSTER["sync"] = Q_SYNC

TRAJ2ENV = {
    # Findings at or above this atif-scan severity block a trajectory from mining.
    "SCAN_BLOCK_SEVERITY": os.environ.get("TRAJ2ENV_SCAN_BLOCK_SEVERITY", "high"),
    # Whether secrets found at scan (atif-scan's credential check, or the redactor's credential
    # types anywhere in the trajectory) block it from mining; off: tasks carry them redacted.
    "SCAN_BLOCK_SECRETS": env_bool("TRAJ2ENV_SCAN_BLOCK_SECRETS", False),
    # state_at(step) loads one checkpoint plus at most this many deltas.
    "REPLAY_CHECKPOINT_EVERY": env_int("TRAJ2ENV_REPLAY_CHECKPOINT_EVERY", 64, minimum=1),
    # How many independent reviews a candidate needs before its decision stands.
    "REVIEWS_PER_CANDIDATE": env_int("TRAJ2ENV_REVIEWS_PER_CANDIDATE", 1, minimum=1),
    # How many labellers' verdicts a preference pair needs before theirs are shown and count.
    "LABELS_PER_PAIR": env_int("TRAJ2ENV_LABELS_PER_PAIR", 2, minimum=1),
    # The deployment gate's floors: a proposal may only tighten them (more rollouts a side, a
    # higher pass rate, a narrower tolerance below the base agent), and an approval applies the
    # stricter of the proposal and the floors as they are then.
    "GATE_MIN_ROLLOUTS": env_int("TRAJ2ENV_GATE_MIN_ROLLOUTS", 5, minimum=1),
    "GATE_MIN_PASS_RATE": env_fraction("TRAJ2ENV_GATE_MIN_PASS_RATE", 0.5),
    "GATE_MAX_TOLERANCE": env_fraction("TRAJ2ENV_GATE_MAX_TOLERANCE", 0.05),
    # How long opening a candidate (or a preference pair) holds it for that person. The page
    # renews the hold every quarter of this while it is visible and in use, and gives it back
    # when left, so an abandoned tab frees its item within this long.
    "HOLD_SECONDS": env_int("TRAJ2ENV_HOLD_SECONDS", 120, minimum=20),
    # How often a running job stamps its row; a row silent for 4 beats belongs to a dead worker.
    "HEARTBEAT_SECONDS": env_int("TRAJ2ENV_HEARTBEAT_SECONDS", 30, minimum=1),
    # Every few minutes each app queues again the jobs a broker lost (groundwork.jobs.redelivery:
    # Redis hands a job out once, so a killed worker's row would wait for ever), at most this
    # many rows of a kind per sweep. The schedule is written at migrate.
    "REDELIVER_MINUTES": env_int("TRAJ2ENV_REDELIVER_MINUTES", 2, minimum=1),
    "REDELIVER_LIMIT": env_int("TRAJ2ENV_REDELIVER_LIMIT", 50, minimum=1),
    # Where bootstrap keeps the base image's rootfs tarball and its loopback registry's storage.
    "CACHE_DIR": Path(os.environ.get("TRAJ2ENV_CACHE_DIR") or VAR_DIR / "cache"),
    # The registry that gives locally built base images a pinned digest (loopback by default;
    # several worker hosts point this at one shared registry).
    "BASE_IMAGE_REGISTRY": os.environ.get("TRAJ2ENV_BASE_IMAGE_REGISTRY", "127.0.0.1:5000"),
    # Verify written tasks in Docker (the trial matrix). Off: tasks are written, never kept.
    "VERIFY": env_bool("TRAJ2ENV_VERIFY", True),
    # A public base image (name@sha256:...) to use instead of building one, for online users.
    "BASE_IMAGE": os.environ.get("TRAJ2ENV_BASE_IMAGE", ""),
    # The host-side wheel cache that tasks' Python dependencies come from (filled from PyPI,
    # pinned to each trajectory's date); offline: use only what it already holds.
    "WHEELHOUSE_DIR": Path(
        os.environ.get("TRAJ2ENV_WHEELHOUSE_DIR")
        or Path(os.environ.get("TRAJ2ENV_CACHE_DIR") or VAR_DIR / "cache") / "wheelhouse"
    ),
    "WHEELHOUSE_OFFLINE": env_bool(
        "TRAJ2ENV_WHEELHOUSE_OFFLINE", env_bool("TRAJ2ENV_DEPENDENCIES_OFFLINE", False)
    ),
    # The host-side caches of tasks' other dependencies (crates/, go/, npm/ inside), fetched the
    # way the user's own tools fetch them: Cargo's configured registry, GOPROXY, the npm
    # registry of the user's npm config (see README, "Dependencies"). Offline: use only what
    # the caches already hold (the wheelhouse too, unless TRAJ2ENV_WHEELHOUSE_OFFLINE says).
    "DEPENDENCY_CACHE_DIR": Path(
        os.environ.get("TRAJ2ENV_DEPENDENCY_CACHE_DIR")
        or Path(os.environ.get("TRAJ2ENV_CACHE_DIR") or VAR_DIR / "cache") / "dependencies"
    ),
    "DEPENDENCIES_OFFLINE": env_bool("TRAJ2ENV_DEPENDENCIES_OFFLINE", False),
    # The model the build, extend and qa families ask (one cached call per candidate): any
    # LiteLLM model string; unset, those families do not run. API_BASE points it at another
    # server (a local OpenAI-compatible one: openai/NAME and http://127.0.0.1:PORT/v1); API_KEY
    # is passed as it is (unset: LiteLLM reads the provider's own variable).
    "LLM_MODEL": os.environ.get("TRAJ2ENV_LLM_MODEL", "").strip(),
    "LLM_API_BASE": os.environ.get("TRAJ2ENV_LLM_API_BASE", "").strip(),
    "LLM_API_KEY": os.environ.get("TRAJ2ENV_LLM_API_KEY", ""),
    # Answers are cached here by (model, schema, prompt): reruns ask nothing.
    "LLM_CACHE_DIR": Path(
        os.environ.get("TRAJ2ENV_LLM_CACHE_DIR")
        or Path(os.environ.get("TRAJ2ENV_CACHE_DIR") or VAR_DIR / "cache") / "llm"
    ),
    "LLM_TIMEOUT_SECONDS": env_int("TRAJ2ENV_LLM_TIMEOUT_SECONDS", 120, minimum=1),
    # Login throttling (project/login_throttle.py): this many failed logins for one username, or
    # from one client address, within the window refuse every attempt there for the cool-off.
    "LOGIN_FAILURES_PER_USER": env_int("TRAJ2ENV_LOGIN_FAILURES_PER_USER", 5, minimum=1),
    "LOGIN_FAILURES_PER_ADDRESS": env_int("TRAJ2ENV_LOGIN_FAILURES_PER_ADDRESS", 20, minimum=1),
    "LOGIN_WINDOW_SECONDS": env_int("TRAJ2ENV_LOGIN_WINDOW_SECONDS", 900, minimum=1),
    "LOGIN_COOLOFF_SECONDS": env_int("TRAJ2ENV_LOGIN_COOLOFF_SECONDS", 900, minimum=1),
}
if TRAJ2ENV["SCAN_BLOCK_SEVERITY"] not in {"info", "low", "medium", "high", "critical"}:
    raise ImproperlyConfigured(
        "TRAJ2ENV_SCAN_BLOCK_SEVERITY must be one of info, low, medium, high, critical"
    )
# The model the route endpoint answers for a behaviour without a base model of its own, and on
# any fault before it could read one.
TRAJ2ENV_BASE_MODEL = os.environ.get("TRAJ2ENV_BASE_MODEL", "").strip() or "base"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
