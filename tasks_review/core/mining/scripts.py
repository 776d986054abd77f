"""``mise run test``, ``make test`` and ``just test`` resolved through the definitions the replay
saw.

    resolved = resolve(["mise", "run", "test"], ".", files)
    resolved.script, resolved.source        # "pytest -q", "mise.toml [tasks.test]"

A task whose check is a mise task or a make target would need that tool in its image, and
would run whatever the definition says at the time. When the replay knows the definition (the
same content at the failing and the passing run), the task runs the commands it defines
instead, so no mise binary is needed and the check is one the rest of the system understands
(``go test ./...`` gets Go's runner and language). What resolves:

* **mise**: ``[tasks]`` entries in ``mise.toml`` and its siblings (a string, a list, or a table
  with ``run``, ``depends``, ``env``, ``dir``, ``alias``), top-level ``[env]`` strings, and file
  tasks (``mise-tasks/test`` …) whose body is plain commands; the closest folder defining the
  task wins, as in mise. Arguments after the task name go to its last command, as in mise.
* **just**: a recipe without parameters and its dependencies (``justfile``'s docstring), found
  upward from the check's folder and run in the justfile's.
* **make**: a target whose recipe lines are literal commands after expanding simple variables
  (``GO ?= go``, ``$(GO) test``), with prerequisites that are targets of the same kind or files
  of the project. A Makefile with conditionals, includes, ``define``, ``.ONESHELL`` or shell
  functions is not resolved, nor is a recipe that uses ``$(MAKE)``, automatic variables other
  than ``$@``, or a ``-`` (ignore errors) prefix.

Every command the definition runs must be a check the system recognises or a setup ``checkline``
keeps (ones it elides, such as a virtualenv activation, are left out); otherwise, or when a
template, an interpreter other than sh/bash or anything else is in the way, nothing resolves
and the check stays as recorded.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tomllib
from dataclasses import dataclass
from typing import Any

from trajectories.core.replay.checks import CheckSpec, recognise, script_call
from trajectories.core.replay.model import CheckKind
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.programs import basename, unwrap

from .checkline import StepVerdict, chain, classify, text
from .justfile import Unresolvable as JustUnresolvable
from .justfile import commands as justfile_commands
from .makefile import make
from .scriptfiles import (
    MAX_DEPTH,
    Definition,
    Files,
    Unit,
    Unresolvable,
    join,
)

_PRIORITY = (CheckKind.TEST, CheckKind.BUILD, CheckKind.TYPECHECK, CheckKind.LINT)


@dataclass(frozen=True, slots=True)
class Resolved:
    script: str  # the commands, joined with " && ", to run from the check's folder
    source: str  # where they were defined, for the reviewer
    spec: CheckSpec  # the check they run (the most telling one when several)
    cwd: str  # the project folder that check runs in


def resolve(args: list[str], cwd: str, files: Files) -> Resolved | None:
    """The commands ``args`` (a mise or make check run from ``cwd``) stands for, if known."""
    call = script_call(args)
    if call is None or call.runner not in ("mise", "make", "gmake", "just"):
        return None
    folder = posixpath.normpath(posixpath.join(cwd, call.chdir)) if call.chdir else cwd
    if folder.startswith(".."):
        return None
    try:
        if call.runner == "mise":
            definition = _mise(unwrap(args), call.name, folder, files)
        elif call.runner == "just":
            definition = _just(unwrap(args), call.name, folder, files)
        else:
            definition = make(unwrap(args), folder, files)
        return _compose(definition, cwd)
    except Unresolvable:
        return None


def _compose(definition: Definition, cwd: str) -> Resolved:
    """One command line running the units in order, each in its folder, from ``cwd``."""
    units = definition.units
    parts = [f"export {k}={shlex.quote(v)}" for k, v in definition.exports]
    here = cwd
    found: list[tuple[CheckSpec, str]] = []
    for i, unit in enumerate(units):
        commands = chain(unit.command)
        if commands is None or unit.folder.startswith(".."):
            raise Unresolvable  # a task run above the project: the image has only the project
        if unit.env and len(commands) != 1:
            raise Unresolvable  # variables for a whole script would leak into the next unit
        if here != unit.folder:
            parts.append(f"cd {posixpath.relpath(unit.folder, here)}")
            here = unit.folder
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in unit.env)
        for command in commands:
            argv = command.args
            spec = recognise(argv) if argv else None
            if spec is not None:
                if spec.runner in ("mise", "make", "gmake", "just"):
                    raise Unresolvable  # one runner calling another: not followed
                found.append((spec, here))
                parts.append(prefix + text(command))
                continue
            step = classify(command, cwd=_abs(here), paths=_PATHS)
            if step.verdict is StepVerdict.UNSAFE:
                raise Unresolvable
            if step.verdict is StepVerdict.ELIDE:
                continue
            if argv and basename(argv[0]) in ("cd", "pushd"):
                if step.cwd is None:
                    raise Unresolvable
                here = _PATHS.relative_dir(step.cwd) or "."
            elif i < len(units) - 1 and argv and basename(argv[0]) in _SHELL_STATE:
                raise Unresolvable  # would leak into the next unit, which mise/make runs apart
            parts.append(prefix + text(command))
    if not found:
        raise Unresolvable
    spec, where = min(found, key=lambda f: _PRIORITY.index(f[0].kind))
    return Resolved(" && ".join(parts), definition.source, spec, where)


# Folders are resolved against a fixed root, so project-relative folders stay relative.
_ROOT = "/project"
_PATHS = Paths(_ROOT)
_SHELL_STATE = frozenset({"export", "unset", "set", "source", ".", "alias", "shopt", "umask"})


def _abs(folder: str) -> str:
    return _ROOT if folder in ("", ".") else f"{_ROOT}/{folder}"


def _task_args(args: list[str], name: str) -> list[str]:
    """The arguments after the task name (a leading ``--`` is mise's separator)."""
    after = args[args.index(name) + 1 :] if name in args else []
    return after[1:] if after[:1] == ["--"] else after


def _with_args(units: list[Unit], extra: list[str]) -> list[Unit]:
    if not extra:
        return units
    if not units or "\n" in units[-1].command:
        raise Unresolvable
    last = units[-1]
    added = " ".join(shlex.quote(a) for a in extra)
    return [*units[:-1], Unit(last.folder, f"{last.command} {added}", last.env)]


# -- just --------------------------------------------------------------------------------------

_JUSTFILES = ("justfile", "Justfile", ".justfile")


def _just(args: list[str], name: str, folder: str, files: Files) -> Definition:
    if any(a.startswith("-") for a in args[1:]) or len([a for a in args[1:]]) > 1:
        raise Unresolvable  # options (--justfile, --set …), or arguments and other recipes
    # just looks upward for its justfile and runs recipes in the justfile's folder.
    for where in files.folders_up(folder):
        for justfile in _JUSTFILES:
            path = join(where, justfile)
            if path not in files.names:
                continue
            data = files.read(path)
            if data is None:
                raise Unresolvable
            try:
                lines = justfile_commands(data.decode("utf-8"), name)
            except (JustUnresolvable, UnicodeDecodeError):
                raise Unresolvable from None
            units = [Unit(files.local(where), line) for line in lines]
            return Definition(units, f"{path} recipe {name or '(default)'}")
    raise Unresolvable


# -- mise --------------------------------------------------------------------------------------

_MISE_CONFIGS = (
    "mise.local.toml",
    "mise.toml",
    ".mise.toml",
    "mise/config.toml",
    ".mise/config.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
)
_MISE_TASK_DIRS = ("mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks")
# Task settings that change what runs in ways a plain command line cannot say.
_MISE_REFUSED = frozenset({"file", "usage", "confirm", "shell", "raw", "depends_post"})
_MISE_IGNORED = frozenset(
    {
        "description",
        "alias",
        "hide",
        "quiet",
        "silent",
        "sources",
        "outputs",
        "tools",
        "run_windows",
        "wait_for",
        "timeout",
    }
)


def _mise(args: list[str], name: str, folder: str, files: Files) -> Definition:
    extra = _task_args(args, name)
    # The closest folder that defines the task wins; its tasks run in that folder (mise's
    # config root) unless they say otherwise.
    for where in files.folders_up(folder):
        for config in _MISE_CONFIGS:
            path = join(where, config)
            if path not in files.names:
                continue
            tasks, env = _mise_config(path, files)
            key = _mise_name(tasks, name)
            if key is not None:
                units = _mise_task(tasks, key, files.local(where), folder, files, set())
                return Definition(_with_args(units, extra), f"{path} [tasks.{key}]", env)
        for task_dir in _MISE_TASK_DIRS:
            path = join(where, f"{task_dir}/{name.replace(':', '/')}")
            if path in files.names:
                units = [Unit(where, _file_task(path, files))]
                return Definition(_with_args(units, extra), path)
    raise Unresolvable


def _mise_config(path: str, files: Files) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    data = files.read(path)
    if data is None:
        raise Unresolvable
    try:
        config = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise Unresolvable from None
    tasks = config.get("tasks", {})
    if not isinstance(tasks, dict) or "task_config" in config:
        raise Unresolvable
    env = config.get("env", {})
    if not isinstance(env, dict):
        raise Unresolvable
    # `_` holds directives (`_.path`, `_.file`, `_.python.venv`) for the recorded machine's
    # environment; the image has its own.
    return tasks, _env_pairs({k: v for k, v in env.items() if k != "_"})


def _mise_name(tasks: dict[str, Any], name: str) -> str | None:
    if name in tasks:
        return name
    for key, task in tasks.items():
        if isinstance(task, dict):
            alias = task.get("alias")
            aliases = [alias] if isinstance(alias, str) else alias or []
            if name in aliases:
                return key
    return None


def _mise_task(
    tasks: dict[str, Any], key: str, root: str, cwd: str, files: Files, seen: set[str]
) -> list[Unit]:
    if key in seen or len(seen) > MAX_DEPTH:
        raise Unresolvable
    seen.add(key)
    task = tasks.get(key)
    if isinstance(task, (str, list)):
        task = {"run": task}
    if not isinstance(task, dict) or _MISE_REFUSED & set(task):
        raise Unresolvable
    if set(task) - _MISE_IGNORED - {"run", "depends", "env", "dir"}:
        raise Unresolvable
    units: list[Unit] = []
    depends = task.get("depends", [])
    for dependency in [depends] if isinstance(depends, str) else depends:
        if not isinstance(dependency, str) or " " in dependency or dependency not in tasks:
            raise Unresolvable
        units += _mise_task(tasks, dependency, root, cwd, files, seen)
    folder = _mise_dir(task.get("dir"), root, cwd, files)
    env = _env_pairs(task.get("env", {}))
    run = task.get("run", [])
    for item in [run] if isinstance(run, str) else run:
        if isinstance(item, dict) and set(item) == {"task"}:
            units += _mise_task(tasks, str(item["task"]), root, cwd, files, seen)
        elif isinstance(item, str):
            units.append(Unit(folder, _script_body(item), env))
        else:
            raise Unresolvable  # parallel `tasks = [...]` groups
    return units


def _mise_dir(value: Any, root: str, cwd: str, files: Files) -> str:
    if value is None or value == "{{config_root}}":
        return root  # above the project when the config is: ``_compose`` refuses it
    if value == "{{cwd}}":
        return cwd
    if not isinstance(value, str) or "{{" in value or value.startswith(("/", "~")):
        raise Unresolvable
    folder = files.local(join(root, value))
    if folder.startswith(".."):
        raise Unresolvable
    return folder


def _env_pairs(env: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(env, dict):
        raise Unresolvable
    pairs = []
    for name, value in env.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, (str, int, float)) or "{{" in str(value):
            raise Unresolvable
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise Unresolvable
        pairs.append((name, str(value)))
    return tuple(pairs)


def _script_body(script: str) -> str:
    """A run string or file task as one command line: its commands, in order, on success."""
    if "{{" in script:
        raise Unresolvable  # Tera templates: the values are mise's to fill in
    lines = script.strip("\n").splitlines()
    if lines and lines[0].startswith("#!"):
        if not re.search(r"(^|[/ ])(ba)?sh(\s|$)", lines[0][2:]):
            raise Unresolvable  # a Python or Node script task
        lines = lines[1:]
    commands = []
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            raise Unresolvable
        commands.append(stripped)
    if not commands:
        raise Unresolvable
    # mise runs inline scripts with errexit and a shebang script as its interpreter does;
    # `set -e` lines make the second say the same, so `&&` keeps what each would do.
    return " && ".join(commands)


def _file_task(path: str, files: Files) -> str:
    data = files.read(path)
    if data is None:
        raise Unresolvable
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unresolvable from None
    for setting in re.findall(r"^#\s*(?:MISE|mise|USAGE)\s+(\w+)", body, re.MULTILINE):
        if setting not in _MISE_IGNORED:
            raise Unresolvable  # depends, dir, env, usage …: what runs is not the body alone
    if not body.startswith("#!"):
        raise Unresolvable  # mise runs file tasks as executables: a shebang says how
    return _script_body(body)
