"""A justfile recipe as the plain command lines it runs, for ``scripts.resolve``.

    commands("test: lint\\n    pytest -q\\nlint:\\n    ruff check .\\n", "test")
    # ["ruff check .", "pytest -q"]

What resolves: recipes without parameters whose body lines are commands (``@`` quiet lines
included), their dependencies (each once, first), ``name := "value"`` variables and
``{{name}}`` interpolations of them, aliases, and the harmless attributes (``[private]``,
``[doc]``, ``[group]``). Everything that makes the line depend on just itself is refused:
another shell than sh or bash, exported or dotenv variables, positional arguments, imports and
modules, backticks and other expressions, shebang recipes, ``-`` (ignore errors) lines,
platform attributes, ``[no-cd]``. just's grammar is small enough to read here; no maintained
Python parser of it exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MAX_DEPTH = 6
_HEADER = re.compile(r"^(@?)([A-Za-z_][\w-]*)((?:\s+[^:]*?)?)\s*:(?!=)\s*(.*)$")
_VARIABLE = re.compile(r"""^([A-Za-z_][\w-]*)\s*:=\s*(?:"([^"\\{}`]*)"|'([^'{}`]*)')\s*$""")
_ALIAS = re.compile(r"^alias\s+([A-Za-z_][\w-]*)\s*:=\s*([A-Za-z_][\w-]*)\s*$")
_SET = re.compile(r"^set\s+([\w-]+)(?:\s*:=\s*(.*))?$")
_SHELLS = ('["bash", "-c"]', '["sh", "-c"]', '["bash", "-cu"]', '["bash", "-euc"]')
_HARMLESS_SETTINGS = frozenset({"windows-shell", "windows-powershell", "ignore-comments"})
_HARMLESS_ATTRIBUTES = re.compile(r"^\[(private|doc(\(.*\))?|group\(.*\))(,\s*.*)?\]$")
_INTERPOLATION = re.compile(r"\{\{\s*(.*?)\s*\}\}")


class Unresolvable(Exception):
    """Something in the justfile a plain command line cannot say."""


@dataclass
class _Recipe:
    dependencies: list[str]
    body: list[str] = field(default_factory=list)


@dataclass
class _Justfile:
    recipes: dict[str, _Recipe]
    variables: dict[str, str]
    aliases: dict[str, str]
    first: str | None


def commands(source: str, name: str) -> list[str]:
    """The command lines recipe ``name`` ("" for the default) runs, dependencies first."""
    parsed = _parse(source)
    target = name or ("default" if "default" in parsed.recipes else parsed.first or "")
    lines: list[str] = []
    _run(parsed, parsed.aliases.get(target, target), lines, set(), 0)
    return lines


def _parse(source: str) -> _Justfile:
    recipes: dict[str, _Recipe] = {}
    variables: dict[str, str] = {}
    aliases: dict[str, str] = {}
    first: str | None = None
    current: _Recipe | None = None
    for raw in _joined(source):
        if not raw.strip() or raw.lstrip().startswith("#") and not raw.lstrip().startswith("#!"):
            continue
        if raw[:1] in (" ", "\t"):
            if current is None:
                raise Unresolvable
            line = raw.strip()
            if not current.body and line.startswith("#!"):
                raise Unresolvable  # a shebang recipe is a script in some language
            current.body.append(line)
            continue
        current = None
        line = raw.strip()
        if line.startswith("["):
            if not _HARMLESS_ATTRIBUTES.match(line):
                raise Unresolvable  # [no-cd], [linux], [confirm] …
            continue
        if m := _SET.match(line):
            setting, value = m.group(1), (m.group(2) or "").strip()
            if setting == "shell" and value in _SHELLS or setting in _HARMLESS_SETTINGS:
                continue
            raise Unresolvable  # export, dotenv-load, positional-arguments, fallback …
        if m := _ALIAS.match(line):
            aliases[m.group(1)] = m.group(2)
            continue
        if m := _VARIABLE.match(line):
            variables[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
            continue
        if m := _HEADER.match(line):
            if m.group(3).strip() or "&&" in m.group(4) or "(" in m.group(4):
                raise Unresolvable  # parameters, subsequent or parameterised dependencies
            current = _Recipe(m.group(4).split())
            recipes[m.group(2)] = current
            first = first or m.group(2)
            continue
        raise Unresolvable  # import, mod, export, expressions
    return _Justfile(recipes, variables, aliases, first)


def _joined(source: str) -> list[str]:
    """The lines with backslash continuations joined, as just reads them."""
    lines: list[str] = []
    for line in source.splitlines():
        if lines and lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1] + line.lstrip()
        else:
            lines.append(line)
    return lines


def _run(parsed: _Justfile, name: str, lines: list[str], done: set[str], depth: int) -> None:
    if name in done:
        return
    recipe = parsed.recipes.get(name)
    if recipe is None or depth > _MAX_DEPTH:
        raise Unresolvable
    done.add(name)
    for dependency in recipe.dependencies:
        _run(parsed, parsed.aliases.get(dependency, dependency), lines, done, depth + 1)
    for line in recipe.body:
        line = line.lstrip("@").lstrip()
        if line.startswith("-") or "`" in line:
            raise Unresolvable  # errors ignored, or a command substitution of just's
        lines.append(_INTERPOLATION.sub(lambda m: _value(parsed, m.group(1)), line))


def _value(parsed: _Justfile, expression: str) -> str:
    if expression not in parsed.variables:
        raise Unresolvable  # a function call, a parameter, a conditional …
    return parsed.variables[expression]
