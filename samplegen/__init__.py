"""The bundled sample trajectories, written deterministically (``samples/make_samples.py``).

    from samplegen import STORIES, build
    build()["atif/bytesize-repair.trajectory.json"]    # the sample's text
    STORIES["codex"].final["src/slugify.js"]           # the project just before the passing run

Four small session logs, one per supported source format, each telling the same
kind of story in a tiny project: the user asks for a feature, the agent writes the
files, runs the project's check, sees it fail, fixes the bug and runs the very same
check again, which passes. Every file the project has is written by a tool call in
the log, so the whole project can be rebuilt from the log alone, and the checks
need nothing beyond the standard library (``python3 -m unittest``, ``node --test``).

The stories are in ``stories``, what their checks print in ``outputs``; one writer per agent
format (``claude_code``, ``codex``, ``pi``, ``atif``) tells its story in that format. The
package lives outside ``samples/`` because ingesting that folder (the main job) would count
every module in it as a skipped file. Nothing here is imported by the application.
"""

from __future__ import annotations

from collections.abc import Callable

from . import atif, claude_code, codex, pi
from .stories import STORIES, Story

WRITERS: dict[str, Callable[[Story], str]] = {
    "claude-code": claude_code.write,
    "codex": codex.write,
    "pi": pi.write,
    "atif": atif.write,
}


def build() -> dict[str, str]:
    """Every sample file: path relative to samples/ -> text."""
    return {story.sample: WRITERS[fmt](story) for fmt, story in STORIES.items()}


__all__ = ["STORIES", "WRITERS", "Story", "build"]
