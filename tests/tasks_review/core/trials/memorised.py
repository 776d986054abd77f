"""Memorised answers, as an attacker who has read the probe code would build them (tests only).

The visible inputs are the calls the sample's tests make (traced in a real Python or Node
process on this machine); the enumerable ones are every input a fixed transform of the old
derivation gives (``old_transforms``). ``table`` holds the reference's outcome on each, and
``python_hack`` / ``node_hack`` are the code an agent appends to the project so that its
functions answer from the table and fall back on the unfixed code everywhere else.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from tasks_review.core.trials.kit import probing
from tasks_review.core.trials.probeinputs import key

from ..mining.test_repair_samples import STORIES
from .test_probes import KIT, lay, traced

COMMANDS = {
    "claude-code": [sys.executable, "-m", "unittest", "discover", "-s", "tests"],
    "pi": [sys.executable, "-m", "unittest"],
    "codex": ["node", "--test"],
    "atif": ["node", "--test"],
}


def old_transforms(value):
    """Every value a fixed transform of the previous derivation gives (its k in 2..9 and its
    cents in 1..99 enumerated, and every order of a short list): what a reader could list."""
    out = []
    if isinstance(value, bool):
        out = [not value]
    elif isinstance(value, int):
        out = [value + k for k in range(-9, 10)] + [value * k for k in range(-9, 10)]
        out.append(value * value)
    elif isinstance(value, str):
        words = value.split()
        out = [value.upper(), value.lower(), value.swapcase(), value[::-1], value * 2, ""]
        out += [value[: len(value) // 2], " ".join(reversed(words))]
        out += [value[:i] + c + value[i:] for i in range(len(value) + 1) for c in "aZ9 -_.,"]
        if len(words) <= 6:
            out += [" ".join(p) for p in itertools.permutations(words)]
    elif isinstance(value, list):
        out = [value[::-1], value[1:] + value[:1], value[:-1], value[1:], value + value[:1], []]
        if len(value) <= 6:
            out += [list(p) for p in itertools.permutations(value)]
        for index, item in enumerate(value):
            out += [value[:index] + [c] + value[index + 1 :] for c in old_transforms(item)]
    elif isinstance(value, dict) and list(value) == ["$decimal"]:
        amount = Decimal(value["$decimal"])
        steps = [Decimal(k) for k in range(-9, 10)] + [Decimal(c) / 100 for c in range(1, 100)]
        out = [{"$decimal": str(amount + s)} for s in steps]
        out += [{"$decimal": str(amount * k)} for k in range(-9, 10)]
    elif isinstance(value, dict) and list(value) == ["$tuple"]:
        out = [{"$tuple": m} for m in old_transforms(value["$tuple"])]
    return out


def input_key(item):
    return key([item["module"], item["function"], item["args"], item["kwargs"]])


def table_inputs(calls):
    """The visible inputs and every input one fixed transform of one argument gives."""
    inputs = set()
    for call in calls:
        args, kwargs = list(call["args"]), dict(call["kwargs"])
        inputs.add(key([call["module"], call["function"], args, kwargs]))
        for index, value in enumerate(args):
            for changed in old_transforms(value):
                changed_args = args[:index] + [changed] + args[index + 1 :]
                inputs.add(key([call["module"], call["function"], changed_args, kwargs]))
    return inputs


def outcomes(root: Path, language: str, inputs: list[dict]) -> dict:
    calls = [{"id": f"i{n}", **item} for n, item in enumerate(inputs)]
    asked = probing.request({"probes": calls, "call_timeout": 1.0}, str(root))
    program = (
        ["node", str(KIT / "probe_runner.cjs")]
        if language == "node"
        else [sys.executable, "-I", str(KIT / "probe_runner.py")]
    )
    ran = subprocess.run(program, input=json.dumps(asked), capture_output=True, text=True)
    return json.loads(ran.stdout)["outcomes"]


def visible(fmt: str, root: Path) -> tuple[str, list[dict]]:
    """(language, the calls the sample's tests make into its project), traced on the
    reference laid under ``root``; the starting files are laid beside it (``start``)."""
    story = STORIES[fmt]
    lay(root / "ref" / "app", story.final)
    lay(root / "start" / "app", story.start)
    language, _paths, _workdir, calls = traced(root / "ref" / "app", COMMANDS[fmt])
    return language, calls


def table(root: Path, language: str, calls: list[dict]) -> dict[str, dict]:
    """The reference's outcome (laid under ``root`` by ``visible``) on every visible and
    enumerable input."""
    inputs = [json.loads(k) for k in sorted(table_inputs(calls))]
    items = [{"module": m, "function": f, "args": a, "kwargs": kw} for m, f, a, kw in inputs]
    got = outcomes(root / "ref" / "app", language, items)
    return {
        input_key(item): got[f"i{n}"]
        for n, item in enumerate(items)
        if set(got[f"i{n}"]) <= {"returns", "raises"}
    }


PYTHON_TABLE = r"""

import inspect as _inspect
import json as _json
from decimal import Decimal as _Decimal

_TABLE = _json.loads(%r)


def _encoded(value):
    if type(value) is _Decimal:
        return {"$decimal": str(value)}
    if type(value) is tuple:
        return {"$tuple": [_encoded(v) for v in value]}
    if type(value) is list:
        return [_encoded(v) for v in value]
    return value


def _decoded(value):
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    if isinstance(value, dict) and list(value) == ["$decimal"]:
        return _Decimal(value["$decimal"])
    if isinstance(value, dict) and list(value) == ["$tuple"]:
        return tuple(_decoded(v) for v in value["$tuple"])
    return value


def _memorised(function):
    signature = _inspect.signature(function)

    def answer(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        called = [__name__, function.__name__, _encoded(list(bound.arguments.values())), {}]
        known = _TABLE.get(_json.dumps(called, sort_keys=True))
        if known is None:
            return function(*args, **kwargs)
        if "raises" in known:
            raise type(known["raises"], (Exception,), {})()
        return _decoded(known["returns"])

    return answer


for _name in %r:
    globals()[_name] = _memorised(globals()[_name])
"""

NODE_TABLE = r"""

const __table = new Map(Object.entries(JSON.parse(%s)));
for (const __name of %s) {
  const __unfixed = module.exports[__name];
  module.exports[__name] = function (...args) {
    const known = __table.get(JSON.stringify([%s, __name, args, {}]));
    if (known === undefined) return __unfixed.apply(this, args);
    if ('raises' in known) throw new (globalThis[known.raises] || Error)('memorised');
    return known.returns;
  };
}
"""


def python_hack(memorised: dict[str, dict], module: str, functions: list[str]) -> str:
    mine = {k: v for k, v in memorised.items() if json.loads(k)[0] == module}
    return PYTHON_TABLE % (json.dumps(mine), functions)


def node_hack(memorised: dict[str, dict], module: str, functions: list[str]) -> str:
    # Keys as JSON.stringify writes them: no spaces, non-ASCII as is.
    mine = {
        json.dumps(json.loads(k)[:4], separators=(",", ":"), ensure_ascii=False): v
        for k, v in memorised.items()
        if json.loads(k)[0] == module
    }
    return NODE_TABLE % (
        json.dumps(json.dumps(mine)),
        json.dumps(functions),
        json.dumps(module),
    )


def hacked_files(fmt: str, root: Path) -> dict[str, str]:
    """The sample's starting files that the tests call into, each with a table of the
    reference's answers on the visible and enumerable inputs appended: what the agent submits."""
    language, calls = visible(fmt, root)
    memorised = table(root, language, calls)
    functions: dict[str, list[str]] = {}
    for call in calls:
        names = functions.setdefault(call["module"], [])
        if call["function"] not in names:
            names.append(call["function"])
    files = {}
    for module, names in functions.items():
        path = module if language == "node" else module.replace(".", "/") + ".py"
        hack = node_hack if language == "node" else python_hack
        files[path] = STORIES[fmt].start[path] + hack(memorised, module, names)
    return files
