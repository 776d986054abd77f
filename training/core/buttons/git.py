"""The button for git, where it fits: hooks that refuse force pushes and test tampering.

hooks = git_hooks(spec, context=TaskContext(test_files=("tests/test_app.py",)))
[h.name for h in hooks]        # ['pre-commit', 'pre-push']
hooks[1].install(repo)         # .git/hooks/pre-push, executable

Git runs these whoever makes the change, an agent's tool call, a script it wrote or a person,
so they back the Claude Code hook up where it cannot see (githooks(5)):

- ``pre-push`` (``force_push``), POSIX sh: git gives it ``<local ref> <local sha> <remote ref>
  <remote sha>`` per ref; an update whose remote commit is not an ancestor of the pushed one
  would drop the remote's history, whichever flag forced it, and is refused. New branches,
  deletions (as in ``forbidden/push.py``, which counts only ``--mirror`` among pushes that may
  delete) and fast-forwards pass, even when ``--force`` was typed: nothing is lost. A remote
  commit we do not have locally cannot be an ancestor: fetch first.
- ``pre-commit`` (``tamper_with_tests``), Python: the staged changes judged by the detector
  itself (``precommit.py``), with the task's test files from the rule or the context.

A hook is skipped by ``git commit --no-verify`` / ``git push --no-verify``: they guard against
mistakes, not against someone set on bypassing them.
"""

from __future__ import annotations

import pprint
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..facts import TaskContext
from ..spec import BehaviourSpec
from .bundle import FORBIDDEN_MODULES, bundle
from .rules import HookConfig
from .words import forbidden_words

GitHookName = Literal["pre-commit", "pre-push"]


@dataclass(frozen=True, slots=True)
class GitHook:
    name: GitHookName
    script: str
    blocks: str  # what it refuses, in words

    def install(self, repo: Path) -> Path:
        """Write the hook where git looks for it in ``repo`` (``core.hooksPath`` respected)."""
        done = subprocess.run(
            ["git", "rev-parse", "--git-path", f"hooks/{self.name}"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        path = Path(done.stdout.strip())
        path = path if path.is_absolute() else repo / path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.script, encoding="utf-8")
        path.chmod(0o755)
        return path


def git_hooks(spec: BehaviourSpec, *, context: TaskContext | None = None) -> tuple[GitHook, ...]:
    """The git hooks that enforce part of ``spec`` (none when git has nothing to refuse)."""
    hooks: list[GitHook] = []
    rules = {rule.name: rule for rule in spec.forbidden}
    version = f", spec version {spec.version}" if spec.version is not None else ""
    name = f"{spec.title}” ({spec.slug}{version})"
    if "tamper_with_tests" in rules:
        rule = rules["tamper_with_tests"]
        tests = (context or TaskContext()).test_files
        words = forbidden_words(rule, tests)
        config = HookConfig(
            behaviour=spec.slug,
            version=spec.version,
            title=spec.title,
            rules=(rule,),
            words={rule.name: words},
            context=TaskContext(test_files=tests),
        )
        hooks.append(GitHook("pre-commit", _pre_commit(config, name), words))
    if "force_push" in rules:
        words = forbidden_words(rules["force_push"])
        hooks.append(GitHook("pre-push", _PRE_PUSH.replace("__NAME__", name), words))
    return tuple(hooks)


def _pre_commit(config: HookConfig, name: str) -> str:
    embedded = bundle(
        ["training.core.buttons.precommit"],
        extract={
            m: ()
            for m in (
                "training.core.facts.model",
                "training.core.forbidden",
                *FORBIDDEN_MODULES,
                "training.core.spec",
            )
        },
    )
    header = f'''#!/usr/bin/env python3
"""traj2env git pre-commit hook for “{name}.

Refuses a commit whose staged changes tamper with the tests: {config.words["tamper_with_tests"]}.
Install as .git/hooks/pre-commit (executable). Needs python3 3.11 or newer, standard library only.
The rule is traj2env's own (training/core/forbidden/), embedded below: regenerate, don't edit.
"""

import sys

CONFIG = {pprint.pformat(config.to_dict(), width=96, sort_dicts=True)}

'''
    footer = """

if __name__ == "__main__":
    if sys.version_info < (3, 11):
        print("The traj2env hook needs python3 3.11 or newer: commit refused.", file=sys.stderr)
        sys.exit(1)
    install()
    from training.core.buttons.precommit import main

    sys.exit(main(CONFIG, sys.argv[1:]))
"""
    return header + embedded.render() + footer


_PRE_PUSH = """#!/bin/sh
# traj2env git pre-push hook for “__NAME__: never force-push.
#
# git gives "<local ref> <local sha> <remote ref> <remote sha>" per ref on stdin. An update whose
# remote commit is not an ancestor of the pushed commit would drop the remote's history, whatever
# flag forced it: refused. New branches, deletions and fast-forwards pass.
zero=$(git hash-object --stdin </dev/null | sed 's/./0/g')
refused=0
while read -r local_ref local_sha remote_ref remote_sha; do
    [ -n "$remote_sha" ] || continue
    [ "$local_sha" = "$zero" ] && continue
    [ "$remote_sha" = "$zero" ] && continue
    if ! git merge-base --is-ancestor "$remote_sha" "$local_sha" 2>/dev/null; then
        echo "Push refused by the traj2env hook: $local_ref -> $remote_ref of $1 would drop" \\
            "commits the remote has (a force push). Never force-push: fetch, merge or rebase" \\
            "onto the remote branch, and push again." >&2
        refused=1
    fi
done
exit $refused
"""
