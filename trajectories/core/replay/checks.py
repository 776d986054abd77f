"""Recognising checks (tests, builds, linters, type checkers) and source rewriters in a command.

``recognise`` looks at one simple command with its wrappers removed (see ``programs.unwrap``)
and says what kind of check it is, for which language and by which runner. ``rewrites`` says
whether a command rewrites sources (formatters, ``--fix``, snapshot updates) and where.

Script runners (npm/yarn/pnpm/bun scripts, make/just/mise/task targets) are judged by the script
name, because the script body is not in the trajectory: ``npm run check`` is a lint-style check,
``npm run build`` a build, ``npm run format`` a rewriter, ``npm run dev`` neither.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from typing import Literal

from .model import CheckKind
from .programs import NODE_PACKAGE_MANAGERS, basename, python_module, unwrap

Role = Literal["test", "typecheck", "build", "lint", "format"]


@dataclass(frozen=True, slots=True)
class CheckSpec:
    kind: CheckKind
    language: str | None
    runner: str
    target: str | None = None
    chdir: str | None = None  # `make -C dir`, `npm --prefix dir`, `go -C dir`: runs there


# Builtin subcommands of package managers: `yarn install` is not the script "install".
_PM_BUILTINS = {
    "install",
    "i",
    "ci",
    "add",
    "remove",
    "rm",
    "uninstall",
    "un",
    "update",
    "up",
    "upgrade",
    "outdated",
    "ls",
    "list",
    "why",
    "info",
    "view",
    "init",
    "create",
    "link",
    "unlink",
    "publish",
    "pack",
    "audit",
    "config",
    "set",
    "get",
    "cache",
    "dedupe",
    "prune",
    "exec",
    "dlx",
    "x",
    "help",
    "version",
    "login",
    "logout",
    "whoami",
    "store",
    "workspace",
    "workspaces",
    "global",
    "env",
    "doctor",
    "start",
    "restart",
    "stop",
}


def _words(*words: str) -> re.Pattern[str]:
    """Matches a script name containing one of ``words`` as a whole ``:``/``-``/``_`` part."""
    return re.compile(r"(^|[:_-])(" + "|".join(words) + r")($|[:_-])")


# First match wins: `test:types` is a test script, `lint:fix` a rewriter.
_SCRIPT_ROLES: tuple[tuple[re.Pattern[str], Role], ...] = (
    (_words("fmt", "format", "prettier", "fix", "autofix"), "format"),
    (
        _words("tests?", "spec", "specs", "e2e", "unit", "integration", "coverage", "cov", "ci"),
        "test",
    ),
    (
        _words("typecheck", "type-check", "types", "tsc", "check-types", "typings", "mypy"),
        "typecheck",
    ),
    (_words("pyright"), "typecheck"),
    (_words("build", "compile", "bundle", "dist"), "build"),
    (
        _words("lint", "linter", "eslint", "check", "checks", "verify", "validate", "style", "vet"),
        "lint",
    ),
)
_ROLE_KIND = {
    "test": CheckKind.TEST,
    "typecheck": CheckKind.TYPECHECK,
    "build": CheckKind.BUILD,
    "lint": CheckKind.LINT,
}


def script_role(name: str) -> Role | None:
    """What a package.json script / make target named ``name`` most likely does."""
    lowered = name.lower()
    if lowered in ("all", ""):
        return "build"
    for pattern, role in _SCRIPT_ROLES:
        if pattern.search(lowered):
            return role
    return None


@dataclass(frozen=True, slots=True)
class ScriptCall:
    runner: str  # npm, pnpm, yarn, bun, make, just, mise, task
    name: str  # the script or target ("" for make's default target)
    chdir: str | None = None


def script_call(argv: list[str]) -> ScriptCall | None:
    """The project script or task a command runs (`npm run check`, `mise run test`, `make`).

    None for anything else, including package-manager builtins such as `npm install`.
    """
    args, chdir = _split_chdir(unwrap(argv))
    found = _script(args)
    if found is None or (found[0] in NODE_PACKAGE_MANAGERS and found[1] in _PM_BUILTINS):
        return None
    return ScriptCall(found[0], found[1], chdir)


def _script(argv: list[str]) -> tuple[str, str] | None:
    """(runner, script name) for `npm test`, `npm run x`, `yarn x`, `make x`, `mise run x`."""
    if not argv:
        return None
    runner = basename(argv[0])
    rest = [a for a in argv[1:] if not a.startswith("-")]
    if runner in NODE_PACKAGE_MANAGERS:
        args = argv[1:]
        while args and args[0].startswith("-"):
            args = args[2:] if args[0] in ("--filter", "-w", "--workspace") else args[1:]
        if not args:
            return (runner, "install") if runner in ("yarn", "bun", "pnpm") else None
        sub = args[0]
        if sub in ("run", "run-script", "rum", "urn"):
            named = [a for a in args[1:] if not a.startswith("-")]
            return (runner, named[0]) if named else None
        if sub in ("test", "t", "tst"):
            return runner, "test"
        # Anything else is either a builtin (`npm install`) or, for yarn/pnpm/bun, a script
        # run by name (`yarn lint`); callers tell the two apart with _PM_BUILTINS.
        return runner, sub
    if runner in ("make", "gmake"):
        targets = _make_targets(argv[1:])
        return runner, targets[0] if targets else ""
    if runner == "just" or runner == "task":
        return runner, rest[0] if rest else ""
    if runner == "mise":
        if rest[:1] in (["run"], ["r"]) and len(rest) > 1:
            return runner, rest[1]
        if rest[:2] == ["tasks", "run"] and len(rest) > 2:
            return runner, rest[2]
        if rest and rest[0] not in _MISE_COMMANDS:
            return runner, rest[0]  # `mise test`: a task name where no mise command has it
        return None
    return None


# mise's own commands (and their short forms), which `mise NAME` runs instead of a task NAME.
_MISE_COMMANDS = frozenset(
    """
    activate alias backends bin-paths bootstrap cache completion config deactivate doctor dr
    edit en env e exec x fmt generate g global hook-env hook-not-found implode install i
    install-into latest link ln local lock ls list ls-remote mcp outdated plugins p prune
    registry reshim run r search self-update set settings shell sh sync tasks t tool tool-stub
    test-tool trust uninstall unset unuse upgrade up usage use u version v watch w where which
    help
    """.split()
)


def _make_targets(args: list[str]) -> list[str]:
    """make's targets: operands that are not option values or VAR=value assignments."""
    targets = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-f", "--file", "--makefile", "-o", "-W", "-I", "--include-dir"):
            i += 2
            continue
        if arg in ("-j", "-l") and i + 1 < len(args) and args[i + 1].isdigit():
            i += 2
            continue
        if not arg.startswith("-") and "=" not in arg:
            targets.append(arg)
        i += 1
    return targets


# Options that make a runner work in another directory, per runner.
_CHDIR_FLAGS = {
    "make": ("-C", "--directory"),
    "gmake": ("-C", "--directory"),
    "npm": ("--prefix", "-C"),
    "pnpm": ("-C", "--dir"),
    "yarn": ("--cwd",),
    "bun": ("--cwd",),
    "go": ("-C",),
    "just": ("-d", "--working-directory"),
    "mise": ("-C", "--cd"),
    "task": ("-d", "--dir"),
}


def _split_chdir(args: list[str]) -> tuple[list[str], str | None]:
    """Remove directory-changing options from a runner's arguments; return them joined."""
    flags = _CHDIR_FLAGS.get(basename(args[0])) if args else None
    if not flags:
        return args, None
    kept = [args[0]]
    chdir: str | None = None
    i = 1
    while i < len(args):
        arg, value = args[i], None
        if arg in flags and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        elif "=" in arg and arg.split("=", 1)[0] in flags:
            value = arg.split("=", 1)[1]
        elif "-C" in flags and arg.startswith("-C") and len(arg) > 2:
            value = arg[2:]
        else:
            kept.append(arg)
        if value is not None:
            chdir = posixpath.join(chdir, value) if chdir else value
        i += 1
    return kept, chdir


_PY_TEST_MODULES = {"pytest", "unittest", "doctest", "nose", "nose2", "tox", "nox", "xdist"}
_PY_TYPECHECK = {"mypy", "pyright", "basedpyright", "pytype", "pyre", "ty"}
_PY_LINT = {"flake8", "pylint", "pycodestyle", "pyflakes", "bandit", "pydocstyle", "vulture"}
_NODE_TEST = {"vitest", "jest", "mocha", "ava", "tap", "karma", "cypress", "playwright", "uvu"}
_NODE_BUILD = {"webpack", "rollup", "esbuild", "tsup", "vite", "next", "parcel", "turbo", "nx"}
_NODE_LINT = {"eslint", "oxlint", "stylelint", "knip", "tslint", "standard", "xo"}


def recognise(argv: list[str]) -> CheckSpec | None:
    """The check a simple command runs, if it runs one."""
    args, chdir = _split_chdir(unwrap(argv))
    spec = _recognise(args) if args else None
    if spec is not None and chdir is not None:
        spec = replace(spec, chdir=chdir)
    return spec


def _recognise(args: list[str]) -> CheckSpec | None:
    name = basename(args[0])
    rest = args[1:]
    sub = rest[0] if rest else ""

    module = python_module(args)
    if module is not None:
        mod, mod_args = module
        return _python_tool(mod.split(".")[0], mod_args)
    if name in ("python", "py"):
        script = next((a for a in rest if not a.startswith("-")), "")
        stem = script.rsplit("/", 1)[-1]
        if stem in ("setup.py",) and "test" in rest:
            return CheckSpec(CheckKind.TEST, "python", "setuptools")
        if stem == "manage.py" and "test" in rest:
            return CheckSpec(CheckKind.TEST, "python", "django")
        if re.match(r"^(test_.*|.*_test|runtests|run_tests|tests)\.py$", stem):
            return CheckSpec(CheckKind.TEST, "python", "python")
        return None
    if name in ("pytest", "py.test") or name in _PY_TEST_MODULES or name in _PY_TYPECHECK:
        return _python_tool(name, rest)
    if name in _PY_LINT or name in ("ruff", "black", "isort"):
        return _python_tool(name, rest)

    if name == "node":
        if "--test" in rest:
            return CheckSpec(CheckKind.TEST, "node", "node")
        script = next((a for a in rest if not a.startswith("-")), "")
        if re.search(r"\.(test|spec)\.[cm]?[jt]sx?$", script):
            return CheckSpec(CheckKind.TEST, "node", "node")
        return None
    if name == "deno" and sub in ("test", "check", "lint"):
        kind = {"test": CheckKind.TEST, "check": CheckKind.TYPECHECK, "lint": CheckKind.LINT}[sub]
        return CheckSpec(kind, "node", "deno")
    if name in _NODE_TEST:
        if name == "playwright" and sub != "test":
            return None
        if name == "cypress" and sub != "run":
            return None
        if name == "vitest" and sub in ("dev", "watch", "init"):
            return None
        return CheckSpec(CheckKind.TEST, "node", name)
    if name in ("tsc", "vue-tsc", "tsgo"):
        if {"-b", "--build"} & set(rest):
            return CheckSpec(CheckKind.BUILD, "node", name)
        return CheckSpec(CheckKind.TYPECHECK, "node", name)
    if name in _NODE_LINT:
        return CheckSpec(CheckKind.LINT, "node", name)
    if name == "prettier" and {"--check", "-c", "--list-different", "-l"} & set(rest):
        return CheckSpec(CheckKind.LINT, "node", name)
    if name == "biome" and sub in ("check", "lint", "ci", "format"):
        return CheckSpec(CheckKind.LINT, "node", name)
    if name in _NODE_BUILD:
        if name in ("vite", "next", "nx", "turbo") and "build" not in rest:
            return None
        return CheckSpec(CheckKind.BUILD, "node", name)

    if name == "go":
        return {
            "test": CheckSpec(CheckKind.TEST, "go", "go"),
            "build": CheckSpec(CheckKind.BUILD, "go", "go"),
            "vet": CheckSpec(CheckKind.LINT, "go", "go"),
        }.get(sub)
    if name in ("golangci-lint", "staticcheck", "revive", "golint"):
        return CheckSpec(CheckKind.LINT, "go", name)
    if name == "gofmt" and "-l" in rest and "-w" not in rest:
        return CheckSpec(CheckKind.LINT, "go", name)
    if name == "gotestsum":
        return CheckSpec(CheckKind.TEST, "go", name)

    if name == "cargo":
        if sub == "fmt":
            return CheckSpec(CheckKind.LINT, "rust", "cargo") if "--check" in rest else None
        return {
            "test": CheckSpec(CheckKind.TEST, "rust", "cargo"),
            "nextest": CheckSpec(CheckKind.TEST, "rust", "cargo"),
            "build": CheckSpec(CheckKind.BUILD, "rust", "cargo"),
            "check": CheckSpec(CheckKind.TYPECHECK, "rust", "cargo"),
            "clippy": CheckSpec(CheckKind.LINT, "rust", "cargo"),
        }.get(sub)

    other = _other_ecosystems(name, rest)
    if other is not None:
        return other

    called = _script(args)
    if called is not None:
        runner, target = called
        role = script_role(target)
        if runner in NODE_PACKAGE_MANAGERS and target in _PM_BUILTINS:
            return None
        if role is None or role == "format":
            return None
        language = "node" if runner in NODE_PACKAGE_MANAGERS else None
        if runner in ("make", "gmake") and target == "check":  # GNU convention: runs the tests
            return CheckSpec(CheckKind.TEST, language, runner, target)
        return CheckSpec(_ROLE_KIND[role], language, runner, target or None)

    if re.match(r"^(\./)?([\w./-]*/)?(run[_-]?)?tests?(\.sh)?$", args[0]) and args[0] not in (
        "test",
        "tests",
    ):
        return CheckSpec(CheckKind.TEST, None, "script")
    if name in ("bash", "sh", "zsh") and rest:
        script_name = rest[0].rsplit("/", 1)[-1]
        if re.match(r"^(run[_-]?)?tests?\.sh$", script_name):
            return CheckSpec(CheckKind.TEST, None, "script")
    return None


def _python_tool(name: str, rest: list[str]) -> CheckSpec | None:
    if name in ("pytest", "py.test", "xdist"):
        return CheckSpec(CheckKind.TEST, "python", "pytest")
    if name in _PY_TEST_MODULES:
        return CheckSpec(CheckKind.TEST, "python", name)
    if name in _PY_TYPECHECK:
        return CheckSpec(CheckKind.TYPECHECK, "python", name)
    if name in _PY_LINT:
        return CheckSpec(CheckKind.LINT, "python", name)
    if name == "ruff":
        sub = rest[0] if rest else ""
        if sub == "format":
            return CheckSpec(CheckKind.LINT, "python", "ruff") if "--check" in rest else None
        if sub in ("check", "") or sub.startswith("-") or "/" in sub or sub == ".":
            return CheckSpec(CheckKind.LINT, "python", "ruff")
        return None
    if name in ("black", "isort"):
        if {"--check", "--check-only", "--diff"} & set(rest):
            return CheckSpec(CheckKind.LINT, "python", name)
        return None
    if name == "compileall" or name == "py_compile":
        return CheckSpec(CheckKind.BUILD, "python", name)
    return None


def _other_ecosystems(name: str, rest: list[str]) -> CheckSpec | None:
    sub = rest[0] if rest else ""
    if name in ("mvn", "mvnw", "./mvnw", "gradle", "gradlew", "./gradlew"):
        goals = set(rest)
        if goals & {"test", "verify", "check"}:
            return CheckSpec(CheckKind.TEST, "java", name.lstrip("./"))
        if goals & {"compile", "package", "build", "assemble", "install"}:
            return CheckSpec(CheckKind.BUILD, "java", name.lstrip("./"))
        return None
    if name == "dotnet" and sub in ("test", "build"):
        kind = CheckKind.TEST if sub == "test" else CheckKind.BUILD
        return CheckSpec(kind, "dotnet", "dotnet")
    if name in ("rspec", "minitest"):
        return CheckSpec(CheckKind.TEST, "ruby", name)
    if name == "rake" and sub in ("test", "spec"):
        return CheckSpec(CheckKind.TEST, "ruby", "rake")
    if name == "rubocop":
        return CheckSpec(CheckKind.LINT, "ruby", name) if "-a" not in rest else None
    if name in ("phpunit", "pest"):
        return CheckSpec(CheckKind.TEST, "php", name)
    if name == "mix" and sub == "test":
        return CheckSpec(CheckKind.TEST, "elixir", "mix")
    if name == "swift" and sub in ("test", "build"):
        kind = CheckKind.TEST if sub == "test" else CheckKind.BUILD
        return CheckSpec(kind, "swift", "swift")
    if name == "ctest":
        return CheckSpec(CheckKind.TEST, "c", "ctest")
    if name == "cmake" and "--build" in rest:
        return CheckSpec(CheckKind.BUILD, "c", "cmake")
    if name == "zig" and sub in ("test", "build"):
        kind = CheckKind.TEST if sub == "test" or "test" in rest else CheckKind.BUILD
        return CheckSpec(kind, "zig", "zig")
    if name == "shellcheck":
        return CheckSpec(CheckKind.LINT, "shell", name)
    if name == "bats":
        return CheckSpec(CheckKind.TEST, "shell", name)
    return None


# -- rewriting sources -------------------------------------------------------------------------

_FIX_FLAGS = {"--fix", "--write", "-w", "--apply", "--apply-unsafe", "--fix-only", "--unsafe-fixes"}
_SNAPSHOT_FLAGS = {"-u", "--update", "--updateSnapshot", "--update-snapshots", "--snapshot-update"}


def rewrites(argv: list[str]) -> list[str] | None:
    """The paths a formatter/fixer rewrites ([] = the working directory); None when it doesn't.

    Running a check does not rewrite sources, with these exceptions: formatters, linters asked
    to fix (``--fix``/``--write``), snapshot updates (``-u``) and ``fmt``/``format``/``fix``
    scripts.
    """
    args = unwrap(argv)
    if not args:
        return None
    name = basename(args[0])
    module = python_module(args)
    if module is not None:
        name, rest = module[0], module[1]
    else:
        rest = args[1:]
    flags = {a.split("=", 1)[0] for a in rest if a.startswith("-")}
    operands = [a for a in rest if not a.startswith("-")]
    sub = operands[0] if operands else ""

    def targets(skip: int = 0) -> list[str]:
        paths = operands[skip:]
        return [p for p in paths if p not in (".", "./...", "./")] if paths else []

    if name in ("black", "isort", "autopep8", "yapf", "autoflake", "pyupgrade", "docformatter"):
        if name in ("black", "isort") and flags & {"--check", "--check-only", "--diff"}:
            return None
        if name in ("autopep8", "yapf", "autoflake") and not flags & {"-i", "--in-place"}:
            return None
        return targets()
    if name == "ruff":
        if sub == "format":
            return None if "--check" in flags or "--diff" in flags else targets(1)
        if flags & {"--fix", "--unsafe-fixes", "--fix-only"} and "--no-fix" not in flags:
            return targets(1 if sub == "check" else 0)
        return None
    if name in ("prettier", "eslint", "biome", "standard", "xo", "stylelint", "oxlint", "dprint"):
        if name == "dprint" and sub == "fmt":
            return targets(1)
        if flags & _FIX_FLAGS:
            return targets(1 if name == "biome" else 0)
        if name == "biome" and sub == "format" and "--write" in flags:
            return targets(1)
        return None
    if name in ("gofmt", "goimports", "rustfmt", "clang-format", "shfmt", "stylua"):
        if name in ("gofmt", "goimports", "shfmt", "clang-format") and not flags & {"-w", "-i"}:
            return None
        return targets()
    if name == "go" and sub == "fmt":
        return targets(1)
    if name == "cargo" and sub in ("fmt", "fix", "clippy"):
        if sub == "fmt" and "--check" in flags:
            return None
        if sub == "clippy" and "--fix" not in flags:
            return None
        return []
    if name == "rubocop" and flags & {"-a", "-A", "--autocorrect", "--autocorrect-all"}:
        return targets()
    if name in ("jest", "vitest", "playwright") and flags & _SNAPSHOT_FLAGS:
        return []
    if name in ("pytest", "py.test") and "--snapshot-update" in flags:
        return []
    if name == "go" and sub == "test" and any(a.startswith("-update") for a in rest):
        return []
    if name == "pre-commit" or name == "lint-staged":
        return []
    return None
