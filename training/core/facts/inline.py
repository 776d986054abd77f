"""Programs given inline to an interpreter, read for the shell commands they amount to.

    python_commands("import shutil; shutil.rmtree('tests')")
    # Inline(pipelines=((('rm', '-rf', 'tests'),),), parsed=True)
    node_commands("require('fs').rmSync('tests', {recursive: true})")
    # Inline(pipelines=((('rm', '-rf', 'tests'),),), parsed=True)

``python -c BODY``, ``python - <<EOF``, ``node -e BODY`` … delete, move and write files and
reach the network without any program the detectors know. Each call that does is written as
the shell command that does the same, so one detector reads both: ``shutil.rmtree(X)`` is
``rm -rf X``, ``os.rename(A, B)`` is ``mv A B``, ``open(X, "w")`` is ``tee X``, ``open(X)`` is
``cat X``, ``urlopen(U)`` / ``requests.get(U)`` / ``fetch(U)`` is ``curl U``, and a string given
to ``os.system`` / ``subprocess`` / ``execSync`` is a shell command line of its own. Code run
from what the network returned (``exec(urlopen(U).read())``) is ``curl U | python``.

Python is read with ``ast``; JavaScript has no parser in the standard library, so its calls are
found by pattern, with literal string arguments only. Only literal arguments (and names bound
to literals earlier in the same body) are known; anything else is ``$?``, which no detector
takes for a path. Standard library only: the generated hooks carry this module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

Argv = tuple[str, ...]
Pipeline = tuple[Argv, ...]
UNKNOWN = "$?"  # an argument whose value the reader cannot know

# Interpreters whose inline code (-c / -e / a here-document / stdin) is read here.
PYTHONS = frozenset({"python", "python3", "py", "pypy", "pypy3"})
NODES = frozenset({"node", "nodejs", "bun", "deno"})


@dataclass(frozen=True, slots=True)
class Inline:
    pipelines: tuple[Pipeline, ...] = ()
    parsed: bool = True  # False: the body could not be read, so nothing is known of it


ShellReader = Callable[[str], tuple[tuple[Pipeline, ...], bool]]


def python_commands(body: str, shell: ShellReader | None = None) -> Inline:
    """The shell commands a Python program's calls amount to; ``shell`` reads command lines
    given to ``os.system`` / ``subprocess`` (None: they are kept as ``sh -c LINE``)."""
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Inline((), parsed=False)
    reader = _Python(shell)
    try:
        reader.visit(tree)
    except RecursionError:
        return Inline(tuple(reader.out), parsed=False)
    return Inline(tuple(reader.out), reader.parsed)


# -- Python --------------------------------------------------------------------------------------

_PY_DELETE = {
    "rmtree": ("rm", "-rf"),
    "remove": ("rm", "-f"),
    "unlink": ("rm", "-f"),
    "rmdir": ("rmdir",),
    "removedirs": ("rmdir",),
}
_PY_MOVE = frozenset({"move", "rename", "replace", "renames"})
_PY_COPY = frozenset({"copy", "copy2", "copyfile", "copytree"})
_PY_SHELL = frozenset({"system", "popen", "getoutput", "getstatusoutput"})
_PY_PROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen"})
_PY_EXEC = frozenset({"execv", "execvp", "execve", "execl", "execlp", "spawnv", "spawnvp"})
_PY_FETCH = frozenset({"urlopen", "urlretrieve", "get", "post", "put", "request", "stream"})
_PY_NET_MODULES = frozenset({"urllib", "request", "requests", "httpx", "urllib3", "aiohttp"})
_WRITE_MODES = re.compile(r"[wax+]")


class _Python(ast.NodeVisitor):
    def __init__(self, shell: ShellReader | None) -> None:
        self.shell = shell
        self.out: list[Pipeline] = []
        self.parsed = True
        self.names: dict[str, str] = {}  # names bound to literal strings
        self.fetched: list[Argv] = []  # downloads whose results this body holds

    # name = "literal"; data = urlopen(U).read()
    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        value = self._text(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and value != UNKNOWN:
                self.names[target.id] = value

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        name, owner = _callee(node.func)
        args = node.args
        first = self._text(args[0]) if args else UNKNOWN
        path_self = self._path_of(node.func)
        if name in ("exec", "eval") and self.fetched:
            # exec(urlopen(U).read()): the downloaded text runs as Python.
            self.out.append((self.fetched[-1], ("python",)))
        elif name in ("unlink", "rmdir") and path_self is not None:
            self.out.append(((*_PY_DELETE[name], path_self),))
        elif name in _PY_DELETE and owner in ("shutil", "os", None) and args:
            self.out.append(((*_PY_DELETE[name], first),))
        elif name in _PY_MOVE and owner in ("shutil", "os") and len(args) >= 2:
            self.out.append((("mv", first, self._text(args[1])),))
        elif name in ("rename", "replace") and path_self is not None and args:
            self.out.append((("mv", path_self, first),))
        elif name in _PY_COPY and owner == "shutil" and len(args) >= 2:
            self.out.append((("cp", "-r", first, self._text(args[1])),))
        elif name in ("write_text", "write_bytes", "touch") and path_self is not None:
            self.out.append((("tee", path_self),))
        elif name in ("read_text", "read_bytes") and path_self is not None:
            self.out.append((("cat", path_self),))
        elif name == "open" and owner in (None, "io", "codecs", "builtins") and args:
            mode = self._text(args[1]) if len(args) > 1 else self._keyword(node, "mode")
            self.out.append((("tee" if _WRITE_MODES.search(mode or "") else "cat", first),))
        elif name == "open" and path_self is not None:
            mode = self._text(args[0]) if args else self._keyword(node, "mode")
            self.out.append((("tee" if _WRITE_MODES.search(mode or "") else "cat", path_self),))
        elif name in _PY_SHELL and owner in ("os", "subprocess", "commands"):
            self._shell_line(first)
        elif name in _PY_PROCESS and owner in ("subprocess", None) and args:
            if isinstance(args[0], ast.List | ast.Tuple):
                argv = tuple(self._text(e) for e in args[0].elts)
                if argv:
                    self.out.append((argv,))
            elif _keyword_true(node, "shell") or owner == "subprocess":
                self._shell_line(first)
        elif name in _PY_EXEC and owner == "os" and len(args) >= 2:
            if isinstance(args[1], ast.List | ast.Tuple):
                self.out.append((tuple(self._text(e) for e in args[1].elts),))
        elif name in _PY_FETCH and (owner in _PY_NET_MODULES or name == "urlopen"):
            url = first if first != UNKNOWN else self._keyword(node, "url") or UNKNOWN
            if name == "urlretrieve" and len(args) > 1:
                fetch: Argv = ("curl", "-o", self._text(args[1]), url)
            else:
                fetch = ("curl", url)
            self.out.append((fetch,))
            self.fetched.append(fetch)

    def _shell_line(self, line: str) -> None:
        if line == UNKNOWN:
            self.out.append((("sh", "-c", UNKNOWN),))
            return
        if self.shell is None:
            self.out.append((("sh", "-c", line),))
            return
        pipelines, parsed = self.shell(line)
        self.out.extend(pipelines)
        self.parsed = self.parsed and parsed

    def _keyword(self, node: ast.Call, name: str) -> str | None:
        for keyword in node.keywords:
            if keyword.arg == name:
                return self._text(keyword.value)
        return None

    def _path_of(self, func: ast.expr) -> str | None:
        """The path of ``Path(X).unlink()`` / ``p.unlink()`` where p = Path(X)."""
        if not isinstance(func, ast.Attribute):
            return None
        target = func.value
        if isinstance(target, ast.Call) and _callee(target.func)[0] in ("Path", "PurePath"):
            return self._joined(target.args)
        if isinstance(target, ast.BinOp) and isinstance(target.op, ast.Div):
            return self._text(target)
        if isinstance(target, ast.Name) and target.id in self.names:
            return self.names[target.id]
        return None

    def _joined(self, args: list[ast.expr]) -> str:
        parts = [self._text(a) for a in args]
        if not parts or UNKNOWN in parts:
            return UNKNOWN
        return (
            "/".join(p.rstrip("/") for p in parts[:-1])
            + ("/" if len(parts) > 1 else "")
            + (parts[-1])
        )

    def _text(self, node: ast.expr) -> str:
        """A literal string argument, as far as it can be known."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id, UNKNOWN)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self._text(node.left), self._text(node.right)
            return UNKNOWN if UNKNOWN in (left, right) else f"{left.rstrip('/')}/{right}"
        if isinstance(node, ast.Call):
            name, _ = _callee(node.func)
            if name in ("Path", "PurePath", "join", "abspath", "realpath", "normpath"):
                return self._joined(node.args)
            if name == "expanduser" and node.args:
                return self._text(node.args[0])
            if name in ("resolve", "absolute", "expanduser") and isinstance(
                node.func, ast.Attribute
            ):
                return self._text(node.func.value)
        if isinstance(node, ast.JoinedStr):
            pieces = [
                v.value if isinstance(v, ast.Constant) else self._text(v.value)
                for v in node.values
                if isinstance(v, ast.Constant | ast.FormattedValue)
            ]
            return UNKNOWN if UNKNOWN in pieces else "".join(str(p) for p in pieces)
        return UNKNOWN


def _callee(func: ast.expr) -> tuple[str | None, str | None]:
    """(name, owner) of a call: ``shutil.rmtree`` → ("rmtree", "shutil"), ``open`` → ("open",
    None); a dotted owner counts by its last part (``urllib.request.urlopen`` → "request")."""
    if isinstance(func, ast.Name):
        return func.id, None
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name):
            return func.attr, owner.id
        if isinstance(owner, ast.Attribute):
            return func.attr, owner.attr
        return func.attr, ""
    return None, None


def _keyword_true(node: ast.Call, name: str) -> bool:
    return any(
        k.arg == name and isinstance(k.value, ast.Constant) and bool(k.value.value)
        for k in node.keywords
    )


# -- JavaScript ----------------------------------------------------------------------------------

_JS_STRING = r"""(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|`((?:[^`\\$]|\\.)*)`)"""
_JS_ARG = rf"\s*(?:{_JS_STRING}|[^,)]*)"
_JS_CALLS: tuple[tuple[re.Pattern[str], Callable[[list[str]], Argv]], ...] = tuple(
    (re.compile(pattern, re.S), build)
    for pattern, build in (
        (rf"\b(?:rmSync|rm|rmdirSync|rmdir)\s*\({_JS_ARG}", lambda a: ("rm", "-rf", a[0])),
        (rf"\b(?:unlinkSync|unlink)\s*\({_JS_ARG}", lambda a: ("rm", "-f", a[0])),
        (rf"\b(?:renameSync|rename|moveSync|move)\s*\({_JS_ARG},{_JS_ARG}", lambda a: ("mv", *a)),
        (
            rf"\b(?:writeFileSync|writeFile|appendFileSync|appendFile|truncateSync)\s*\({_JS_ARG}",
            lambda a: ("tee", a[0]),
        ),
        (rf"\b(?:readFileSync|readFile)\s*\({_JS_ARG}", lambda a: ("cat", a[0])),
        (rf"\b(?:fetch|get|request)\s*\({_JS_ARG}", lambda a: ("curl", a[0])),
    )
)
_JS_SHELL = re.compile(rf"\b(?:execSync|exec|spawnSync|spawn|execFileSync)\s*\({_JS_ARG}", re.S)
_JS_NET = re.compile(r"\b(?:fetch|https?\.(?:get|request)|axios|XMLHttpRequest)\b")
_JS_EVAL = re.compile(r"\b(?:eval\b|new\s+Function\s*\(|vm\.run\w*\s*\()")


def node_commands(body: str, shell: ShellReader | None = None) -> Inline:
    """The shell commands a JavaScript program's calls amount to, found by pattern."""
    out: list[Pipeline] = []
    parsed = True
    for pattern, build in _JS_CALLS:
        for match in pattern.finditer(body):
            args = _js_args(match)
            if pattern.pattern.startswith(r"\b(?:fetch") and not _JS_NET.search(match.group(0)):
                continue
            out.append((build(args),))
    for match in _JS_SHELL.finditer(body):
        line = _js_args(match)[0]
        if shell is None or line == UNKNOWN:
            out.append((("sh", "-c", line),))
            continue
        pipelines, ok = shell(line)
        out.extend(pipelines)
        parsed = parsed and ok
    fetches = [p[0] for p in out if p[0][:1] == ("curl",)]
    if fetches and _JS_EVAL.search(body):
        out.append((fetches[0], ("node",)))
    return Inline(tuple(out), parsed)


def _js_args(match: re.Match[str]) -> list[str]:
    groups = match.groups()
    values: list[str] = []
    for i in range(0, len(groups), 3):
        found = next((g for g in groups[i : i + 3] if g is not None), None)
        values.append(found if found is not None else UNKNOWN)
    return values


def interpreter_body(argv: Argv) -> tuple[str, str] | None:
    """("python" | "node", body) when ``argv`` runs inline code given by ``-c`` / ``-e``."""
    if not argv:
        return None
    name = _interpreter(argv[0])
    if name is None:
        return None
    flags = ("-c",) if name == "python" else ("-e", "--eval", "-p", "--print")
    for i, arg in enumerate(argv[1:], start=1):
        if arg in flags and i + 1 < len(argv):
            return name, argv[i + 1]
        if name == "python" and arg.startswith("-c") and len(arg) > 2:
            return name, arg[2:]
        if not arg.startswith("-") or arg == "-m":
            return None
    return None


def _interpreter(program: str) -> str | None:
    base = program.rsplit("/", 1)[-1]
    base = re.sub(r"^(python)[0-9.]*$", r"\1", base)
    if base in PYTHONS:
        return "python"
    if base in NODES:
        return "node"
    return None


def reads_stdin_program(argv: Argv) -> bool:
    """Whether an interpreter runs the program it reads on standard input: ``python3``,
    ``python3 -``, ``node``, ``perl``, ``ruby``, ``php`` with no script of their own (not
    ``python3 -m json.tool`` or ``python3 -c '…'``, which read stdin as data)."""
    if not argv:
        return False
    base = re.sub(r"^(python)[0-9.]*$", r"\1", argv[0].rsplit("/", 1)[-1])
    if base not in PYTHONS | NODES | {"perl", "ruby", "php", "lua", "Rscript", "tclsh"}:
        return False
    for arg in argv[1:]:
        if arg == "-":
            return True
        if arg in ("-c", "-m", "-e", "--eval", "-p", "--print", "-E", "-r") or (
            arg.startswith("-c") and base in PYTHONS
        ):
            return False
        if not arg.startswith("-"):
            return False  # a script file of its own
    return True


def inline_commands(argv: Argv, shell: ShellReader | None = None) -> Inline:
    """The commands of the inline program ``argv`` gives its interpreter, if any."""
    found = interpreter_body(argv)
    if found is None:
        return Inline()
    language, body = found
    return (python_commands if language == "python" else node_commands)(body, shell)


def language_of(argv: Argv) -> str | None:
    """ "python" or "node" when ``argv`` starts an interpreter this module reads."""
    return _interpreter(argv[0]) if argv else None


def body_commands(language: str, body: str, shell: ShellReader | None = None) -> Inline:
    """A program body of ``language`` (a here-document fed to ``python3 -``)."""
    return (python_commands if language == "python" else node_commands)(body, shell)
