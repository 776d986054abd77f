"""Version control and patches: ``git``, ``gh``, ``patch``, Codex's ``apply_patch``.

``git mv``/``rm`` and patches whose text is in the trajectory are certain. Whatever restores or
switches content from the repository (``git checkout``, ``stash``, ``reset --hard``, ``merge``)
loses what it may have touched: the named paths, else the whole worktree, since the replay never
sees the repository's objects.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..shell import Word
from .coreutils import move_or_copy
from .model import CodexPatch, LostTree, UnifiedPatch
from .registry import Call, Handled, handles

if TYPE_CHECKING:
    from .walk import Shell

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
_GH_WRITES = {"pr checkout", "repo clone", "repo fork", "run download", "release download"}


@handles("git")
def git(sh: Shell, call: Call) -> Handled:
    _git(sh, call)
    return call.cwd, None  # `git -C dir` runs there; the shell stays where it was


def _git(sh: Shell, call: Call) -> None:
    cwd = call.cwd
    rest = call.words[1:]
    while rest and rest[0].value.startswith("-"):
        flag = rest[0].value
        if flag == "-C" and len(rest) > 1:
            cwd = sh.files.absolute(rest[1].value, cwd) if rest[1].literal else None
            rest = rest[2:]
        elif flag in ("-c", "--git-dir", "--work-tree", "--namespace") and len(rest) > 1:
            rest = rest[2:]
        else:
            rest = rest[1:]
    if not rest:
        return
    sub, operands = rest[0].value, list(rest[1:])
    values = [w.value for w in operands]
    worktree = sh.files.absolute(".", None)  # the project root, all a revision switch may touch
    if sub in _GIT_READ_ONLY:
        return
    if sub == "mv":
        move_or_copy(sh, [w for w in operands if not w.value.startswith("-")], cwd, copy=False)
    elif sub == "rm":
        if "--cached" not in values:
            recursive = "-r" in values
            for w in operands:
                if not w.value.startswith("-"):
                    sh.remove(w, cwd, recursive)
    elif sub == "restore":
        if set(values) & {"--staged", "-S"} and not set(values) & {"--worktree", "-W"}:
            return
        targets = [w for w in operands if not w.value.startswith("-") and w.value != "--"]
        sh.lose_all(targets or None, cwd, "git restore")
    elif sub == "checkout":
        paths = operands[values.index("--") + 1 :] if "--" in values else None
        if paths is not None:
            sh.lose_all(paths, cwd, "git checkout of paths")
        elif values and values[0] in ("-b", "-B") and len(values) <= 2:
            return  # a new branch at HEAD leaves the worktree alone
        elif len(values) == 1 and values[0] == ".":
            sh.emit(LostTree(cwd, "git checkout .", rewrites=True))
        else:
            sh.emit(LostTree(worktree, "git checkout switched revision", rewrites=True))
    elif sub == "switch":
        if values and values[0] in ("-c", "-C", "--create") and len(values) <= 2:
            return
        sh.emit(LostTree(worktree, "git switch", rewrites=True))
    elif sub == "reset":
        if "--hard" in values or "--merge" in values or "--keep" in values:
            sh.emit(LostTree(worktree, "git reset --hard", rewrites=True))
    elif sub == "stash":
        action = values[0] if values else "push"
        if action not in ("list", "show", "drop", "clear", "create", "store", "branch"):
            sh.emit(LostTree(worktree, f"git stash {action}", rewrites=True))
    elif sub == "apply":
        _patch_from(sh, operands, cwd, call.stdin, strip=1, tool="git apply")
    elif sub == "clone":
        targets = [w for w in operands if not w.value.startswith("-")]
        if len(targets) >= 2:
            sh.emit(LostTree(sh.path(targets[1], cwd), "git clone", rewrites=True))
        elif targets:
            name = targets[0].value.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
            sh.emit(LostTree(sh.files.absolute(name, cwd), "git clone", rewrites=True))
    elif sub == "worktree" and values[:1] != ["list"]:
        sh.emit(LostTree(cwd, "git worktree"))
    elif sub in _GIT_TREE:
        sh.emit(LostTree(worktree, f"git {sub}", rewrites=True))
    elif sub in ("format-patch", "archive", "bundle"):
        sh.emit(LostTree(cwd, f"git {sub} writes files"))
    else:
        sh.emit(LostTree(worktree, f"git {sub}", rewrites=True))


def _patch_from(
    sh: Shell, operands: list[Word], cwd: str | None, stdin: str | None, *, strip: int, tool: str
) -> None:
    values = [w.value for w in operands]
    if set(values) & {"--check", "--stat", "--numstat", "--summary"} and not {"--apply"} & set(
        values
    ):
        return
    if set(values) & {"-R", "--reverse", "--3way", "-3", "--cached", "--index"}:
        if "--cached" in values and "--index" not in values:
            return
        sh.emit(LostTree(cwd, f"{tool} with options the replay does not model"))
        return
    for v in values:
        match = re.fullmatch(r"-p(\d+)", v)
        if match:
            strip = int(match.group(1))
    files = [w for w in operands if not w.value.startswith("-")]
    if not files:
        sh.emit(UnifiedPatch(stdin, cwd, strip))
        return
    for w in files:
        path = sh.path(w, cwd)
        sh.emit(UnifiedPatch(sh.files.text(path) if path else None, cwd, strip))


@handles("gh")
def gh(sh: Shell, call: Call) -> Handled:
    values = call.args[1:3]
    if " ".join(values) in _GH_WRITES:
        sh.emit(LostTree(call.cwd, f"gh {' '.join(values)}", rewrites=True))
    return call.cwd, None


@handles("patch")
def patch(sh: Shell, call: Call) -> Handled:
    words = call.words
    where = call.cwd  # `-d dir`: patch changes there before anything else, the shell does not
    strip = 0
    reverse = False
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
            where = sh.path(words[i + 1], call.cwd)
            skip = True
        elif w.value in ("-R", "--reverse"):
            reverse = True
        elif not w.value.startswith("-"):
            operands.append(w)
    if reverse:
        sh.emit(LostTree(where, "patch -R", rewrites=True))
        return call.cwd, None
    if patch_file is None and len(operands) >= 2:
        patch_file = operands[1]
    text = call.stdin
    if patch_file is not None:
        path = sh.path(patch_file, where)
        text = sh.files.text(path) if path else None
    sh.emit(UnifiedPatch(text, where, strip))
    return call.cwd, None


# The names agents call Codex's patch tool by.
@handles("apply_patch", "applypatch", "apply-patch")
def apply_patch(sh: Shell, call: Call) -> Handled:
    words = call.words
    text = words[1].value if len(words) > 1 and words[1].literal else call.stdin
    if text is None:
        sh.emit(LostTree(call.cwd, "apply_patch with an unreadable patch", rewrites=True))
    else:
        sh.emit(CodexPatch(text, call.cwd))
    return call.cwd, None
