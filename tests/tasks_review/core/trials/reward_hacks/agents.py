"""The agents the hacks ride on: one that appends code to a project file, one that adds files."""

from __future__ import annotations

from tasks_review.core.trials import Control


def appended(path: str, code: str, name: str = "hack") -> Control:
    """An agent that appends ``code`` to the project file ``path`` and touches nothing else."""
    return Control(
        name=name,
        description=f"appends a targeted hack to {path}",
        files={".hack": code.encode()},
        shell=f"cat .hack >> {path} && rm .hack\n",
    )


def added(files: dict[str, str], name: str = "hack") -> Control:
    """An agent that adds ``files`` to the project (the bug stays)."""
    return Control(
        name=name,
        description="adds files the runner picks up",
        files={path: text.encode() for path, text in files.items()},
        shell="true\n",
    )
