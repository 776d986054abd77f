"""What a recorded check runs, and which project files the verifier takes from the reference.

``plan_check`` reads the check with the replay's own shell reader and check recogniser
(``trajectories.core.replay``): which test runners it starts (their machine-readable results
must then appear, see ``results``), which programs and Python modules it needs (probed in the
image before anything runs), and which npm scripts it goes through (resolved in the project's
package.json, since ``npm test`` is only as good as its script).

``is_guarded`` names the files an agent's submission may not bring: tests and test
configuration (the miner's own rule), start-up hooks, and the runners' configuration files
that can redirect or silence a run (``.npmrc`` can swap the shell npm runs scripts with).
The verifier replaces each with the reference's copy, or removes it when the reference has none.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from trajectories.core.replay.checks import recognise, script_call
from trajectories.core.replay.programs import basename, python_module, unwrap
from trajectories.core.replay.shell import SimpleCommand, parse

from ..mining import files as rules
from ..mining.files import STRAY_NAMES, is_project_source, is_test_config, is_test_file
from .kit.judging import CARGO_TEST, GO_TEST, NODE_TEST, PYTEST, UNITTEST, cargo_per_test

NODE_SCRIPT_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun"})
# Runner configuration beyond the miner's test-config names: files that change which tests
# run, how they report, or what program runs them.
RUNNER_CONFIG_NAMES = frozenset(
    {
        *STRAY_NAMES,
        # Every name pytest reads its configuration from (_pytest/config/findpaths.py:
        # pytest 8 adds .pytest.ini, pytest 9 pytest.toml and .pytest.toml).
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        ".coveragerc",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        "bunfig.toml",
        ".node-version",
        ".nvmrc",
        # Cargo's manifest decides which test targets exist and whether libtest runs them.
        "Cargo.toml",
    }
)
# Folders whose every file is runner configuration: Cargo's (a test runner, environment,
# target folder or rustc wrapper of the agent's choosing).
RUNNER_CONFIG_DIRS = frozenset({".cargo"})
_PTH = re.compile(r"\.pth$")
# Standard-library modules need no probe; anything else run with -m must be importable.
_STDLIB_MODULES = frozenset({"unittest", "doctest", "compileall", "py_compile", "json.tool"})
_SHELL_WORDS = frozenset(
    {"cd", "test", "[", "[[", "echo", "printf", "true", "false", ":", "exit", "export", "set"}
)
_MAX_SCRIPT_DEPTH = 3


@dataclass(frozen=True, slots=True)
class Requirement:
    """A program or Python module the check needs, and the folder it is looked up from."""

    kind: str  # "program" or "module"
    name: str
    cwd: str  # relative to the project
    python: str = "python3"  # the interpreter a module is imported with


@dataclass(frozen=True, slots=True)
class GradingPlan:
    structured: frozenset[str]  # runner kinds whose results must appear (unittest, ...)
    requirements: tuple[Requirement, ...] = ()
    scripts: tuple[str, ...] = ()  # package scripts the check goes through ("npm test")
    notes: tuple[str, ...] = ()

    @property
    def mode(self) -> str:
        """``structured`` when results are parsed; ``exit_code`` when the check has none."""
        return "structured" if self.structured else "exit_code"


def is_guarded(path: str) -> bool:
    """A file the verifier always takes from the reference (or removes)."""
    name = posixpath.basename(path)
    return (
        is_test_file(path)
        or is_test_config(path)
        or name in RUNNER_CONFIG_NAMES
        or bool(set(path.split("/")[:-1]) & RUNNER_CONFIG_DIRS)
        or bool(_PTH.search(name))
    )


# File names the supported runners pick up as test files by default: unittest's discovery
# (``test*.py``), pytest's (``test_*.py``, ``*_test.py``) and node's test runner
# (``test.js``, ``test-*.js``, ``*.test.js``, ``*-test.js``, ``*_test.js``, also .cjs/.mjs).
DISCOVERED = (
    r"^test.*\.py$",
    r"^.*_test\.py$",
    r"^test\.[cm]?js$",
    r"^test-.+\.[cm]?js$",
    r"^.+[._-]test\.[cm]?js$",
)


def discovery_patterns(command: str = "") -> list[str]:
    """``DISCOVERED`` plus the pattern a ``unittest discover -p PATTERN`` in the check names."""
    patterns = list(DISCOVERED)
    for match in re.finditer(r"(?:^|\s)(?:-p|--pattern)[ =](\S+)", command):
        patterns.append(fnmatch.translate(match.group(1).strip("'\"")))
    return patterns


def is_discovered(path: str, command: str = "") -> bool:
    """A file some supported runner would run as a test file (the grader removes such files the
    reference lacks, and takes the reference's own from grading.json)."""
    name = posixpath.basename(path)
    return any(re.match(p, name) for p in discovery_patterns(command))


def guard_rules(command: str = "") -> dict[str, object]:
    """``is_guarded``, ``is_discovered`` and the project/dependency split as data, for the
    task's own grader.

    ``kit/grade.py`` runs inside the verifier with only the standard library; it rebuilds the
    same predicates from these names and patterns (a test checks they agree).
    """
    return {
        "test_dirs": sorted(rules._TEST_DIRS),
        "test_file": rules._TEST_FILE.pattern,
        "config_names": sorted(rules.TEST_CONFIG_NAMES | RUNNER_CONFIG_NAMES),
        "config_dirs": sorted(RUNNER_CONFIG_DIRS),
        "config": rules._TEST_CONFIG.pattern,
        "hook": _PTH.pattern,
        "vcs_dirs": sorted(rules.VCS_DIRS),
        "dependency_dirs": sorted(rules.DEPENDENCY_DIRS),
        "discovered": discovery_patterns(command),
    }


def test_files(files: Mapping[str, object]) -> list[str]:
    """The project's test files (not configuration), for the controls to tamper with."""
    return sorted(p for p in files if is_test_file(p) and is_project_source(p))


def plan_check(command: str, workdir: str, files: Mapping[str, bytes]) -> GradingPlan:
    """How to grade ``command`` started in ``workdir`` (relative) over project ``files``."""
    walker = _Walker(files)
    walker.walk(command, workdir, depth=0)
    return GradingPlan(
        structured=frozenset(walker.structured),
        requirements=tuple(dict.fromkeys(walker.requirements)),
        scripts=tuple(dict.fromkeys(walker.scripts)),
        notes=tuple(walker.notes),
    )


class _Walker:
    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = files
        self.structured: set[str] = set()
        self.requirements: list[Requirement] = []
        self.scripts: list[str] = []
        self.notes: list[str] = []

    def walk(self, script: str, cwd: str, depth: int) -> None:
        for item in parse(script):
            if not isinstance(item, SimpleCommand) or not item.argv or item.opaque:
                continue
            if not item.argv[0].literal:
                self.notes.append(f"program not literal: {item.argv[0].raw}")
                continue
            args = unwrap(item.args)
            if not args:
                continue
            if args[0] == "cd":
                cwd = _cd(cwd, args[1:])
                continue
            self.command(args, cwd, depth)

    def command(self, args: list[str], cwd: str, depth: int) -> None:
        program = args[0]
        name = basename(program)
        module = python_module(args)
        if module is not None:
            mod = module[0]
            if mod in (UNITTEST, PYTEST):
                self.structured.add(mod)
            if mod not in _STDLIB_MODULES:
                self.requirements.append(Requirement("module", mod, cwd, python=program))
        spec = recognise(args)
        if spec is not None and spec.runner == PYTEST and module is None:
            self.structured.add(PYTEST)
        if name == "node" and "--test" in args:
            self.structured.add(NODE_TEST)
        if name == "go" and args[1:2] == ["test"]:
            self.structured.add(GO_TEST)
        if name == "cargo" and args[1:2] == ["test"] and cargo_per_test(args[2:]):
            self.structured.add(CARGO_TEST)
        if "/" not in program and program not in _SHELL_WORDS:
            self.requirements.append(Requirement("program", program, cwd))
        call = script_call(args)
        if call is not None and call.runner in NODE_SCRIPT_RUNNERS:
            self.scripts.append(f"{call.runner} {call.name}")
            self.script(
                call.runner, call.name, _cd(cwd, [call.chdir]) if call.chdir else cwd, depth
            )

    def script(self, runner: str, name: str, cwd: str, depth: int) -> None:
        manifest = posixpath.normpath(posixpath.join(cwd, "package.json"))
        try:
            scripts = json.loads(self.files[manifest]).get("scripts") or {}
        except (KeyError, ValueError, AttributeError):
            self.notes.append(f"{runner} {name}: no readable {manifest}")
            return
        body = scripts.get(name) if isinstance(scripts, dict) else None
        if not isinstance(body, str):
            self.notes.append(f"{runner} {name}: {manifest} has no such script")
            return
        if depth >= _MAX_SCRIPT_DEPTH:
            self.notes.append(f"{runner} {name}: scripts nest deeper than {_MAX_SCRIPT_DEPTH}")
            return
        self.walk(body, cwd, depth + 1)


def _cd(cwd: str, args: list[str]) -> str:
    target = next((a for a in args if not a.startswith("-")), "")
    if not target or target.startswith("/") or target.startswith("~"):
        return cwd  # outside the project's tree or home: keep the last known folder
    joined = posixpath.normpath(posixpath.join(cwd, target))
    return "." if joined.startswith("..") else joined


_QUOTED = re.compile(r"""["']([A-Za-z0-9_][A-Za-z0-9_.\-/]{0,120})["']""")
_FILE_NAME = re.compile(r"^[A-Za-z0-9_\-]*[A-Za-z][A-Za-z0-9_\-]*\.[A-Za-z]{1,5}$")


def named_paths(command: str, files: Mapping[str, bytes], limit: int = 20) -> list[str]:
    """Project-relative paths the check or its tests name that the project does not have.

    What an agent that games the check rather than fixing the code would create: a check that
    passes when such a file exists is satisfied by a forged file.
    """
    found: list[str] = []
    texts = [command] + [files[p].decode("utf-8", "replace") for p in test_files(files)]
    words = [w for text in texts for w in _QUOTED.findall(text)]
    words += [w for w in re.split(r"\s+", command) if w]
    folders = {posixpath.dirname(p) for p in files}
    for word in words:
        path = posixpath.normpath(word)
        if path.startswith(("..", "/", "-")) or path in files or path in folders:
            continue
        if "/" not in path and not _FILE_NAME.match(path):
            continue
        if path not in found and is_project_source(path):
            found.append(path)
        if len(found) >= limit:
            break
    return found
