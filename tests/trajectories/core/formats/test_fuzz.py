"""Damaged input never escapes as anything but IngestError.

Real and synthetic logs are truncated, cut, garbled, given duplicated and
foreign lines, re-encoded and given values of the wrong type; ``load`` must
answer with ``Loaded`` (partial, with a warning per line it skipped or
repaired) or ``NotTrajectory`` or raise ``IngestError`` with a reason, and
``detect`` must answer at all. Foreign lines in a real log cost exactly those
lines.

The corpus tests run a few hundred examples each; a benchmark runs more with
``TRAJ2ENV_FUZZ_EXAMPLES=10000`` (and ``--hypothesis-show-statistics`` for the
tally of outcomes).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from trajectories.core.formats import FORMATS, IngestError, Loaded, NotTrajectory, detect, load

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "formats"
SYNTHETIC = sorted(p for p in FIXTURES.rglob("*") if p.is_file())
SYNTHETIC_LOGS = [p for p in SYNTHETIC if detect(p) is not None]
# Small real trajectories keep each example fast; every format is represented.
CORPUS_LIMIT = 160_000

FUZZ = settings(
    max_examples=250,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CORPUS_FUZZ = settings(FUZZ, max_examples=int(os.environ.get("TRAJ2ENV_FUZZ_EXAMPLES", "250")))
LOG_FORMATS = ("claude-code", "codex", "pi")

# What gets printed into a log that is not the log: crashes, warnings, progress, half a record.
FOREIGN = (
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3/dist-packages/hook.py", line 41, in <module>',
    "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
    "Error: read ECONNRESET",
    "Segmentation fault (core dumped)",
    "Killed",
    "\x1b[33mnpm WARN\x1b[0m config production Use `--omit=dev` instead.",
    '{"type": "assistant", "message": {"role": "assist',
    "null",
    "[1, 2, 3]",
    '"a stray string"',
    "{}{",
)


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


foreign_lines = st.sampled_from(FOREIGN) | st.text(min_size=1, max_size=80).filter(
    lambda t: t.strip() and not set(t) & {"\n", "\x00"} and not _is_object(t)
)

ENCODINGS = ("utf-16", "utf-16-le", "latin-1", "cp1252", "utf-8-sig")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after one to three byte-level injuries."""
    kinds = ("truncate", "drop", "join", "flip", "garble", "encode", "duplicate", "foreign")
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        lines = data.split(b"\n")
        if kind == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "drop" and len(lines) > 1:
            start = draw(st.integers(0, len(lines) - 1))
            del lines[start : start + draw(st.integers(1, 5))]
            data = b"\n".join(lines)
        elif kind == "duplicate":
            line = lines[draw(st.integers(0, len(lines) - 1))]
            lines.insert(draw(st.integers(0, len(lines))), line)
            data = b"\n".join(lines)
        elif kind == "foreign":
            lines.insert(draw(st.integers(0, len(lines))), draw(foreign_lines).encode())
            data = b"\n".join(lines)
        elif kind == "join" and b"\n" in data:
            at = draw(st.sampled_from([i for i, b in enumerate(data) if b == 0x0A][:500]))
            data = data[:at] + data[at + 1 :]
        elif kind == "flip" and data:
            buffer = bytearray(data)
            for _ in range(draw(st.integers(1, 8))):
                buffer[draw(st.integers(0, len(buffer) - 1))] ^= draw(st.integers(1, 255))
            data = bytes(buffer)
        elif kind == "garble":
            start = draw(st.integers(0, len(data)))
            end = draw(st.integers(start, min(len(data), start + 64)))
            data = data[:start] + draw(st.binary(max_size=32)) + data[end:]
        elif kind == "encode":
            text = data.decode("utf-8", errors="replace")
            data = text.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")
    return data


@st.composite
def retyped(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one JSON value somewhere in one record replaced by another of any type."""
    text = data.decode("utf-8")
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if line.strip().startswith("{")]
    if not candidates:
        return data
    if len(candidates) == 1 and len([line for line in lines if line.strip()]) > 1:
        # A pretty-printed document: the whole file is the one record.
        values, index = [json.loads(text)], None
    else:
        index = draw(st.sampled_from(candidates))
        try:
            values = [json.loads(lines[index])]
        except ValueError:
            return data
    node: Any = values
    key: Any = 0
    for _ in range(draw(st.integers(0, 6))):
        child = node[key]
        if isinstance(child, dict) and child:
            node, key = child, draw(st.sampled_from(sorted(child)))
        elif isinstance(child, list) and child:
            node, key = child, draw(st.integers(0, len(child) - 1))
        else:
            break
    node[key] = draw(json_values)
    if index is None:
        return json.dumps(values[0]).encode()
    lines[index] = json.dumps(values[0])
    return "\n".join(lines).encode()


def check(path: Path) -> None:
    assert detect(path) in (*FORMATS, None)
    try:
        result = load(path)
    except IngestError as error:
        assert error.reason.strip()
        assert error.path == path
        assert error.line is None or error.line >= 1
        event("failed with a reason")
        return
    if isinstance(result, NotTrajectory):
        assert result.reason.startswith("not a trajectory: ")
        event("not a trajectory")
        return
    assert isinstance(result, Loaded)
    assert result.format in FORMATS
    assert result.meta.steps == len(result.atif["steps"]) >= 1
    # What is stored must encode: JSON without NaN, and text a database and a page can take.
    json.dumps(result.atif, allow_nan=False, ensure_ascii=False).encode("utf-8")
    json.dumps(result.side_data, allow_nan=False, ensure_ascii=False).encode("utf-8")
    lines = path.read_bytes().count(b"\n") + 1
    for warning in result.warnings:
        assert 1 <= warning.line <= lines
        assert warning.reason.startswith(f"line {warning.line} ")
    assert result.partial == bool(result.warnings)
    event("loaded, partial" if result.partial else "loaded whole")


def run(seed: Path, data: bytes, where: Path) -> None:
    path = where / seed.name
    path.write_bytes(data)
    check(path)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def corpus_seeds(corpus: Path) -> list[Path]:
    seeds = sorted(
        p
        for p in corpus.rglob("*")
        if p.is_file() and p.stat().st_size <= CORPUS_LIMIT and detect(p) is not None
    )
    assert {detect(p) for p in seeds} == set(FORMATS)
    return seeds


def test_every_synthetic_seed_loads_before_damage() -> None:
    assert len(SYNTHETIC) > 15
    assert {detect(p) for p in SYNTHETIC_LOGS} == set(FORMATS)
    for seed in SYNTHETIC:
        assert isinstance(load(seed), Loaded if seed in SYNTHETIC_LOGS else NotTrajectory)


@FUZZ
@given(data=st.data())
def test_damaged_synthetic_files_fail_only_with_ingest_error(
    data: st.DataObject, scratch: Path
) -> None:
    seed = data.draw(st.sampled_from(SYNTHETIC))
    run(seed, data.draw(damaged(seed.read_bytes())), scratch)


@FUZZ
@given(data=st.data())
def test_retyped_synthetic_records_fail_only_with_ingest_error(
    data: st.DataObject, scratch: Path
) -> None:
    seed = data.draw(st.sampled_from(SYNTHETIC_LOGS))
    run(seed, data.draw(retyped(seed.read_bytes())), scratch)


@pytest.mark.corpus
@CORPUS_FUZZ
@given(data=st.data())
def test_damaged_corpus_files_load_or_fail_with_a_reason(
    data: st.DataObject, scratch: Path, corpus_seeds: list[Path]
) -> None:
    seed = data.draw(st.sampled_from(corpus_seeds))
    run(seed, data.draw(damaged(seed.read_bytes())), scratch)


@cache
def _speech(path: Path) -> list[tuple[str, Any, int]]:
    """Who said what at each step, and how many calls it made: what a foreign line must not move."""
    result = load(path)
    assert isinstance(result, Loaded)
    return [
        (step["source"], step.get("message"), len(step.get("tool_calls") or ()))
        for step in result.atif["steps"]
    ]


@pytest.mark.corpus
@CORPUS_FUZZ
@given(data=st.data())
def test_foreign_lines_in_a_real_log_cost_exactly_those_lines(
    data: st.DataObject, scratch: Path, corpus_seeds: list[Path]
) -> None:
    seed = data.draw(st.sampled_from([p for p in corpus_seeds if detect(p) in LOG_FORMATS]))
    lines = seed.read_bytes().split(b"\n")
    inserted = []
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(lines)))
        lines.insert(at, data.draw(foreign_lines).encode())
        inserted = [n + 1 if n >= at else n for n in inserted] + [at]
    path = scratch / seed.name
    path.write_bytes(b"\n".join(lines))

    result = load(path)
    assert isinstance(result, Loaded), result
    assert {w.line for w in result.warnings} == {n + 1 for n in inserted}
    assert result.partial
    assert [
        (step["source"], step.get("message"), len(step.get("tool_calls") or ()))
        for step in result.atif["steps"]
    ] == _speech(seed)


@pytest.mark.corpus
@CORPUS_FUZZ
@given(data=st.data())
def test_retyped_corpus_records_fail_only_with_ingest_error(
    data: st.DataObject, scratch: Path, corpus_seeds: list[Path]
) -> None:
    seed = data.draw(st.sampled_from(corpus_seeds))
    run(seed, data.draw(retyped(seed.read_bytes())), scratch)
