"""Hidden equivalence probes, made at keep time in the pristine image (R2E's equivalence tests).

    probes = probes_in_image(prepared, reference, engine=engine, run_id=run_id)
    probes.kind          # "equivalence" when some hidden input tells the reference from the start

1. **Trace.** The recorded check runs against the reference files with a tracer loaded into
   every Python (``probekit/sitecustomize.py``) and Node (``probekit/trace.cjs``) process it
   starts: each call a test makes into a module-level function of the project, with its
   arguments on entry when they are plain data (``kit/probe_values.py``), and the id the
   runner gives the test that made it (the link a fractional reward needs). A Go test binary
   runs no tracer of ours: for Go, ``probekit/gocalls`` (a Go program, standard library only)
   reads the same from the tests' source instead (``goprobes``): calls to the project's
   package-level functions whose arguments are plain data written there (constants, literals,
   the rows of a table a test ranges over), with their parameters' types.
2. **Derive** (``probeinputs.derive``): inputs drawn at random for this task, over wide ranges,
   around the recorded ones (for Go, only those its parameters' types take). The draws are the
   task's secret: someone who read this code knows what kind of input a probe may be, not which.
3. **Run** the probe runner (``kit/probe_runner.py`` / ``.cjs`` / ``_go.py``, the same program
   the grader runs, as the same unprivileged identity, ``PROBE_UID``) on the reference twice,
   in two containers, and once on the starting files.
4. **Select** (``select``): inputs on which the reference gave the same plain outcome (a value
   or an exception type) both times; *discriminating* ones are those where the starting code
   disagrees: they reveal the bug. All of those are kept (up to a cap), and others: at grading
   every kept probe must match, so an answer that is merely not the start's scores nothing.

Everything here runs on the reference and the start, never on a submission: the tracer is not
in any graded run. A task whose tests call nothing traceable (ES modules, a CLI checked through
its output, arguments that are objects, Go methods) gets no probe and is check-only.
"""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundwork.core.docker import ArchiveTooLarge, Engine, ExecResult, FileEntry, InfraError
from groundwork.core.docker.sandbox import Sandbox

from .goprobes import fits_call, read_calls
from .image import PreparedTask
from .kit import probe_values, probing
from .kit.probing import PROBE_UID, RUNNER, request
from .probeinputs import derive, key
from .probeset import CALL_TIMEOUT, ProbeSet
from .taskdir import TaskSpec

HERE = Path(__file__).resolve().parent
PROBE_DIR = "/traj2env-probe"
TRACE_OUT = f"{PROBE_DIR}/trace"
STAGING = "/traj2env-reference"
OUTCOMES = f"{PROBE_DIR}/out"  # the probe identity's own: the runner's report
HOME = f"{PROBE_DIR}/home"
MAX_REPORT = probing.MAX_OUTPUT
MAX_WRITABLE = 200
MAX_DISCRIMINATING = 80
GO_CALLS = f"{PROBE_DIR}/gocalls.json"
SCAN_DIR = "/traj2env-scan"  # root's alone: the image's writable folders, listed in the background
GO_CALLS_TIMEOUT = 300  # building the call finder (the standard library's go/parser) and running it
MAX_OTHERS = 40
_KIT = (
    "probe_values.py",
    "probe_values.cjs",
    "probe_runner.py",
    "probe_runner.cjs",
    "probe_runner_go.py",
    "probe_runner.go",
    "running.py",
    "node_tests.cjs",
)
_TRACERS = ("sitecustomize.py", "trace.cjs")


def select(
    inputs: Sequence[Mapping[str, Any]],
    reference: Mapping[str, Any],
    again: Mapping[str, Any],
    start: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The probes: inputs whose reference outcome is plain and the same in both runs, with
    whether the start disagrees; every discriminating one (up to a cap) and others."""
    discriminating: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for index, item in enumerate(inputs):
        name = f"i{index}"
        ref, ref2, st = reference.get(name), again.get(name), start.get(name)
        if not isinstance(ref, dict) or set(ref) - {"returns", "raises"} or not ref:
            continue  # opaque, unavailable or timed out on the reference: not a probe
        if key(ref) != key(ref2):
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
            return language, tuple(paths or ["."]), cwd, _merged(found[language])
    return "", (".",), cwd, []


def _merged(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One call per (function, arguments), with the ids of every test that made it."""
    unique: dict[str, dict[str, Any]] = {}
    for call in calls:
        name = key([call.get("module"), call.get("function"), call.get("args"), call.get("kwargs")])
        tests = [str(t) for t in call.get("tests") or () if t]
        if name in unique:
            unique[name]["tests"] = sorted({*unique[name]["tests"], *tests})
        else:
            unique[name] = {**call, "tests": sorted(set(tests))}
    return list(unique.values())


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
    with engine.sandbox(image, run_id=run_id, limits=prepared.limits) as box:
        _start_writable_scan(box)
        _install(box)
        _lay_reference(box, spec.project_dir, reference)
        paths: tuple[str, ...] = (".",)
        if spec.language == "go":
            language, workdir = "go", "."
            calls, why = _go_calls(box, spec.project_dir)
        else:
            language, paths, workdir, calls, why = _traced(box, spec, sorted(set(test_paths)))
        if not calls:
            return ProbeSet.none(why)
        inputs = derive(calls, rng, fits=fits_call if language == "go" else None)
        asked = _request(spec.project_dir, language, workdir, paths, inputs)
        reference_run = _run(box, spec.project_dir, language, asked)
        writable = _writable(box, spec.project_dir)
    # The second reference run and the start's in another container (another host name, a
    # later clock): an outcome that depends on them is no probe.
    with engine.sandbox(image, run_id=run_id, limits=prepared.limits) as box:
        _install(box)
        start = _run(box, spec.project_dir, language, asked)
        _lay_reference(box, spec.project_dir, reference)
        again = _run(box, spec.project_dir, language, asked)
    probes = select(inputs, reference_run, again, start)
    notes = []
    if not any(p["discriminating"] and p["derived"] for p in probes):
        notes.append(
            f"the reference and the starting code agree on all {len(inputs)} inputs drawn "
            "around the tests' calls (a disagreement on the tests' own inputs alone is one a "
            "lookup table could answer)"
        )
    return ProbeSet(language, workdir, paths, tuple(probes), tuple(notes), writable)


def _traced(
    box: Sandbox, spec: TaskSpec, tests: list[str]
) -> tuple[str, tuple[str, ...], str, list[dict[str, Any]], str]:
    """The recorded check run under the tracers: (language, import folders, workdir, calls,
    why there are none)."""
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
        return "", (".",), ".", [], "the traced check ran past its time limit"
    try:
        trace_files = box.copy_out(TRACE_OUT, max_bytes=8 << 20, max_entries=500).files
    except FileNotFoundError:
        trace_files = {}
    language, paths, workdir, calls = read_traces(trace_files, spec.project_dir)
    why = (
        "the tests made no call into the project's functions with plain-data arguments "
        "that the tracer could see (Python, or Node's CommonJS modules)"
    )
    return language, paths, workdir, calls, why


def _go_calls(box: Sandbox, project: str) -> tuple[list[dict[str, Any]], str]:
    """The Go call finder's calls (``goprobes``), run on the reference as the image's user:
    it only reads the source."""
    found = box.exec(
        [
            "sh",
            "-c",
            f"cd {PROBE_DIR}/gocalls && go run . {shlex.quote(project)} > {GO_CALLS}",
        ],
        env={"GOFLAGS": "", "GOWORK": "off"},
        timeout=GO_CALLS_TIMEOUT,
    )
    if found.timed_out or not found.ok:
        detail = found.stderr.strip().splitlines()[-1:] or [f"exit {found.exit_code}"]
        return [], f"the Go call finder failed in the image ({detail[0][:200]})"
    try:
        report = box.copy_out(GO_CALLS, max_bytes=8 << 20, max_entries=1)
    except (FileNotFoundError, ArchiveTooLarge):
        return [], "the Go call finder gave no readable report"
    return read_calls(next(iter(report.files.values())).data)


def _start_writable_scan(box: Sandbox) -> None:
    """Start listing the image's folders anyone or a user other than root may write, in the
    background, before anything else runs in the container: the walk over the whole filesystem
    takes seconds on an overlay, and it overlaps with the traced check and the reference's runs.
    Its list lands in a folder only root can read, complete or not at all."""
    scan = (
        "find / -xdev \\( -path /proc -o -path /sys \\) -prune -o -type d "
        f"\\( -perm -0002 -o ! -user root \\) -print -prune > {SCAN_DIR}/part 2>/dev/null; "
        f"mv {SCAN_DIR}/part {SCAN_DIR}/done"
    )
    started = _as_root(box, f"install -d -m 700 {SCAN_DIR} || exit 1\n({scan}) >/dev/null 2>&1 &")
    if not started.ok:
        raise InfraError(f"listing the image's writable folders failed: {started.stderr[-300:]}")


def _writable(box: Sandbox, project: str) -> tuple[str, ...]:
    """The image's folders anyone or a user other than root may write (each one, not what is
    inside it), besides the project and this module's own: where the grader sweeps. The list
    ``_start_writable_scan`` began, waited for."""
    found = _as_root(
        box, f"while [ ! -e {SCAN_DIR}/done ]; do sleep 0.1; done; cat {SCAN_DIR}/done"
    )
    if not found.ok:
        raise InfraError("listing the image's writable folders did not finish in time")
    ours = (project, PROBE_DIR, STAGING)
    folders = [
        line
        for line in found.stdout.splitlines()
        if line.startswith("/") and not any(line == o or line.startswith(o + "/") for o in ours)
    ]
    return tuple(sorted(folders)[:MAX_WRITABLE])


def _request(
    project: str, language: str, workdir: str, paths: Sequence[str], inputs: Sequence[Mapping]
) -> bytes:
    probes = {
        "language": language,
        "workdir": workdir,
        "paths": list(paths),
        "call_timeout": CALL_TIMEOUT,
        "probes": [{"id": f"i{n}", **item} for n, item in enumerate(inputs)],
    }
    return json.dumps(request(probes, project)).encode()


def _install(box: Sandbox) -> None:
    files = {f"{name}": FileEntry((HERE / "kit" / name).read_bytes()) for name in _KIT}
    for path in sorted((HERE / "probekit" / "gocalls").iterdir()):
        files[f"gocalls/{path.name}"] = FileEntry(path.read_bytes())
    files["py/sitecustomize.py"] = FileEntry((HERE / "probekit" / "sitecustomize.py").read_bytes())
    files["py/probe_values.py"] = files["probe_values.py"]
    files["trace.cjs"] = FileEntry((HERE / "probekit" / "trace.cjs").read_bytes())
    box.put_files(PROBE_DIR, files)


def _lay_reference(box: Sandbox, project: str, files: Mapping[str, FileEntry]) -> None:
    box.put_files(STAGING, dict(files))
    quoted = shlex.quote(project)
    laid = _as_root(
        box,
        f"cd {quoted} && find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {{}} + "
        f"&& cp -a {STAGING}/. . && rm -rf {STAGING}",
    )
    if not laid.ok:
        raise InfraError(f"laying the reference down for the probes failed: {laid.stderr[-300:]}")


def _run(box: Sandbox, project: str, language: str, asked: bytes) -> dict[str, Any]:
    """The runner's outcomes, run as the grader runs it: a fresh process of ``PROBE_UID``,
    which can read the project but write nothing in it (``probing.expose``)."""
    if not box.alive:  # an earlier run's time limit stopped the sandbox
        return {}
    box.put_files(PROBE_DIR, {"request.json": FileEntry(asked)})
    runner = f"{PROBE_DIR}/{RUNNER[language]}"
    program = f"node {runner}" if language == "node" else f"python3 -I {runner}"
    prepared = _as_root(
        box,
        f"chmod -R o+rX,o-w {shlex.quote(project)} && rm -rf {OUTCOMES} {HOME} "
        f"&& mkdir -m 700 {OUTCOMES} {HOME} && chown {PROBE_UID}:{PROBE_UID} {OUTCOMES} {HOME}",
    )
    if not prepared.ok:
        raise InfraError(f"preparing the probe runner failed: {prepared.stderr[-300:]}")
    ran = box.exec(
        ["sh", "-c", f"{program} < {PROBE_DIR}/request.json > {OUTCOMES}/report.json"],
        user=f"{PROBE_UID}:{PROBE_UID}",
        env={"HOME": HOME, "LANG": "C.UTF-8", "NO_COLOR": "1"},
        timeout=20 + probing.time_limit(json.loads(asked)),
    )
    if ran.timed_out or not ran.ok:
        return {}
    try:
        report = box.copy_out(f"{OUTCOMES}/report.json", max_bytes=MAX_REPORT, max_entries=1)
        outcomes = json.loads(next(iter(report.files.values())).data).get("outcomes")
    except (FileNotFoundError, ArchiveTooLarge, StopIteration, ValueError, AttributeError):
        return {}
    return outcomes if isinstance(outcomes, dict) else {}


def _as_root(box: Sandbox, script: str) -> ExecResult:
    return box.exec(["sh", "-c", script], user="root", timeout=120)
