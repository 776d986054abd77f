"""What a shell command line does to files, read with certainty or not at all.

``run_script`` walks a parsed command line (see ``shell.parse``) the way the shell would run it
(``cd`` changes the directory for what follows, subshells restore it, pipes carry output) and
hands each file effect to a ``Files`` sink as soon as it is known, so a later command in the
same line sees what an earlier one wrote (``echo x > a && cp a b``).

Certain effects are few and simple: ``echo``/``printf``/``cat`` (here-documents included)
redirected to a file, ``tee``, ``rm``, ``mv``, ``cp``, ``mkdir``, ``touch``, ``git mv``/``rm``,
patches. Everything else that may write is reported as lost: named targets of ``sed -i`` and
friends become a ``Write`` of unknown content, and when the targets cannot be known (scripts,
formatters, ``git checkout``, unknown programs) the directory becomes uncertain (``LostTree``).

Policy for checks: running tests, builds and type checkers does not rewrite sources (it writes
caches and build output, which the task image regenerates), so a recognised check has no file
effect unless it is asked to fix or update (``--fix``, ``--write``, ``-u``). Formatters lose
their targets, unless their own output says every run changed nothing (biome's "No fixes
applied", black's "left unchanged"). Project scripts (``npm run check``, ``mise run test``) are
judged by the bodies the runner echoes into the output (``> biome check --write .``) and, when
nothing was echoed, by name: test/build/typecheck scripts have no effect, any other script may
rewrite files. Read-only programs (``ls``, ``cat``, ``grep``, ``git status`` …) have no effect
here; what a simple read showed of a file is the engine's business (``reads``).
Inline code (``python -c``, ``node -e``, ``python - <<EOF``) is read-only when it names nothing
that writes files (``open(…, 'w')``, ``shutil``, ``subprocess``, ``fs.writeFile`` …); a script
file is opaque and makes its directory uncertain.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Protocol
from urllib.parse import urlparse

from . import checks
from .checks import CheckSpec
from .programs import basename, python_module, unwrap
from .shell import Item, SimpleCommand, Word, parse

# -- effects -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Write:
    path: str  # absolute
    content: str | None  # None: written with content we cannot know
    append: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Delete:
    path: str
    recursive: bool = False


@dataclass(frozen=True, slots=True)
class GlobEffect:
    pattern: str  # absolute shell pattern
    delete: bool  # True: matching files are removed; False: they may have changed
    reason: str = ""
    recursive: bool = False  # matching directories are affected with everything below them


@dataclass(frozen=True, slots=True)
class Move:
    src: str
    dst: str
    into_dir: bool = False  # the destination is known to be a directory (trailing /, -t, many)


@dataclass(frozen=True, slots=True)
class Copy:
    src: str
    dst: str
    into_dir: bool = False
    recursive: bool = False


@dataclass(frozen=True, slots=True)
class LostTree:
    directory: str | None  # absolute; None when it cannot be known (the whole root)
    reason: str


@dataclass(frozen=True, slots=True)
class MakeDir:
    path: str


@dataclass(frozen=True, slots=True)
class Touch:
    path: str


@dataclass(frozen=True, slots=True)
class CodexPatch:
    text: str
    base: str | None


@dataclass(frozen=True, slots=True)
class UnifiedPatch:
    text: str | None  # None: the patch content is not in the trajectory
    base: str | None
    strip: int


Effect = (
    Write
    | Delete
    | GlobEffect
    | Move
    | Copy
    | LostTree
    | MakeDir
    | Touch
    | CodexPatch
    | UnifiedPatch
)


class Files(Protocol):
    """The replay's view of the files while a command line runs."""

    def text(self, path: str) -> str | None: ...

    def is_dir(self, path: str) -> bool | None:
        """True for a directory, False for a file, None when the replay cannot tell."""
        ...

    def apply(self, effect: Effect) -> None: ...

    def absolute(self, raw: str, cwd: str | None) -> str | None: ...


@dataclass(frozen=True, slots=True)
class FoundCheck:
    spec: CheckSpec
    segment: str
    cwd: str | None
    masked: bool


@dataclass
class ShellRun:
    cwd: str | None
    checks: list[FoundCheck] = field(default_factory=list)


# Script runners print each script body before running it: npm/pnpm "> pkg@1.0 check" then
# "> biome check --write .", yarn 1 "$ jest", mise "[fmt] $ gofmt -w .", go-task "task: [x] …".
_ECHOED = (
    re.compile(r"^> \S+ \S+(?: \S+)?\n> (.+)$", re.MULTILINE),
    re.compile(r"^\[[\w:.-]+\] \$ (.+)$", re.MULTILINE),
    re.compile(r"^task: \[[\w:.-]+\] (.+)$", re.MULTILINE),
)
_YARN_ECHO = re.compile(r"^\$ (.+)$", re.MULTILINE)


def echoed_bodies(output: str | None) -> list[str]:
    """The script bodies a runner echoed into ``output``, in order."""
    if not output:
        return []
    found: list[tuple[int, str]] = []
    for pattern in _ECHOED:
        found.extend((m.start(), m.group(1)) for m in pattern.finditer(output))
    if "yarn run v" in output:
        found.extend((m.start(), m.group(1)) for m in _YARN_ECHO.finditer(output))
    return [body.strip() for _, body in sorted(found)]


# -- programs ----------------------------------------------------------------------------------

_READ_ONLY = set(
    """
    ls ll la dir vdir tree cat bat head tail less more most grep egrep fgrep rg ag ack ugrep
    fd wc sort uniq cut tr nl diff cmp comm file stat du df pwd echo printf true false test [
    [[ which whereis type hash date whoami id uname hostname printenv sleep wait jobs ps pgrep
    top htop lsof kill pkill killall basename dirname realpath readlink md5sum md5 sha1sum
    sha256sum shasum cksum xxd od hexdump strings jq yq column fold fmt expand unexpand rev tac
    paste join seq yes exit return export unset set shopt alias unalias ulimit umask trap local
    declare typeset readonly read history clear reset tput stty man help info tldr ping dig
    nslookup host netstat ss ifconfig ip free uptime nproc lscpu locale getconf arch sw_vers
    open xdg-open code cursor subl pbcopy pbpaste xclip xsel say notify-send osascript cal
    watch env column nvidia-smi lsblk mount df tokei cloc scc eza exa fzf delta difftree
    mdfind mdls defaults screen tmux gh-dash glow w who last dmesg journalctl systemctl
    launchctl brew apt apt-get apt-cache dpkg rpm yum dnf apk pacman port snap flatpak choco
    winget pyenv nvm asdf rbenv sdk volta corepack fnm rustup goenv jenv conda mamba pipx
    http https httpie wrk ab curlie nc telnet ssh-add gpg node-gyp tsc-watch true
    :
    """.split()
)
_VERSION_FLAGS = {"--version", "-v", "-V", "--help", "-h", "version", "help", "-version"}
_INTERPRETERS = {"python", "py", "node", "ruby", "perl", "php", "deno", "tsx", "ts-node"}
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
_ENV_SOURCES = re.compile(r"(^|/)(activate|\.env[\w.]*|\.?(bash|zsh)rc|\.profile|nvm\.sh|env\.sh)$")

_NODE_PMS = {"npm", "pnpm", "yarn", "bun"}
_NODE_LOCKS = {
    "npm": ("package-lock.json",),
    "pnpm": ("pnpm-lock.yaml",),
    "yarn": ("yarn.lock",),
    "bun": ("bun.lockb", "bun.lock"),
}
_NODE_INSTALL = set(
    """
    install i ci add remove rm uninstall un update up upgrade dedupe prune link unlink
    """.split()
)
_NODE_MANIFEST = {"add", "remove", "rm", "uninstall", "un", "update", "up", "upgrade"}

_GIT_READ_ONLY = set(
    """
    status diff log show blame branch remote rev-parse ls-files ls-tree cat-file config grep
    describe shortlog reflog tag fetch add commit push notes rev-list merge-base show-ref
    for-each-ref name-rev check-ignore count-objects fsck gc help version init whatchanged
    range-diff annotate var check-attr ls-remote verify-commit request-pull credential
    hash-object update-index symbolic-ref cherry difftool --version --help
    """.split()
)
_GIT_TREE = set(
    """
    merge rebase pull cherry-pick revert am bisect clean submodule subtree filter-branch
    read-tree checkout-index
    """.split()
)

# A formatter's own report that it changed nothing: (unchanged, changed) patterns.
_UNCHANGED_REPORTS = {
    "biome": (re.compile(r"No fixes applied"), re.compile(r"Fixed \d+ files?")),
    "black": (re.compile(r"\d+ files? left unchanged"), re.compile(r"reformatted")),
    "ruff": (re.compile(r"\d+ files? left unchanged"), re.compile(r"reformatted|Fixed \d+")),
}
_GH_WRITES = {"pr checkout", "repo clone", "repo fork", "run download", "release download"}
_DOCKER_READ_ONLY = set(
    """
    ps images logs inspect version info build pull stats top network volume image system buildx
    login tag push history events port search stop kill rm rmi start restart pause unpause context
    """.split()
)
_HARMLESS_MODULES = set(
    """
    pip json.tool http.server site platform sysconfig this timeit pydoc tokenize ast dis zipfile
    """.split()
)
_NODE_READ_ONLY = set(
    "ls list view info outdated why audit config whoami help version search pack publish".split()
)


Handled = tuple[str | None, str | None]  # (working directory afterwards, stdout when known)


class _Walker:
    def __init__(self, files: Files, cwd: str | None, output: str | None) -> None:
        self.files = files
        self.run = ShellRun(cwd=cwd)
        self.pipefail = False
        self.output = output
        self.bodies_walked = False
        # False while walking echoed script bodies: they account for effects only, the check
        # is the script runner's command that the agent typed.
        self.recording = True
        self.echoed_checks: list[CheckSpec] = []
        self.rewriter_runs: dict[str, int] = {}

    # The walk -------------------------------------------------------------------------------

    def walk(self, items: list[Item], cwd: str | None) -> str | None:
        stack: list[str | None] = []
        stdout_prev: str | None = None
        ops = [(i, it) for i, it in enumerate(items) if isinstance(it, str)]
        for index, item in enumerate(items):
            if item == "(":
                stack.append(cwd)
                continue
            if item == ")":
                cwd = stack.pop() if stack else cwd
                continue
            if isinstance(item, str):
                continue
            before = next(
                (op for i, op in reversed(ops) if i < index and op not in ("(", ")")), None
            )
            after = next((op for i, op in ops if i > index and op not in ("(", ")")), None)
            piped_in = before in ("|", "|&")
            piped_out = after in ("|", "|&")
            masked = (
                (piped_out and not self.pipefail)
                or before == "||"
                or _status_decided_later(items, index)
                or _may_fail_before(items, index)
            )
            cwd, stdout_prev = self.command(
                item, cwd, stdout_prev if piped_in else None, masked=masked
            )
        return cwd

    def command(
        self, cmd: SimpleCommand, cwd: str | None, piped: str | None, *, masked: bool
    ) -> tuple[str | None, str | None]:
        """Run one simple command; returns (cwd afterwards, stdout text when known)."""
        if cmd.opaque:
            self.emit(LostTree(cwd, f"shell construct: {cmd.opaque}"))
            return cwd, None
        if cmd.for_header:
            return cwd, None
        stdin = self.stdin(cmd, cwd, piped)
        stdout: str | None = None
        if cmd.argv:
            cwd, stdout = self.program(cmd, cwd, stdin, masked=masked)
        self.redirects(cmd, cwd, stdout)
        if any(r.fd in (None, 1) and r.op in (">", ">>", ">|", "&>", "&>>") for r in cmd.redirects):
            stdout = None  # it went to the file, not down the pipe
        return cwd, stdout

    def stdin(self, cmd: SimpleCommand, cwd: str | None, piped: str | None) -> str | None:
        text = piped
        for r in cmd.redirects:
            if r.op in ("<<", "<<-"):
                doc = r.heredoc
                text = doc.body if doc is not None and doc.complete and not doc.expands else None
            elif r.op == "<<<":
                text = r.target.value + "\n" if r.target is not None and r.target.literal else None
            elif r.op == "<" and r.fd in (None, 0):
                path = self.path(r.target, cwd)
                text = self.files.text(path) if path else None
        return text

    def redirects(self, cmd: SimpleCommand, cwd: str | None, stdout: str | None) -> None:
        outputs = [
            r
            for r in cmd.redirects
            if r.op in (">", ">>", ">|", "&>", "&>>")
            or (
                r.op == ">&" and r.target is not None and not re.fullmatch(r"\d+|-", r.target.value)
            )
        ]
        last_stdout = max(
            (i for i, r in enumerate(outputs) if r.fd in (None, 1) or r.op.startswith("&")),
            default=None,
        )
        quiet = bool(cmd.argv) and basename(cmd.argv[0].value) in ("echo", "printf", "true", ":")
        for i, r in enumerate(outputs):
            target = r.target
            if target is None:
                continue
            if target.literal and target.value.startswith("/dev/"):
                continue
            path = self.path(target, cwd)
            if path is None:
                self.unknown_target(target, cwd, "output redirected to an unknown path")
                continue
            append = r.op in (">>", "&>>")
            if r.fd == 2:
                content = "" if quiet else None
            elif i == last_stdout:
                content = None if r.op.startswith("&") and not quiet else stdout
            else:
                content = ""  # an earlier stdout redirect is truncated and left empty
            if append and content == "":
                continue  # appending nothing leaves the file as it was
            self.emit(Write(path, content, append=append, reason="output redirection"))

    # Programs --------------------------------------------------------------------------------

    def program(
        self, cmd: SimpleCommand, cwd: str | None, stdin: str | None, *, masked: bool
    ) -> tuple[str | None, str | None]:
        words = list(cmd.argv)
        values = [w.value for w in words]
        if not words[0].literal:
            self.emit(LostTree(cwd, f"command name is not literal: {words[0].raw}"))
            return cwd, None
        args = unwrap(values)
        if not args:
            return cwd, None
        # Keep the Word objects aligned with the unwrapped arguments.
        words = words[len(values) - len(args) :]
        name = "source" if args[0] == "." else basename(args[0])
        segment = " ".join(w.raw for w in cmd.argv)

        spec = checks.recognise(values)
        if spec is not None and self.recording:
            self.run.checks.append(FoundCheck(spec, segment, cwd, masked))
        elif spec is not None:
            self.echoed_checks.append(spec)
        script = checks.script_call(values)
        if script is not None:
            self.script(script, cwd)
            return cwd, None
        rewritten = checks.rewrites(values)
        if rewritten is not None:
            self.rewrite(rewritten, words, cwd, name)
            return cwd, None
        if spec is not None:
            return cwd, None  # checks do not rewrite sources (see the module docstring)
        if len(args) == 2 and args[1] in _VERSION_FLAGS and name not in ("rm", "mv", "cp"):
            return cwd, None
        if name in (":", "true", "false"):
            return cwd, ""

        handler = getattr(self, "do_" + re.sub(r"\W", "_", name), None)
        if handler is not None:
            result: tuple[str | None, str | None] = handler(args, words, cwd, stdin)
            return result
        if name in _READ_ONLY:
            return cwd, None
        if name in _INTERPRETERS or (python_module(args) is not None):
            return cwd, self.interpreter(name, args, cwd, stdin)
        if name in _NODE_PMS or name in ("make", "gmake", "just", "mise", "task"):
            self.task_runner(name, args, cwd)
            return cwd, None
        self.emit(LostTree(cwd, f"program may write files: {name}"))
        return cwd, None

    # Individual programs (do_<name>) ---------------------------------------------------------

    def do_cd(self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None):
        if len(words) < 2:
            return None, None  # $HOME: unknown to the replay
        target = words[-1]
        if target.value == "-" or not (target.literal or (target.tilde and not target.expands)):
            return None, None
        return self.files.absolute(target.value, cwd), None

    def do_pushd(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        self._dirs = [*getattr(self, "_dirs", []), cwd]
        return self.do_cd(args, words, cwd, stdin)

    def do_popd(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        dirs = getattr(self, "_dirs", [])
        return (dirs.pop() if dirs else None), None

    def do_echo(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        operands = words[1:]
        newline = True
        while operands and re.fullmatch(r"-[neE]+", operands[0].value):
            if "e" in operands[0].value:
                return cwd, None  # escape interpretation differs between shells
            newline = "n" not in operands[0].value and newline
            operands = operands[1:]
        if not all(w.literal for w in operands):
            return cwd, None
        text = " ".join(w.value for w in operands)
        if "\\" in text:
            return cwd, None  # zsh and dash echo interpret backslashes, bash does not
        return cwd, text + ("\n" if newline else "")

    def do_printf(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        operands = words[1:]
        if operands and operands[0].value == "--":
            operands = operands[1:]
        if not operands or not all(w.literal for w in operands) or operands[0].value == "-v":
            return cwd, None
        return cwd, _printf(operands[0].value, [w.value for w in operands[1:]])

    def do_cat(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        operands = words[1:]
        if any(w.value.startswith("-") and w.value != "-" for w in operands):
            return cwd, None  # -n, -A … change the output
        if not operands:
            return cwd, stdin
        parts = []
        for w in operands:
            if w.value == "-":
                parts.append(stdin)
                continue
            path = self.path(w, cwd)
            parts.append(self.files.text(path) if path else None)
        if any(p is None for p in parts):
            return cwd, None
        return cwd, "".join(p for p in parts if p is not None)

    def do_tee(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        operands = [w for w in words[1:] if not w.value.startswith("-")]
        append = any(w.value in ("-a", "--append") for w in words[1:])
        for w in operands:
            path = self.path(w, cwd)
            if path is None:
                self.unknown_target(w, cwd, "tee to an unknown path")
            elif not path.startswith("/dev/"):
                self.emit(Write(path, stdin, append=append, reason="tee"))
        return cwd, stdin

    def do_rm(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        recursive = False
        operands: list[Word] = []
        options_done = False
        for w in words[1:]:
            if not options_done and w.value == "--":
                options_done = True
            elif not options_done and w.value.startswith("-") and len(w.value) > 1:
                recursive = (
                    recursive or bool(re.search(r"[rR]", w.value)) or w.value == "--recursive"
                )
            else:
                operands.append(w)
        for w in operands:
            self.remove(w, cwd, recursive)
        return cwd, None

    do_unlink = do_rm

    def do_rmdir(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        return cwd, None  # only ever removes empty directories

    def do_mkdir(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        for w in words[1:]:
            if w.value.startswith("-"):
                continue
            path = self.path(w, cwd)
            if path:
                self.emit(MakeDir(path))
        return cwd, None

    def do_touch(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        skip = False
        for w in words[1:]:
            if skip:
                skip = False
                continue
            if w.value in ("-d", "-t", "-r", "--date", "--reference"):
                skip = True
                continue
            if w.value.startswith("-"):
                continue
            path = self.path(w, cwd)
            if path:
                self.emit(Touch(path))
        return cwd, None

    def do_mv(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        self.move_or_copy(words[1:], cwd, copy=False)
        return cwd, None

    def do_cp(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        self.move_or_copy(words[1:], cwd, copy=True)
        return cwd, None

    def do_install(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        if any(w.value in ("-d", "--directory") for w in words[1:]):
            for w in words[1:]:
                path = None if w.value.startswith("-") else self.path(w, cwd)
                if path:
                    self.emit(MakeDir(path))
            return cwd, None
        self.move_or_copy(_drop_valued(words[1:], {"-m", "-o", "-g", "--mode"}), cwd, copy=True)
        return cwd, None

    def do_ln(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        operands = [w for w in words[1:] if not w.value.startswith("-")]
        if len(operands) >= 2:
            self.lose(operands[-1], cwd, "symbolic or hard link created")
        elif operands:
            self.emit(LostTree(cwd, "link created in the working directory"))
        return cwd, None

    def do_sed(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        return self.in_place(words, cwd, "sed", script_flags={"-e", "--expression", "-f", "--file"})

    def do_perl(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        if not any(re.fullmatch(r"-[a-zA-Z]*i\S*", w.value) for w in words[1:]):
            return cwd, self.interpreter("perl", args, cwd, stdin)
        return self.in_place(words, cwd, "perl -i", script_flags={"-e", "-E"})

    def do_awk(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:]]
        if "-i" in values and "inplace" in values:
            operands = [w for w in words[1:] if not w.value.startswith("-")][2:]
            for w in operands:
                self.lose(w, cwd, "awk -i inplace")
            return cwd, None
        program = next((v for v in values if not v.startswith("-")), "")
        if re.search(r"system\(|>\s*\S|\|\s*\"", program):
            self.emit(LostTree(cwd, "awk program writes or runs commands"))
        return cwd, None

    do_gawk = do_awk

    def do_find(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:]]
        roots = []
        for w in words[1:]:
            if w.value.startswith(("-", "(", "!")):
                break
            roots.append(w)
        if not roots:
            roots_abs: list[str | None] = [cwd]
        else:
            roots_abs = [self.path(w, cwd) for w in roots]
        reason = ""
        if "-delete" in values:
            reason = "find -delete"
        for flag in ("-exec", "-execdir", "-ok", "-okdir"):
            if flag in values:
                command = values[values.index(flag) + 1 : values.index(flag) + 2]
                if not command or basename(command[0]) not in _READ_ONLY:
                    reason = f"find {flag} {command[0] if command else ''}".strip()
        if "-fprint" in values or "-fprintf" in values or "-fls" in values:
            reason = "find writes a listing file"
        if reason:
            for root in roots_abs:
                self.emit(LostTree(root, reason))
        return cwd, None

    def do_xargs(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        rest = [w.value for w in words[1:]]
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            i += 2 if rest[i] in ("-I", "-n", "-P", "-L", "-d", "-s", "-E", "-a") else 1
        inner = unwrap(rest[i:])
        if not inner or basename(inner[0]) in _READ_ONLY:
            return cwd, None
        if checks.recognise(inner) is not None and checks.rewrites(inner) is None:
            return cwd, None
        self.emit(LostTree(cwd, f"xargs {basename(inner[0])} on unknown arguments"))
        return cwd, None

    def do_git(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        rest = words[1:]
        while rest and rest[0].value.startswith("-"):
            flag = rest[0].value
            if flag == "-C" and len(rest) > 1:
                cwd = self.files.absolute(rest[1].value, cwd) if rest[1].literal else None
                rest = rest[2:]
            elif flag in ("-c", "--git-dir", "--work-tree", "--namespace") and len(rest) > 1:
                rest = rest[2:]
            else:
                rest = rest[1:]
        if not rest:
            return cwd, None
        sub, operands = rest[0].value, rest[1:]
        values = [w.value for w in operands]
        paths = _after_double_dash(operands)
        if sub in _GIT_READ_ONLY:
            return cwd, None
        if sub == "mv":
            self.move_or_copy([w for w in operands if not w.value.startswith("-")], cwd, copy=False)
        elif sub == "rm":
            if "--cached" not in values:
                recursive = "-r" in values
                for w in operands:
                    if not w.value.startswith("-"):
                        self.remove(w, cwd, recursive)
        elif sub == "restore":
            if set(values) & {"--staged", "-S"} and not set(values) & {"--worktree", "-W"}:
                return cwd, None
            targets = [w for w in operands if not w.value.startswith("-") and w.value != "--"]
            self.lose_all(targets or None, cwd, "git restore")
        elif sub == "checkout":
            if paths is not None:
                self.lose_all(paths, cwd, "git checkout of paths")
            elif values and values[0] in ("-b", "-B") and len(values) <= 2:
                return cwd, None  # a new branch at HEAD leaves the worktree alone
            elif len(values) == 1 and values[0] == ".":
                self.emit(LostTree(cwd, "git checkout ."))
            else:
                self.emit(
                    LostTree(self.files.absolute(".", None), "git checkout switched revision")
                )
        elif sub == "switch":
            if values and values[0] in ("-c", "-C", "--create") and len(values) <= 2:
                return cwd, None
            self.emit(LostTree(self.files.absolute(".", None), "git switch"))
        elif sub == "reset":
            if "--hard" in values or "--merge" in values or "--keep" in values:
                self.emit(LostTree(self.files.absolute(".", None), "git reset --hard"))
        elif sub == "stash":
            action = values[0] if values else "push"
            if action not in ("list", "show", "drop", "clear", "create", "store", "branch"):
                self.emit(LostTree(self.files.absolute(".", None), f"git stash {action}"))
        elif sub in ("apply",):
            self.patch_from(operands, cwd, stdin, strip=1, tool="git apply")
        elif sub == "clone":
            targets = [w for w in operands if not w.value.startswith("-")]
            if len(targets) >= 2:
                self.emit(LostTree(self.path(targets[1], cwd), "git clone"))
            elif targets:
                name = targets[0].value.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
                self.emit(LostTree(self.files.absolute(name, cwd), "git clone"))
        elif sub == "worktree" and values[:1] != ["list"]:
            self.emit(LostTree(cwd, "git worktree"))
        elif sub in _GIT_TREE:
            self.emit(LostTree(self.files.absolute(".", None), f"git {sub}"))
        elif sub in ("format-patch", "archive", "bundle"):
            self.emit(LostTree(cwd, f"git {sub} writes files"))
        else:
            self.emit(LostTree(self.files.absolute(".", None), f"git {sub}"))
        return cwd, None

    def do_patch(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        strip = 0
        operands: list[Word] = []
        skip = False
        patch_file: Word | None = None
        for i, w in enumerate(words[1:], start=1):
            if skip:
                skip = False
                continue
            match = re.fullmatch(r"-p(\d+)|--strip=(\d+)", w.value)
            if match:
                strip = int(match.group(1) or match.group(2))
            elif w.value in ("-i", "--input") and i + 1 < len(words):
                patch_file = words[i + 1]
                skip = True
            elif w.value in ("-d", "--directory") and i + 1 < len(words):
                cwd = self.path(words[i + 1], cwd)
                skip = True
            elif w.value in ("-R", "--reverse"):
                self.emit(LostTree(cwd, "patch -R"))
                return cwd, None
            elif not w.value.startswith("-"):
                operands.append(w)
        if patch_file is None and len(operands) >= 2:
            patch_file = operands[1]
        text = stdin
        if patch_file is not None:
            path = self.path(patch_file, cwd)
            text = self.files.text(path) if path else None
        self.emit(UnifiedPatch(text, cwd, strip))
        return cwd, None

    def do_apply_patch(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        text = words[1].value if len(words) > 1 and words[1].literal else stdin
        if text is None:
            self.emit(LostTree(cwd, "apply_patch with an unreadable patch"))
        else:
            self.emit(CodexPatch(text, cwd))
        return cwd, None

    do_applypatch = do_apply_patch

    def do_curl(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words]
        for i, v in enumerate(values):
            if v in ("-o", "--output") and i + 1 < len(words):
                if values[i + 1] != "-":
                    self.lose(words[i + 1], cwd, "downloaded by curl")
            elif v in ("-O", "--remote-name") or (
                v.startswith("-") and not v.startswith("--") and "O" in v
            ):
                url = next((u for u in values if "://" in u), "")
                name = posixpath.basename(urlparse(url).path)
                target = self.files.absolute(name, cwd) if name else None
                if target:
                    self.emit(Write(target, None, reason="downloaded by curl"))
                else:
                    self.emit(LostTree(cwd, "curl -O"))
        return cwd, None

    def do_wget(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words]
        for i, v in enumerate(values):
            if v in ("-O", "--output-document") and i + 1 < len(words):
                if values[i + 1] != "-":
                    self.lose(words[i + 1], cwd, "downloaded by wget")
                return cwd, None
            if v.startswith("-qO") or v == "-qO-":
                return cwd, None
        url = next((u for u in values if "://" in u), "")
        name = posixpath.basename(urlparse(url).path) or "index.html"
        target = self.files.absolute(name, cwd)
        if target:
            self.emit(Write(target, None, reason="downloaded by wget"))
        return cwd, None

    def do_tar(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:]]
        mode = values[0] if values else ""
        where = cwd
        for i, v in enumerate(values):
            if v in ("-C", "--directory") and i + 1 < len(values):
                where = self.path(words[i + 2], cwd)
        if re.match(r"^-?[a-zA-Z]*x", mode) or "--extract" in values or "-x" in values:
            self.emit(LostTree(where, "archive extracted"))
        elif re.match(r"^-?[a-zA-Z]*[cru]", mode) or "--create" in values:
            for i, v in enumerate(values):
                if (v == "-f" or v == "--file") and i + 1 < len(values):
                    self.lose(words[i + 2], cwd, "archive written")
                elif re.match(r"^-?[a-zA-Z]*f$", v) and i + 1 < len(values):
                    self.lose(words[i + 2], cwd, "archive written")
        return cwd, None

    def do_unzip(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:]]
        if "-l" in values or "-t" in values:
            return cwd, None
        where = cwd
        if "-d" in values and values.index("-d") + 1 < len(values):
            where = self.path(words[values.index("-d") + 2], cwd)
        self.emit(LostTree(where, "archive extracted"))
        return cwd, None

    def do_dd(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        for w in words[1:]:
            if w.value.startswith("of="):
                path = self.files.absolute(w.value[3:], cwd) if w.literal else None
                if path and not path.startswith("/dev/"):
                    self.emit(Write(path, None, reason="dd"))
        return cwd, None

    def do_truncate(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        operands = _drop_valued(words[1:], {"-s", "--size", "-r", "--reference"})
        for w in operands:
            if not w.value.startswith("-"):
                self.lose(w, cwd, "truncate")
        return cwd, None

    def do_chmod(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        return cwd, None  # modes are not content

    do_chown = do_chgrp = do_chmod

    def do_source(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        target = words[1].value if len(words) > 1 else ""
        if not _ENV_SOURCES.search(target):
            self.emit(LostTree(cwd, f"sourced script may write files: {target}"))
        return cwd, None

    def do_eval(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        self.emit(LostTree(cwd, "eval of a constructed command"))
        return cwd, None

    def do_set(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:]]
        if "pipefail" in values:
            self.pipefail = not any(v.startswith("+") for v in values)
        return cwd, None

    def do_gh(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:3]]
        if " ".join(values) in _GH_WRITES:
            self.emit(LostTree(cwd, f"gh {' '.join(values)}"))
        return cwd, None

    def do_docker(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:] if not w.value.startswith("-")]
        sub = values[0] if values else ""
        if sub in _DOCKER_READ_ONLY:
            return cwd, None
        if sub == "cp":
            dst = values[-1] if len(values) >= 3 else ""
            if ":" in dst:
                return cwd, None
        self.emit(LostTree(cwd, f"docker {sub} may write through mounts"))
        return cwd, None

    do_podman = do_docker

    def do_pip(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        return cwd, None  # installs into site-packages, outside the project's sources

    do_pip3 = do_pipx = do_pip

    def do_uv(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:] if not w.value.startswith("-")]
        sub = values[0] if values else ""
        if sub in ("pip", "tool", "python", "cache", "version", "help", "tree", "export"):
            return cwd, None
        if sub == "venv":
            target = values[1] if len(values) > 1 else ".venv"
            self.emit(LostTree(self.files.absolute(target, cwd), "uv venv"))
            return cwd, None
        if sub in ("sync", "lock", "add", "remove", "init"):
            self.lose_named(cwd, ["uv.lock"], "uv " + sub)
            if sub in ("add", "remove", "init"):
                self.lose_named(cwd, ["pyproject.toml"], "uv " + sub)
            if sub != "lock":
                self.emit(LostTree(self.files.absolute(".venv", cwd), "uv " + sub))
            return cwd, None
        self.emit(LostTree(cwd, f"uv {sub}"))
        return cwd, None

    def do_poetry(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        sub = next((w.value for w in words[1:] if not w.value.startswith("-")), "")
        if sub in ("add", "remove", "lock", "install", "update", "init"):
            self.lose_named(cwd, ["poetry.lock"], "poetry " + sub)
            if sub in ("add", "remove", "init"):
                self.lose_named(cwd, ["pyproject.toml"], "poetry " + sub)
            return cwd, None
        if sub in ("show", "env", "check", "version", "config", "about", "search", "build"):
            return cwd, None
        self.emit(LostTree(cwd, f"poetry {sub}"))
        return cwd, None

    def do_go(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        values = [w.value for w in words[1:]]
        sub = values[0] if values else ""
        if sub in ("get", "mod"):
            if sub == "get" or values[1:2] in (["tidy"], ["init"], ["edit"], ["vendor"]):
                self.lose_named(cwd, ["go.mod", "go.sum"], f"go {' '.join(values[:2])}")
            return cwd, None
        if sub == "generate":
            self.emit(LostTree(cwd, "go generate"))
            return cwd, None
        if sub in ("run",):
            self.emit(LostTree(cwd, "go run of a program"))
            return cwd, None
        return cwd, None  # env, version, list, doc, install, clean (build caches only)

    def do_cargo(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        sub = next((w.value for w in words[1:] if not w.value.startswith("-")), "")
        if sub in ("add", "remove", "rm", "update", "generate-lockfile", "init", "new"):
            self.lose_named(cwd, ["Cargo.lock"], "cargo " + sub)
            if sub in ("add", "remove", "rm"):
                self.lose_named(cwd, ["Cargo.toml"], "cargo " + sub)
            if sub in ("init", "new"):
                self.emit(LostTree(cwd, "cargo " + sub))
            return cwd, None
        if sub in ("run",):
            self.emit(LostTree(cwd, "cargo run of a program"))
        return cwd, None  # metadata, tree, search, doc, clean …

    def do_bundle(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        self.lose_named(cwd, ["Gemfile.lock"], "bundle")
        return cwd, None

    def do_composer(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        self.lose_named(cwd, ["composer.lock", "composer.json"], "composer")
        self.emit(LostTree(self.files.absolute("vendor", cwd), "composer"))
        return cwd, None

    def do_virtualenv(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        target = next((w for w in words[1:] if not w.value.startswith("-")), None)
        if target is not None:
            self.emit(LostTree(self.path(target, cwd), "virtualenv"))
        return cwd, None

    def do_bash(
        self, args: list[str], words: list[Word], cwd: str | None, stdin: str | None
    ) -> Handled:
        """bash -c '…', sh script.sh, bash <<EOF: nested scripts are walked like the outer one."""
        rest = args[1:]
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            flag = rest[i]
            if "c" in flag[1:] and not flag.startswith("--"):
                if i + 1 < len(rest):
                    self.walk(parse(rest[i + 1]), cwd)  # a child shell: its cd stays inside
                return cwd, None
            i += 1
        if i < len(rest):
            self.emit(LostTree(cwd, f"script may write files: {rest[i]}"))
        elif stdin is not None:
            self.walk(parse(stdin), cwd)
        return cwd, None

    do_sh = do_zsh = do_dash = do_ksh = do_fish = do_bash

    # Families --------------------------------------------------------------------------------

    def script(self, call: checks.ScriptCall, cwd: str | None) -> None:
        """A project script: walk the bodies the runner echoed, else judge it by its name."""
        if not self.recording:
            return  # a script run from an echoed body: its own body was echoed too
        where = self.files.absolute(call.chdir, cwd) if call.chdir and cwd else cwd
        if self.bodies_walked:
            return  # an earlier script in this command line echoed every body
        bodies = echoed_bodies(self.output)
        if bodies:
            self.bodies_walked = True
            self.recording = False
            try:
                for body in bodies:
                    self.walk(parse(body), where)
            finally:
                self.recording = True
            self.learn_language()
            return
        role = checks.script_role(call.name)
        if role in ("test", "build", "typecheck"):
            return  # tests and builds do not rewrite sources (module docstring)
        name = f"{call.runner} {call.name}".strip()
        self.emit(LostTree(where, f"{name} may rewrite files and did not echo its commands"))

    def reported_unchanged(self, name: str) -> bool:
        """Every run of this formatter so far said it changed nothing (in the output)."""
        reports = _UNCHANGED_REPORTS.get(name)
        if reports is None or not self.output:
            return False
        unchanged, changed = reports
        if changed.search(self.output):
            return False
        return len(unchanged.findall(self.output)) >= self.rewriter_runs[name]

    def learn_language(self) -> None:
        """`mise run test` echoed `go test ./...`: the script's check is a Go check."""
        language = next((s.language for s in self.echoed_checks if s.language), None)
        if language is None:
            return
        self.run.checks = [
            replace(f, spec=replace(f.spec, language=language)) if f.spec.language is None else f
            for f in self.run.checks
        ]

    def interpreter(
        self, name: str, args: list[str], cwd: str | None, stdin: str | None
    ) -> str | None:
        module = python_module(args)
        if module is not None:
            mod = module[0]
            if mod in ("venv", "virtualenv"):
                target = next((a for a in module[1] if not a.startswith("-")), ".venv")
                self.emit(LostTree(self.files.absolute(target, cwd), f"python -m {mod}"))
            elif mod in _HARMLESS_MODULES:
                pass
            else:
                self.emit(LostTree(cwd, f"python -m {mod} may write files"))
            return None
        rest = args[1:]
        flags = _INLINE_FLAGS.get(name, ())
        for i, arg in enumerate(rest):
            if arg in flags and i + 1 < len(rest):
                self.inline_code(name, rest[i + 1], cwd)
                return None
            if name in ("python", "py") and arg.startswith("-c") and len(arg) > 2:
                self.inline_code(name, arg[2:], cwd)
                return None
        operands = [a for a in rest if not a.startswith("-")]
        if not operands or operands[0] == "-":
            if stdin is not None:
                self.inline_code(name, stdin, cwd)
            elif set(rest) & _VERSION_FLAGS or not rest:
                pass  # a version query or an interactive prompt with nothing piped in
            else:
                self.emit(LostTree(cwd, f"{name} ran code from standard input"))
            return None
        self.emit(LostTree(cwd, f"script may write files: {name} {operands[0]}"))
        return None

    def inline_code(self, name: str, code: str, cwd: str | None) -> None:
        if _CODE_WRITES.search(code):
            self.emit(LostTree(cwd, f"inline {name} code may write files"))

    def task_runner(self, name: str, args: list[str], cwd: str | None) -> None:
        sub = next((a for a in args[1:] if not a.startswith("-")), "")
        if name in _NODE_PMS and (sub in _NODE_INSTALL or (not sub and name != "npm")):
            install = sub or "install"
            for lock in _NODE_LOCKS[name]:
                self.lose_named(cwd, [lock], f"{name} {install}")
            if install in _NODE_MANIFEST or (
                install in ("install", "i") and len([a for a in args[2:] if not a.startswith("-")])
            ):
                self.lose_named(cwd, ["package.json"], f"{name} {install}")
            self.emit(LostTree(self.files.absolute("node_modules", cwd), f"{name} {install}"))
            return
        if name in _NODE_PMS and sub in _NODE_READ_ONLY:
            return
        if name == "mise" and sub not in ("run", "r", "exec", "x", "watch"):
            return  # version manager commands: install, use, ls, trust …
        self.emit(LostTree(cwd, f"script may write files: {' '.join(args[:3])}"))

    def rewrite(self, targets: list[str], words: list[Word], cwd: str | None, name: str) -> None:
        self.rewriter_runs[name] = self.rewriter_runs.get(name, 0) + 1
        if self.reported_unchanged(name):
            return
        reason = f"rewritten by {name}"
        if not targets:
            self.emit(LostTree(cwd, reason))
            return
        for raw in targets:
            word = next((w for w in words if w.value == raw), None)
            if word is None:
                self.emit(LostTree(cwd, reason))
            else:
                self.lose_path(word, cwd, reason)

    def in_place(self, words: list[Word], cwd: str | None, tool: str, *, script_flags: set[str]):
        in_place = False
        script_given = False
        operands: list[Word] = []
        skip = False
        for i, w in enumerate(words[1:], start=1):
            v = w.value
            if skip:
                skip = False
                continue
            if v in script_flags:
                script_given = True
                skip = True
            elif v == "--in-place" or v.startswith("--in-place="):
                in_place = True
            elif re.fullmatch(r"-[a-zA-Z]*i\S*", v):
                in_place = True
                # BSD sed: `-i ''` takes the backup suffix as the next argument.
                if v == "-i" and i + 1 < len(words) and words[i + 1].value == "":
                    skip = True
                if "e" in v[1 : v.index("i")] or v.endswith("e"):
                    script_given = True
                    skip = v.endswith("e")
            elif v.startswith("-") and v != "-":
                if re.fullmatch(r"-[a-zA-Z]*e", v):
                    script_given = True
                    skip = True
            else:
                operands.append(w)
        if not in_place:
            return cwd, None
        files = operands if script_given else operands[1:]
        if not files:
            return cwd, None
        for w in files:
            self.lose(w, cwd, f"edited in place by {tool}")
        return cwd, None

    def move_or_copy(self, words: list[Word], cwd: str | None, *, copy: bool) -> None:
        recursive = False
        target_dir: Word | None = None
        operands: list[Word] = []
        skip = False
        for i, w in enumerate(words):
            if skip:
                skip = False
                continue
            v = w.value
            if v in ("-t", "--target-directory") and i + 1 < len(words):
                target_dir = words[i + 1]
                skip = True
            elif v.startswith("--target-directory="):
                target_dir = Word(v.split("=", 1)[1], v)
            elif v.startswith("-") and len(v) > 1:
                recursive = (
                    recursive or bool(re.search(r"[rRa]", v)) or v in ("--recursive", "--archive")
                )
            else:
                operands.append(w)
        if target_dir is not None:
            sources, dst, into = operands, target_dir, True
        elif len(operands) >= 2:
            sources, dst = operands[:-1], operands[-1]
            into = len(sources) > 1 or dst.value.endswith("/")
        else:
            return
        dst_path = self.path(dst, cwd)
        if dst_path is None:
            self.unknown_target(dst, cwd, "copied or moved to an unknown path")
            for w in sources if not copy else []:
                self.remove(w, cwd, True)
            return
        for w in sources:
            src = self.path(w, cwd)
            if src is None or not w.literal:
                # Unknown sources: whatever lands at the destination is unknown.
                self.emit(LostTree(dst_path, "copied or moved from unknown paths"))
                if not copy:
                    self.remove(w, cwd, True)
                continue
            if copy:
                self.emit(Copy(src, dst_path, into_dir=into, recursive=recursive))
            else:
                self.emit(Move(src, dst_path, into_dir=into))

    def patch_from(
        self, operands: list[Word], cwd: str | None, stdin: str | None, *, strip: int, tool: str
    ) -> None:
        values = [w.value for w in operands]
        if set(values) & {"--check", "--stat", "--numstat", "--summary"} and not {"--apply"} & set(
            values
        ):
            return
        if set(values) & {"-R", "--reverse", "--3way", "-3", "--cached", "--index"}:
            if "--cached" in values and "--index" not in values:
                return
            self.emit(LostTree(cwd, f"{tool} with options the replay does not model"))
            return
        for v in values:
            match = re.fullmatch(r"-p(\d+)", v)
            if match:
                strip = int(match.group(1))
        files = [w for w in operands if not w.value.startswith("-")]
        if not files:
            self.emit(UnifiedPatch(stdin, cwd, strip))
            return
        for w in files:
            path = self.path(w, cwd)
            self.emit(UnifiedPatch(self.files.text(path) if path else None, cwd, strip))

    # Helpers ---------------------------------------------------------------------------------

    def emit(self, effect: Effect) -> None:
        self.files.apply(effect)

    def path(self, word: Word | None, cwd: str | None) -> str | None:
        if word is None or not (word.literal or (word.tilde and not word.expands)):
            return None
        if not word.value:
            return None
        if not word.value.startswith(("/", "~")) and cwd is None:
            return None  # relative to a directory we lost track of
        return self.files.absolute(word.value, cwd)

    def remove(self, word: Word, cwd: str | None, recursive: bool) -> None:
        path = self.path(word, cwd)
        if path is not None:
            self.emit(Delete(path, recursive=recursive))
        elif word.glob and not (word.expands or word.brace) and cwd is not None:
            pattern = self.files.absolute(word.value, cwd)
            if pattern is not None:
                self.emit(GlobEffect(pattern, True, "removed by a glob", recursive))
        else:
            self.unknown_target(word, cwd, "removed a path the replay cannot resolve")

    def lose(self, word: Word, cwd: str | None, reason: str) -> None:
        path = self.path(word, cwd)
        if path is not None:
            self.emit(Write(path, None, reason=reason))
        elif word.glob and not (word.expands or word.brace) and cwd is not None:
            pattern = self.files.absolute(word.value, cwd)
            if pattern is not None:
                self.emit(GlobEffect(pattern, delete=False, reason=reason))
        else:
            self.unknown_target(word, cwd, reason)

    def lose_all(self, words: list[Word] | None, cwd: str | None, reason: str) -> None:
        if not words:
            self.emit(LostTree(cwd, reason))
            return
        for w in words:
            self.lose_path(w, cwd, reason)

    def lose_path(self, word: Word, cwd: str | None, reason: str) -> None:
        """Lose a file or a whole directory, whichever ``word`` names."""
        path = self.path(word, cwd)
        if path is None:
            self.lose(word, cwd, reason)
            return
        kind = self.files.is_dir(path)
        # With nothing known about the path, no extension suggests a directory of sources.
        if kind or (kind is None and not posixpath.splitext(path)[1]):
            self.emit(LostTree(path, reason))
        else:
            self.emit(Write(path, None, reason=reason))

    def lose_named(self, cwd: str | None, names: list[str], reason: str) -> None:
        for name in names:
            path = self.files.absolute(name, cwd) if cwd else None
            if path is None:
                self.emit(LostTree(None, reason))
            else:
                self.emit(Write(path, None, reason=reason))

    def unknown_target(self, word: Word, cwd: str | None, reason: str) -> None:
        """A target we cannot resolve: its literal directory prefix becomes uncertain."""
        if word.tilde and not word.expands:
            return  # a home directory the replay cannot place lies outside the project
        prefix = re.split(r"[$`*?\[{]", word.raw, maxsplit=1)[0]
        directory = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        if word.raw.startswith(("$", "`", '"$')) or cwd is None and not prefix.startswith("/"):
            self.emit(LostTree(None, reason))
            return
        self.emit(LostTree(self.files.absolute(directory or ".", cwd), reason))


def _status_decided_later(items: list[Item], index: int) -> bool:
    """Whether a command after ``items[index]`` decides the exit status regardless of it."""
    for i in range(index + 1, len(items)):
        item = items[i]
        if isinstance(item, str) and item in (";", "||", "&", "|", "|&"):
            if item in ("|", "|&"):
                continue  # the check's own pipeline is judged by the caller
            if any(isinstance(rest, SimpleCommand) for rest in items[i + 1 :]):
                return True
    return False


_TRIVIAL = set(
    "cd pushd popd export source . set unset mkdir echo printf true : alias ulimit umask clear pwd "
    "date sleep".split()
)


def _may_fail_before(items: list[Item], index: int) -> bool:
    """Whether an `&&`-chained command before ``items[index]`` may have failed in its place.

    In `npm ci && npm test` a nonzero status may be npm ci's, and then the tests never ran;
    `cd`, `source …/activate` and the like are taken to succeed.
    """
    i = index - 1
    while i >= 0:
        item = items[i]
        if isinstance(item, str):
            if item in ("(", ")", "&&"):
                i -= 1
                continue
            return False  # `;`, `||`, `|`, `&`: the chain before does not gate this command
        if item.argv and basename(item.argv[0].value) not in _TRIVIAL:
            return True
        i -= 1
    return False


def _after_double_dash(words: list[Word]) -> list[Word] | None:
    values = [w.value for w in words]
    if "--" not in values:
        return None
    return words[values.index("--") + 1 :]


def _drop_valued(words: list[Word], valued: set[str]) -> list[Word]:
    out: list[Word] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w.value in valued:
            skip = True
            continue
        out.append(w)
    return out


_PRINTF_ESCAPES = dict(zip("nt\\\"'rabfv", "\n\t\\\"'\r\a\b\f\v", strict=True))


def _printf(fmt: str, args: list[str]) -> str | None:
    """printf with %s, %d, %% and the common backslash escapes; None for anything else."""
    pieces: list[tuple[str, str]] = []  # ("lit", text) | ("spec", "s"/"d")
    i = 0
    literal: list[str] = []
    while i < len(fmt):
        c = fmt[i]
        if c == "\\" and i + 1 < len(fmt):
            escaped = _PRINTF_ESCAPES.get(fmt[i + 1])
            if escaped is None:
                return None
            literal.append(escaped)
            i += 2
        elif c == "%" and i + 1 < len(fmt):
            if fmt[i + 1] == "%":
                literal.append("%")
            elif fmt[i + 1] in "sd":
                pieces.append(("lit", "".join(literal)))
                literal = []
                pieces.append(("spec", fmt[i + 1]))
            else:
                return None
            i += 2
        else:
            literal.append(c)
            i += 1
    pieces.append(("lit", "".join(literal)))
    specs = sum(1 for kind, _ in pieces if kind == "spec")
    if specs == 0:
        return "".join(text for _, text in pieces)
    out: list[str] = []
    queue = list(args)
    while True:  # the format is reused until the arguments run out, at least once
        for kind, text in pieces:
            if kind == "lit":
                out.append(text)
                continue
            value = queue.pop(0) if queue else ""
            if text == "d":
                if value == "":
                    value = "0"
                if not re.fullmatch(r"[+-]?\d+", value):
                    return None
                value = str(int(value))
            out.append(value)
        if not queue:
            return "".join(out)


def run_script(script: str, cwd: str | None, files: Files, output: str | None = None) -> ShellRun:
    """Walk ``script`` from ``cwd``, applying its file effects to ``files`` as they happen.

    ``output`` is what the command printed; script runners echo the script bodies into it.
    """
    walker = _Walker(files, cwd, output)
    walker.run.cwd = walker.walk(parse(script), cwd)
    return walker.run
