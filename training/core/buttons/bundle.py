"""Our own modules, embedded in one standalone script: the hooks decide with the host's code.

>>> b = bundle(["training.core.globs"])
>>> sorted(b.sources), sorted(b.packages)
(['training.core.globs'], ['training', 'training.core'])
>>> namespace: dict = {}
>>> exec(b.render() + "\\ninstall()\\nfrom training.core.globs import glob_match", namespace)
>>> namespace["glob_match"]("tests/**", "tests/unit/test_a.py")
True

A generated hook must run with nothing but ``python3`` (3.11 or newer, standard library only),
yet decide by exactly the rules ``training.core.forbidden`` scores trajectories with. Copying
those rules by hand into the script would let the two drift apart, so the script carries the
project's own source instead, the way ``tasks_review/core/trials/kit/judging.py`` is shipped
inside every task:

- a module whose imports are all standard library (or other bundled modules) goes in whole,
  verbatim: the shell reader, the effect walker, paths, globs;
- a module that also imports what the script cannot carry (``spec`` needs jsonschema, ``facts``
  the whole replay) is **extracted**: only the top-level definitions asked for, plus those they
  refer to at run time, each copied verbatim from the file, with the imports they use. Names
  used only in annotations do not count: every extracted module must start with ``from
  __future__ import annotations``, so annotations are never evaluated.

Anything else an embedded module imports (a third-party package, a name from a package whose
``__init__`` cannot be carried) raises ``BundleError`` here, at generation time, rather than
``ImportError`` inside someone's session. ``render()`` gives Python source defining
``install()``, which puts a finder first on ``sys.meta_path`` serving the embedded modules
under their own names, so their imports, relative or absolute, resolve among themselves.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# Each name is one of ours, stored in the project's source tree; nothing else is ever read.
_OURS = ("trajectories", "tasks_review", "training")


# The forbidden-action catalogue is a package: a script that carries it extracts each of its
# modules, as it extracts the package itself, to what the detectors use.
FORBIDDEN_MODULES = tuple(
    f"training.core.forbidden.{name}"
    for name in (
        "common",
        "credentials",
        "deletes",
        "downloads",
        "edits",
        "installs",
        "push",
        "tampering",
    )
)


class BundleError(ValueError):
    """A module cannot be embedded: the message names the module and the import at fault."""


@dataclass(frozen=True, slots=True)
class Bundle:
    sources: Mapping[str, str]  # module name → source, in name order
    packages: frozenset[str]  # names that are packages (real ones, or empty parents)

    def render(self) -> str:
        """Python source defining ``install()`` and the embedded modules' text."""
        entries = "\n".join(
            f"    {name!r}: {_literal(source)}," for name, source in self.sources.items()
        )
        return (
            _LOADER.replace("__PACKAGES__", repr(sorted(self.packages)))
            + "\n\n# traj2env's own modules, embedded verbatim (or reduced to the definitions the"
            + "\n# hook uses): regenerate the hook rather than editing them here.\n"
            + f"_SOURCES = {{\n{entries}\n}}\n"
        )


def bundle(roots: Iterable[str], *, extract: Mapping[str, Iterable[str]] | None = None) -> Bundle:
    """Embed ``roots`` whole with what they import; ``extract`` maps module → names to reduce to.

    A module named in ``extract`` is always reduced, to those names plus whatever the embedded
    code imports from it.
    """
    wanted: dict[str, set[str]] = {name: set(names) for name, names in (extract or {}).items()}
    whole: set[str] = set()
    queue = list(roots)
    queue.extend(wanted)
    done_extracts: dict[str, frozenset[str]] = {}
    sources: dict[str, str] = {}
    while queue:
        module = queue.pop()
        if module in wanted:
            names = frozenset(wanted[module])
            if done_extracts.get(module) == names:
                continue
            source, needs = _extract(module, names)
            done_extracts[module] = names
        else:
            if module in whole:
                continue
            whole.add(module)
            source, needs = _whole(module)
        sources[module] = source
        for target, name in needs:
            if target in wanted:
                if name is None:
                    raise BundleError(f"{module} imports all of {target}, which is extracted")
                if name not in wanted[target]:
                    wanted[target].add(name)
                    queue.append(target)
            else:
                queue.append(target)
    packages = {name for name in sources if _is_package(name)}
    for name in sources:
        parts = name.split(".")
        packages.update(".".join(parts[:i]) for i in range(1, len(parts)))
    # Parents not embedded themselves are served empty: the import machinery needs them as
    # packages, and no embedded module takes a name from their __init__ (_resolve saw to it).
    return Bundle(dict(sorted(sources.items())), frozenset(packages))


Need = tuple[str, str | None]  # (module, name imported from it) or (module, None): all of it


def _whole(module: str) -> tuple[str, list[Need]]:
    path = _source_path(module)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    needs: list[Need] = []
    for node in _runtime_imports(tree.body):
        needs += _resolve(module, node)
    return source, needs


def _extract(module: str, names: frozenset[str]) -> tuple[str, list[Need]]:
    path = _source_path(module)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    if not any(
        isinstance(n, ast.ImportFrom)
        and n.module == "__future__"
        and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    ):
        raise BundleError(
            f"{module} cannot be extracted: without `from __future__ import annotations` its "
            "annotations are evaluated, and their names would have to be embedded too"
        )
    definitions: dict[str, list[ast.stmt]] = {}
    imported: dict[str, ast.Import | ast.ImportFrom] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                for alias in node.names:
                    imported[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    definitions.setdefault(target.id, []).append(node)
    keep: set[str] = set()
    keep_imports: dict[str, ast.Import | ast.ImportFrom] = {}
    pending = sorted(names)
    while pending:
        name = pending.pop()
        if name in keep or name in keep_imports:
            continue
        if name in definitions:
            keep.add(name)
            for node in definitions[name]:
                pending.extend(sorted(_runtime_names(node) - keep))
        elif name in imported:
            keep_imports[name] = imported[name]
        elif name in names:
            raise BundleError(f"{module} has no top-level {name!r} to extract")
    kept_nodes = sorted(
        {id(n): n for name in keep for n in definitions[name]}.values(), key=lambda n: n.lineno
    )
    lines = source.splitlines()
    segments = ["\n".join(lines[_first_line(node) - 1 : node.end_lineno]) for node in kept_nodes]
    needs: list[Need] = []
    import_lines: list[str] = []
    for node in sorted({id(n): n for n in keep_imports.values()}.values(), key=lambda n: n.lineno):
        aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] in keep_imports]
        reduced: ast.Import | ast.ImportFrom
        if isinstance(node, ast.ImportFrom):
            reduced = ast.ImportFrom(module=node.module, names=aliases, level=node.level)
        else:
            reduced = ast.Import(names=aliases)
        import_lines.append(ast.unparse(reduced))
        needs += _resolve(module, reduced)
    first_line = (ast.get_docstring(tree) or module).splitlines()[0]
    header = (
        f'"""{first_line}\n\nExtracted from {module} for a traj2env hook: the definitions '
        'the hook uses, verbatim.\n"""\n\nfrom __future__ import annotations\n\n'
    )
    text = header + "\n".join(import_lines) + "\n\n\n" + "\n\n\n".join(segments) + "\n"
    return text, needs


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _runtime_imports(body: list[ast.stmt]) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import that can run, at any depth, leaving out ``if TYPE_CHECKING:`` blocks."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _runtime_imports(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _runtime_imports([child])
            else:
                for inner in ast.walk(child):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        yield inner


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: str, node: ast.Import | ast.ImportFrom) -> list[Need]:
    needs: list[Need] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if not _stdlib(alias.name):
                needs.append(_ours(module, alias.name, None))
        return needs
    if node.module == "__future__":
        return needs
    base = _absolute(module, node.module, node.level)
    if _stdlib(base):
        return needs
    for alias in node.names:
        full = f"{base}.{alias.name}"
        if _module_exists(full):
            needs.append(_ours(module, full, None))
        else:
            needs.append(_ours(module, base, alias.name))
    return needs


def _ours(importer: str, target: str, name: str | None) -> Need:
    if target.split(".")[0] not in _OURS or not _module_exists(target):
        what = f"{name} from {target}" if name else target
        raise BundleError(
            f"{importer} imports {what}, which is neither standard library nor one of our "
            "modules: a hook script cannot carry it"
        )
    return target, name


def _absolute(module: str, name: str | None, level: int) -> str:
    if level == 0:
        return name or ""
    package = module if _is_package(module) else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{name}" if name else package


def _stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _is_package(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None


def _source_path(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        raise BundleError(f"{module} has no Python source to embed")
    return Path(spec.origin)


def _runtime_names(node: ast.stmt) -> set[str]:
    visitor = _RuntimeNames()
    visitor.visit(node)
    return visitor.names


class _RuntimeNames(ast.NodeVisitor):
    """Names a definition needs when it runs; annotations are strings (PEP 563) and left out."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        self.names.add(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        return  # only its annotation could name anything

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def _literal(source: str) -> str:
    """``source`` as a triple-quoted literal that reads back as exactly the same text."""
    body = source.replace("\\", "\\\\").replace("'''", "\\'\\'\\'")
    trailing = len(body) - len(body.rstrip("'"))
    if trailing:
        body = body[: len(body) - trailing] + "\\'" * trailing
    literal = f"'''{body}'''"
    if ast.literal_eval(literal) != source:  # a guard on the escaping above, not a parse
        raise BundleError("cannot embed a module's source as a literal")
    return literal


_LOADER = '''
import sys
from importlib.machinery import ModuleSpec

_PACKAGES = frozenset(__PACKAGES__)


class _Embedded:
    """Finds and loads the modules in _SOURCES (and their parent packages) by their own names.

    Duck-typed rather than built on importlib.abc, whose import costs more than the hook's own.
    """

    def find_spec(self, name, path=None, target=None):
        if name not in _SOURCES and name not in _PACKAGES:
            return None
        return ModuleSpec(name, self, is_package=name in _PACKAGES)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = _SOURCES.get(module.__name__, "")
        exec(compile(source, "<traj2env " + module.__name__ + ">", "exec"), module.__dict__)


def install():
    """Put the embedded modules first, ahead of anything of the same name on sys.path."""
    sys.meta_path.insert(0, _Embedded())
'''.lstrip()
