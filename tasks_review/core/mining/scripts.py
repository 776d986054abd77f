"""``mise run test`` and ``make test`` resolved through the definitions the replay saw.

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
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from trajectories.core.replay.checks import CheckSpec, recognise, script_call
from trajectories.core.replay.model import CheckKind
from trajectories.core.replay.paths import Paths
from trajectories.core.replay.programs import basename, unwrap

from .checkline import Verdict, chain, classify, text

_PRIORITY = (CheckKind.TEST, CheckKind.BUILD, CheckKind.TYPECHECK, CheckKind.LINT)
_MAX_DEPTH = 6


@dataclass(frozen=True, slots=True)
class Resolved:
    script: str  # the commands, joined with " && ", to run from the check's folder
    source: str  # where they were defined, for the reviewer
    spec: CheckSpec  # the check they run (the most telling one when several)
    cwd: str  # the project folder that check runs in


@dataclass(frozen=True, slots=True)
class Files:
    """The project files a resolution may read: names seen, and a reader of known content.

    ``here`` is the session's folder within its repository ("go") when files above it are
    known (a clone's root ``mise.toml``, named ``../mise.toml``): mise and just look upward.
    """

    names: Collection[str]
    read: Callable[[str], bytes | None]  # None when unknown or changed between the runs
    here: str = ""

    def local(self, path: str) -> str:
        """``path`` as the session's folder sees it: ``../go/x`` is ``x`` when it is go/."""
        if not self.here or not path.startswith(".."):
            return path
        top = posixpath.normpath(posixpath.join(self.here, path))
        return posixpath.relpath(top, self.here)

    def folders_up(self, folder: str) -> Iterator[str]:
        """``folder``, the folders above it up to the session's, then those above that."""
        yield from _folders_up(folder)
        for level in range(1, self.here.count("/") + 2 if self.here else 1):
            yield "/".join([".."] * level)


@dataclass(frozen=True, slots=True)
class Above:
    """Files of the repository above the session's folder, from its clone (a root mise.toml
    when the session ran in go/): ``{"../mise.toml": sha}``, and the session's folder within
    the repository ("go")."""

    files: Mapping[str, str]
    here: str


@dataclass(frozen=True, slots=True)
class _Unit:
    """One shell's worth of commands: where it starts, the variables it gets, what it runs."""

    folder: str
    command: str
    env: tuple[tuple[str, str], ...] = ()


class _Unresolvable(Exception):
    pass


def resolve(args: list[str], cwd: str, files: Files) -> Resolved | None:
    """The commands ``args`` (a mise or make check run from ``cwd``) stands for, if known."""
    call = script_call(args)
    if call is None or call.runner not in ("mise", "make", "gmake"):
        return None
    folder = posixpath.normpath(posixpath.join(cwd, call.chdir)) if call.chdir else cwd
    if folder.startswith(".."):
        return None
    try:
        if call.runner == "mise":
            definition = _mise(unwrap(args), call.name, folder, files)
        else:
            definition = _make(unwrap(args), folder, files)
        return _compose(definition, cwd)
    except _Unresolvable:
        return None


@dataclass(frozen=True, slots=True)
class _Definition:
    units: list[_Unit]
    source: str
    exports: tuple[tuple[str, str], ...] = ()  # variables every unit gets (mise [env], make export)


def _compose(definition: _Definition, cwd: str) -> Resolved:
    """One command line running the units in order, each in its folder, from ``cwd``."""
    units = definition.units
    parts = [f"export {k}={shlex.quote(v)}" for k, v in definition.exports]
    here = cwd
    found: list[tuple[CheckSpec, str]] = []
    for i, unit in enumerate(units):
        commands = chain(unit.command)
        if commands is None or unit.folder.startswith(".."):
            raise _Unresolvable  # a task run above the project: the image has only the project
        if unit.env and len(commands) != 1:
            raise _Unresolvable  # variables for a whole script would leak into the next unit
        if here != unit.folder:
            parts.append(f"cd {posixpath.relpath(unit.folder, here)}")
            here = unit.folder
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in unit.env)
        for command in commands:
            argv = command.args
            spec = recognise(argv) if argv else None
            if spec is not None:
                if spec.runner in ("mise", "make", "gmake"):
                    raise _Unresolvable  # one runner calling another: not followed
                found.append((spec, here))
                parts.append(prefix + text(command))
                continue
            step = classify(command, cwd=_abs(here), paths=_PATHS)
            if step.verdict is Verdict.UNSAFE:
                raise _Unresolvable
            if step.verdict is Verdict.ELIDE:
                continue
            if argv and basename(argv[0]) in ("cd", "pushd"):
                if step.cwd is None:
                    raise _Unresolvable
                here = _PATHS.relative_dir(step.cwd) or "."
            elif i < len(units) - 1 and argv and basename(argv[0]) in _SHELL_STATE:
                raise _Unresolvable  # would leak into the next unit, which mise/make runs apart
            parts.append(prefix + text(command))
    if not found:
        raise _Unresolvable
    spec, where = min(found, key=lambda f: _PRIORITY.index(f[0].kind))
    return Resolved(" && ".join(parts), definition.source, spec, where)


# Folders are resolved against a fixed root, so project-relative folders stay relative.
_ROOT = "/project"
_PATHS = Paths(_ROOT)
_SHELL_STATE = frozenset({"export", "unset", "set", "source", ".", "alias", "shopt", "umask"})


def _abs(folder: str) -> str:
    return _ROOT if folder in ("", ".") else f"{_ROOT}/{folder}"


def _folders_up(folder: str) -> Iterator[str]:
    while True:
        yield folder
        if folder in ("", "."):
            return
        folder = posixpath.dirname(folder) or "."


def _join(folder: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(folder, name))


def _task_args(args: list[str], name: str) -> list[str]:
    """The arguments after the task name (a leading ``--`` is mise's separator)."""
    after = args[args.index(name) + 1 :] if name in args else []
    return after[1:] if after[:1] == ["--"] else after


def _with_args(units: list[_Unit], extra: list[str]) -> list[_Unit]:
    if not extra:
        return units
    if not units or "\n" in units[-1].command:
        raise _Unresolvable
    last = units[-1]
    added = " ".join(shlex.quote(a) for a in extra)
    return [*units[:-1], _Unit(last.folder, f"{last.command} {added}", last.env)]


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


def _mise(args: list[str], name: str, folder: str, files: Files) -> _Definition:
    extra = _task_args(args, name)
    # The closest folder that defines the task wins; its tasks run in that folder (mise's
    # config root) unless they say otherwise.
    for where in files.folders_up(folder):
        for config in _MISE_CONFIGS:
            path = _join(where, config)
            if path not in files.names:
                continue
            tasks, env = _mise_config(path, files)
            key = _mise_name(tasks, name)
            if key is not None:
                units = _mise_task(tasks, key, files.local(where), folder, files, set())
                return _Definition(_with_args(units, extra), f"{path} [tasks.{key}]", env)
        for task_dir in _MISE_TASK_DIRS:
            path = _join(where, f"{task_dir}/{name.replace(':', '/')}")
            if path in files.names:
                units = [_Unit(where, _file_task(path, files))]
                return _Definition(_with_args(units, extra), path)
    raise _Unresolvable


def _mise_config(path: str, files: Files) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    data = files.read(path)
    if data is None:
        raise _Unresolvable
    try:
        config = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise _Unresolvable from None
    tasks = config.get("tasks", {})
    if not isinstance(tasks, dict) or "task_config" in config:
        raise _Unresolvable
    env = config.get("env", {})
    if not isinstance(env, dict):
        raise _Unresolvable
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
) -> list[_Unit]:
    if key in seen or len(seen) > _MAX_DEPTH:
        raise _Unresolvable
    seen.add(key)
    task = tasks.get(key)
    if isinstance(task, (str, list)):
        task = {"run": task}
    if not isinstance(task, dict) or _MISE_REFUSED & set(task):
        raise _Unresolvable
    if set(task) - _MISE_IGNORED - {"run", "depends", "env", "dir"}:
        raise _Unresolvable
    units: list[_Unit] = []
    depends = task.get("depends", [])
    for dependency in [depends] if isinstance(depends, str) else depends:
        if not isinstance(dependency, str) or " " in dependency or dependency not in tasks:
            raise _Unresolvable
        units += _mise_task(tasks, dependency, root, cwd, files, seen)
    folder = _mise_dir(task.get("dir"), root, cwd, files)
    env = _env_pairs(task.get("env", {}))
    run = task.get("run", [])
    for item in [run] if isinstance(run, str) else run:
        if isinstance(item, dict) and set(item) == {"task"}:
            units += _mise_task(tasks, str(item["task"]), root, cwd, files, seen)
        elif isinstance(item, str):
            units.append(_Unit(folder, _script_body(item), env))
        else:
            raise _Unresolvable  # parallel `tasks = [...]` groups
    return units


def _mise_dir(value: Any, root: str, cwd: str, files: Files) -> str:
    if value is None or value == "{{config_root}}":
        return root  # above the project when the config is: ``_compose`` refuses it
    if value == "{{cwd}}":
        return cwd
    if not isinstance(value, str) or "{{" in value or value.startswith(("/", "~")):
        raise _Unresolvable
    folder = files.local(_join(root, value))
    if folder.startswith(".."):
        raise _Unresolvable
    return folder


def _env_pairs(env: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(env, dict):
        raise _Unresolvable
    pairs = []
    for name, value in env.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, (str, int, float)) or "{{" in str(value):
            raise _Unresolvable
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise _Unresolvable
        pairs.append((name, str(value)))
    return tuple(pairs)


def _script_body(script: str) -> str:
    """A run string or file task as one command line: its commands, in order, on success."""
    if "{{" in script:
        raise _Unresolvable  # Tera templates: the values are mise's to fill in
    lines = script.strip("\n").splitlines()
    if lines and lines[0].startswith("#!"):
        if not re.search(r"(^|[/ ])(ba)?sh(\s|$)", lines[0][2:]):
            raise _Unresolvable  # a Python or Node script task
        lines = lines[1:]
    commands = []
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            raise _Unresolvable
        commands.append(stripped)
    if not commands:
        raise _Unresolvable
    # mise runs inline scripts with errexit and a shebang script as its interpreter does;
    # `set -e` lines make the second say the same, so `&&` keeps what each would do.
    return " && ".join(commands)


def _file_task(path: str, files: Files) -> str:
    data = files.read(path)
    if data is None:
        raise _Unresolvable
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unresolvable from None
    for setting in re.findall(r"^#\s*(?:MISE|mise|USAGE)\s+(\w+)", body, re.MULTILINE):
        if setting not in _MISE_IGNORED:
            raise _Unresolvable  # depends, dir, env, usage …: what runs is not the body alone
    if not body.startswith("#!"):
        raise _Unresolvable  # mise runs file tasks as executables: a shebang says how
    return _script_body(body)


# -- make --------------------------------------------------------------------------------------

_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAKE_FLAGS_OK = frozenset({"-s", "--silent", "--quiet", "--no-print-directory", "-w"})
_DIRECTIVE = re.compile(
    r"^\s*(-?include|sinclude|ifeq|ifneq|ifdef|ifndef|else|endif|define|endef|override|vpath|"
    r"unexport|\.ONESHELL|\.RECIPEPREFIX|\.SHELLFLAGS|SHELL\s*[:?]?=|\.EXPORT_ALL_VARIABLES)\b"
)
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][\w.-]*)\s*(\?=|::=|:=|\+=|!=|=)\s*(.*)$")
_RULE = re.compile(r"^([^:=#\t][^:=#]*?)\s*(::?)(?!=)\s*(.*)$")


@dataclass
class _Makefile:
    variables: dict[str, str | None]  # None: defined by the shell (`!=`), unknown here
    exported: list[str]  # `export NAME = …`: in every recipe's environment
    rules: dict[str, tuple[list[str], list[str]]]  # target -> (prerequisites, recipe lines)
    refused: set[str]  # targets this resolver does not follow (double-colon, per-target vars)
    default: str | None


def _make(args: list[str], folder: str, files: Files) -> _Definition:
    targets: list[str] = []
    makefile: str | None = None
    i = 1
    while i < len(args):
        arg = args[i]
        if arg in ("-f", "--file", "--makefile") and i + 1 < len(args):
            makefile = _join(folder, args[i + 1])
            i += 2
            continue
        if arg in ("-C", "--directory"):
            i += 2  # already in ``folder``
            continue
        if arg.startswith("-C") or arg.startswith("--directory="):
            i += 1
            continue
        if arg in ("-j", "--jobs") and i + 1 < len(args) and args[i + 1].isdigit():
            i += 2
            continue
        if re.fullmatch(r"-j\d*|--jobs=\d+", arg) or arg in _MAKE_FLAGS_OK:
            i += 1
            continue
        if arg.startswith("-") or "=" in arg:
            raise _Unresolvable  # other options, or variables set on the command line
        targets.append(arg)
        i += 1
    if makefile is None:
        makefile = next((p for n in _MAKEFILES if (p := _join(folder, n)) in files.names), None)
    if makefile is None or makefile not in files.names:
        raise _Unresolvable
    data = files.read(makefile)
    if data is None:
        raise _Unresolvable
    try:
        parsed = _parse_makefile(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _Unresolvable from None
    if not targets:
        if parsed.default is None:
            raise _Unresolvable
        targets = [parsed.default]
    units: list[_Unit] = []
    done: set[str] = set()
    for target in targets:
        units += _make_target(parsed, target, folder, files, done, depth=0)
    exports = []
    for name in parsed.exported:
        value = parsed.variables.get(name)
        if value is None:
            raise _Unresolvable
        exports.append((name, _expand(value, parsed, "")))
    return _Definition(units, f"{makefile} target {' '.join(targets)}", tuple(exports))


def _parse_makefile(source: str) -> _Makefile:
    source = re.sub(r"\\\n[ \t]*", " ", source)  # continuation lines
    variables: dict[str, str | None] = {}
    exported: list[str] = []
    rules: dict[str, tuple[list[str], list[str]]] = {}
    refused: set[str] = set()
    default: str | None = None
    current: list[str] | None = None  # the recipe of the rule being read
    for line in source.splitlines():
        if line.startswith("\t"):
            if current is not None and line.strip():
                current.append(line[1:])
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        if _DIRECTIVE.match(stripped):
            raise _Unresolvable
        if re.fullmatch(r"export(\s+[A-Za-z_][\w.-]*)+", stripped.strip()):
            exported += stripped.split()[1:]
            continue
        assign = _ASSIGN.match(stripped)
        if assign:
            name, op, value = assign.groups()
            if stripped.startswith("export"):
                exported.append(name)
            if op == "!=":
                variables[name] = None
            elif op == "?=":
                variables.setdefault(name, value)
            elif op == "+=":
                before = variables.get(name, "")
                variables[name] = None if before is None else f"{before} {value}".strip()
            else:
                variables[name] = value
            current = None
            continue
        rule = _RULE.match(stripped)
        if rule is None:
            raise _Unresolvable
        names, colons, rest = rule.groups()
        recipe_inline = None
        if ";" in rest:
            rest, recipe_inline = rest.split(";", 1)
        heads = names.split()
        recipe: list[str] = [recipe_inline.strip()] if recipe_inline else []
        current = recipe
        if colons == "::" or "=" in rest or any("%" in h for h in heads):
            refused.update(heads)
            continue
        prerequisites = [p for p in rest.replace("|", " ").split()]
        for head in heads:
            if head.startswith("."):
                continue  # .PHONY, .DEFAULT_GOAL …: no recipe that a check would run
            if head in rules and (rules[head][1] or recipe):
                refused.add(head)
            old = rules.get(head, ([], []))
            rules[head] = (old[0] + prerequisites, old[1] or recipe)
            if default is None:
                default = head
    return _Makefile(variables, exported, rules, refused, default)


def _make_target(
    parsed: _Makefile, target: str, folder: str, files: Files, done: set[str], *, depth: int
) -> list[_Unit]:
    if target in done:
        return []
    if depth > _MAX_DEPTH or target in parsed.refused:
        raise _Unresolvable
    if target not in parsed.rules:
        if _join(folder, target) in files.names:
            return []  # a file prerequisite the project has
        raise _Unresolvable
    done.add(target)
    prerequisites, recipe = parsed.rules[target]
    units: list[_Unit] = []
    for prerequisite in prerequisites:
        name = _expand(prerequisite, parsed, target)
        units += _make_target(parsed, name, folder, files, done, depth=depth + 1)
    for line in recipe:
        line = line.strip()
        while line[:1] in ("@", "+"):
            line = line[1:].lstrip()
        if line.startswith("-"):
            raise _Unresolvable  # errors ignored: the check's status would not be the recipe's
        # make runs each recipe line in a shell of its own, started in make's folder.
        units.append(_Unit(folder, _expand(line, parsed, target)))
    return units


def _expand(text_: str, parsed: _Makefile, target: str, depth: int = 0) -> str:
    if depth > 10:
        raise _Unresolvable
    out: list[str] = []
    i = 0
    while i < len(text_):
        c = text_[i]
        if c != "$":
            out.append(c)
            i += 1
            continue
        nxt = text_[i + 1 : i + 2]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "@":
            out.append(target)
            i += 2
        elif nxt in ("(", "{"):
            close = ")" if nxt == "(" else "}"
            end = text_.find(close, i + 2)
            name = text_[i + 2 : end] if end > 0 else ""
            if end < 0 or not re.fullmatch(r"[A-Za-z_][\w.-]*", name):
                raise _Unresolvable  # functions ($(shell …), $(wildcard …)), nested references
            value = parsed.variables.get(name)
            if value is None:
                raise _Unresolvable  # $(MAKE), $(CURDIR), the environment's, the shell's
            out.append(_expand(value, parsed, target, depth + 1))
            i = end + 1
        else:
            raise _Unresolvable  # $<, $^, $*, $X
    return "".join(out)
