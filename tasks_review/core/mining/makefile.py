"""``make TARGET`` resolved to the recipe lines it runs, for ``scripts.resolve``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .scriptfiles import MAX_DEPTH, Definition, Files, Unit, Unresolvable, join

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


def make(args: list[str], folder: str, files: Files) -> Definition:
    targets: list[str] = []
    makefile: str | None = None
    i = 1
    while i < len(args):
        arg = args[i]
        if arg in ("-f", "--file", "--makefile") and i + 1 < len(args):
            makefile = join(folder, args[i + 1])
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
            raise Unresolvable  # other options, or variables set on the command line
        targets.append(arg)
        i += 1
    if makefile is None:
        makefile = next((p for n in _MAKEFILES if (p := join(folder, n)) in files.names), None)
    if makefile is None or makefile not in files.names:
        raise Unresolvable
    data = files.read(makefile)
    if data is None:
        raise Unresolvable
    try:
        parsed = _parse_makefile(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise Unresolvable from None
    if not targets:
        if parsed.default is None:
            raise Unresolvable
        targets = [parsed.default]
    units: list[Unit] = []
    done: set[str] = set()
    for target in targets:
        units += _make_target(parsed, target, folder, files, done, depth=0)
    exports = []
    for name in parsed.exported:
        value = parsed.variables.get(name)
        if value is None:
            raise Unresolvable
        exports.append((name, _expand(value, parsed, "")))
    return Definition(units, f"{makefile} target {' '.join(targets)}", tuple(exports))


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
            raise Unresolvable
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
            raise Unresolvable
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
) -> list[Unit]:
    if target in done:
        return []
    if depth > MAX_DEPTH or target in parsed.refused:
        raise Unresolvable
    if target not in parsed.rules:
        if join(folder, target) in files.names:
            return []  # a file prerequisite the project has
        raise Unresolvable
    done.add(target)
    prerequisites, recipe = parsed.rules[target]
    units: list[Unit] = []
    for prerequisite in prerequisites:
        name = _expand(prerequisite, parsed, target)
        units += _make_target(parsed, name, folder, files, done, depth=depth + 1)
    for line in recipe:
        line = line.strip()
        while line[:1] in ("@", "+"):
            line = line[1:].lstrip()
        if line.startswith("-"):
            raise Unresolvable  # errors ignored: the check's status would not be the recipe's
        # make runs each recipe line in a shell of its own, started in make's folder.
        units.append(Unit(folder, _expand(line, parsed, target)))
    return units


def _expand(text_: str, parsed: _Makefile, target: str, depth: int = 0) -> str:
    if depth > 10:
        raise Unresolvable
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
                raise Unresolvable  # functions ($(shell …), $(wildcard …)), nested references
            value = parsed.variables.get(name)
            if value is None:
                raise Unresolvable  # $(MAKE), $(CURDIR), the environment's, the shell's
            out.append(_expand(value, parsed, target, depth + 1))
            i = end + 1
        else:
            raise Unresolvable  # $<, $^, $*, $X
    return "".join(out)
