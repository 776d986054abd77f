"""Which services a check needs running beside it: Redis and PostgreSQL, or one we cannot run.

    client_need(["redis-cli", "FLUSHDB"], {})                 # Need("redis", "", …)
    output_needs("redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379.")
    env_needs({"DATABASE_URL": "postgres://localhost/app"})  # [Need("postgresql", "localhost")]

Three kinds of evidence, each precise on purpose (a test that only mentions "redis" in a string,
or a URL a test parses, is not a service need):

* **clients and servers in commands**: ``redis-cli``, ``psql``, ``pg_isready``, ``createdb`` …
  (with the host they were pointed at), ``redis-server``, ``service postgresql start`` …;
* **connection errors in a check's output**: redis-py's and redis-cli's messages,
  psycopg/psycopg2 ``OperationalError``, libpq's "could not connect to server" and
  "connection to server at … failed", ``ECONNREFUSED 127.0.0.1:6379`` (Node),
  ``dial tcp …:5432`` (Go), asyncio's "Connect call failed ('127.0.0.1', 6379)";
* **service URLs in the environment**: ``REDIS_URL=redis://…``, ``DATABASE_URL=postgres://…``,
  ``PGHOST``/``REDIS_HOST``, in the check's own command line or the project's test environment
  (``.env``, pytest-env settings, ``os.environ`` in conftest.py).

The task's image can run ``PROVIDED`` services on the local host (from Debian's packages; the
check's harness starts them). MySQL, MongoDB and any service on another host are needs the task
cannot meet (``Need.provided`` is False).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from trajectories.core.replay.programs import basename, unwrap
from trajectories.core.replay.shell import SimpleCommand, parse

REDIS = "redis"
POSTGRESQL = "postgresql"
MYSQL = "mysql"
MONGODB = "mongodb"
# What the task's image runs (RepairCandidate.services; the image side installs and starts them).
PROVIDED = frozenset({REDIS, POSTGRESQL})
_PORTS = {"6379": REDIS, "5432": POSTGRESQL, "3306": MYSQL, "27017": MONGODB}


@dataclass(frozen=True, slots=True)
class Need:
    service: str
    host: str  # "" or a loopback name: this machine
    evidence: str  # what showed it, for the reviewer

    @property
    def local(self) -> bool:
        return _is_local(self.host)

    @property
    def provided(self) -> bool:
        return self.service in PROVIDED and self.local

    def describe(self) -> str:
        where = "" if self.local else f" on {self.host}"
        return f"{self.service}{where}"


def _is_local(host: str) -> bool:
    host = host.strip("[]").lower()
    return (
        host in ("", "localhost", "ip6-localhost", "::1", "0.0.0.0")
        or host.startswith("127.")
        or host.startswith("/")  # a Unix socket directory
    )


# -- clients and servers ---------------------------------------------------------------------

_CLIENTS = {
    "redis-cli": REDIS,
    "psql": POSTGRESQL,
    "pg_isready": POSTGRESQL,
    "createdb": POSTGRESQL,
    "dropdb": POSTGRESQL,
    "createuser": POSTGRESQL,
    "dropuser": POSTGRESQL,
    "pg_dump": POSTGRESQL,
    "pg_restore": POSTGRESQL,
    "mysql": MYSQL,
    "mysqladmin": MYSQL,
    "mariadb": MYSQL,
    "mongosh": MONGODB,
    "mongo": MONGODB,
}
_SERVERS = {
    "redis-server": REDIS,
    "postgres": POSTGRESQL,
    "pg_ctl": POSTGRESQL,
    "pg_ctlcluster": POSTGRESQL,
    "mysqld": MYSQL,
    "mysqld_safe": MYSQL,
    "mongod": MONGODB,
}
# Service names as `service`, `systemctl` and `brew services` know them.
_UNITS = re.compile(
    r"^(?:(?P<redis>redis(?:-server)?)|(?P<postgresql>postgres(?:ql)?)|(?P<mysql>mysql|mysqld|"
    r"mariadb)|(?P<mongodb>mongod|mongodb(?:-community)?))(?:@[\w.-]+)?$"
)
_QUIET = frozenset({"--version", "-v", "-V", "--help", "-?"})


def starts_service(args: list[str]) -> str | None:
    """The service a command starts (``redis-server --daemonize yes``, ``service postgresql
    start``), or None."""
    args = unwrap(args)
    if not args or _QUIET & set(args[1:2]):
        return None
    name = basename(args[0])
    if name in _SERVERS and (name not in ("pg_ctl", "pg_ctlcluster") or "start" in args):
        return _SERVERS[name]
    words = [a for a in args[1:] if not a.startswith("-")]
    if name == "service" and len(words) >= 2 and words[1] in ("start", "restart"):
        return _unit(words[0])
    if name == "systemctl" and len(words) >= 2 and words[0] in ("start", "restart"):
        return _unit(words[1])
    if name == "brew" and words[:1] == ["services"] and len(words) >= 3:
        return _unit(words[2]) if words[1] in ("start", "restart", "run") else None
    return None


def _unit(name: str) -> str | None:
    match = _UNITS.match(name.removesuffix(".service"))
    return match.lastgroup if match else None


def client_need(args: list[str], env: Mapping[str, str]) -> Need | None:
    """The service a client command talks to, with its host (``psql -h db …``), or None."""
    args = unwrap(args)
    if not args or _QUIET & set(args[1:2]):
        return None
    name = basename(args[0])
    service = _CLIENTS.get(name)
    if service is None:
        return None
    host = _client_host(service, args[1:], env)
    return Need(service, host, f"`{' '.join(args)[:80]}`")


_CONNINFO = re.compile(r"^\s*(?:\w+=\S+\s*)+$")


def _client_host(service: str, rest: list[str], env: Mapping[str, str]) -> str:
    host_option = {REDIS: "-h", POSTGRESQL: "-h", MYSQL: "-h", MONGODB: "--host"}[service]
    long_option = "--host"
    for i, arg in enumerate(rest):
        if arg in (host_option, long_option) and i + 1 < len(rest):
            return rest[i + 1]
        if arg.startswith(long_option + "="):
            return arg.split("=", 1)[1]
        if service != MONGODB and arg.startswith(host_option) and len(arg) > 2:
            return arg[2:]
        if arg in ("-u", "--uri", "-d", "--dbname") and i + 1 < len(rest):
            url_host = _url_host(rest[i + 1])
            if url_host is not None:
                return url_host
        url_host = _url_host(arg) if "://" in arg else None
        if url_host is not None:
            return url_host
        if _CONNINFO.match(arg):  # libpq's "host=db dbname=app"
            conninfo = dict(pair.split("=", 1) for pair in arg.split())
            return conninfo.get("host", "")
    return env.get("PGHOST", "") if service == POSTGRESQL else ""


# -- URLs in the environment -----------------------------------------------------------------

_SCHEMES = {
    "redis": REDIS,
    "rediss": REDIS,
    "postgres": POSTGRESQL,
    "postgresql": POSTGRESQL,
    "mysql": MYSQL,
    "mariadb": MYSQL,
    "mongodb": MONGODB,
    "mongodb+srv": MONGODB,
}
# Variables that name a service's host without a URL.
_HOST_VARIABLES = {
    "PGHOST": POSTGRESQL,
    "POSTGRES_HOST": POSTGRESQL,
    "REDIS_HOST": REDIS,
    "MYSQL_HOST": MYSQL,
    "MONGO_HOST": MONGODB,
}


def _url_service(value: str) -> str | None:
    scheme = value.split("://", 1)[0].lower() if "://" in value else ""
    # postgresql+psycopg2://, mysql+pymysql://: SQLAlchemy's driver suffix.
    return _SCHEMES.get(scheme) or _SCHEMES.get(scheme.split("+", 1)[0])


def _url_host(value: str) -> str | None:
    """The host a service URL points at ("" for a socket or none); None when not a service URL."""
    if _url_service(value) is None:
        return None
    try:
        netloc = urlsplit(value).netloc
    except ValueError:
        return None
    host = netloc.rsplit("@", 1)[-1]
    host = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return host.split(",", 1)[0]


def env_needs(env: Mapping[str, str], where: str) -> list[Need]:
    """Services the variables point at: service URLs in any variable, and host variables."""
    found = []
    for name, value in env.items():
        value = value.strip().strip("'\"")
        if "$" in value:
            continue  # another variable's value, unknown here
        service = _url_service(value)
        if service is not None:
            found.append(Need(service, _url_host(value) or "", f"{name}={value[:60]} {where}"))
        elif name in _HOST_VARIABLES and value:
            found.append(Need(_HOST_VARIABLES[name], value, f"{name}={value[:60]} {where}"))
    return found


def line_needs(script: str, where: str) -> list[Need]:
    """What one command line shows: clients, servers it starts, variables it sets."""
    found: list[Need] = []
    for command in _simple_commands(script):
        env = _command_env(command)
        found += env_needs(env, where)
        args = command.args
        client = client_need(args, env)
        if client is not None:
            found.append(Need(client.service, client.host, f"{client.evidence} {where}"))
        started = starts_service(args)
        if started is not None:
            found.append(Need(started, "", f"`{' '.join(args)[:80]}` {where}"))
    return found


def _simple_commands(script: str) -> Iterator[SimpleCommand]:
    for item in parse(script):
        if isinstance(item, SimpleCommand) and item.opaque is None:
            yield item


def _command_env(command: SimpleCommand) -> dict[str, str]:
    words = [w.value for w in command.assignments]
    args = command.args
    if args and basename(args[0]) in ("export", "env"):
        words += [a for a in args[1:] if "=" in a and not a.startswith("-")]
    return dict(w.split("=", 1) for w in words if "=" in w)


# -- connection errors in output -------------------------------------------------------------

_HOST = r"(?P<host>localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?|[A-Za-z0-9][\w.-]*)"
# Where a raised exception's name starts: a traceback's last line, pytest's "E" lines, its
# short summary ("FAILED t.py::x - psycopg2.OperationalError: …"), SQLAlchemy's "(psycopg2.…)".
_RAISED = r"(?m)(?:^\s*(?:E\s+)?|\s-\s|\()"
_REFUSED = re.compile(r"connection refused|ECONNREFUSED|connect call failed", re.IGNORECASE)
# (service, pattern with an optional "host" group); an error line, not a mention.
_ERRORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (REDIS, re.compile(r"Could not connect to Redis at " + _HOST + r":\d+")),
    # redis-py: "Error 111 connecting to localhost:6379. Connection refused."
    (REDIS, re.compile(r"Error -?\d+ connecting to " + _HOST + r":6379\b")),
    (REDIS, re.compile(r"redis\S*: Error -?\d+ connecting to " + _HOST + r":\d+")),
    (REDIS, re.compile(_RAISED + r"redis\.exceptions\.(?:ConnectionError|TimeoutError)\b")),
    (
        POSTGRESQL,
        re.compile(r'connection to server at "(?P<host>[^"]+)"(?: \([^)]*\))?, port \d+ failed'),
    ),
    (POSTGRESQL, re.compile(r'connection to server on socket "[^"]*" failed')),
    (
        POSTGRESQL,
        re.compile(
            r"could not connect to server: (?:Connection refused|No such file or directory)"
            r'(?:\s+Is the server running (?:on host "(?P<host>[^"]+)"|locally))?'
        ),
    ),
    (
        POSTGRESQL,
        re.compile(_RAISED + r"(?:[\w.]+\.)?psycopg2?\.(?:errors\.)?OperationalError\b"),
    ),
    (POSTGRESQL, re.compile(_HOST + r":5432 - no response")),
    (MYSQL, re.compile(r"Can't connect to (?:local )?MySQL server(?: on '(?P<host>[^':]+))?")),
    (
        MYSQL,
        re.compile(
            _RAISED + r"(?:pymysql\.err|MySQLdb|mysql\.connector\.errors)\."
            r"(?:OperationalError|InterfaceError|DatabaseError)\b"
        ),
    ),
    (
        MONGODB,
        re.compile(
            r"\b(?:pymongo\.errors\.ServerSelectionTimeoutError|MongoServerSelectionError|"
            r"MongooseServerSelectionError|MongoNetworkError)\b"
        ),
    ),
)
# host:port on a line that says the connection was refused (Node, Go, Python's asyncio).
_REFUSED_AT = (
    re.compile(_HOST + r":(?P<port>6379|5432|3306|27017)\b"),
    re.compile(r"\('(?P<host>[^']+)',\s*(?P<port>6379|5432|3306|27017)\)"),
)


def output_needs(output: str, where: str) -> list[Need]:
    """Services a check's output shows it failed to reach."""
    found: list[Need] = []
    for service, pattern in _ERRORS:
        for match in pattern.finditer(output):
            host = match.groupdict().get("host") or ""
            found.append(Need(service, host, f"{match.group(0)[:80]!r} {where}"))
    for line in output.splitlines():
        if not _REFUSED.search(line):
            continue
        for pattern in _REFUSED_AT:
            for match in pattern.finditer(line):
                service = _PORTS[match.group("port")]
                found.append(Need(service, match.group("host"), f"{line.strip()[:80]!r} {where}"))
    return found


# -- the project's test environment ----------------------------------------------------------

_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>.*?)\s*$")
_ENVIRON = re.compile(
    r"os\.environ(?:\.setdefault\(\s*|\[\s*)[\"'](?P<name>\w+)[\"']\s*(?:,|\]\s*=)\s*"
    r"[\"'](?P<value>[^\"']+)[\"']"
)
_PYTEST_ENV = re.compile(r"^\s*[\"']?(?:[DR]:)?(?P<name>[A-Za-z_]\w*)=(?P<value>[^\"'\s,]+)")


def config_needs(files: Mapping[str, bytes]) -> list[Need]:
    """Services the project's test environment points at, on this machine only.

    Only local ones count: a ``.env`` also holds other machines' URLs (production, a compose
    network) that the tests may never use, so a remote one there is no reason to drop a task;
    the check in the image decides.
    """
    found: list[Need] = []
    for path, data in files.items():
        name = path.rsplit("/", 1)[-1]
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        env: dict[str, str] = {}
        if name == ".env" or name.startswith(".env."):
            env = _matches(_DOTENV_LINE, content.splitlines())
        elif name == "conftest.py":
            env = {m.group("name"): m.group("value") for m in _ENVIRON.finditer(content)}
        elif name in ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"):
            env = _matches(_PYTEST_ENV, _pytest_env_lines(content))
        found += [n for n in env_needs(env, f"in {path}") if n.local]
    return found


def _matches(pattern: re.Pattern[str], lines: Iterable[str]) -> dict[str, str]:
    return {m.group("name"): m.group("value") for m in map(pattern.match, lines) if m}


def _pytest_env_lines(content: str) -> list[str]:
    """The entries of pytest-env's ``env`` setting (ini style or a TOML list)."""
    lines = content.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        if not re.match(r"^\s*env\s*=", line):
            continue
        tail = line.split("=", 1)[1].strip()
        if tail.startswith("["):
            out += re.findall(r"[\"']([^\"']+)[\"']", tail)
            j = i + 1
            while "]" not in tail and j < len(lines):
                tail = lines[j]
                out += re.findall(r"[\"']([^\"']+)[\"']", tail)
                j += 1
            continue
        if tail:
            out.append(tail)
        j = i + 1
        while j < len(lines) and lines[j][:1] in (" ", "\t") and lines[j].strip():
            out.append(lines[j].strip())
            j += 1
    return out


# -- one check's needs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServiceNeeds:
    services: tuple[str, ...]  # provided services the check needs, sorted
    unavailable: tuple[Need, ...]  # needs the task cannot meet (a drop)


def check_needs(
    lines: Iterable[tuple[str, str]],
    outputs: Iterable[tuple[str, str]],
    *,
    session: Iterable[Need] = (),
    config: Mapping[str, bytes] | None = None,
) -> ServiceNeeds:
    """What one check needs, from evidence of two strengths.

    ``lines`` (the check's own command lines, with where each is from) and ``outputs`` (its
    runs' output) are the check's own evidence: any need there counts, and one the task cannot
    meet drops the candidate. ``session`` (``line_needs`` of the commands the session ran up to
    the passing run) and ``config`` (the project's test environment) only add local Redis and
    PostgreSQL: the session may have used a service for something other than this check, and
    starting one that is not needed costs seconds, while refusing a task for it loses the task.
    """
    own: list[Need] = []
    for script, where in lines:
        own += line_needs(script, where)
    for output, where in outputs:
        own += output_needs(output, where)
    weak = [*session, *config_needs(config or {})]
    services = {n.service for n in [*own, *weak] if n.provided}
    unavailable = {(n.service, n.host.lower()): n for n in own if not n.provided}
    return ServiceNeeds(tuple(sorted(services)), tuple(unavailable.values()))
