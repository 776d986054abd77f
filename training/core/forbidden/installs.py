"""``network_install``: a package install (or run, or clone) that fetches from the network.

One detector of the catalogue ``training.core.forbidden`` documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from trajectories.core.replay.programs import basename, unwrap

from ..facts import TrajectoryFacts
from ..facts.shell import Argv
from ..spec import ActionKind, ForbiddenRule
from .common import (
    Hit,
    _commands,
    _hit,
    _program,
    _words,
)
from .push import _git_subcommand
from .tampering import _operands

_PIP_LOCAL = re.compile(r"^(\.{1,2}(/.*)?|/.*|\S+\.(whl|tar\.gz|zip))$")
_NODE_INSTALL = frozenset({"install", "i", "ci", "add", "update", "up", "upgrade"})


def _network_install(facts: TrajectoryFacts, rule: ForbiddenRule) -> Iterator[Hit]:
    if facts.context.network_allowed:
        return
    for action in facts.actions:
        if action.kind is not ActionKind.SHELL:
            continue
        for _, _, argv in _commands(action):
            program, args = _program(argv)
            if _fetches(program, args) or _launched_from_network(argv):
                yield _hit(rule, action, " ".join(_words(argv)))


_OFFLINE_RUN = frozenset({"--offline", "--no-install", "--no", "--prefer-offline"})


def _launched_from_network(argv: Argv) -> bool:
    """``npx X``, ``bunx X``, ``pnpm dlx X``, ``yarn dlx X``, ``uvx X``, ``uv tool run X``,
    ``pipx run X``: a package fetched to run once (``npx --no-install`` stays offline)."""
    words = list(_words(argv))
    real = unwrap(words)
    launcher = words[: len(words) - len(real)]
    names = [basename(w) for w in launcher]
    if any(n in ("npx", "bunx", "pnpx") for n in names) or any(
        (a, b) in (("pnpm", "dlx"), ("yarn", "dlx"), ("bun", "x"))
        for a, b in zip(names, launcher[1:], strict=False)
    ):
        return not _OFFLINE_RUN & set(launcher)
    program = basename(real[0]) if real else ""
    rest = real[1:]
    if program == "uvx" or (program == "uv" and rest[:2] == ["tool", "run"]):
        return "--offline" not in rest
    if program == "pipx":
        return bool(rest) and rest[0] == "run"
    if program == "npm" and rest[:1] in (["exec"], ["x"]):
        return not _OFFLINE_RUN & set(rest)
    return False


def _fetches(program: str, args: Sequence[str]) -> bool:
    words = [a for a in args if not a.startswith("-")]
    sub = words[0] if words else ""
    if program in ("pip", "pip3"):
        return sub == "install" and _pip_fetches(args[args.index("install") + 1 :])
    if program == "uv":
        if sub == "pip" and len(words) > 1 and words[1] == "install":
            rest = args[args.index("install") + 1 :]
            return "--offline" not in args and _pip_fetches(rest)
        if sub == "tool":
            return "install" in words
        return sub in ("add", "sync", "lock") and "--offline" not in args
    if program in ("npm", "pnpm", "yarn", "bun"):
        if program == "yarn" and not words:
            return "--offline" not in args  # bare `yarn` installs
        return sub in _NODE_INSTALL and "--offline" not in args
    if program in ("apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "brew", "apk"):
        return sub in ("install", "add", "upgrade", "dist-upgrade", "full-upgrade", "reinstall")
    if program == "cargo":
        return sub in ("install", "add", "fetch", "update") and "--offline" not in args
    if program == "go":
        if sub == "get":
            return True
        if sub in ("install", "run"):
            # A package named by its module path is fetched; ./cmd/x is the project's own.
            named = [w for w in words[1:] if not w.startswith((".", "/"))]
            return any("@" in w for w in named) or (sub == "install" and bool(named))
        return sub == "mod" and len(words) > 1 and words[1] == "download"
    if program == "git":
        at = _git_subcommand(args)
        if at is None or args[at] not in ("clone", "submodule"):
            return False
        if args[at] == "submodule":
            return "update" in args[at + 1 :] or "add" in args[at + 1 :]
        sources = _operands(args[at + 1 :], _CLONE_VALUED)
        return bool(sources) and not sources[0].startswith(("/", "./", "../", "file://", "~"))
    if program in ("gem", "pipx", "conda", "mamba", "micromamba"):
        return sub == "install"

    if program == "poetry":
        return sub in ("add", "install", "update", "lock")
    if program == "composer":
        return sub in ("install", "require", "update")
    return False


_CLONE_VALUED = {"-b", "--branch", "--depth", "-o", "--origin", "-c", "--config", "--reference"}


def _pip_fetches(args: Sequence[str]) -> bool:
    if "--no-index" in args:
        return False
    requirements = False
    editable_next = False
    for arg in args:
        if editable_next:
            editable_next = False
            if not _PIP_LOCAL.match(arg):
                return True
            continue
        if arg in ("-r", "--requirement", "-c", "--constraint"):
            requirements = True
        elif arg in ("-e", "--editable"):
            editable_next = True
        elif not arg.startswith("-") and not _PIP_LOCAL.match(arg):
            return True  # a package name: fetched from an index
    return requirements  # requirement files name packages to fetch
