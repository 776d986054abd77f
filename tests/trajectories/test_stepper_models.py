"""How the stepper presents a step: the file tree in natural order with markers and deletions,
diffs that say what they cannot show, and arguments highlighted by what they are."""

from __future__ import annotations

from trajectories.core.replay import Entry, FileDiff, Status
from trajectories.replay_reads import StepFiles, files_diff
from trajectories.stepper_models import args_of, diff_view, tree_rows

KNOWN_A, KNOWN_B = Entry("a" * 64, Status.KNOWN), Entry("b" * 64, Status.KNOWN)
LOST = Entry(None, Status.LOST)


def files_of(before: dict, after: dict) -> StepFiles:
    return StepFiles(before=before, after=after, changes=files_diff(before, after))


def test_the_tree_lists_directories_first_in_natural_order_with_markers_and_deletions():
    before = {"src/mod_10.py": KNOWN_A, "src/old.py": KNOWN_A, "README.md": KNOWN_A}
    after = {
        "src/mod_10.py": KNOWN_A,
        "src/mod_2.py": KNOWN_B,
        "src/lib/x.py": LOST,
        "src/**": LOST,
        "README.md": KNOWN_A,
    }
    rows = [
        (r.depth, r.name, r.kind, r.status, r.change) for r in tree_rows(files_of(before, after))
    ]
    assert rows == [
        (0, "src", "dir", "", ""),
        (1, "src/**", "marker", "uncertain", "uncertain"),
        (1, "lib", "dir", "", ""),
        (2, "x.py", "file", "lost", "lost"),
        (1, "mod_2.py", "file", "known", "added"),
        (1, "mod_10.py", "file", "known", ""),
        (1, "old.py", "file", "deleted", "deleted"),
        (0, "README.md", "file", "known", ""),
    ]


def test_a_diff_says_what_it_cannot_show():
    def view(old, new, blobs=None, path="a.py"):
        return diff_view(FileDiff(path, old, new), blobs or {})

    text = {"a" * 64: b"one\n", "b" * 64: b"two\n"}
    assert view(KNOWN_A, KNOWN_B, text).html and view(KNOWN_A, KNOWN_B, text).change == "modified"
    recovered = view(LOST, KNOWN_B, text)
    assert recovered.change == "recovered" and "unknown (lost)" in recovered.note
    assert "+two" in recovered.html
    binary = view(KNOWN_A, KNOWN_B, {"a" * 64: b"\0\1", "b" * 64: b"two\n"})
    assert binary.html is None and binary.note == "Binary file (2 → 4 bytes)."
    big = view(KNOWN_A, KNOWN_B, {"a" * 64: b"x" * (1 << 20), "b" * 64: b""})
    assert big.html is None and big.note.startswith("Too large to diff")
    gone = view(LOST, None)
    assert gone.change == "deleted" and "unknown (lost)" in gone.note and gone.html is None
    partial = view(KNOWN_A, Entry(None, Status.PARTIAL))
    assert partial.html is None and "partial" in partial.note
    cleared = view(LOST, None, path="build/**")
    assert cleared.change == "cleared" and cleared.label == "build/**"


def test_arguments_are_highlighted_by_what_they_are():
    args = {a.key: a for a in args_of({"command": "ls -la", "timeout": 30})}
    assert (
        '<span class="w"> </span>-la' in args["command"].shown.html and args["timeout"].text == "30"
    )
    argv = args_of({"command": ["bash", "-lc", "pytest -q && echo ok"]})[0]
    assert "bash" not in argv.shown.html and "pytest" in argv.shown.html
    write = {a.key: a for a in args_of({"file_path": "/r/a.js", "content": "const x = 1;\n"})}
    assert (
        '<span class="kd">const</span>' in write["content"].shown.html
    )  # JavaScript, by file name
    patch = args_of('{"input": "*** Begin Patch\\n+added\\n"}')[0]
    assert '<span class="gi">+added</span>' in patch.shown.html
    assert args_of("not json <b>")[0].shown.html.count("&lt;b&gt;") == 1


def test_a_file_a_script_may_have_changed_says_so_and_keeps_its_last_known_content():
    presumed = Entry("a" * 64, Status.UNCERTAIN)
    view = diff_view(FileDiff("a.py", KNOWN_A, presumed), {})
    assert view.change == "uncertain" and "may have changed" in view.note
    assert "Everything under" not in view.note  # a file, not a folder's marker
    rows = tree_rows(files_of({"a.py": KNOWN_A}, {"a.py": presumed, "**": LOST}))
    assert [(r.name, r.status, r.change) for r in rows if r.kind == "file"] == [
        ("a.py", "uncertain", "uncertain")
    ]
