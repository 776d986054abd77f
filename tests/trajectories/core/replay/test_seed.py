"""A replay seeded with the project's starting tree (a clone's commit) knows what the log never
showed, lays the log's writes over it, and lets what the log showed win where the two differ."""

from __future__ import annotations

import json

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import StateIndex, Status, replay

from .helpers import LOST, ROOT, UNCERTAIN, bash, cc, numbered, presumed, render

TREE = {"calc.py": "def add(a, b):\n    return a - b\n", "util.py": "X = 1\n"}


def seeded(b, tree=TREE):
    atif, side = b.build()
    blobs = MemoryBlobs()
    seed = {path: blobs.put(text.encode()) for path, text in tree.items()}
    return replay(atif, side, root=ROOT, blobs=blobs, seed=seed), blobs


def test_a_file_the_log_never_showed_is_known_from_the_seed_from_the_start():
    b = cc()
    bash(b, "python -m pytest", "1 failed", code=1)
    result, blobs = seeded(b)
    index = StateIndex.build(result)
    assert render(index.state_at_step(-1), blobs) == TREE
    assert render(index.state_before_event(result.commands[0].event_index), blobs) == TREE
    assert result.seed_disagreements == ()


def test_a_file_the_log_wrote_keeps_the_logs_bytes_and_edits_land_on_the_seed():
    b = cc()
    b.call("Write", {"file_path": f"{ROOT}/util.py", "content": "X = 2\n"}, "ok")
    b.call(
        "Edit",
        {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"},
        "ok",
    )
    result, blobs = seeded(b)
    assert render(result, blobs) == {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "util.py": "X = 2\n",
    }
    assert render(result.start, blobs) == TREE


def test_a_read_that_shows_other_content_than_the_seed_gives_the_start_the_logs_content():
    b = cc()
    b.call("Read", {"file_path": f"{ROOT}/util.py"}, numbered("X = 99  # not committed"))
    result, blobs = seeded(b)
    assert render(result.start, blobs)["util.py"] == "X = 99  # not committed"
    assert result.seed_disagreements == ("util.py",)
    index = StateIndex.build(result)
    assert render(index.state_at_step(-1), blobs)["util.py"] == "X = 99  # not committed"


def test_a_read_that_agrees_with_the_seed_records_nothing():
    b = cc()
    b.call("Read", {"file_path": f"{ROOT}/util.py"}, numbered("X = 1\n"))
    result, blobs = seeded(b)
    assert result.seed_disagreements == ()
    assert [e.changes for e in result.events] == [{}]


def test_an_edits_recorded_original_file_is_what_the_start_held():
    b = cc()
    original = "def add(a, b):\n    return a - b  # local\n"
    b.call(
        "Edit",
        {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"},
        "ok",
        side={"originalFile": original},
    )
    result, blobs = seeded(b)
    assert render(result.start, blobs)["calc.py"] == original
    assert render(result, blobs)["calc.py"] == "def add(a, b):\n    return a + b  # local\n"
    assert result.seed_disagreements == ("calc.py",)


def test_once_the_log_made_a_file_uncertain_a_later_read_is_no_disagreement():
    b = cc()
    bash(b, "python codegen.py")  # may have rewritten anything
    b.call("Read", {"file_path": f"{ROOT}/util.py"}, numbered("X = 3\n"))
    result, blobs = seeded(b)
    assert render(result.start, blobs) == TREE
    assert result.seed_disagreements == ()
    assert render(result, blobs) == {
        "calc.py": presumed(TREE["calc.py"]),
        "util.py": "X = 3\n",
        "**": UNCERTAIN,
    }


def test_a_seeded_file_under_a_script_keeps_its_content_as_a_presumption():
    b = cc()
    bash(b, "make gen")  # a target that echoed nothing: it may have written anything
    result, blobs = seeded(b)
    state = render(result, blobs)
    assert state["calc.py"] == presumed(TREE["calc.py"])
    assert result.final_state["calc.py"].status is Status.UNCERTAIN
    assert not result.final_state["calc.py"].known  # readers that do not presume see no content


def test_an_edit_applies_on_presumed_content_and_stays_presumed():
    b = cc()
    bash(b, "make gen")
    b.call(
        "Edit",
        {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"},
        "ok",
    )
    result, blobs = seeded(b)
    assert render(result, blobs)["calc.py"] == presumed("def add(a, b):\n    return a + b\n")


def test_a_full_write_or_read_makes_a_presumed_file_known_again():
    b = cc()
    bash(b, "make gen")
    b.call("Write", {"file_path": f"{ROOT}/calc.py", "content": "x = 1\n"}, "ok")
    b.call("Read", {"file_path": f"{ROOT}/util.py"}, numbered("X = 1\n"))
    result, blobs = seeded(b)
    state = render(result, blobs)
    assert (state["calc.py"], state["util.py"]) == ("x = 1\n", "X = 1\n")


def test_a_command_known_to_rewrite_the_tree_loses_the_seed():
    b = cc()
    bash(b, "git checkout main")
    result, blobs = seeded(b)
    assert render(result, blobs) == {"calc.py": LOST, "util.py": LOST, "**": UNCERTAIN}


def test_a_presumed_state_round_trips_through_the_stored_index():
    b = cc()
    bash(b, "make gen")
    bash(b, "python -m pytest", "1 failed", code=1)
    result, _ = seeded(b)
    index = StateIndex.build(result, every=1)
    loaded = StateIndex.from_dict(json.loads(json.dumps(index.to_dict())))
    assert loaded.state_at_step(1) == index.state_at_step(1) == dict(result.final_state)


def test_an_index_of_the_first_format_reads_the_same():
    b = cc()
    bash(b, "python -m pytest", "1 failed", code=1)
    result, _ = seeded(b)
    stored = StateIndex.build(result).to_dict()
    assert stored["format"] == 2
    old = StateIndex.from_dict({**stored, "format": 1})
    assert old.state_at_step(0) == StateIndex.build(result).state_at_step(0)


def test_without_a_seed_the_start_is_empty():
    b = cc()
    b.call("Read", {"file_path": f"{ROOT}/util.py"}, numbered("X = 1\n"))
    result, blobs = seeded(b, tree={})
    assert result.start == {} and result.seed_disagreements == ()
    assert render(result, blobs) == {"util.py": "X = 1\n"}
