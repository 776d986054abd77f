"""Hand-built trajectories for the repair family's tests: a Claude-Code-style session, mined."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tasks_review.core.mining import Drop, DropReason, RepairCandidate, find_repair_candidates
from tasks_review.core.mining.scriptfiles import Above
from trajectories.core.blobs import BlobStore, MemoryBlobs
from trajectories.core.replay import StateIndex, replay
from trajectories.core.replay.synthetic import AtifBuilder

ROOT = "/repo"
CALC_BUGGY = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b  # the sum, not the difference\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PYTEST_FAIL = (
    "F                                                                        [100%]\n"
    "    def test_add():\n>       assert add(2, 3) == 5\nE       assert -1 == 5\n"
    f"{ROOT}/tests/test_calc.py:5: AssertionError\n1 failed in 0.02s"
)


@dataclass
class Mined:
    candidates: list[RepairCandidate]
    drops: list[Drop]
    blobs: MemoryBlobs

    @property
    def only(self) -> RepairCandidate:
        assert not self.drops, self.drops
        (candidate,) = self.candidates
        return candidate

    @property
    def dropped(self) -> Drop:
        assert not self.candidates, [c.summary() for c in self.candidates]
        (drop,) = self.drops
        return drop


def texts(files: Mapping[str, str], blobs: BlobStore) -> dict[str, str]:
    return {path: blobs.get(sha).decode() for path, sha in files.items()}


class Session:
    """A Claude-Code-style session written step by step, replayed and mined on demand."""

    def __init__(self, root: str = ROOT, agent: str = "claude-code") -> None:
        self.root = root
        self.builder = AtifBuilder(agent, root=root)

    def path(self, path: str) -> str:
        return path if path.startswith("/") or ":" in path else f"{self.root}/{path}"

    def user(self, text: str) -> Session:
        self.builder.user(text)
        return self

    def write(self, path: str, content: str) -> Session:
        full = self.path(path)
        self.builder.call(
            "Write",
            {"file_path": full, "content": content},
            f"File created successfully at: {full}",
        )
        return self

    def edit(self, path: str, old: str, new: str) -> Session:
        full = self.path(path)
        self.builder.call(
            "Edit",
            {"file_path": full, "old_string": old, "new_string": new, "replace_all": False},
            f"The file {full} has been updated successfully.",
        )
        return self

    def read(self, path: str, content: str) -> Session:
        lines = [*content.split("\n")]
        listing = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, 1))
        self.builder.call("Read", {"file_path": self.path(path)}, listing)
        return self

    def read_part(self, path: str, first_lines: list[str]) -> Session:
        listing = "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(first_lines, 1))
        args = {"file_path": self.path(path), "offset": 1, "limit": len(first_lines)}
        self.builder.call("Read", args, listing)
        return self

    def run(self, command: str, *, fail: bool = False, output: str = "") -> Session:
        if fail:
            self.builder.call("Bash", {"command": command}, f"Exit code 1\n{output}", error=True)
        else:
            self.builder.call("Bash", {"command": command}, output or "ok")
        return self

    def mine(
        self,
        *,
        seed: Mapping[str, str] | None = None,
        above: Mapping[str, str] | None = None,
        here: str = "",
        **options,
    ) -> Mined:
        """Replayed (from ``seed``'s tree, ``{path: text}``, when given: a clone's start) and
        mined, with ``above`` (``{"../mise.toml": text}``) the clone's files above the session's
        folder ``here``."""
        atif, side = self.builder.build()
        blobs = MemoryBlobs()
        start = {p: blobs.put(t.encode()) for p, t in seed.items()} if seed is not None else None
        if above is not None:
            shas = {p: blobs.put(t.encode()) for p, t in above.items()}
            options["above"] = Above(shas, here)
        result = replay(atif, side, root=self.root, blobs=blobs, seed=start)
        candidates, drops = find_repair_candidates(
            result, StateIndex.build(result, every=4), blobs, atif, **options
        )
        return Mined(candidates, drops, blobs)


def python_story(root: str = ROOT) -> Session:
    """Writes calc.py with a bug and its test, runs pytest (fails), leaves the fix to callers."""
    return (
        Session(root)
        .user("Add an add(a, b) function to calc.py, with a pytest test.")
        .write("calc.py", CALC_BUGGY)
        .write("tests/test_calc.py", TEST_CALC)
        .run("python -m pytest -q", fail=True, output=PYTEST_FAIL.replace(ROOT, root))
    )


def fixed_python_story(root: str = ROOT) -> Session:
    return (
        python_story(root)
        .edit("calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n")
        .run("python -m pytest -q", output="1 passed in 0.01s")
    )


def check_story(
    failing_run: str,
    passing_run: str | None = None,
    *,
    files: Mapping[str, str] | None = None,
    fail_output: str = "1 failed",
    pass_output: str = "1 passed",
    session: Session | None = None,
    between: str | None = None,
) -> Session:
    """calc.py fixed between a failing run and a passing run (the same command by default),
    beside its test and ``files``, in ``session`` (a fresh one by default), with ``between``
    run (exit 0) before the fix."""
    story = (
        (session or Session()).write("calc.py", CALC_BUGGY).write("tests/test_calc.py", TEST_CALC)
    )
    for path, content in (files or {}).items():
        story.write(path, content)
    story.run(failing_run, fail=True, output=fail_output)
    if between is not None:
        story.run(between)
    return story.edit(
        "calc.py", "    return a - b\n", "    return a + b  # the sum, not the difference\n"
    ).run(passing_run or failing_run, output=pass_output)


def assert_drop(drop: Drop, reason: DropReason, fragment: str) -> None:
    assert drop.reason is reason
    assert (drop.family, drop.stage) == ("repair", "mine")
    assert fragment in drop.detail, drop.detail
    record = drop.to_dict()
    assert record["reason"] == str(reason)
    assert record["candidate"]["fail_command_index"] == drop.fail_command_index
