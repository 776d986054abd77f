"""Package managers: what installing, adding and locking rewrites in the project.

Installs into site-packages or a global cache are outside the project (``pip install``); the
project-level ones rewrite the lockfile, the manifest when a dependency is added or removed, and
the dependency folder (``node_modules``, ``.venv``, ``vendor``), which becomes uncertain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import LostTree
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

_NODE_LOCKS = {
    "npm": ("package-lock.json",),
    "pnpm": ("pnpm-lock.yaml",),
    "yarn": ("yarn.lock",),
    "bun": ("bun.lockb", "bun.lock"),
}
_NODE_INSTALL = set(
    """
    install i ci add remove rm uninstall un update up upgrade dedupe prune link unlink
    """.split()
)
_NODE_MANIFEST = {"add", "remove", "rm", "uninstall", "un", "update", "up", "upgrade"}
_NODE_READ_ONLY = set(
    "ls list view info outdated why audit config whoami help version search pack publish".split()
)


@handles("npm", "pnpm", "yarn", "bun")
def node_package_manager(sh: Shell, call: Call) -> Handled:
    """npm's own commands; the package.json scripts it runs went to ``runners.script`` already."""
    name, args, cwd = call.name, call.args, call.cwd
    sub = next((a for a in args[1:] if not a.startswith("-")), "")
    if sub in _NODE_INSTALL or (not sub and name != "npm"):
        install = sub or "install"
        for lock in _NODE_LOCKS[name]:
            sh.lose_named(cwd, [lock], f"{name} {install}")
        if install in _NODE_MANIFEST or (
            install in ("install", "i") and len([a for a in args[2:] if not a.startswith("-")])
        ):
            sh.lose_named(cwd, ["package.json"], f"{name} {install}")
        sh.emit(LostTree(sh.files.absolute("node_modules", cwd), f"{name} {install}"))
        return cwd, None
    if sub in _NODE_READ_ONLY:
        return cwd, None
    sh.emit(LostTree(cwd, f"script may write files: {' '.join(args[:3])}"))
    return cwd, None


@handles("pip", "pipx")
def pip(sh: Shell, call: Call) -> Handled:
    return call.cwd, None  # installs into site-packages, outside the project's sources


@handles("uv")
def uv(sh: Shell, call: Call) -> Handled:
    cwd = call.cwd
    values = [v for v in call.args[1:] if not v.startswith("-")]
    sub = values[0] if values else ""
    if sub in ("pip", "tool", "python", "cache", "version", "help", "tree", "export"):
        return cwd, None
    if sub == "venv":
        target = values[1] if len(values) > 1 else ".venv"
        sh.emit(LostTree(sh.files.absolute(target, cwd), "uv venv"))
        return cwd, None
    if sub in ("sync", "lock", "add", "remove", "init"):
        sh.lose_named(cwd, ["uv.lock"], "uv " + sub)
        if sub in ("add", "remove", "init"):
            sh.lose_named(cwd, ["pyproject.toml"], "uv " + sub)
        if sub != "lock":
            sh.emit(LostTree(sh.files.absolute(".venv", cwd), "uv " + sub))
        return cwd, None
    sh.emit(LostTree(cwd, f"uv {sub}"))
    return cwd, None


@handles("poetry")
def poetry(sh: Shell, call: Call) -> Handled:
    cwd = call.cwd
    sub = next((v for v in call.args[1:] if not v.startswith("-")), "")
    if sub in ("add", "remove", "lock", "install", "update", "init"):
        sh.lose_named(cwd, ["poetry.lock"], "poetry " + sub)
        if sub in ("add", "remove", "init"):
            sh.lose_named(cwd, ["pyproject.toml"], "poetry " + sub)
        return cwd, None
    if sub in ("show", "env", "check", "version", "config", "about", "search", "build"):
        return cwd, None
    sh.emit(LostTree(cwd, f"poetry {sub}"))
    return cwd, None


@handles("virtualenv")
def virtualenv(sh: Shell, call: Call) -> Handled:
    target = next((w for w in call.words[1:] if not w.value.startswith("-")), None)
    if target is not None:
        sh.emit(LostTree(sh.path(target, call.cwd), "virtualenv"))
    return call.cwd, None


@handles("go")
def go(sh: Shell, call: Call) -> Handled:
    cwd = call.cwd
    values = call.args[1:]
    sub = values[0] if values else ""
    if sub in ("get", "mod"):
        if sub == "get" or values[1:2] in (["tidy"], ["init"], ["edit"], ["vendor"]):
            sh.lose_named(cwd, ["go.mod", "go.sum"], f"go {' '.join(values[:2])}")
        return cwd, None
    if sub == "generate":
        sh.emit(LostTree(cwd, "go generate"))
        return cwd, None
    if sub in ("run",):
        sh.emit(LostTree(cwd, "go run of a program"))
        return cwd, None
    return cwd, None  # env, version, list, doc, install, clean (build caches only)


@handles("cargo")
def cargo(sh: Shell, call: Call) -> Handled:
    cwd = call.cwd
    sub = next((v for v in call.args[1:] if not v.startswith("-")), "")
    if sub in ("add", "remove", "rm", "update", "generate-lockfile", "init", "new"):
        sh.lose_named(cwd, ["Cargo.lock"], "cargo " + sub)
        if sub in ("add", "remove", "rm"):
            sh.lose_named(cwd, ["Cargo.toml"], "cargo " + sub)
        if sub in ("init", "new"):
            sh.emit(LostTree(cwd, "cargo " + sub))
        return cwd, None
    if sub in ("run",):
        sh.emit(LostTree(cwd, "cargo run of a program"))
    return cwd, None  # metadata, tree, search, doc, clean …


@handles("bundle")
def bundle(sh: Shell, call: Call) -> Handled:
    sh.lose_named(call.cwd, ["Gemfile.lock"], "bundle")
    return call.cwd, None


@handles("composer")
def composer(sh: Shell, call: Call) -> Handled:
    sh.lose_named(call.cwd, ["composer.lock", "composer.json"], "composer")
    sh.emit(LostTree(sh.files.absolute("vendor", call.cwd), "composer"))
    return call.cwd, None
