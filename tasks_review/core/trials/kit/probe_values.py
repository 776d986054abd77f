"""Values of equivalence probes as plain JSON, the same in every process that handles them.

Standard library only (Python 3.8+): the keep-time tracer, the probe runner in the image and
the host all import this one module. A value is JSON where JSON can say it exactly; the rest
of what tests pass around is tagged: ``{"$decimal": "2.50"}``, ``{"$tuple": [...]}``,
``{"$bytes": "<base64>"}``, ``{"$set": [...]}`` (sorted), ``{"$float": "nan"}``,
``{"$int": "<digits>"}`` past 2**53, ``{"$dict": [[k, v], ...]}`` for keys JSON cannot hold,
``{"$undefined": true}`` (JavaScript). Types are checked exactly (``type(v) is Decimal``), so a
subclass that compares equal to anything is no Decimal here. Anything else cannot be encoded:
as an argument the call is not kept, as a result it is ``{"$type": "module.Name"}`` (opaque,
never a probe's expected value).

    >>> from decimal import Decimal
    >>> encode([Decimal("2.50"), (1, "a"), float("inf")])
    [{'$decimal': '2.50'}, {'$tuple': [1, 'a']}, {'$float': 'inf'}]
    >>> decode(encode({"a": (1, 2)}))
    {'a': (1, 2)}
    >>> same({"returns": 0.1 + 0.2}, {"returns": 0.3}), same({"returns": 1}, {"returns": True})
    (True, False)
    >>> same({"returns": 1700000000123}, {"returns": 1700000000000.0})
    False
    >>> same({"$decimal": "2.5"}, {"$decimal": "2.50"})
    True
"""

import base64
import json
import math
from decimal import Decimal

MAX_DEPTH = 8
MAX_ITEMS = 200
MAX_TEXT = 4000  # characters of one string
MAX_ENCODED = 20000  # characters of one value's JSON


class Unencodable(ValueError):
    """The value is not plain data this module can carry exactly."""


def encode(value, depth=0):
    if depth > MAX_DEPTH:
        raise Unencodable("nested too deeply")
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        return value if abs(value) < 2**53 else {"$int": str(value)}
    if kind is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if value != value else ("inf" if value > 0 else "-inf")}
    if kind is str:
        if len(value) > MAX_TEXT:
            raise Unencodable("string too long")
        return value
    if kind is Decimal:
        return {"$decimal": str(value)}
    if kind is bytes:
        if len(value) > MAX_TEXT:
            raise Unencodable("bytes too long")
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if kind in (list, tuple, set, frozenset):
        if len(value) > MAX_ITEMS:
            raise Unencodable("too many items")
        items = [encode(item, depth + 1) for item in value]
        if kind is list:
            return items
        if kind is tuple:
            return {"$tuple": items}
        return {"$set": sorted(items, key=lambda item: json.dumps(item, sort_keys=True))}
    if kind is dict:
        if len(value) > MAX_ITEMS:
            raise Unencodable("too many items")
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return {"$dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise Unencodable(f"{kind.__module__}.{kind.__qualname__}")


def encode_result(value):
    """A result as a probe outcome: encoded, or opaque when it is not plain data."""
    try:
        encoded = encode(value)
        if len(json.dumps(encoded)) > MAX_ENCODED:
            raise Unencodable("too large")
        return {"returns": encoded}
    except Unencodable:
        kind = type(value)
        return {"opaque": f"{kind.__module__}.{kind.__qualname__}"}
    except (RecursionError, TypeError, ValueError):
        return {"opaque": "unreadable"}


def decode(value):
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((tag, inner),) = value.items()
        if tag == "$decimal":
            return Decimal(inner)
        if tag == "$tuple":
            return tuple(decode(item) for item in inner)
        if tag == "$set":
            return {decode(item) for item in inner}
        if tag == "$bytes":
            return base64.b64decode(inner)
        if tag == "$float":
            return float(inner)
        if tag == "$int":
            return int(inner)
        if tag == "$dict":
            return {decode(k): decode(v) for k, v in inner}
        if tag == "$undefined":
            return None
    return {k: decode(v) for k, v in value.items()}


def same(expected, got, depth=0):
    """Whether two outcomes (or encoded values) agree: exactly, but floats within 1e-9
    (relative) so that an equivalent fix summing in another order still matches."""
    if depth > MAX_DEPTH + 4:
        return False
    if type(expected) is float:
        # An equivalent fix may sum in another order: within 1e-9 (relative); an int the
        # reference returned as a float counts as the same number.
        if type(got) not in (int, float):
            return False
        return math.isclose(expected, got, rel_tol=1e-9, abs_tol=1e-12)
    # An int is exact: a float near it (1700000000000.0 for 1700000000123) is not the same.
    if type(expected) is not type(got):
        return False
    if isinstance(expected, list):
        return len(expected) == len(got) and all(
            same(expected[i], got[i], depth + 1) for i in range(len(expected))
        )
    if isinstance(expected, dict):
        if list(expected) == ["$decimal"] == list(got):  # 2.5 and 2.50 are the same amount
            if type(expected["$decimal"]) is not str or type(got["$decimal"]) is not str:
                return False
            try:
                return Decimal(expected["$decimal"]) == Decimal(got["$decimal"])
            except (ArithmeticError, TypeError, ValueError):
                return False
        return expected.keys() == got.keys() and all(
            same(expected[k], got[k], depth + 1) for k in expected
        )
    return expected == got
