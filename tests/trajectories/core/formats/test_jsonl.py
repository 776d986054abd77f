"""Strict JSON for documents people and clients send (specs, API bodies): only what a JSON column
stores again, each refusal one clear ValueError instead of a RecursionError or a database error."""

from __future__ import annotations

from decimal import Decimal

import pytest

from trajectories.core.formats.jsonl import StrictJSONError, loads_strict


def test_standard_json_reads_as_json_loads_does():
    assert loads_strict('{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}
    assert loads_strict(b'{"cost": 0.45}', parse_float=Decimal) == {"cost": Decimal("0.45")}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"pass_threshold": NaN}', "NaN"),
        ("[Infinity]", "Infinity"),
        ("[-Infinity]", "Infinity"),
        ("[1e999]", "too large"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ("[" * 101 + "]" * 101, "nested deeper"),
        ('{"a": ' * 200 + "1" + "}" * 200, "nested deeper"),
        ('["\\ud800"]', "surrogate"),
        ('{"\\udfff": 1}', "surrogate"),
        ('["read first\\u0000"]', "NUL character"),
        ('{"\\u0000": 1}', "NUL character"),
        (b"\xff\xfe{}", "UTF-8"),
        ("{", "not JSON"),
    ],
)
def test_what_a_json_column_cannot_store_again_is_refused_with_why(text, why):
    with pytest.raises(StrictJSONError, match=why):
        loads_strict(text)


def test_the_depth_limit_is_the_callers():
    assert loads_strict("[" * 100 + "]" * 100)
    assert loads_strict("[[[]]]", max_depth=3) == [[[]]]
    with pytest.raises(StrictJSONError, match="nested deeper than 2"):
        loads_strict("[[[]]]", max_depth=2)


def test_an_escaped_backslash_before_u0000_is_text_and_kept():
    assert loads_strict('["C:\\\\u0000"]') == ["C:\\u0000"]


def test_a_surrogate_pair_is_one_character_and_kept():
    assert loads_strict('["\\ud83d\\ude00"]') == ["\U0001f600"]
