# Shared by scripts/up.sh and scripts/test.sh: find a Python 3.12+ (3.12 first: the lock was
# resolved for it), make .venv, install the lock.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 2; }

find_python() {
  local candidate
  for candidate in "${TRAJ2ENV_PYTHON:-}" python3.12 python3.13 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  # pyenv keeps versions it does not put on PATH
  local root="${PYENV_ROOT:-$HOME/.pyenv}"
  command -v pyenv >/dev/null 2>&1 && root="$(pyenv root)"
  for candidate in "$root"/versions/3.12*/bin/python3 "$root"/versions/3.13*/bin/python3; do
    if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

ensure_venv() {
  if [ ! -x "$PY" ] || ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    local base
    base="$(find_python)" || die "traj2env needs Python 3.12 or newer (none on PATH or under pyenv); set TRAJ2ENV_PYTHON"
    say "creating .venv with $base"
    rm -rf "$VENV"
    "$base" -m venv "$VENV"
  fi
  local stamp="$VENV/.lock-sha256" want
  want="$(sha256sum requirements.lock | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing pinned dependencies (requirements.lock)"
    "$PY" -m pip install --quiet --disable-pip-version-check "uv==0.13.9"
    "$VENV/bin/uv" pip sync --quiet --python "$PY" requirements.lock
    echo "$want" > "$stamp"
  fi
}

apt_install() {
  # Installs Debian packages that are missing; needs root (CI and these machines run as root).
  local missing=()
  local pkg
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    say "not root: cannot install ${missing[*]} (tests that need them will skip)"; return 0
  fi
  say "installing Debian packages: ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_secret_key() {
  # Outside DEBUG settings.py needs SECRET_KEY or this machine's own key in var/secret-key: made
  # once and kept, so sessions outlive a restart and every process signs with the same key.
  [ -n "${SECRET_KEY:-}" ] && return 0
  local file="${TRAJ2ENV_VAR:-$ROOT/var}/secret-key"
  [ -s "$file" ] && return 0
  say "writing a secret key for this machine to $file"
  mkdir -p "$(dirname "$file")"
  (umask 077 && "$PY" -c 'import secrets; print(secrets.token_urlsafe(50))' > "$file")
}

migrate() {
  "$PY" manage.py migrate --noinput -v 0
  # the cache's table (login throttling counts there, shared by every web process)
  "$PY" manage.py createcachetable
}

# -- the scale-out services: a PostgreSQL and a Redis of this run's own --------------------------
# Throwaway, on loopback, on free ports, without systemd (CI is a fresh container): a database
# cluster made by initdb under a temporary folder (as the postgres user when we are root: the
# server refuses to run as root) and a Redis with persistence off. Exports DATABASE_URL and
# Q_REDIS_URL for what runs next; scaleout_services_stop (run at exit) stops both and removes the
# folder. Returns 1, saying why, when the programs are missing: the tests that need them then
# skip with that reason.
SCALEOUT_DIR=""

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_bindir() {
  # Debian keeps the server programs out of PATH, one folder per major version: the newest.
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -n "$dir" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  command -v pg_ctl >/dev/null 2>&1 && { dirname "$(command -v pg_ctl)"; return 0; }
  return 1
}

scaleout_services_start() {
  local bin
  bin="$(pg_bindir)" || { say "PostgreSQL's server programs are not installed: the scale-out tests will skip"; return 1; }
  command -v redis-server >/dev/null 2>&1 || { say "redis-server is not installed: the scale-out tests will skip"; return 1; }
  SCALEOUT_DIR="$(mktemp -d "${TMPDIR:-/tmp}/traj2env-scaleout.XXXXXX")"
  trap scaleout_services_stop EXIT
  local dir="$SCALEOUT_DIR" pg_port redis_port as=()
  pg_port="$(free_port)"
  redis_port="$(free_port)"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    as=(runuser -u postgres --)
  fi
  say "starting PostgreSQL on 127.0.0.1:$pg_port and Redis on 127.0.0.1:$redis_port ($dir)"
  # Each step checked here: a caller's `||` turns errexit off inside a function.
  # fsync and friends off: the cluster is thrown away at exit, and tests wait on every commit.
  "${as[@]}" "$bin/initdb" -D "$dir/pg" -U traj2env -A trust -E UTF8 --no-sync \
    >"$dir/initdb.log" 2>&1 || die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
  "${as[@]}" "$bin/pg_ctl" -D "$dir/pg" -l "$dir/postgresql.log" -w -s \
    -o "-h 127.0.0.1 -p $pg_port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start || die "PostgreSQL did not start: $(tail -n 5 "$dir/postgresql.log")"
  "${as[@]}" "$bin/createdb" -h 127.0.0.1 -p "$pg_port" -U traj2env traj2env ||
    die "could not create the traj2env database"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$redis_port" --dir "$dir" \
    --save '' --appendonly no --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" ||
    die "Redis did not start: $(tail -n 5 "$dir/redis.log")"
  export DATABASE_URL="postgres://traj2env@127.0.0.1:$pg_port/traj2env"
  export Q_REDIS_URL="redis://127.0.0.1:$redis_port/0"
  # The scale-out tests fail, rather than skip, when what was started here does not answer.
  export TRAJ2ENV_SCALEOUT_REQUIRED=1
}

scaleout_services_stop() {
  [ -n "$SCALEOUT_DIR" ] && [ -d "$SCALEOUT_DIR" ] || return 0
  local bin as=()
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  if bin="$(pg_bindir)" && [ -f "$SCALEOUT_DIR/pg/postmaster.pid" ]; then
    "${as[@]}" "$bin/pg_ctl" -D "$SCALEOUT_DIR/pg" -m immediate -s stop || true
  fi
  if [ -f "$SCALEOUT_DIR/redis.pid" ]; then
    kill "$(cat "$SCALEOUT_DIR/redis.pid")" 2>/dev/null || true
  fi
  rm -rf "$SCALEOUT_DIR"
  SCALEOUT_DIR=""
}

# -- serving: the web app and the two worker clusters, stopped together ----------------------------
# Each program runs in a process group of its own (setsid), so that a signal reaches all of its
# processes and nothing else. On Ctrl-C, SIGTERM or the end of any one of them, every group gets
# SIGTERM; whatever is left after TRAJ2ENV_STOP_GRACE seconds (10) gets SIGKILL, said on the
# terminal. The escalation is needed: a qcluster can hang for good in its own signal handler
# (django-q2 issue #346, a futex wait), and up.sh would wait on it forever.
SERVE_GROUPS=()
SERVE_NAMES=()

serve_start() {
  local name="$1"; shift
  setsid "$@" &
  SERVE_GROUPS+=("$!")
  SERVE_NAMES+=("$name")
}

serve_alive() {
  # The names of the groups with a process left (an exited leader is reaped by bash at once).
  local i alive=()
  for i in "${!SERVE_GROUPS[@]}"; do
    kill -0 -- "-${SERVE_GROUPS[$i]}" 2>/dev/null && alive+=("${SERVE_NAMES[$i]}")
  done
  echo "${alive[*]}"
}

serve_stop() {
  trap '' INT TERM  # a second Ctrl-C must not interrupt the stop half-way
  local grace="${TRAJ2ENV_STOP_GRACE:-10}" group left
  say "stopping the web app and the workers (SIGTERM; SIGKILL to whatever is left after ${grace} s)"
  for group in "${SERVE_GROUPS[@]}"; do kill -TERM -- "-$group" 2>/dev/null || true; done
  local deadline=$((SECONDS + grace))
  while left="$(serve_alive)"; [ -n "$left" ] && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  if [ -n "$left" ]; then
    local why=""
    [[ "$left" == *worker* ]] && why=" (a qcluster can hang in its signal handler, django-q2 #346)"
    say "still running after ${grace} s: ${left// /, }${why}; sending SIGKILL"
    for group in "${SERVE_GROUPS[@]}"; do kill -KILL -- "-$group" 2>/dev/null || true; done
  fi
  wait 2>/dev/null || true
  say "stopped"
}

serve_all() {
  # The django-q2 workers (default and docker queues) and gunicorn on $1 (host:port), until one
  # of them ends or this shell gets SIGINT or SIGTERM.
  local bind="$1" var="${TRAJ2ENV_VAR:-$ROOT/var}"
  mkdir -p "$var"
  # One worker per cluster: replays and light jobs on the default queue, Docker work (pipeline
  # runs, their verifications) on the docker one. The cluster comes from Q_CLUSTER_NAME:
  # `qcluster --name` is read after django-q2 has loaded its settings, so on Linux it serves the
  # default queue.
  trap 'serve_stop; exit 130' INT
  trap 'serve_stop; exit 143' TERM
  serve_start worker "$PY" manage.py qcluster
  serve_start docker-worker env Q_CLUSTER_NAME=docker "$PY" manage.py qcluster
  # gunicorn's control socket defaults to ~/.gunicorn/gunicorn.ctl, one for every instance of
  # the user's: a second one takes it over and removes it when it stops. This checkout's is
  # under var/.
  serve_start web "$VENV/bin/gunicorn" project.wsgi:application --bind "$bind" \
    --workers "${TRAJ2ENV_WEB_WORKERS:-2}" --access-logfile - \
    --control-socket "$var/gunicorn.ctl"
  local status=0
  wait -n || status=$?
  say "one of the web app and the workers ended (exit $status)"
  serve_stop
  return "$status"
}
