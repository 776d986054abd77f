"""The hidden inputs of a task's equivalence probes: random draws around the tests' own calls.

    inputs = derive(calls, random.Random())   # the recorded calls, then the draws

Each recorded argument (an encoded value, ``kit/probe_values.py``) is replaced, one at a time and
now and then all at once, by values drawn at random for this task over wide ranges:

* **numbers**: a magnitude drawn log-uniformly over many decades past the recorded one's, an
  offset as large as the value itself, a random multiple, random powers of the value and
  products with another number the tests passed (the boundaries of units and ranges: 1024 ->
  1024 ** 3), and a point a few steps away; decimals keep their exponent (cents stay cents)
  or gain a digit;
* **strings**: random sequences of the recorded words and of new ones, with random separators
  and repeats; random strings over the recorded text's own characters and over a wide
  alphabet, of random lengths; random case flips; random edits;
* **lists** (and tuples): random permutations, subsets, lengths and contents drawn from the
  recorded elements, each element itself drawn anew; **dicts** key by key.

A few fixed edge values stay as well (0, the negation, the empty string or list): cheap, and
they catch validation bugs. They are no secret: someone who has read this code knows them,
and could memorise the reference's answers there. The draws are the secret: a task's draws
come from a fresh ``random.Random()`` and are never written anywhere but its root-only
``probes.json``, so reading this code tells what *kind* of input a probe may be, never which.
"""

from __future__ import annotations

import json
import math
import random
import string
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

MAX_INPUTS = 200  # calls run per process: recorded plus derived
PER_FUNCTION = 60
SAFE_INT = 2**53  # JSON (and JavaScript) carry integers exactly below this
DECADES = 5  # how far past the recorded value's own magnitude a log-uniform draw reaches
_WIDE = string.ascii_letters + string.digits + string.punctuation + "  \t\n" + "éßЖ中😀"
_SEPARATORS = (" ", " ", " ", "  ", ", ", "\n", "-", "_", ". ", "\t")


def mutations(value: Any, rng: random.Random, depth: int = 0, pool: Sequence[Any] = ()) -> list:
    """Encoded values drawn around ``value`` (an encoded value), none equal to it. ``pool``:
    other numbers the tests passed to the same function (their products are drawn too)."""
    try:
        out = _draws(value, rng, depth, pool)
    except (ArithmeticError, ValueError):  # an extreme value: no draw around it
        return []
    return _unique(value, [item for item in out if _plain(item)])


def _plain(value: Any) -> bool:
    """JSON can carry it exactly (a draw that overflowed to inf or nan is dropped)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    return True


def _draws(value: Any, rng: random.Random, depth: int, pool: Sequence[Any]) -> list:
    out: list[Any] = []
    if isinstance(value, bool):
        out = [not value]
    elif isinstance(value, int):
        out = _int_draws(value, rng, pool)
    elif isinstance(value, float):
        out = _float_draws(value, rng)
    elif isinstance(value, str):
        out = _string_draws(value, rng)
    elif isinstance(value, list):
        out = _list_draws(value, rng, depth, pool)
    elif isinstance(value, dict) and list(value) == ["$decimal"]:
        out = _decimal_draws(value["$decimal"], rng)
    elif isinstance(value, dict) and list(value) == ["$tuple"]:
        out = [{"$tuple": m} for m in _list_draws(value["$tuple"], rng, depth, pool)]
    elif isinstance(value, dict) and list(value) == ["$int"]:
        out = [{"$int": str(int(value["$int"]) + d)} for d in (rng.randint(1, 10**6), -1)]
    elif isinstance(value, dict) and not any(k.startswith("$") for k in value):
        for key in rng.sample(sorted(value), min(3, len(value))):
            for changed in _some(mutations(value[key], rng, depth + 1, pool), rng, 3):
                out.append({**value, key: changed})
            out.append({k: v for k, v in value.items() if k != key})
    return out


def _unique(value: Any, items: list[Any]) -> list[Any]:
    seen = {key(value)}
    kept = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            kept.append(item)
    return kept


def _some(items: list[Any], rng: random.Random, count: int) -> list[Any]:
    return rng.sample(items, min(count, len(items)))


def _exact(number: int) -> Any:
    return number if abs(number) < SAFE_INT else {"$int": str(number)}


def _magnitude(rng: random.Random, reference: float) -> float:
    """A positive magnitude drawn log-uniformly from 1 to DECADES decades past ``reference``."""
    top = min(math.log10(max(abs(reference), 1.0)) + DECADES, 300.0)
    return 10 ** rng.uniform(0.0, top)


def _int_draws(value: int, rng: random.Random, pool: Sequence[Any]) -> list[Any]:
    sign = -1 if value < 0 else 1
    span = max(16, abs(value))
    out = [
        sign * int(_magnitude(rng, value)),
        rng.choice((1, -1)) * int(_magnitude(rng, value)),
        value + rng.randint(-span, span),
        value + rng.choice((1, -1)) * rng.randint(1, 9),
        0,
        -value,
    ]
    if value:
        out.append(value * rng.randint(2, 1000))
    if abs(value) > 1:
        exponents = [k for k in range(2, 7) if abs(value) ** k < SAFE_INT]
        out += [value**k for k in _some(exponents, rng, 3)]
    others = [w for w in pool if type(w) is int and abs(w) > 1 and abs(value * w) < SAFE_INT]
    if value and others:
        out += [value * w for w in _some(others, rng, 2)]
    return [_exact(n) for n in out]


def _float_draws(value: float, rng: random.Random) -> list[float]:
    sign = -1.0 if value < 0 else 1.0
    return [
        sign * _magnitude(rng, value),
        value * rng.uniform(0.25, 4.0),
        value + rng.uniform(-1.0, 1.0) * max(abs(value), 1.0),
        value * rng.randint(2, 1000),
        round(value + rng.uniform(-1.0, 1.0), rng.randint(0, 3)),
        0.0,
        -value,
    ]


def _decimal_draws(text: str, rng: random.Random) -> list[dict[str, str]]:
    try:
        amount = Decimal(text)
    except InvalidOperation:
        return []
    if not amount.is_finite():
        return []
    exponent = int(amount.as_tuple().exponent)
    quantum = Decimal(1).scaleb(exponent)
    finer = quantum / 10
    span = max(100, int(abs(amount) / quantum))
    drawn = Decimal(repr(_magnitude(rng, float(amount))))
    values = [
        drawn.quantize(quantum) * (-1 if amount < 0 else 1),
        amount + rng.randint(-span, span) * quantum,
        amount * rng.randint(2, 1000),
        (drawn / rng.randint(1, 9)).quantize(finer),
        amount + rng.randint(1, 9) * finer,
        -amount,
        Decimal(0).quantize(quantum),
    ]
    return [{"$decimal": str(v)} for v in values]


def _word(rng: random.Random, letters: str) -> str:
    return "".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))


def _string_draws(text: str, rng: random.Random) -> list[str]:
    words = text.split() or [_word(rng, string.ascii_lowercase)]
    own = sorted(set(text)) or list(string.ascii_lowercase)
    vocabulary = words + [_word(rng, string.ascii_letters) for _ in range(rng.randint(1, 3))]

    def sentence(choices: Sequence[str]) -> str:
        count = rng.randint(2, 2 * len(words) + 4)
        picked = [rng.choice(choices) for _ in range(count)]
        return "".join(w + rng.choice(_SEPARATORS) for w in picked[:-1]) + picked[-1]

    shuffled = list(words)
    rng.shuffle(shuffled)
    flipped = "".join(c.swapcase() if rng.random() < 0.5 else c for c in text)
    edited = list(text)
    for _ in range(rng.randint(1, 3)):
        spot = rng.randint(0, len(edited))
        action = rng.choice(("insert", "delete", "replace"))
        if action == "insert" or not edited:
            edited.insert(spot, rng.choice(_WIDE))
        elif action == "delete":
            del edited[min(spot, len(edited) - 1)]
        else:
            edited[min(spot, len(edited) - 1)] = rng.choice(_WIDE)
    return [
        sentence(words),
        sentence(vocabulary),
        rng.choice(_SEPARATORS).join(shuffled),
        "".join(rng.choice(own) for _ in range(rng.randint(1, 2 * len(text) + 8))),
        "".join(rng.choice(_WIDE) for _ in range(rng.randint(1, 2 * len(text) + 8))),
        flipped,
        "".join(edited),
        rng.choice((text.upper(), text.lower(), text.title())),
        "",
    ]


def _list_draws(items: list[Any], rng: random.Random, depth: int, pool: Sequence[Any]) -> list:
    def element() -> Any:
        picked = rng.choice(items)
        if depth < 3 and rng.random() < 0.5:
            return rng.choice(mutations(picked, rng, depth + 1, pool) or [picked])
        return picked

    shuffled = list(items)
    rng.shuffle(shuffled)
    out: list[Any] = [shuffled, [i for i in items if rng.random() < 0.5], []]
    if items:
        out.append([element() for _ in range(rng.randint(1, 2 * len(items) + 3))])
        out.append(items + [element() for _ in range(rng.randint(1, 3))])
        if depth < 3:
            for index in _some(list(range(len(items))), rng, 2):
                for changed in _some(mutations(items[index], rng, depth + 1, pool), rng, 2):
                    out.append(items[:index] + [changed] + items[index + 1 :])
    return out


def key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _numbers(values: Any) -> list[Any]:
    """Every plain number inside ``values`` (an encoded value)."""
    if type(values) in (int, float):
        return [values]
    if isinstance(values, list):
        return [n for v in values for n in _numbers(v)]
    if isinstance(values, dict):
        return [n for v in values.values() for n in _numbers(v)]
    return []


def derive(
    calls: Sequence[Mapping[str, Any]], rng: random.Random, limit: int = MAX_INPUTS
) -> list[dict[str, Any]]:
    """The recorded calls and inputs drawn around them: one argument drawn anew at a time, and
    for calls of several arguments a few with every argument drawn; at most ``PER_FUNCTION``
    per function and ``limit`` in all (every function gets its share)."""
    by_function: dict[tuple[str, str], list[dict[str, Any]]] = {}
    seen: dict[str, dict[str, Any]] = {}
    pools: dict[tuple[str, str], list[Any]] = {}
    for call in calls:
        named = (call["module"], call["function"])
        pools.setdefault(named, []).extend(
            _numbers([call.get("args") or [], call.get("kwargs") or {}])
        )

    def add(call: Mapping[str, Any], args: list[Any], kwargs: dict[str, Any], derived: bool):
        named = (call["module"], call["function"])
        item_key = key([*named, args, kwargs])
        if item_key in seen:  # the same input from another test: it is both tests' probe
            item = seen[item_key]
            item["tests"] = sorted(set(item["tests"]) | set(call.get("tests") or ()))
            return
        seen[item_key] = {
            "module": call["module"],
            "function": call["function"],
            "args": args,
            "kwargs": kwargs,
            "tests": sorted(set(call.get("tests") or ())),
            "derived": derived,
        }
        by_function.setdefault(named, []).append(seen[item_key])

    for call in calls:
        add(call, list(call.get("args") or []), dict(call.get("kwargs") or {}), False)
    for call in calls:
        pool = pools[(call["module"], call["function"])]
        args, kwargs = list(call.get("args") or []), dict(call.get("kwargs") or {})
        for index, value in enumerate(args):
            for changed in mutations(value, rng, pool=pool):
                add(call, args[:index] + [changed] + args[index + 1 :], kwargs, True)
        for name, value in kwargs.items():
            for changed in mutations(value, rng, pool=pool):
                add(call, args, {**kwargs, name: changed}, True)
        if len(args) + len(kwargs) > 1:
            for _ in range(rng.randint(2, 4)):
                every = [rng.choice(mutations(v, rng, pool=pool) or [v]) for v in args]
                every_kw = {
                    k: rng.choice(mutations(v, rng, pool=pool) or [v]) for k, v in kwargs.items()
                }
                add(call, every, every_kw, True)
    chosen: list[dict[str, Any]] = []
    queues = []
    for items in by_function.values():
        recorded = [i for i in items if not i["derived"]]
        derived = [i for i in items if i["derived"]]
        rng.shuffle(derived)
        # The tests' own inputs first, but never crowding out the drawn ones: only those are
        # hidden from someone who reads the tests.
        queues.append((recorded[:10] + derived + recorded[10:])[:PER_FUNCTION])
    # Round robin over the functions, so a function called a hundred times does not crowd out
    # the one called once.
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen
