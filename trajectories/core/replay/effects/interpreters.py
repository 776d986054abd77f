"""Interpreters and nested shells: ``python -c``, ``node -e``, ``python - <<EOF``, ``bash -c``.

Inline code is read-only when it names nothing that writes files (``open(…, 'w')``, ``shutil``,
``subprocess``, ``fs.writeFile`` …); a script file is opaque and makes its directory uncertain.
A nested shell's script (``bash -c '…'``, ``sh <<EOF``) is walked like the outer command line,
its ``cd`` staying inside.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..programs import python_module
from ..shell import parse
from .model import LostTree
from .registry import VERSION_FLAGS, Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

_INLINE_FLAGS = {
    "python": ("-c",),
    "py": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "ruby": ("-e",),
    "perl": ("-e", "-E"),
    "php": ("-r",),
    "bun": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "tsx": ("-e", "--eval"),
    "ts-node": ("-e", "--eval", "-p", "--print"),
}
# Names in inline code that can write, delete or spawn; absent all of them, the code only reads.
_CODE_WRITES = re.compile(
    r"""open\([^)]*['"][rbt]*[wax+]|\.write|write_|writeFile|appendFile|createWriteStream|"""
    r"""unlink|remove\(|rmtree|rmdir|rename|os\.replace|mkdir|makedirs|shutil|subprocess|"""
    r"""os\.system|popen|spawn|exec(?:Sync|File)?\(|child_process|rmSync|copyFile|cpSync|"""
    r"""savefig|to_csv|to_excel|to_parquet|to_pickle|\.save\(|touch\(|symlink|chmod|truncate|"""
    r"""\bsystem\(|`|File\.(?:write|delete|open)|IO\.write|FileUtils|\bprint\s*>|unlinkSync""",
    re.IGNORECASE,
)
_HARMLESS_MODULES = set(
    """
    pip json.tool http.server site platform sysconfig this timeit pydoc tokenize ast dis zipfile
    """.split()
)


@handles("python", "py", "node", "ruby", "php", "deno", "tsx", "ts-node")
def interpreter(sh: Shell, call: Call) -> Handled:
    run_code(sh, call.name, call.args, call.cwd, call.stdin)
    return call.cwd, None


def run_code(sh: Shell, name: str, args: list[str], cwd: str | None, stdin: str | None) -> None:
    """An interpreter run: a module, inline code, code from standard input, or a script."""
    module = python_module(args)
    if module is not None:
        mod = module[0]
        if mod in ("venv", "virtualenv"):
            target = next((a for a in module[1] if not a.startswith("-")), ".venv")
            sh.emit(LostTree(sh.files.absolute(target, cwd), f"python -m {mod}"))
        elif mod in _HARMLESS_MODULES:
            pass
        else:
            sh.emit(LostTree(cwd, f"python -m {mod} may write files"))
        return
    rest = args[1:]
    flags = _INLINE_FLAGS.get(name, ())
    for i, arg in enumerate(rest):
        if arg in flags and i + 1 < len(rest):
            _inline_code(sh, name, rest[i + 1], cwd)
            return
        if name in ("python", "py") and arg.startswith("-c") and len(arg) > 2:
            _inline_code(sh, name, arg[2:], cwd)
            return
    operands = [a for a in rest if not a.startswith("-")]
    if not operands or operands[0] == "-":
        if stdin is not None:
            _inline_code(sh, name, stdin, cwd)
        elif set(rest) & VERSION_FLAGS or not rest:
            pass  # a version query or an interactive prompt with nothing piped in
        else:
            sh.emit(LostTree(cwd, f"{name} ran code from standard input"))
        return
    sh.emit(LostTree(cwd, f"script may write files: {name} {operands[0]}"))


def _inline_code(sh: Shell, name: str, code: str, cwd: str | None) -> None:
    if _CODE_WRITES.search(code):
        sh.emit(LostTree(cwd, f"inline {name} code may write files"))


@handles("bash", "sh", "zsh", "dash", "ksh", "fish")
def nested_shell(sh: Shell, call: Call) -> Handled:
    """bash -c '…', sh script.sh, bash <<EOF: nested scripts are walked like the outer one."""
    cwd = call.cwd
    rest = call.args[1:]
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        flag = rest[i]
        if "c" in flag[1:] and not flag.startswith("--"):
            if i + 1 < len(rest):
                sh.walk(parse(rest[i + 1]), cwd)  # a child shell: its cd stays inside
            return cwd, None
        i += 1
    if i < len(rest):
        sh.emit(LostTree(cwd, f"script may write files: {rest[i]}"))
    elif call.stdin is not None:
        sh.walk(parse(call.stdin), cwd)
    return cwd, None
