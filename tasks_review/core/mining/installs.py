"""Whether a shell command installs packages: the sign of a fix that was an install.

installs_packages("cd web && npm i -D vitest")   # True
installs_packages("npm run install-hooks")       # False
"""

from __future__ import annotations

from collections.abc import Iterator

from trajectories.core.replay.programs import basename, python_module, unwrap
from trajectories.core.replay.shell import SimpleCommand, parse

_INSTALL_SUBCOMMANDS = {
    "pip": {"install"},
    "pipx": {"install"},
    "uv": {"add", "sync"},
    "poetry": {"add", "install"},
    "pipenv": {"install"},
    "pdm": {"add", "install"},
    "conda": {"install"},
    "mamba": {"install"},
    "micromamba": {"install"},
    "npm": {"install", "i", "ci", "add", "isntall", "in"},
    "yarn": {"add", "install"},
    "pnpm": {"add", "install", "i"},
    "bun": {"add", "install", "i"},
    "apt": {"install"},
    "apt-get": {"install"},
    "apk": {"add"},
    "brew": {"install"},
    "dnf": {"install"},
    "yum": {"install"},
    "go": {"get", "install"},
    "cargo": {"add", "install"},
    "gem": {"install"},
    "bundle": {"install"},
}


def installs_packages(script: str) -> bool:
    """Whether a shell command installs packages (``pip install``, ``npm i``, ``apt-get``...)."""
    for args in _simple_commands(script):
        name = basename(args[0])
        module = python_module(args)
        if module is not None:
            name, rest = module[0].split(".")[0], module[1]
        else:
            rest = args[1:]
        operands = [a for a in rest if not a.startswith("-")]
        sub = operands[0] if operands else ""
        if name == "uv" and operands[:2] == ["pip", "install"]:
            return True
        if name in ("yarn", "bun") and not operands:
            return True  # bare `yarn` / `bun` install the lockfile's dependencies
        if name == "go" and operands[:2] == ["mod", "download"]:
            return True
        if sub in _INSTALL_SUBCOMMANDS.get(name, ()):
            return True
    return False


def _simple_commands(script: str) -> Iterator[list[str]]:
    for item in parse(script):
        if isinstance(item, SimpleCommand) and item.argv and item.opaque is None:
            args = unwrap(item.args)
            if args:
                yield args
