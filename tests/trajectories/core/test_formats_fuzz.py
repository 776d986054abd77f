"""Damaged input never escapes as anything but IngestError.

Real and synthetic logs are truncated, cut, garbled, re-encoded and given values
of the wrong type; ``load`` must answer with ``Loaded`` or ``NotTrajectory`` or
raise ``IngestError`` with a reason, and ``detect`` must answer at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trajectories.core.formats import FORMATS, IngestError, Loaded, NotTrajectory, detect, load

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
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
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("truncate", "drop", "join", "flip", "garble", "encode")))
        lines = data.split(b"\n")
        if kind == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "drop" and len(lines) > 1:
            del lines[draw(st.integers(0, len(lines) - 1))]
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
        return
    if isinstance(result, NotTrajectory):
        assert result.reason.startswith("not a trajectory: ")
        return
    assert isinstance(result, Loaded)
    assert result.format in FORMATS
    assert result.meta.steps == len(result.atif["steps"]) >= 1
    json.dumps(result.atif, allow_nan=False)
    json.dumps(result.side_data, allow_nan=False)


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
@FUZZ
@given(data=st.data())
def test_damaged_corpus_files_fail_only_with_ingest_error(
    data: st.DataObject, scratch: Path, corpus_seeds: list[Path]
) -> None:
    seed = data.draw(st.sampled_from(corpus_seeds))
    run(seed, data.draw(damaged(seed.read_bytes())), scratch)


@pytest.mark.corpus
@FUZZ
@given(data=st.data())
def test_retyped_corpus_records_fail_only_with_ingest_error(
    data: st.DataObject, scratch: Path, corpus_seeds: list[Path]
) -> None:
    seed = data.draw(st.sampled_from(corpus_seeds))
    run(seed, data.draw(retyped(seed.read_bytes())), scratch)
