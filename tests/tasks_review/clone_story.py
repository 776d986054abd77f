"""A session whose project the log never shows, and the user's clone that has it.

The Codex sample (slugify: ``npm test`` fails, one ``apply_patch`` fixes ``src/slugify.js``,
``npm test`` passes) with its first ``apply_patch``, the one that wrote the project's files,
taken out: the log now patches a file it never showed, as a session in an existing repository
does. The files it wrote are the clone's first commit, a day before the session; a second
commit, a day after, already holds the fix (a start laid on it would have nothing to fix).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import SAMPLES
from tests.tasks_review.gitrepo import GitRepo

CWD = "/home/dev/projects/slugify"
REMOTE = "git@github.com:dev/slugify.git"
BEFORE, AFTER = "2026-03-01T12:00:00Z", "2026-03-03T12:00:00Z"  # the session: 2026-03-02
REQUEST = "The slugify tests fail on longer titles. Make `npm test` pass."


@dataclass(frozen=True)
class CloneStory:
    sessions: Path  # the folder holding the rollout
    clone: GitRepo
    start: str  # the commit the session started from
    later: str  # the commit after it, with the fix
    files: dict[str, str]  # the project at the start, as the clone has it


def clone_story(folder: Path, *, branch: str = "main", record_commit: bool = True) -> CloneStory:
    """``record_commit=False``: the rollout records only the branch (the start is found by
    time); ``branch``: the branch the session says it was on."""
    sample = next((SAMPLES / "codex").glob("rollout-*.jsonl"))
    lines = [json.loads(line) for line in sample.read_text().splitlines()]
    writer = next(
        line["payload"]["call_id"]
        for line in lines
        if line["payload"].get("type") == "custom_tool_call"
        and "*** Add File:" in line["payload"].get("input", "")
    )
    ended = next(
        line["payload"]
        for line in lines
        if line["payload"].get("type") == "patch_apply_end" and line["payload"]["call_id"] == writer
    )
    files = {
        path.removeprefix(CWD + "/"): change["content"] for path, change in ended["changes"].items()
    }

    clone = GitRepo(folder / "clone")
    start = clone.commit(BEFORE, files, "slugify with a test suite")
    source = files["src/slugify.js"]
    assert ".replace(/[\\s-]+/, '-')" in source
    fixed = source.replace(".replace(/[\\s-]+/, '-')", ".replace(/[\\s-]+/g, '-')")
    later = clone.commit(AFTER, {"src/slugify.js": fixed}, "fix slugify")

    kept = []
    for line in lines:
        payload = line["payload"]
        if payload.get("call_id") == writer:
            continue  # the files are never shown
        if line["type"] == "session_meta":
            git = {"branch": branch, "repository_url": REMOTE}
            if record_commit:
                git["commit_hash"] = start
            payload["git"] = git
        if payload.get("type") == "message" and payload.get("role") == "user":
            for part in payload["content"]:
                if part["text"].startswith("Set up"):
                    part["text"] = REQUEST
        if payload.get("type") == "user_message":
            payload["message"] = REQUEST
        kept.append(line)
    sessions = folder / "sessions"
    sessions.mkdir()
    (sessions / sample.name).write_text("".join(json.dumps(x) + "\n" for x in kept))
    return CloneStory(sessions, clone, start, later, files)


def generate_config(folder: Path, story: CloneStory, *, clones: bool, **options) -> Path:
    """A generate config over the story's session, with (or without) its clone."""
    source = {"kind": "trajectory", "path": str(story.sessions), "format": "auto"}
    if clones:
        source["clones"] = {CWD: str(story.clone.path)}
    config = {
        "source": source,
        "pipeline": {"name": "trajectory_to_env", "options": {"families": ["repair"], **options}},
        "output": {"destination": str(folder / ("out-clone" if clones else "out"))},
    }
    path = folder / ("with-clone.yaml" if clones else "without-clone.yaml")
    path.write_text(json.dumps(config))  # JSON is YAML
    return path
