"""Which program a command runs: ``timeout 60 uv run pytest`` runs pytest.

Check recognition, file effects, shell reads, trial planning and mining all look at the program
that really runs, so the unwrapping and the name normalising (``python3.12`` is ``python``) live
here once, with the families of program names more than one of them needs.
"""

from __future__ import annotations

import functools
import posixpath
import re

# Package managers that also run the project's package.json scripts (`npm run x`, `yarn x`).
NODE_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})

_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"^\d+(\.\d+)?[smhd]?$")

# Wrappers that run their arguments as a command after some options of their own.
_PLAIN = {
    "sudo",
    "nice",
    "nohup",
    "time",
    "command",
    "exec",
    "caffeinate",
    "unbuffer",
    "chronic",
    "busybox",
}
# `uv run`, `poetry run`, … (program, subcommand) pairs that run the rest as a command.
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("rye", "run"),
    ("pixi", "run"),
    ("conda", "run"),
    ("mamba", "run"),
    ("micromamba", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("yarn", "exec"),
    ("bun", "x"),
    ("bundle", "exec"),
    ("dotenv", "run"),
}
# Options of those runners that take a value, so the value is not mistaken for the program.
_VALUE_OPTIONS = {
    "-n",
    "--name",
    "-p",
    "--prefix",
    "--python",
    "--with",
    "--group",
    "--extra",
    "--env-file",
    "-e",
    "--environment",
    "-C",
    "--directory",
    "--project",
    "--package",
    "--filter",
    "-k",
    "--signal",
    "-s",
    "-u",
    "--user",
}


@functools.lru_cache(maxsize=65536)
def basename(program: str) -> str:
    # Cached: the replay, the miner and the eval harness ask it of every word of every command.
    name = posixpath.basename(program)
    # python3.12 → python3 → python; pip3 → pip
    name = re.sub(r"^(python|pip)[0-9.]*$", r"\1", name)
    return name.removesuffix(".exe")


def unwrap(argv: list[str]) -> list[str]:
    """Drop wrappers until the real program is first; returns a new list."""
    args = list(argv)
    for _ in range(8):  # wrappers nest a few levels at most: sudo timeout uv run pytest
        if not args:
            return args
        name = basename(args[0])
        if name in _PLAIN:
            args = _skip_options(args[1:])
        elif name == "env":
            rest = _skip_options(args[1:])
            while rest and _ENV_ASSIGN.match(rest[0]):
                rest = rest[1:]
            args = rest
        elif name in ("timeout", "gtimeout"):
            rest = _skip_options(args[1:])
            args = rest[1:] if rest and _DURATION.match(rest[0]) else rest
        elif name in ("npx", "bunx", "pnpx"):
            rest = _skip_options(args[1:])
            args = rest
        elif name == "mise" and len(args) > 1 and args[1] in ("exec", "x"):
            # `mise exec go@1.22 node@20 -- go test ./...`: tool versions, then the command.
            rest = args[2:]
            args = rest[rest.index("--") + 1 :] if "--" in rest else _skip_options(rest)
        elif len(args) > 1 and (name, args[1]) in _RUNNERS:
            args = _skip_options(args[2:])
        elif name in ("xvfb-run", "stdbuf"):
            args = _skip_options(args[1:])
        elif name == "coverage" or (name == "python" and args[1:3] == ["-m", "coverage"]):
            # `coverage run -m pytest …` runs pytest under coverage; -m is skipped as an option.
            rest = args[3:] if name == "python" else args[1:]
            if rest[:1] != ["run"]:
                return args
            args = _skip_options(rest[1:])
        else:
            return args
    return args


def _skip_options(args: list[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "--":
            return args[i + 1 :]
        if args[i] in _VALUE_OPTIONS and "=" not in args[i]:
            i += 1
        i += 1
    return args[i:]


def python_module(argv: list[str]) -> tuple[str, list[str]] | None:
    """``python [opts] -m mod args`` → (mod, args); None when not a module run."""
    if not argv or basename(argv[0]) not in ("python", "py"):
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "-m" and i + 1 < len(argv):
            return argv[i + 1], argv[i + 2 :]
        if argv[i].startswith("-m") and len(argv[i]) > 2:
            return argv[i][2:], argv[i + 1 :]
        i += 1
    return None
