"""A Harbor trial's start: the files its task's environment lays in the image.

    folder = task_folder({"calc-task": Path("datasets/calc-task")}, trial)
    overlay = task_overlay(folder, "/app", blobs)
    overlay.seed             # {"calc.py": sha, …}: what environment/Dockerfile copies into /app
    replay(..., seed=overlay.seed)

A trial's agent started in the image its task's ``environment/Dockerfile`` builds, so the files
that Dockerfile copies from its folder into the session's directory are the session's start,
as a clone's commit is for a session on a laptop. The task folder is the one ``source.tasks``
names for the trial's task (by name or by the path result.json records), else the one beside
the jobs folder, where harbor ran (``<where>/jobs/<job>/<trial>`` and ``<where>/<task path>``).
The task's ``tests/`` never enter: they are the verifier's, outside the environment's context.

What is read of the Dockerfile: its last stage's ``WORKDIR`` and its ``COPY``/``ADD`` from the
build context (shell and JSON forms; ``--chown``/``--chmod`` ignored, ``--from`` and URLs left out
with a note; a local tar given to ``ADD`` unpacked, safe members only), filtered by
``.dockerignore`` (its patterns matched with fnmatch against each path and the folders above
it, ``!`` exceptions last-wins). Files a ``FROM`` image already holds are in that image, not the
folder: a task that builds on an image of its repository gives no seed, and says so. No Python
library parses Dockerfiles' COPY semantics (dockerfile-parse only splits instructions), so the
few rules needed are here.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import shlex
import tarfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from trajectories.core.blobs import BlobStore
from trajectories.core.formats.model import HarborTrial

from ..mining.repair import DEFAULT_MAX_FILES, DEFAULT_MAX_START_BYTES
from .overlay import MAX_FILE_BYTES, NoSeed, Overlay, StartKind

_TARS = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def task_folder(tasks: Mapping[str, Path], trial: HarborTrial) -> Path | None:
    """The task folder of ``trial``: configured by name or recorded path, else beside the jobs
    folder it ran from; None when neither is there."""
    path = (trial.task_path or "").rstrip("/")
    for key in (trial.task, path, posixpath.basename(path)):
        if key and key in tasks:
            return tasks[key]
    if path and trial.trials_dir and not path.startswith("/"):
        depth = len(Path(trial.trials_dir).parts)
        if depth < len(trial.root.parents):
            beside = trial.root.parents[depth] / path
            if (beside / "task.toml").is_file():
                return beside
    return None


def task_overlay(
    folder: Path,
    root: str,
    blobs: BlobStore,
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_bytes: int = DEFAULT_MAX_START_BYTES,
) -> Overlay:
    """The seed the task in ``folder`` gives a session in ``root`` (the trial's directory in
    the image: /app, /testbed); never raises: what stops it is the overlay's reason."""
    overlay = Overlay(project=f"harbor task {folder.name}", clone=str(folder))
    dockerfile = folder / "environment" / "Dockerfile"
    try:
        text = dockerfile.read_text(encoding="utf-8")
    except FileNotFoundError:
        reason = f"{dockerfile} cannot be read: it does not exist"
        return replace(overlay, reason=reason, no_seed=NoSeed.CLONE_UNREADABLE)
    except UnicodeDecodeError:
        reason = f"{dockerfile} cannot be read: it is not UTF-8 text"
        return replace(overlay, reason=reason, no_seed=NoSeed.CLONE_UNREADABLE)
    except OSError as exc:
        reason = f"{dockerfile} cannot be read: {exc.strerror or exc}"
        return replace(overlay, reason=reason, no_seed=NoSeed.CLONE_UNREADABLE)
    laid, notes, base = _copied(text, dockerfile.parent)
    inside = {
        posixpath.relpath(path, root): data
        for path, data in laid.items()
        if path.startswith(root.rstrip("/") + "/")
    }
    how = f"the task's environment (environment/Dockerfile copies into {root})"
    if notes:
        how += "; left out: " + "; ".join(notes[:3])
    overlay = replace(overlay, how=how, start_kind=StartKind.HARBOR_TASK)
    left_out: dict[str, int] = {}
    kept: list[str] = []
    for key, data in sorted(inside.items()):
        why = "large" if len(data) > MAX_FILE_BYTES else None
        if why is None:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                why = "binary"
        if why is None:
            kept.append(key)
        else:
            left_out[why] = left_out.get(why, 0) + 1
    size = sum(len(inside[k]) for k in kept)
    if not kept:
        reason = (
            f"the environment builds FROM {base}; the session's files under {root} are in that "
            "image, not in the task's folder"
            if not inside
            else f"the environment copies no text files under {root}"
        )
        return replace(overlay, left_out=left_out, reason=reason, no_seed=NoSeed.NO_TEXT_FILES)
    if len(kept) > max_files or size > max_bytes:
        reason = (
            f"the task's environment is over the mining limits ({len(kept)} files, {size} "
            f"bytes; limits {max_files} files, {max_bytes} bytes)"
        )
        return replace(overlay, left_out=left_out, reason=reason, no_seed=NoSeed.OVER_LIMITS)
    seed = {key: blobs.put(inside[key]) for key in kept}
    return replace(overlay, seed=seed, left_out=left_out)


def _copied(text: str, context: Path) -> tuple[dict[str, bytes], list[str], str]:
    """(container path -> bytes the last stage copies from ``context``, notes on what was left
    out, the last stage's base image)."""
    ignored = _dockerignore(context)
    files: dict[str, bytes] = {}
    notes: list[str] = []
    base, workdir = "scratch", "/"
    for instruction, rest in _instructions(text):
        if instruction == "FROM":
            files, notes = {}, []  # only the last stage is the image the agent ran in
            base, workdir = rest.split()[0] if rest.split() else "scratch", "/"
        elif instruction == "WORKDIR":
            workdir = posixpath.normpath(posixpath.join(workdir, rest.strip().strip('"')))
        elif instruction in ("COPY", "ADD"):
            args = _arguments(rest)
            if any(a.startswith("--from") for a in args):
                notes.append(f"{instruction} {rest.strip()[:60]} (from another stage or image)")
                continue
            args = [a for a in args if not a.startswith("--")]
            if len(args) < 2:
                continue
            *sources, dest = args
            dest_abs = posixpath.normpath(posixpath.join(workdir, dest))
            into = dest.endswith("/") or len(sources) > 1
            for source in sources:
                notes += _copy(instruction, source, dest_abs, into, context, ignored, files)
    return files, notes, base


def _copy(
    instruction: str,
    source: str,
    dest: str,
    into: bool,
    context: Path,
    ignored: list[tuple[bool, str]],
    files: dict[str, bytes],
) -> list[str]:
    if "://" in source:
        return [f"{instruction} {source} (a URL)"]
    relative = source.lstrip("/")
    matches = sorted(context.glob(relative)) if _globbed(source) else [context / relative]
    into = into or len(matches) > 1
    for match in matches:
        rel = match.relative_to(context).as_posix() if match != context else "."
        if match.is_dir():
            for path in sorted(p for p in match.rglob("*") if p.is_file() and not p.is_symlink()):
                inner = path.relative_to(context).as_posix()
                if not _ignored(inner, ignored):
                    files[posixpath.join(dest, path.relative_to(match).as_posix())] = (
                        path.read_bytes()
                    )
        elif match.is_file() and not _ignored(rel, ignored):
            if instruction == "ADD" and match.name.endswith(_TARS):
                _untar(match, dest, files)
                continue
            target = posixpath.join(dest, match.name) if into else dest
            files[target] = match.read_bytes()
    return []


def _untar(archive: Path, dest: str, files: dict[str, bytes]) -> None:
    """ADD of a local tar: its regular files, none outside ``dest``."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = posixpath.normpath(member.name)
            if not member.isfile() or name.startswith(("..", "/")):
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                files[posixpath.join(dest, name)] = handle.read()


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, its arguments) with continuation lines joined and comments left out."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and not pending:
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        if whole:
            word, _, rest = whole.partition(" ")
            out.append((word.upper(), rest))
    return out


def _arguments(rest: str) -> list[str]:
    flags = []
    text = rest.strip()
    while text.startswith("--"):
        flag, _, text = text.partition(" ")
        flags.append(flag)
        text = text.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(p, str) for p in parsed):
            return [*flags, *parsed]
    return [*flags, *shlex.split(text)]


def _globbed(source: str) -> bool:
    return any(c in source for c in "*?[")


def _dockerignore(context: Path) -> list[tuple[bool, str]]:
    """(exception?, pattern) of the context's .dockerignore, in order."""
    try:
        lines = (context / ".dockerignore").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    patterns = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = posixpath.normpath(line.lstrip("!").strip().lstrip("/"))
        patterns.append((negate, pattern))
    return patterns


def _ignored(path: str, patterns: list[tuple[bool, str]]) -> bool:
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    verdict = False
    for negate, pattern in patterns:
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            verdict = not negate
    return verdict
