"""The format layer's values (`model.py`): IngestError crosses to workers intact."""

from __future__ import annotations

import pickle
from pathlib import Path

from trajectories.core.formats import IngestError


def test_ingest_error_survives_pickling_for_workers() -> None:
    error = IngestError(Path("/x/y.jsonl"), "line 3 is not valid JSON", 3)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.path, copy.line, copy.reason, str(copy)) == (
        error.path,
        3,
        error.reason,
        "/x/y.jsonl:3: line 3 is not valid JSON",
    )
