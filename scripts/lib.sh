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
