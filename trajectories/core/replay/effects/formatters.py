"""Formatters and fixers that rewrite sources: ``black .``, ``ruff check --fix``, ``prettier -w``.

Which commands rewrite and where is ``checks.rewrites``; here their targets are lost, unless the
formatter's own output says that every run of it in this command line changed nothing (biome's
"No fixes applied", black's "left unchanged").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..shell import Word
from .model import LostTree

if TYPE_CHECKING:
    from .walk import Shell

# A formatter's own report that it changed nothing: (unchanged, changed) patterns.
_UNCHANGED_REPORTS = {
    "biome": (re.compile(r"No fixes applied"), re.compile(r"Fixed \d+ files?")),
    "black": (re.compile(r"\d+ files? left unchanged"), re.compile(r"reformatted")),
    "ruff": (re.compile(r"\d+ files? left unchanged"), re.compile(r"reformatted|Fixed \d+")),
}


def rewrite(sh: Shell, targets: list[str], words: list[Word], cwd: str | None, name: str) -> None:
    """Lose what formatter ``name`` rewrote: ``targets`` ([] for the working directory)."""
    sh.rewriter_runs[name] = sh.rewriter_runs.get(name, 0) + 1
    if _reported_unchanged(sh, name):
        return
    reason = f"rewritten by {name}"
    # One that said it changed files rewrote them; one that said nothing only may have.
    rewrites = _reported_changed(sh, name)
    if not targets:
        sh.emit(LostTree(cwd, reason, rewrites=rewrites))
        return
    for raw in targets:
        word = next((w for w in words if w.value == raw), None)
        if word is None:
            sh.emit(LostTree(cwd, reason, rewrites=rewrites))
        else:
            sh.lose_path(word, cwd, reason)


def _reported_changed(sh: Shell, name: str) -> bool:
    reports = _UNCHANGED_REPORTS.get(name)
    return reports is not None and bool(sh.output) and bool(reports[1].search(sh.output or ""))


def _reported_unchanged(sh: Shell, name: str) -> bool:
    """Every run of this formatter so far said it changed nothing (in the output)."""
    reports = _UNCHANGED_REPORTS.get(name)
    if reports is None or not sh.output:
        return False
    unchanged, changed = reports
    if changed.search(sh.output):
        return False
    return len(unchanged.findall(sh.output)) >= sh.rewriter_runs[name]
