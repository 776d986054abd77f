"""npm version ranges: whether a version is in a package.json range.

The subset of node-semver's range grammar package.json files use (||, hyphen ranges, ^, ~,
comparators, x-ranges). Written here because node-semver's Python port is not among the
project's dependencies and the lookup needs only "does any cached version satisfy this".
"""

from __future__ import annotations

import re

_Triple = tuple[int, int, int]


def _version(text: str) -> tuple[_Triple, str] | None:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$", text)
    if not match:
        return None
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch)), pre or ""


def _partial(text: str) -> list[int | None]:
    text = text.strip().lstrip("=v").split("+")[0].split("-")[0]
    parts: list[int | None] = []
    for piece in text.split(".")[:3] if text else []:
        parts.append(None if piece in ("x", "X", "*", "") else int(piece))
    while len(parts) < 3:
        parts.append(None)
    return parts


def _floor(parts: list[int | None]) -> _Triple:
    return (parts[0] or 0, parts[1] or 0, parts[2] or 0)


def _bump(parts: list[int | None]) -> _Triple | None:
    """The first version past an x-range: 1 -> 2.0.0, 1.2 -> 1.3.0; None for '*'."""
    major, minor, _ = parts
    if major is None:
        return None
    if minor is None:
        return (major + 1, 0, 0)
    return (major, minor + 1, 0)


Comparator = tuple[str, _Triple]


def _comparators(simple: str) -> list[Comparator]:
    simple = simple.strip()
    if simple in ("", "*", "x", "X", "latest"):
        return []
    if simple.startswith("^"):
        parts = _partial(simple[1:])
        low = _floor(parts)
        major, minor, patch = parts
        if major is None:
            return []
        if major > 0 or minor is None:
            high = (major + 1, 0, 0)
        elif minor > 0 or patch is None:
            high = (0, minor + 1, 0)
        else:
            high = (0, 0, patch + 1)
        return [(">=", low), ("<", high)]
    if simple.startswith("~"):
        parts = _partial(simple.lstrip("~>"))
        if parts[0] is None:
            return []
        high = (parts[0] + 1, 0, 0) if parts[1] is None else (parts[0], parts[1] + 1, 0)
        return [(">=", _floor(parts)), ("<", high)]
    match = re.match(r"^(<=|>=|<|>|=)?\s*(.+)$", simple)
    assert match is not None  # the pattern accepts any non-empty text
    op, rest = match.group(1) or "=", match.group(2)
    parts = _partial(rest)
    complete = None not in parts
    if op == "=":
        if complete:
            return [("=", _floor(parts))]
        bump = _bump(parts)
        return [(">=", _floor(parts))] + ([("<", bump)] if bump else [])
    if complete or op in (">=", "<"):
        return [(op, _floor(parts))]
    bump = _bump(parts)
    if bump is None:
        return [] if op in (">=", "<=") else [("<", (0, 0, 0))]
    return [(">=", bump)] if op == ">" else [("<", bump)]


def _range_sets(spec: str) -> list[list[Comparator]]:
    sets = []
    for alternative in spec.split("||"):
        alternative = alternative.strip()
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alternative)
        if hyphen:
            low, high = _partial(hyphen.group(1)), _partial(hyphen.group(2))
            upper: list[Comparator] = []
            if None not in high:
                upper = [("<=", _floor(high))]
            elif (bump := _bump(high)) is not None:
                upper = [("<", bump)]
            sets.append([(">=", _floor(low)), *upper])
            continue
        # "> = 1.2" is not npm's syntax, but ">= 1.2" is: glue operators to their version.
        words = re.sub(r"([<>]=?|=|\^|~)\s+", r"\1", alternative).split()
        sets.append([c for word in words for c in _comparators(word)])
    return sets


def npm_satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` (x.y.z) is in npm range ``spec``; prereleases only match exactly."""
    parsed = _version(version)
    if parsed is None:
        return False
    triple, pre = parsed
    if pre:
        return spec.strip().lstrip("=v") == version.lstrip("v")
    checks = {
        "=": lambda a, b: a == b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
    }
    try:
        sets = _range_sets(spec)
    except ValueError:
        return False
    return any(all(checks[op](triple, bound) for op, bound in group) for group in sets)
