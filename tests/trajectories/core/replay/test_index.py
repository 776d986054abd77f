"""Events and the state index: the files at any step from one checkpoint and a few deltas."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import (
    StateIndex,
    event_after_step,
    is_tree,
    locate,
    replay,
    state_from,
)
from trajectories.core.replay.synthetic import AtifBuilder, claude_code_session

from .helpers import LOST, PARTIAL, ROOT, UNCERTAIN, bash, cc, numbered, presumed, render, run

# -- events and the state index ------------------------------------------------------------------


def test_events_follow_step_order_then_call_order():
    b = cc()
    b.user("go")
    b.call("Write", {"file_path": "/repo/a", "content": "a"}, "ok")
    b.steps[-1]["tool_calls"].append(
        {
            "tool_call_id": "second",
            "function_name": "Write",
            "arguments": {"file_path": "/repo/b", "content": "b"},
        }
    )
    b.steps[-1]["observation"]["results"].append({"source_call_id": "second", "content": "ok"})
    result, _ = run(b)
    assert [(e.index, e.step_index, e.step_id, list(e.changes)) for e in result.events] == [
        (0, 1, 2, ["a"]),
        (1, 1, 2, ["b"]),
    ]


def test_state_at_step_and_diff_against_the_previous_step():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "1"}, "ok")
    b.user("next")
    b.call("Write", {"file_path": "/repo/a.py", "content": "2"}, "ok")
    bash(b, "rm a.py")
    result, blobs = run(b)
    index = StateIndex.build(result, every=2)
    assert render(index.state_at_step(0), blobs) == {"a.py": "1"}
    assert render(index.state_at_step(1), blobs) == {"a.py": "1"}
    assert render(index.state_at_step(2), blobs) == {"a.py": "2"}
    assert index.state_at_step(3) == {}
    (changed,) = index.diff(2)
    assert changed.path == "a.py"
    assert changed.old is not None and changed.new is not None
    assert blobs.get(changed.old.sha or "") == b"1" and blobs.get(changed.new.sha or "") == b"2"
    (removed,) = index.diff(3)
    assert removed.new is None
    assert index.diff(1) == []
    assert index.diff_event(2) == index.diff(3)


def test_state_before_an_event_is_what_a_command_ran_against():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "1"}, "ok")
    bash(b, "pytest", "1 failed", code=1)
    b.call("Write", {"file_path": "/repo/a.py", "content": "2"}, "ok")
    bash(b, "pytest", "1 passed")
    result, blobs = run(b)
    index = StateIndex.build(result)
    failing, passing = result.checks
    assert render(index.state_before_event(failing.event_index), blobs) == {"a.py": "1"}
    assert render(index.state_before_event(passing.event_index), blobs) == {"a.py": "2"}


def test_index_round_trips_through_json():
    syn = claude_code_session(300, seed=3)
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=MemoryBlobs())
    index = StateIndex.build(result, every=16)
    stored = json.loads(json.dumps(index.to_dict()))
    loaded = StateIndex.from_dict(stored)
    for step in range(-1, result.n_steps, 7):
        assert loaded.state_at_step(step) == index.state_at_step(step)


def test_one_lookup_loads_one_checkpoint_and_one_block():
    syn = claude_code_session(500, seed=4)
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=MemoryBlobs())
    index = StateIndex.build(result, every=32)
    stored = json.loads(json.dumps(index.to_dict()))
    step = 411
    event = event_after_step(stored["step_events"], step)
    block, offset = locate(stored["every"], event)
    state = state_from(stored["checkpoints"][block], stored["blocks"][block][:offset])
    assert state == index.state_at_step(step)
    assert offset < stored["every"]


def test_lookup_cost_does_not_grow_with_position():
    syn = claude_code_session(20_000, seed=5)
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=MemoryBlobs())
    index = StateIndex.build(result, every=64)
    applied: list[int] = []

    class Counting(list):
        def __iter__(self):
            applied.append(len(self))
            return super().__iter__()

    index.deltas = [Counting(d) for d in index.deltas]
    costs = {}
    for step in (10, 5_000, 19_999):
        applied.clear()
        index.state_at_step(step)
        costs[step] = len(applied)
    assert all(cost < 64 for cost in costs.values()), costs
    assert max(costs.values()) - min(costs.values()) < 64


def test_synthetic_session_replays_to_its_ground_truth():
    syn = claude_code_session(2_000, seed=11)
    blobs = MemoryBlobs()
    result = replay(syn.atif, syn.side_data, root=syn.root, blobs=blobs)
    assert render(result, blobs) == syn.files
    assert [(c.step_index, c.exit_code) for c in result.checks] == syn.checks
    assert {c.check.kind for c in result.checks if c.check} == {"test"}


def test_summary_reports_files_commands_and_checks():
    b = cc()
    b.call("Write", {"file_path": "/repo/a.py", "content": "a"}, "ok")
    b.call("Edit", {"file_path": "/repo/b.py", "old_string": "x", "new_string": "y"}, "ok")
    bash(b, "cd api && go test ./...", "FAIL", code=1)
    bash(b, "ls")
    result, _ = run(b)
    summary = result.summary()
    assert json.loads(json.dumps(summary)) == summary
    assert summary["files_known"] == 1 and summary["files_lost"] == 1
    assert summary["commands"] == 2
    assert summary["checks"] == [
        {
            "step": 2,
            "event": 2,
            "command": "cd api && go test ./...",
            "cwd": "api",
            "exit_code": 1,
            "kind": "test",
            "language": "go",
            "runner": "go",
            "masked": False,
        }
    ]


# -- property: random access equals a naive full replay -------------------------------------------

NAMES = ["a.txt", "b.txt", "d/c.txt", "d/e.txt"]

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("edit"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("read"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("read_part"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("rm"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("mv"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("echo"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("append"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("sed"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("touch"), st.sampled_from(NAMES), st.integers(0, 0)),
    st.tuples(st.just("script"), st.sampled_from(["", "d"]), st.integers(0, 0)),
    st.tuples(st.just("user"), st.just(""), st.integers(0, 0)),
)


def _like(was: str, text: str) -> str:
    """``text`` known the way ``was`` was: presumed if it was presumed, else known."""
    return presumed(text) if was.startswith(presumed("")) else text


def _text(shown: str) -> str:
    return shown.removeprefix(presumed(""))


def simulate(ops: list[tuple[str, str, int]]) -> tuple[AtifBuilder, list[dict[str, str]]]:
    """Play ``ops`` on a pretend disk and say, after each step, what replay must know."""
    disk: dict[str, str] = {}
    known: dict[str, str] = {}  # what replay should report (text | LOST | PARTIAL | UNCERTAIN)
    absent: set[str] = set()
    b = cc()
    snapshots = []
    for kind, name, n in ops:
        path = f"/repo/{name}"
        if kind == "write":
            disk[name] = known[name] = f"w{n}\n"
            absent.discard(name)
            b.call("Write", {"file_path": path, "content": disk[name]}, "ok")
        elif kind == "edit" and disk.get(name, "").split("\n")[0]:
            old = disk[name].split("\n")[0]
            disk[name] = disk[name].replace(old, f"{old}e{n}", 1)
            was = known.get(name)
            known[name] = LOST if was in (None, LOST, PARTIAL) else _like(was, disk[name])
            b.call("Edit", {"file_path": path, "old_string": old, "new_string": f"{old}e{n}"}, "ok")
        elif kind == "read" and name in disk:
            known[name] = disk[name]
            b.call("Read", {"file_path": path}, numbered(disk[name]))
        elif kind == "read_part" and name in disk:
            if known.get(name) in (None, LOST, PARTIAL):
                known[name] = PARTIAL
            b.call(
                "Read",
                {"file_path": path, "offset": 1, "limit": 1},
                numbered(disk[name].split("\n")[0]),
            )
        elif kind == "rm" and name in disk:
            del disk[name]
            known.pop(name, None)
            absent.add(name)
            bash(b, f"rm {name}")
        elif kind == "mv" and name in disk:
            target = NAMES[n]
            if target == name:
                continue
            disk[target] = disk.pop(name)
            was = known.pop(name, None)
            known[target] = was if was not in (None, LOST, PARTIAL) else LOST  # presumed stays
            absent.add(name)
            absent.discard(target)
            bash(b, f"mv {name} {target}")
        elif kind == "echo":
            disk[name] = known[name] = f"e{n}\n"
            absent.discard(name)
            bash(b, f"echo e{n} > {name}")
        elif kind == "append":
            base = known.get(name, "" if name in absent else None)
            disk[name] = disk.get(name, "") + f"a{n}\n"
            known[name] = LOST if base in (None, LOST, PARTIAL) else _like(base, disk[name])
            absent.discard(name)
            bash(b, f"echo a{n} >> {name}")
        elif kind == "sed" and name in disk:
            disk[name] = disk[name] + "s\n"
            known[name] = LOST
            bash(b, f"sed -i 's/$/s/' {name}")
        elif kind == "touch":
            if name not in disk:
                disk[name] = ""
                if name in absent:
                    known[name] = ""
                absent.discard(name)
            bash(b, f"touch {name}")
        elif kind == "script":
            marker = f"{name}/**" if name else "**"
            for key in list(known):
                if is_tree(key) and (not name or key.startswith(name + "/")):
                    del known[key]
                elif not name or key.startswith(name + "/"):
                    # A script only may have written: what was known stays, presumed.
                    was = known[key]
                    known[key] = LOST if was in (LOST, PARTIAL) else _like(presumed(""), _text(was))
            known[marker] = UNCERTAIN
            bash(b, "python tool.py" if not name else "(cd d && python tool.py)")
        elif kind == "user":
            b.user()
        else:
            continue
        snapshots.append(dict(known))
    return b, snapshots


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=25), st.integers(1, 5))
def test_state_at_every_step_equals_a_naive_full_replay(ops, every):
    b, expected = simulate(ops)
    atif, side = b.build()
    blobs = MemoryBlobs()
    result = replay(atif, side, root=ROOT, blobs=blobs)
    index = StateIndex.build(result, every=every)
    for step in range(len(atif["steps"])):
        truncated = {**atif, "steps": atif["steps"][: step + 1]}
        naive = replay(truncated, side, root=ROOT, blobs=blobs).final_state
        assert index.state_at_step(step) == naive
        assert render(naive, blobs) == expected[step]
