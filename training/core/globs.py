"""Path globs for behaviour specs: ``src/**/*.py``, ``tests/**``, ``*.pem``, ``{a,b}.txt``.

``fnmatch`` lets ``*`` cross ``/`` and knows neither ``**`` nor braces, and ``glob.translate``
and ``PurePath.full_match`` arrive only in Python 3.13, so the translation is written here once.

- ``*`` and ``?`` stay inside one path segment; ``[...]`` is a character class.
- ``**`` as a whole segment matches any number of segments (none included).
- ``{a,b}`` matches either alternative (no nesting).
- A pattern without ``/`` matches a file name in any folder, as in ``.gitignore``: ``.env``
  matches ``config/.env``. A pattern with ``/`` is anchored at the start of the path.

Paths inside the project are root-relative keys (``src/app.py``); paths outside it are
absolute (``/etc/passwd``) or start with ``~``. A pattern matches whichever form it is given.

>>> glob_match("src/**/*.py", "src/app/models.py")
True
>>> glob_match("*.py", "src/app.py"), glob_match("src/*.py", "src/app/models.py")
(True, False)
"""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    anchored = "/" in pattern.rstrip("/")
    body = _translate(pattern.rstrip("/") or pattern)
    prefix = "" if anchored else r"(?:.*/)?"
    return re.compile(rf"\A{prefix}{body}\Z", re.DOTALL)


def glob_match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def any_match(patterns: tuple[str, ...], path: str) -> bool:
    return compile_any(patterns).match(path) is not None


@functools.lru_cache(maxsize=256)
def compile_any(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One expression for several globs: a path is tested once, not once per pattern."""
    if not patterns:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{compile_glob(p).pattern})" for p in patterns), re.DOTALL)


def _translate(pattern: str) -> str:
    parts = pattern.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # "a/**/b" also matches "a/b"; a trailing "**" matches everything below.
            out.append(r".*" if last else r"(?:[^/]*/)*")
            continue
        out.append(_segment(part) + ("" if last else "/"))
    return "".join(out)


def _segment(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out.append(r"[^/]*")
        elif c == "?":
            out.append(r"[^/]")
        elif c == "[":
            end = part.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                inner = part[i + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            end = part.find("}", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                options = part[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_segment(o) for o in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


_GLOB_CHARS = re.compile(r"[*?\[]")


def has_glob(word: str) -> bool:
    """Whether a shell word holds a pattern bash expands against the files (``*``, ``?``,
    ``[``)."""
    return _GLOB_CHARS.search(word) is not None


def shell_glob_match(pattern: str, path: str) -> bool:
    """Whether bash's pathname expansion of ``pattern`` would produce ``path``.

    Unlike a spec glob: a pattern stays segment for segment (``**`` is ``*`` without
    ``globstar``), and a leading ``.`` is matched only by a leading ``.``: ``~/*`` does not
    reach ``~/.aws``.

    >>> shell_glob_match("~/.aws/*", "~/.aws/credentials"), shell_glob_match("~/*", "~/.env")
    (True, False)
    """
    wanted, given = pattern.rstrip("/").split("/"), path.rstrip("/").split("/")
    if len(wanted) != len(given):
        return False
    for part, name in zip(wanted, given, strict=True):
        if name.startswith(".") and not part.startswith(".") and part != name:
            return False
        if re.fullmatch(_segment(part.replace("**", "*")), name, re.DOTALL) is None:
            return False
    return True
