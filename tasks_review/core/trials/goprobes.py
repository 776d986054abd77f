"""Go's side of the hidden probes at keep time: the tests' calls, typed as Go takes them.

    calls, why = read_calls(report)        # probekit/gocalls's JSON, run in the pristine image
    inputs = derive(calls, rng, fits=fits_call)

A Go test binary runs no tracer of ours, so ``probekit/gocalls`` (a small Go program, standard
library only) reads the tests' calls to the project's package-level functions from the source:
each with its function, a description of each parameter's type (``{"kind": "int", "bits": 8}``,
``{"kind": "slice", "elem": ...}``, ``bytes``, ``map``, ``struct`` ...) and the argument values.
Here the values become what ``probeinputs.derive`` draws around (a float parameter given ``100``
gets ``100.0``, so its draws are floats), and ``fits`` keeps only draws the parameter can take:
an int8 stays within -128..127, a uint is never negative, a float32 stays finite. The runner
(``kit/probe_runner_go.py``) would report anything else as unavailable, which no probe can be.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

FLOAT32_MAX = 3.4028234663852886e38
_ORDERED_KEYS = ("int", "uint", "float", "string", "bool")


def read_calls(report: bytes) -> tuple[list[dict[str, Any]], str]:
    """The call finder's calls as the tracers record theirs (module, function, args, kwargs,
    tests, and the parameters' kinds), those whose arguments fit their parameters; and why
    there are none when there are none."""
    try:
        found = json.loads(report)
    except (ValueError, UnicodeDecodeError):
        return [], "the Go call finder gave no readable report"
    if not isinstance(found, dict):
        return [], "the Go call finder gave no readable report"
    calls = []
    bare = 0
    for raw in found.get("calls") or ():
        if not isinstance(raw, dict):
            continue
        params = raw.get("params") or []
        args = raw.get("args") or []
        if not isinstance(params, list) or not isinstance(args, list) or len(args) != len(params):
            continue
        if not params:  # New(), Version(): no input to draw around, its answer is in the test
            bare += 1
            continue
        args = [typed(value, kind) for value, kind in zip(args, params, strict=True)]
        if not all(fits(kind, value) for kind, value in zip(params, args, strict=True)):
            continue
        calls.append(
            {
                "module": str(raw.get("module") or "."),
                "function": str(raw.get("function") or ""),
                "args": args,
                "kwargs": {},
                "params": params,
                "tests": [str(t) for t in raw.get("tests") or () if t],
            }
        )
    if calls:
        return calls, ""
    return [], no_calls_note(found, bare)


def no_calls_note(found: Mapping[str, Any], bare: int = 0) -> str:
    """Why a Go package's tests gave no probe, for the desk and task.toml (``bare``: calls
    that take no argument)."""
    total = int(found.get("found") or 0)
    why = (
        "the Go tests call none of the project's package-level functions with plain-data "
        "arguments (methods and values built at run time are out of the call finder's reach)"
    )
    if total:
        why += (
            f": of {total} call(s) to them, {int(found.get('unreadable') or 0)} take parameters "
            f"that are not plain data, {int(found.get('not_plain') or 0)} pass arguments that "
            f"could not be read from the source and {bare} take no argument"
        )
    return why


def typed(value: Any, kind: Mapping[str, Any]) -> Any:
    """``value`` as Python has it for a parameter of ``kind``: floats for float parameters
    (the finder's JSON writes 100.0 as 100), the same inside lists, maps and structs."""
    name = kind.get("kind") if isinstance(kind, Mapping) else None
    if name == "float" and type(value) is int:
        return float(value)
    if name in ("slice", "array") and isinstance(value, list):
        return [typed(item, kind["elem"]) for item in value]
    if name == "map" and isinstance(value, dict):
        if list(value) == ["$dict"] and isinstance(value["$dict"], list):
            return {
                "$dict": [
                    [typed(pair[0], kind["key"]), typed(pair[1], kind["elem"])]
                    for pair in value["$dict"]
                    if isinstance(pair, list) and len(pair) == 2
                ]
            }
        return {k: typed(v, kind["elem"]) for k, v in value.items()}
    if name == "struct" and isinstance(value, dict):
        fields = _fields(kind)
        return {k: typed(v, fields[k]) if k in fields else v for k, v in value.items()}
    return value


def fits(kind: Mapping[str, Any], value: Any) -> bool:
    """Whether a parameter of ``kind`` can take ``value`` (an encoded value) exactly."""
    name = kind.get("kind") if isinstance(kind, Mapping) else None
    if name in ("int", "uint"):
        number = _integer(value)
        bits = int(kind.get("bits") or 64)
        if number is None:
            return False
        if name == "uint":
            return 0 <= number < 2**bits
        return -(2 ** (bits - 1)) <= number < 2 ** (bits - 1)
    if name == "float":
        if type(value) not in (int, float) or not math.isfinite(value):
            return False
        return kind.get("bits") != 32 or abs(value) <= FLOAT32_MAX
    if name in ("string", "bytes"):
        return isinstance(value, str) or _tagged(value, "$bytes", str)
    if name == "bool":
        return type(value) is bool
    if name == "slice":
        return value is None or (
            isinstance(value, list) and all(fits(kind["elem"], item) for item in value)
        )
    if name == "array":
        return (
            isinstance(value, list)
            and len(value) == kind.get("len")
            and all(fits(kind["elem"], item) for item in value)
        )
    if name == "map":
        return value is None or _fits_map(kind, value)
    if name == "struct":
        fields = _fields(kind)
        return (
            isinstance(value, dict)
            and set(value) <= set(fields)
            and all(fits(fields[k], v) for k, v in value.items())
        )
    return False


def fits_call(call: Mapping[str, Any], args: Sequence[Any]) -> bool:
    """``probeinputs.derive``'s filter: every argument fits its parameter."""
    params = call.get("params")
    if not isinstance(params, list) or len(params) != len(args):
        return False
    return all(fits(kind, value) for kind, value in zip(params, args, strict=True))


def _fits_map(kind: Mapping[str, Any], value: Any) -> bool:
    if not isinstance(value, dict) or kind["key"].get("kind") not in _ORDERED_KEYS:
        return False
    if list(value) == ["$dict"]:
        pairs = value["$dict"]
        return isinstance(pairs, list) and all(
            isinstance(p, list)
            and len(p) == 2
            and fits(kind["key"], p[0])
            and fits(kind["elem"], p[1])
            for p in pairs
        )
    return (
        kind["key"].get("kind") == "string"
        and not any(k.startswith("$") for k in value)
        and all(fits(kind["elem"], v) for v in value.values())
    )


def _fields(kind: Mapping[str, Any]) -> dict[str, Any]:
    return {
        str(pair[0]): pair[1]
        for pair in kind.get("fields") or ()
        if isinstance(pair, list) and len(pair) == 2
    }


def _integer(value: Any) -> int | None:
    if type(value) is int:
        return value
    if _tagged(value, "$int", str):
        try:
            return int(value["$int"])
        except ValueError:
            return None
    return None


def _tagged(value: Any, tag: str, inner: type) -> bool:
    return isinstance(value, dict) and list(value) == [tag] and isinstance(value[tag], inner)
