"""The task images' recipe on top of the generic base image: its variants, and which a check needs.

The base image mechanism (``groundwork``'s Docker seam, ``docker/base.py``) builds any recipe;
what a *task* needs is said here:

* ``go``: Debian's Go toolchain (``golang-go`` from the suite's backports: bookworm's own is
  Go 1.19, which rejects the ``toolchain`` line of today's go.mod files), offline settings
  (``GO_ENV``: no proxy, no toolchain downloads) and a build cache that the agent and the
  grader share, warmed at bootstrap with the standard library a test binary needs, so a check
  does not compile ``testing`` and its imports from scratch in every fresh container.
* ``rust``: Debian's Rust toolchain (``rustc-web`` and ``cargo-web`` from the suite's security
  updates: bookworm's own ``rustc`` is 1.63, too old for today's Cargo.lock files), with a C
  compiler to link, and Cargo offline (``RUST_ENV``): a task's crates come vendored in its build
  context (``trials/crates.py``), never from a registry.
* ``services``: Redis and PostgreSQL from Debian's packages, and an entrypoint
  (``trials/kit/servers.py``, copied into the image) that starts the services named in
  ``TRAJ2ENV_SERVICES`` as their own users, on loopback, with data in throwaway folders, in the
  agent's container (the task's ``[environment.env]`` names them); the task's grader starts
  them itself in the verifier. PostgreSQL gets a ready cluster to copy (trust on loopback, roles
  ``postgres``, ``agent`` and ``grader``) instead of an initdb per start.

    spec = BaseImageSpec().with_variants(named_variants(variants_for(language="go")))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from groundwork.core.docker.base import Variant

# Go without a network: modules come from the project (vendor/) or not at all, and a go.mod
# asking for a newer Go fails at once instead of trying to download a toolchain. The grader
# sets the same for the check it runs (kit/running.py), the image config for the agent.
GO_ENV = (("GOPROXY", "off"), ("GOTOOLCHAIN", "local"))
SERVERS_SCRIPT = "/usr/local/lib/traj2env/servers.py"
_KIT_SERVERS = Path(__file__).resolve().parent / "trials" / "kit" / "servers.py"

# Building a small module's tests at bootstrap fills the build cache with the standard library a
# check compiles, for the agent and the grader alike (each its own cache under its home, owned
# by it: Go refreshes an entry's time on use, which needs the owner, and trims stale ones).
_GO_WARM = "/tmp/traj2env-go-warm"
_GO_WARM_FILES = tuple(
    (f"{_GO_WARM}/{name}", Path(__file__).with_name("go_warm") / name)
    for name in ("go.mod", "warm_test.go")
)


_GO_OFFLINE = " ".join(f"{k}={v}" for k, v in GO_ENV)
# Cargo without a network: a task's crates are vendored into the image (``trials/crates.py``),
# so a lookup of anything else fails at once with Cargo's own message instead of a timeout.
RUST_ENV = (("CARGO_NET_OFFLINE", "true"),)


# Users are looked up inside the root filesystem (the host may have a postgres user too).
_PG_BIN = (
    'bin=$(ls -d "$1"/usr/lib/postgresql/*/bin | sort -V | tail -n1) && bin=${bin#"$1"}'
    ' && pg=$(chroot "$1" id -u postgres):$(chroot "$1" id -g postgres)'
)
_PG_ROLES = "".join(
    f"CREATE ROLE {name} SUPERUSER LOGIN;\\nCREATE DATABASE {name} OWNER {name};\\n"
    for name in ("agent", "grader")
)
PG_TEMPLATE = "/var/lib/traj2env/postgresql"
_SERVICES_HOOKS = (
    # Debian's default cluster is not used (each start copies the template below).
    'for c in "$1"/etc/postgresql/*/main; do [ -d "$c" ] || continue; '
    'v=$(basename "$(dirname "$c")"); chroot "$1" pg_dropcluster "$v" main; done',
    f'{_PG_BIN} && mkdir -p "$1{PG_TEMPLATE}" && chroot "$1" chown postgres:postgres {PG_TEMPLATE}'
    f' && chroot --userspec="$pg" "$1" env HOME=/tmp "$bin/initdb" -D {PG_TEMPLATE}'
    " -U postgres --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null"
    f' && printf "{_PG_ROLES}" | chroot --userspec="$pg" "$1" "$bin/postgres"'
    f" --single -D {PG_TEMPLATE} postgres >/dev/null"
    # Readable by any user: a container that is not started as root runs its services as
    # its own user, from a copy of this (see kit/servers.py).
    f' && chmod -R a+rX "$1{PG_TEMPLATE}"',
)
VARIANTS: Mapping[str, Variant] = {
    variant.name: variant
    for variant in (
        Variant(
            name="go",
            packages=("golang-go/{backports}", "golang-src/{backports}"),
            env=GO_ENV,
            files=_GO_WARM_FILES,
            hooks=(
                f'chmod -R a+rX "$1{_GO_WARM}"',
                f'chroot --userspec={{uid}}:{{uid}} "$1" env HOME=/home/{{user}} {_GO_OFFLINE} '
                f'sh -c "cd {_GO_WARM} && go test -count=1 ./... >/dev/null && go vet ./..."',
            ),
            # The same entries for every other user (their content does not depend on who built
            # them), owned by that user.
            user_hooks=(
                'mkdir -p "$1/home/{name}/.cache" && cp -a "$1/home/{user}/.cache/go-build" '
                '"$1/home/{name}/.cache/" && chroot "$1" chown -R {uid}:{uid} /home/{name}/.cache',
            ),
            last_hooks=(f'rm -rf "$1{_GO_WARM}"',),
        ),
        Variant(
            name="rust",
            packages=("rustc-web", "cargo-web", "gcc", "libc6-dev"),
            env=RUST_ENV,
        ),
        Variant(
            name="services",
            packages=("redis-server", "postgresql"),
            entrypoint=("/usr/bin/python3", "-I", SERVERS_SCRIPT, "entrypoint", "--"),
            hooks=_SERVICES_HOOKS,
            files=((SERVERS_SCRIPT, _KIT_SERVERS),),
        ),
    )
}


def named_variants(names: Iterable[str]) -> tuple[Variant, ...]:
    """The variants called ``names``; a name that is not one is refused (ValueError).

    >>> [variant.name for variant in named_variants(["services", "go"])]
    ['services', 'go']
    >>> named_variants(["ruby"])
    Traceback (most recent call last):
    ...
    ValueError: unknown base image variants ['ruby']; known: ['go', 'rust', 'services']
    """
    names = tuple(names)
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        raise ValueError(f"unknown base image variants {unknown}; known: {sorted(VARIANTS)}")
    return tuple(VARIANTS[name] for name in names)


def variants_for(
    *, language: str, services: Iterable[str] = (), go_project: bool = False
) -> tuple[str, ...]:
    """The base image variants a check needs: ``go`` for a Go check (or a make/script check in a
    project with a go.mod), ``rust`` for a Rust one, ``services`` when it needs services running
    beside it."""
    needed = []
    if language == "go" or go_project:
        needed.append("go")
    if language == "rust":
        needed.append("rust")
    if tuple(services):
        needed.append("services")
    return tuple(needed)
