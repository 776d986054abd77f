"""The fix of a repair: the files before the failing run, before the passing run, and between.

    fix = fix_between(replay, index, failing, passing)
    fix.start, fix.ref          # {path: sha} of the known project files at either end
    fix.modified                # ("calc.py",)

The window is the events from the failing run up to the passing one. Reads in it that came
before any write to a file only looked at it: its content was already there at the failing run,
so a full read tells the start content of a file the replay had not seen (or had lost) by then,
and a partial read marks it as seen without known content (``unknown``). What the window did
to files outside the project's sources (installed dependencies) is kept apart from the fix, and
trees it made uncertain are listed with the event that did it.

A file a command may have changed without the log showing how (``make gen`` between the runs,
or before the failing one) keeps its last known content, from the seed or the log, as a
presumption: it counts in ``start`` / ``ref`` with that content, and ``presumed`` says which
command may have changed it. The baseline in the image judges the presumption (the check must
still fail on the start and pass on the reference).
"""

from __future__ import annotations

from dataclasses import dataclass

from trajectories.core.replay import (
    ChangeKind,
    Entry,
    ReplayResult,
    ShellCommand,
    StateIndex,
    Status,
    is_tree,
    tree_dir,
)

from .files import is_project_source, under

_UNSEEN = Entry(None, Status.LOST)


@dataclass(frozen=True, slots=True)
class Fix:
    start: dict[str, str]
    ref: dict[str, str]
    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    unknown: tuple[str, ...]
    touched_unknown: tuple[str, ...]  # changed paths whose content is unknown at either end
    # Files taken at their last known content although a command since may have changed them:
    # path -> the command ("`make gen` at event 7 (make may rewrite files …)").
    presumed: dict[str, str]
    dependency_changes: tuple[str, ...]  # changed files inside installed dependencies
    uncertain_trees: tuple[tuple[int, str], ...]  # (event index, directory) in the window
    start_entries: dict[str, Entry]
    ref_entries: dict[str, Entry]


def fix_between(
    replay: ReplayResult, index: StateIndex, failing: ShellCommand, passing: ShellCommand
) -> Fix:
    start_state = index.state_before_event(failing.event_index)
    ref_state = index.state_before_event(passing.event_index)
    window = replay.events[failing.event_index : passing.event_index]

    observed: dict[str, Entry] = {}
    touched: set[str] = set()
    trees: list[tuple[int, str]] = []
    for event in window:
        for key, change in event.changes.items():
            if change.flagged:
                continue
            if is_tree(key):
                # Installed dependencies (node_modules/**) are rebuilt by the image, and
                # a removed tree is certain.
                directory = tree_dir(key)
                in_dependencies = not is_project_source(f"{directory}/x")
                if change.kind is not ChangeKind.DELETED and not in_dependencies:
                    trees.append((event.index, directory))
                continue
            if key in touched:
                continue
            if not change.observed:  # a read says what was there; it changes nothing
                touched.add(key)
            elif change.kind is ChangeKind.WRITTEN and change.sha:
                if not observed.get(key, _UNSEEN).known:
                    observed[key] = Entry(change.sha, Status.KNOWN)
            else:
                observed.setdefault(key, Entry(None, Status.PARTIAL))

    start_entries: dict[str, Entry] = {}
    for key, entry in start_state.items():
        if not is_tree(key):
            start_entries[key] = entry
    for key, entry in observed.items():
        current = start_entries.get(key)
        if current is None or not current.known:
            start_entries[key] = entry
    ref_entries = {k: e for k, e in ref_state.items() if not is_tree(k)}

    start: dict[str, str] = {}
    ref: dict[str, str] = {}
    added: list[str] = []
    modified: list[str] = []
    deleted: list[str] = []
    unknown: list[str] = []
    touched_unknown: list[str] = []
    dependency: list[str] = []
    presumed: list[str] = []
    for key in sorted(set(start_entries) | set(ref_entries)):
        s, r = start_entries.get(key), ref_entries.get(key)
        contents = all(e is None or e.presumed for e in (s, r))
        if contents:  # known or presumed at both ends: compare what each end holds
            changed = (s and s.sha) != (r and r.sha)
        else:
            changed = s != r or key in touched
        if not is_project_source(key):
            if changed:
                dependency.append(key)
            continue
        if s is not None and s.presumed and s.sha:
            start[key] = s.sha
        elif s is not None:
            unknown.append(key)
        if r is not None and r.presumed and r.sha:
            ref[key] = r.sha
        if contents and any(e is not None and not e.known for e in (s, r)):
            presumed.append(key)
        if not changed:
            continue
        if not contents:
            touched_unknown.append(key)
        elif s is None:
            added.append(key)
        elif r is None:
            deleted.append(key)
        else:
            modified.append(key)
    return Fix(
        start=start,
        ref=ref,
        added=tuple(added),
        modified=tuple(modified),
        deleted=tuple(deleted),
        unknown=tuple(k for k in unknown if k not in touched_unknown),
        touched_unknown=tuple(touched_unknown),
        presumed=_why_presumed(replay, passing.event_index, presumed),
        dependency_changes=tuple(dependency),
        uncertain_trees=tuple(trees),
        start_entries=start_entries,
        ref_entries=ref_entries,
    )


def _why_presumed(replay: ReplayResult, before: int, paths: list[str]) -> dict[str, str]:
    """For each presumed path, the last command before event ``before`` that may have changed
    it (the tree loss over it; the index keeps no reasons, the events do)."""
    if not paths:
        return {}
    losses = [
        (event, tree_dir(key), change.reason)
        for event in replay.events[:before]
        for key, change in event.changes.items()
        if is_tree(key) and change.kind is ChangeKind.LOST
    ]
    why: dict[str, str] = {}
    for path in paths:
        found = next((x for x in reversed(losses) if under(path, x[1])), None)
        if found is None:
            why[path] = "a command the trajectory does not show"
            continue
        event, _, reason = found
        command = replay.commands[event.command_index] if event.command_index is not None else None
        what = f"`{command.command.strip()[:80]}`" if command is not None else event.tool
        why[path] = f"{what} at event {event.index}" + (f" ({reason})" if reason else "")
    return why
