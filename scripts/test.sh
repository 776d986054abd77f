#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: Python env, Debian packages, then pytest twice.
#
#   1. the main run: SQLite and django-q2's ORM broker, on two processes, every test not marked
#      scaleout;
#   2. the scale-out run: the tests marked scaleout, against a PostgreSQL and a Redis this script
#      starts (throwaway, on loopback) and the worker processes those tests start themselves.
#
# The main run hands each Docker test module to one worker as a unit (--dist loadgroup, see
# tests/conftest.py), largest first, so the images and kept tasks a module builds are built once.
#
# Extra arguments go to both runs. A marker expression narrows both (`-m "not docker"` runs the
# scale-out tests that need no Docker in the second); `-m "not scaleout"` leaves the second empty.
source "$(dirname "$0")/lib.sh"

ensure_venv
# chromium drives the browser tests; nodejs runs the Node sample projects; mmdebstrap and
# docker-registry build the offline base image and give it a pinned digest; postgresql and
# redis-server are the scale-out run's database and broker.
apt_install chromium nodejs mmdebstrap docker-registry postgresql redis-server
export TRAJ2ENV_CHROMIUM="${TRAJ2ENV_CHROMIUM:-$(command -v chromium || true)}"

# pytest takes one -m (the last): take the caller's out and join it to each run's own.
marker=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -m) marker="$2"; shift 2 ;;
    -m*) marker="${1#-m}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

# The Docker tests' default base image, built in the background from here on, beside the
# checks: the first Docker tests find it ready (or wait for it on bootstrap's lock) instead of
# building it while their worker sits idle. Not the variants: a bootstrap of several holds the
# lock for minutes, and a test that must rebuild the default (the prune test) would wait behind
# them; the tests that need a variant build it when they come.
images_pid=""
if [[ "$marker" != *"not docker"* ]]; then
  mkdir -p var
  say "building the base image in the background (log: var/test-images.log)"
  DJANGO_SETTINGS_MODULE=tests.settings "$PY" manage.py images bootstrap \
    >var/test-images.log 2>&1 &
  images_pid=$!
fi

"$PY" -m ruff check .
# The layer contract (pyproject.toml [tool.importlinter]) and types over the core packages.
"$VENV/bin/lint-imports" --no-logo --no-cache
"$PY" -m mypy

markers_and() { if [ -n "$marker" ]; then echo "($marker) and ($1)"; else echo "$1"; fi; }
run_pytest() {
  # 5 is "no test selected": a narrowing -m may leave one of the runs empty.
  local rc=0
  "$PY" -m pytest --durations=25 "$@" || rc=$?
  [ "$rc" = 5 ] && rc=0
  return "$rc"
}

say "pytest: the main run (SQLite, ORM broker)"
main=0
run_pytest -n 2 --dist loadgroup -m "$(markers_and "not scaleout")" "${args[@]}" || main=$?

say "pytest: the scale-out run (PostgreSQL, Redis, worker processes)"
scaleout=0
# A database and a broker given by the caller are used as they are; else this run's own.
if [[ "${DATABASE_URL:-}" != postgres* || -z "${Q_REDIS_URL:-}" ]]; then
  scaleout_services_start || true
fi
run_pytest -m "$(markers_and "scaleout")" "${args[@]}" || scaleout=$?
if [ -n "$images_pid" ] && ! wait "$images_pid"; then
  say "building the base image in the background failed (the Docker tests built it when needed):"
  tail -n 20 var/test-images.log >&2
fi
[ "$main" = 0 ] || exit "$main"
exit "$scaleout"
