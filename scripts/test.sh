#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: Python env, Debian packages, then pytest.
source "$(dirname "$0")/lib.sh"

ensure_venv
# chromium drives the browser tests; nodejs runs the Node sample projects; mmdebstrap and
# docker-registry build the offline base image and give it a pinned digest.
apt_install chromium nodejs mmdebstrap docker-registry
export TRAJ2ENV_CHROMIUM="${TRAJ2ENV_CHROMIUM:-$(command -v chromium || true)}"
"$PY" -m ruff check .
# The layer contract (pyproject.toml [tool.importlinter]) and types over the core packages.
"$VENV/bin/lint-imports" --no-logo --no-cache
"$PY" -m mypy
"$PY" -m pytest -n 2 "$@"
