"""Database and cache clients: ``redis-cli``, ``psql`` and PostgreSQL's admin commands.

They talk to a server and print what it answers; the project's files stay as they were, except
for the files some options write: ``psql -o FILE`` / ``-L FILE`` (query output, a session log),
``redis-cli --rdb FILE`` (a snapshot of the server's data), ``pg_dump -f FILE``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

# Per client, the options whose value is a file it writes (short forms also glued: -oout.txt).
_WRITES = {
    "psql": ("-o", "--output", "-L", "--log-file"),
    "redis-cli": ("--rdb", "--functions-rdb"),
    "pg_dump": ("-f", "--file"),
    "pg_dumpall": ("-f", "--file"),
}


@handles("psql", "redis-cli", "pg_dump", "pg_dumpall")
def client(sh: Shell, call: Call) -> Handled:
    options = _WRITES[call.name]
    words = call.words
    for i, word in enumerate(words[1:], 1):
        value = word.value
        if value in options and i + 1 < len(words):
            sh.lose(words[i + 1], call.cwd, f"written by {call.name} {value}")
        elif any(value.startswith(o + "=") for o in options if o.startswith("--")):
            sh.lose_named(call.cwd, [value.split("=", 1)[1]], f"written by {call.name}")
        elif any(value.startswith(o) and value != o for o in options if not o.startswith("--")):
            sh.lose_named(call.cwd, [value[2:]], f"written by {call.name}")
    return call.cwd, None


# Commands that only ask the server something or change what it holds.
_SERVER_ONLY = frozenset(
    {"pg_isready", "createdb", "dropdb", "createuser", "dropuser", "redis-benchmark"}
)


@handles(*_SERVER_ONLY)
def server_only(sh: Shell, call: Call) -> Handled:
    return call.cwd, None
