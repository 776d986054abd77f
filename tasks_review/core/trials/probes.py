"""Hidden equivalence probes, made at keep time in the pristine image (R2E's equivalence tests).

    probes = probes_in_image(prepared, reference, engine=engine, run_id=run_id)
    probes.kind          # "equivalence" when some input tells the reference from the start

1. **Trace.** The recorded check runs against the reference files with a tracer loaded into
   every Python (``probekit/sitecustomize.py``) and Node (``probekit/trace.cjs``) process it
   starts: each call a test makes into a module-level function of the project, with its
   arguments on entry when they are plain data (``kit/probe_values.py``).
2. **Derive** (``derive``): more inputs from the recorded ones, one argument at a time: numbers
   shifted and scaled by amounts drawn at random for this task, strings changed in case,
   length and order, lists permuted, cut and extended, one element of a list changed. The
   draws are the task's secret: someone who read this code still cannot know the inputs.
3. **Run** the probe runner (``kit/probe_runner.py`` / ``.cjs``, the same program the grader
   runs) on the reference twice, in two processes, and once on the starting files.
4. **Select** (``select``): inputs on which the reference gave the same plain outcome (a value
   or an exception type) both times; *discriminating* ones are those where the starting code
   disagrees: they reveal the bug. All of those are kept, and a few others.

Everything here runs on the reference and the start, never on a submission: the tracer is not
in any graded run. A task whose tests call nothing traceable (a Go package, ES modules, a CLI
checked through its output, arguments that are objects) gets no probe and is check-only.
"""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from groundwork.core.docker import Engine, FileEntry, InfraError
from groundwork.core.docker.sandbox import Sandbox

from .image import PreparedTask
from .kit import probe_values
from .kit.probing import RUNNER, request
from .probeset import CALL_TIMEOUT, ProbeSet

HERE = Path(__file__).resolve().parent
PROBE_DIR = "/traj2env-probe"
TRACE_OUT = f"{PROBE_DIR}/trace"
STAGING = "/traj2env-reference"
MAX_INPUTS = 120  # calls run per process: recorded plus derived
PER_FUNCTION = 40
MAX_DISCRIMINATING = 80
MAX_OTHERS = 20
_KIT = ("probe_values.py", "probe_values.cjs", "probe_runner.py", "probe_runner.cjs")
_TRACERS = ("sitecustomize.py", "trace.cjs")


# -- derive ------------------------------------------------------------------------------------


def mutations(value: Any, rng: random.Random, depth: int = 0) -> list[Any]:
    """Encoded values near ``value`` (an encoded value), none equal to it."""
    out: list[Any] = []
    if isinstance(value, bool):
        out = [not value]
    elif isinstance(value, int):
        k = rng.randint(2, 9)
        out = [value + k, value - k, value * k, -value, 0, value + 1, value - 1]
        if 1 < abs(value) < 10**6:  # the next boundary of a unit (1024 -> 1024 ** 2)
            out.append(value * value)
    elif isinstance(value, float):
        f = round(rng.uniform(1.5, 4.0), 3)
        out = [value * f, value + rng.randint(1, 9) + 0.25, -value, 0.0]
    elif isinstance(value, str):
        out = _string_mutations(value, rng)
    elif isinstance(value, list):
        out = _list_mutations(value, rng, depth)
    elif isinstance(value, dict) and list(value) == ["$decimal"]:
        out = _decimal_mutations(value["$decimal"], rng)
    elif isinstance(value, dict) and list(value) == ["$tuple"]:
        out = [{"$tuple": m} for m in _list_mutations(value["$tuple"], rng, depth)]
    elif isinstance(value, dict) and not any(k.startswith("$") for k in value):
        for key in rng.sample(sorted(value), min(2, len(value))):
            for changed in mutations(value[key], rng, depth + 1)[:3]:
                out.append({**value, key: changed})
            out.append({k: v for k, v in value.items() if k != key})
    seen = {_key(value)}
    kept = []
    for item in out:
        if _key(item) not in seen:
            seen.add(_key(item))
            kept.append(item)
    return kept


def _string_mutations(text: str, rng: random.Random) -> list[str]:
    words = text.split()
    letters = list(text)
    rng.shuffle(letters)
    spot = rng.randint(0, len(text))
    extra = rng.choice("aZ9 -_.,")
    return [
        text.upper(),
        text.lower(),
        text.swapcase(),
        text[::-1],
        text * 2,
        text[: len(text) // 2],
        text[:spot] + extra + text[spot:],
        " ".join(reversed(words)),
        "".join(letters),
        "",
    ]


def _list_mutations(items: list[Any], rng: random.Random, depth: int) -> list[list[Any]]:
    shuffled = list(items)
    rng.shuffle(shuffled)
    out = [items[::-1], items[1:] + items[:1], items[:-1], items[1:], items + items[:1], shuffled]
    out.append([])
    if depth < 3 and items:
        for index in rng.sample(range(len(items)), min(2, len(items))):
            for changed in mutations(items[index], rng, depth + 1)[:3]:
                out.append(items[:index] + [changed] + items[index + 1 :])
    return out


def _decimal_mutations(text: str, rng: random.Random) -> list[dict[str, str]]:
    try:
        amount = Decimal(text)
    except InvalidOperation:
        return []
    if not amount.is_finite():
        return []
    k = Decimal(rng.randint(2, 9))
    cents = Decimal(rng.randint(1, 99)) / 100
    values = [amount + k, amount - k, amount * k, -amount, amount + cents, Decimal(0)]
    return [{"$decimal": str(v)} for v in values]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def derive(
    calls: Sequence[Mapping[str, Any]], rng: random.Random, limit: int = MAX_INPUTS
) -> list[dict[str, Any]]:
    """The recorded calls and inputs derived from them, one argument changed at a time, at most
    ``PER_FUNCTION`` per function and ``limit`` in all (drawn so that every function gets its
    share)."""
    by_function: dict[tuple[str, str], list[dict[str, Any]]] = {}
    seen: set[str] = set()

    def add(call: Mapping[str, Any], args: list[Any], kwargs: dict[str, Any], derived: bool):
        key = _key([call["module"], call["function"], args, kwargs])
        if key in seen:
            return
        seen.add(key)
        by_function.setdefault((call["module"], call["function"]), []).append(
            {
                "module": call["module"],
                "function": call["function"],
                "args": args,
                "kwargs": kwargs,
                "test": call.get("test") or "",
                "test_function": call.get("test_function") or "",
                "derived": derived,
            }
        )

    for call in calls:
        add(call, list(call.get("args") or []), dict(call.get("kwargs") or {}), False)
    for call in calls:
        args, kwargs = list(call.get("args") or []), dict(call.get("kwargs") or {})
        for index, value in enumerate(args):
            for changed in mutations(value, rng):
                add(call, args[:index] + [changed] + args[index + 1 :], kwargs, True)
        for name, value in kwargs.items():
            for changed in mutations(value, rng):
                add(call, args, {**kwargs, name: changed}, True)
    chosen: list[dict[str, Any]] = []
    pools = []
    for items in by_function.values():
        recorded = [i for i in items if not i["derived"]]
        derived = [i for i in items if i["derived"]]
        rng.shuffle(derived)
        # The tests' own inputs first, but never crowding out the derived ones: only those are
        # hidden from someone who reads the tests.
        pools.append((recorded[:10] + derived + recorded[10:])[:PER_FUNCTION])
    # Round robin over the functions, so a function called a hundred times does not crowd out
    # the one called once.
    while len(chosen) < limit and any(pools):
        for pool in pools:
            if pool and len(chosen) < limit:
                chosen.append(pool.pop(0))
    return chosen


def select(
    inputs: Sequence[Mapping[str, Any]],
    reference: Mapping[str, Any],
    again: Mapping[str, Any],
    start: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The probes: inputs whose reference outcome is plain and the same in both runs, with
    whether the start disagrees; every discriminating one (up to a cap) and a few others."""
    discriminating: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for index, item in enumerate(inputs):
        key = f"i{index}"
        ref, ref2, st = reference.get(key), again.get(key), start.get(key)
        if not isinstance(ref, dict) or set(ref) - {"returns", "raises"} or not ref:
            continue  # opaque, unavailable or timed out on the reference: not a probe
        if _key(ref) != _key(ref2):
            continue  # the reference is not deterministic here
        differs = not (isinstance(st, dict) and probe_values.same(ref, st))
        probe = {**item, "expected": ref, "discriminating": differs}
        (discriminating if differs else others).append(probe)
    chosen = discriminating[:MAX_DISCRIMINATING] + others[:MAX_OTHERS]
    return [{"id": f"p{n}", **probe} for n, probe in enumerate(chosen)]


# -- traces ------------------------------------------------------------------------------------


def read_traces(
    files: Mapping[str, FileEntry], project: str
) -> tuple[str, tuple[str, ...], str, list[dict[str, Any]]]:
    """(language, import folders, workdir, calls) from the tracer's files; Python first."""
    found: dict[str, list[dict[str, Any]]] = {"python": [], "node": []}
    paths: list[str] = []
    cwd = "."
    for name in sorted(files):
        try:
            record = json.loads(files[name].data)
        except ValueError:
            continue
        language = record.get("language")
        calls = [c for c in record.get("calls") or () if isinstance(c, dict)]
        if language not in found or not calls:
            continue
        found[language] += calls
        if language == "python":
            paths += [p for p in record.get("paths") or () if p not in paths]
        rel = _inside(str(record.get("cwd") or ""), project)
        if rel is not None:
            cwd = rel
    for language in ("python", "node"):
        if found[language]:
            unique = {
                _key([c.get("module"), c.get("function"), c.get("args"), c.get("kwargs")]): c
                for c in found[language]
            }
            return language, tuple(paths or ["."]), cwd, list(unique.values())
    return "", (".",), cwd, []


def _inside(path: str, project: str) -> str | None:
    root = project.rstrip("/")
    if path == root:
        return "."
    if path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return None


# -- in the image ------------------------------------------------------------------------------


def probes_in_image(
    prepared: PreparedTask,
    reference: Mapping[str, FileEntry],
    *,
    engine: Engine,
    run_id: str,
    test_paths: Iterable[str] = (),
    rng: random.Random | None = None,
) -> ProbeSet:
    """Trace, derive, run and select (see the module docstring). InfraError when Docker fails."""
    if prepared.image is None:
        raise ValueError("the task was dropped before its image was built")
    spec = prepared.spec
    rng = rng or random.Random()  # a fresh draw per task: its inputs are its own secret
    image = prepared.image.image_id
    tests = sorted(set(test_paths))
    with engine.sandbox(image, run_id=run_id, limits=prepared.limits) as box:
        _install(box)
        _lay_reference(box, spec.project_dir, reference)
        traced = box.exec(
            ["sh", "-c", f"cd {shlex.quote(spec.workdir)} && {spec.command}"],
            env={
                "TRAJ2ENV_TRACE_OUT": TRACE_OUT,
                "TRAJ2ENV_TRACE_PROJECT": spec.project_dir,
                "TRAJ2ENV_TRACE_TESTS": json.dumps(tests),
                "PYTHONPATH": f"{PROBE_DIR}/py",
                "NODE_OPTIONS": f"--require={PROBE_DIR}/trace.cjs",
                **dict(spec.env),
            },
            timeout=spec.check_timeout,
        )
        if traced.timed_out:
            return ProbeSet.none("the traced check ran past its time limit")
        try:
            trace_files = box.copy_out(TRACE_OUT, max_bytes=8 << 20, max_entries=500).files
        except FileNotFoundError:
            trace_files = {}
        language, paths, workdir, calls = read_traces(trace_files, spec.project_dir)
        if not calls:
            return ProbeSet.none(
                "the tests made no call into the project's functions with plain-data arguments "
                "that the tracer could see (Python, or Node's CommonJS modules)"
            )
        inputs = derive(calls, rng)
        asked = _request(spec.project_dir, workdir, paths, inputs)
        reference_run = _run(box, language, asked)
        again = _run(box, language, asked)
    with engine.sandbox(image, run_id=run_id, limits=prepared.limits) as box:
        _install(box)
        start = _run(box, language, asked)
    probes = select(inputs, reference_run, again, start)
    notes = []
    if not any(p["discriminating"] and p["derived"] for p in probes):
        notes.append(
            f"the reference and the starting code agree on all {len(inputs)} inputs derived "
            "from the tests' calls (a disagreement on the tests' own inputs alone is one a "
            "lookup table could answer)"
        )
    return ProbeSet(language, workdir, paths, tuple(probes), tuple(notes))


def _request(project: str, workdir: str, paths: Sequence[str], inputs: Sequence[Mapping]) -> bytes:
    probes = {
        "workdir": workdir,
        "paths": list(paths),
        "call_timeout": CALL_TIMEOUT,
        "probes": [{"id": f"i{n}", **item} for n, item in enumerate(inputs)],
    }
    return json.dumps(request(probes, project)).encode()


def _install(box: Sandbox) -> None:
    files = {f"{name}": FileEntry((HERE / "kit" / name).read_bytes()) for name in _KIT}
    files["py/sitecustomize.py"] = FileEntry((HERE / "probekit" / "sitecustomize.py").read_bytes())
    files["py/probe_values.py"] = files["probe_values.py"]
    files["trace.cjs"] = FileEntry((HERE / "probekit" / "trace.cjs").read_bytes())
    box.put_files(PROBE_DIR, files)


def _lay_reference(box: Sandbox, project: str, files: Mapping[str, FileEntry]) -> None:
    box.put_files(STAGING, dict(files))
    quoted = shlex.quote(project)
    laid = box.exec(
        [
            "sh",
            "-c",
            f"cd {quoted} && find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {{}} + "
            f"&& cp -a {STAGING}/. . && rm -rf {STAGING}",
        ],
        user="root",
        timeout=120,
    )
    if not laid.ok:
        raise InfraError(f"laying the reference down for the probes failed: {laid.stderr[-300:]}")


def _run(box: Sandbox, language: str, asked: bytes) -> dict[str, Any]:
    if not box.alive:  # an earlier run's time limit stopped the sandbox
        return {}
    box.put_files(PROBE_DIR, {"request.json": FileEntry(asked)})
    runner = f"{PROBE_DIR}/{RUNNER[language]}"
    program = f"node {runner}" if language == "node" else f"python3 -I {runner}"
    calls = len(json.loads(asked)["calls"])
    ran = box.exec(
        ["sh", "-c", f"{program} < {PROBE_DIR}/request.json"],
        timeout=30 + CALL_TIMEOUT * calls,
    )
    if ran.timed_out or not ran.ok:
        return {}
    try:
        outcomes = json.loads(ran.stdout).get("outcomes")
    except (ValueError, AttributeError):
        return {}
    return outcomes if isinstance(outcomes, dict) else {}
