"""traj2env task grader: ``tests/test.sh`` runs it as root in the separate verifier.

Standard library only (Python 3.8+), started with ``python3 -I`` so nothing in the project
can shadow what it imports. The submitted project is already at its place (Harbor uploads the
agent's project; the trial matrix writes the submission's regular files). Then:

1. **Clean** (``cleaning.py``): symlinks, special files, ``__pycache__`` and installed-dependency
   folders (task images install dependencies outside the project) are removed; so is every
   guarded file (tests, test and runner configuration, start-up hooks) the reference lacks, and
   every file a supported runner would discover as a test (unittest's ``test*.py``, node's
   ``*-test.js``, ``test-*.js`` ...) that is not one of the reference's. A project module that
   would shadow a standard-library or runner module the reference does not have is tampering.
2. **Restore** (``restoring.py``): every guarded file the reference has takes the reference's
   exact bytes (``grading.json`` carries them base64-encoded), owned by root in folders only
   root can take files out of (sticky), so the check cannot swap them while it runs.
3. **Run** (``running.py``) the recorded check as an unprivileged ``grader`` user (created when
   the image has none), with the services it needs started first (``servers.py``: Redis,
   PostgreSQL, as their own users on loopback, stopped afterwards), through the grader kit:
   a shim first on PATH sends test runners (unittest, pytest, node --test, go test) through
   instrumented ones, which report test by test over a Unix socket this process listens on
   (``reports.py``), and ask it which real tests to copy as controls (``planning.py``: some
   verbatim, some with an assertion made false, under random names, among the real tests).
   Nothing secret is in the check's environment, files or arguments; no file it can write is
   read for the verdict. With a time limit; then every process of that user is killed.
4. **Probe** (``probing.py``), when the task has hidden equivalence probes: ``probes.json``
   beside grading.json, made root's alone before anything else runs, whose count and sha256
   grading.json records (a file missing or changed is a finding: reward 0, never a check-only
   grading; grading.json itself unreadable is the grader's own failure: it writes reward 0
   and no verdict, which the harness reports as ungraded). A fresh process of an identity of
   its own (``probing.PROBE_UID``: it can read the project, write nothing in it) imports the
   submission's modules, calls their functions on the hidden inputs it reads on stdin and
   prints what they returned or raised (for Go it builds the submission's package with a
   generated test that does so, ``probe_runner_go.py``); then every process of that identity
   is killed and everything it created is removed. This process compares.
5. **Judge** with ``judging.py`` (the rules the trial matrix applies in its own process to the
   same session records and probe outcomes) and write ``reward.json`` (which Harbor reads
   first) and ``reward.txt``, last, each created anew without following links, and read back.
   The sessions and the verdict go to ``<verifier dir>/traj2env/``: the verdict says how many
   probes failed, never which (the outcomes by probe, ``probe_results.json``, are root's alone).

What decides the reward. The submission is written by someone who has read this kit, and
everything that runs as ``grader`` or as the probe identity is theirs: code the tests import
can read and patch anything in its own process (the runner, its plan, the kit's assertion
wrappers, the random draws, the channel's messages) and, with no Yama ptrace restriction, in
other processes of its uid. So nothing in a graded process decides the reward. Root decides,
here, in a process that never loads submission code, from data the submission cannot forge
into correctness:

* The **equivalence probes** are the defence. Their inputs were drawn at keep time, at random
  over wide ranges, around the tests' own calls (``trials/probeinputs.py``): reading the code
  tells what kind of input a probe may be, not which. Their expected outcomes are the
  reference's. Both stay in a file only root can read; they never reach the project, the
  graded process's environment, its arguments or any file the grading user can read. The probe
  process sees the inputs, not what they must give: it can print anything, but only code that
  computes the reference's answers matches. **Every** kept probe must match, the ones where
  the start already agreed too, so "anything but the start's answer" (the opposite of a yes or
  no, an exception everywhere) scores nothing. For a fractional reward, a test whose calls gave
  a failed probe (its exact id, as the tracer saw it run) gets no credit. Memorised
  expectations and every in-process forgery fail there.
* The **tripwires**: control copies of the real tests (some verbatim, some with an assertion
  made false), per-test reports over a socket that accepts only the check's own uid within
  caps, cleaning and shadowing findings, files changed during the check, a grading process
  that outlives the sweeps. Cheap, and they catch careless forgery; code that reads the plan
  from its own process, compares each copy's code with the test files, pins the kit's random
  draws or hooks what the runner dispatches through can tell the copies apart. They do not
  stop a determined attacker; the probes do.
* **Go** is probed as far as its tests allow: a test binary runs no tracer, so the calls are
  read from the tests' source when the task is kept (``trials/goprobes.py``): package-level
  functions called with plain data written there (constants, literals, the rows of a table a
  test ranges over). At grading the probe identity builds the submission's package with a
  generated test (never written in the project: an overlay) and a build cache it can only
  read; what it compiles and runs is the submission's, as a Python probe's imports are, so it
  decides what is printed, never what that is compared with. An error result counts as
  whether there is one (not its message), a panic as a panic.
* **Out of reach of the probes**: a check-only task (no discriminating probe on a hidden input:
  its tests call nothing traceable with plain-data arguments, such as a CLI checked through its
  output, ES modules, Go methods or values built at run time, objects as arguments) is graded
  by the check and the tripwires alone; it is marked so everywhere and kept out of training
  unless a behaviour opts in. Behaviour the probes never call (a side effect on files, a
  method of a class) is judged by the check alone even on an equivalence-graded task, and an
  input on which the reference depends on the date or the host only in ways two runs a minute
  apart do not show can fail a correct fix later (a false negative, not a pass).

Graded in the agent's own container (Harbor's stock environment; tasks ask for a separate
verifier), root runs nothing the agent could have written: ``test.sh`` names every program by
its absolute path in a clean environment, the task venv (/opt/traj2env) is root's, the check's
PATH keeps only folders no one else can write, every process the grader did not start is
killed first (and again before the reward is written), and the reward files are created anew,
never through a link, and read back. What the probe process wrote is swept from every folder
it could write: those anyone may write, the image's folders of users other than root
(recorded when the task was kept), every home and mount, the project. This assumes an agent
that is **not root**. A root agent in the same container owns the grader itself: it can read
``probes.json`` before or while grading runs, replace the interpreter, trace root's process,
keep a process the sweeps cannot kill and rewrite the reward after it is read back. Nothing in
this kit stops that; only a separate verifier (or an agent without root) does. Likewise when
Harbor uploads ``tests/`` keeping the host's uid (``docker cp`` from a non-root host): the files
then belong to a uid the agent may have, which can read ``probes.json`` or rewrite this grader
before it runs; ``lock`` takes them back for root, too late if the agent was quicker. Training
never trusts such a reward: rollouts are graded again by the separate verifier. Nor does it stop
a non-root agent from leaving a world-writable *file* (not a folder) outside those places for
the probe process to write into; its outcomes still decide nothing, but what it saw may then
be read by an agent graded again in the same container. What anyone may read of a grading
(the verdict, the log) says how many probes failed: an agent graded again and again learns
whether a change made more of them match, never which ones or on what inputs.

Usage: python3 -I grade.py GRADING_JSON   (TRAJ2ENV_VERIFIER_DIR overrides /logs/verifier)
"""

import json
import os
import shutil
import stat
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # -I leaves the script's own folder off sys.path

import cleaning  # noqa: E402
import judging  # noqa: E402
import planning  # noqa: E402
import probing  # noqa: E402
import reports  # noqa: E402
import restoring  # noqa: E402
import running  # noqa: E402
import servers  # noqa: E402

SOCKET = "report.sock"


class RewardNotWritten(Exception):
    """A reward file did not read back as written: something else writes the verifier folder."""


def _write_new(folder, name, data):
    """``name`` in ``folder`` made anew: whatever was there (a link, a folder, a FIFO, a file a
    daemon holds open) is removed first, and the file is created without following links."""
    path = os.path.join(folder, name)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _read_back(folder, name):
    try:
        fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(4096)


def write_reward(verifier, reward):
    """Write ``reward.json`` (which Harbor reads first) and ``reward.txt``, and read both back.

    A planted link would have a root write land in the agent's file, or fail and leave the
    agent's 1 readable; a planted ``reward.json`` would win over ``reward.txt``. So both are
    always written, each created anew, and checked as Harbor will read them.
    """
    # The shortest text that reads back as the same float: a fractional reward (2 of 3 tests)
    # must compare equal to the harness's own when it reads reward.txt.
    text = repr(float(reward))
    files = {
        "reward.json": (json.dumps({"reward": float(reward)}) + "\n").encode(),
        "reward.txt": ((text[:-2] if text.endswith(".0") else text) + "\n").encode(),
    }
    for name, data in files.items():
        _write_new(verifier, name, data)
    for name, data in files.items():
        if _read_back(verifier, name) != data:
            raise RewardNotWritten(f"{name} did not read back as written")


def grade(config, verifier, out):
    project = config["project"]
    if not os.path.isdir(project) or os.path.islink(project):
        return {"reward": 0.0, "reasons": [f"no project at {project}"], "grading": "none"}
    rules = cleaning.Rules(config["rules"])
    reference = config.get("reference") or {}
    known = set(reference) | set(config.get("reference_paths") or ())
    removed = cleaning.clean(project, rules, reference, keep=known)
    findings = cleaning.shadowing(project, cleaning.import_folders(config, reference), known)
    restored = restoring.restore(project, reference)
    uid, gid, home = running.grader_account()
    running.chown_tree(project, uid, gid)
    restoring.protect(project, reference)
    # Fresh instances, as root, before anything of the submission runs (see servers.py for
    # why none of the submission's can be running instead); a failure is the grader's.
    started = servers.start(config.get("services") or [])
    kit = running.install_kit(config, sys.executable)
    scratch = tempfile.mkdtemp(prefix="traj2env-run-")  # root-only: the log lives here
    log_path = os.path.join(scratch, "check.log")
    channel = reports.Reports(os.path.join(kit, SOCKET), planning.Planner(config), uid=uid)
    baseline = config.get("reference_controls") is None
    probes = None
    if not baseline:
        folder = os.path.dirname(os.path.abspath(sys.argv[1]))
        probes, problem = probing.load(folder, config.get("probes"))
        if problem:
            findings.append(problem)
    try:
        exit_code, timed_out, seconds = running.run_check(config, kit, uid, gid, home, log_path)
        channel.close()
        sessions, strays = channel.records()
        output = running.tail(log_path)
        # The reward's own evidence: a fresh process of the grading user calls the submission's
        # functions on the hidden inputs; only this process knows what they must give.
        # The check's own PATH (root-only folders), without the kit's runner shims.
        search = running.safe_path(os.path.realpath(project), "").split(os.pathsep)[1:]
        ran = None
        if probes:
            ran = probing.run(probes, project, running.kill_all, os.pathsep.join(search))
        # A process of the grading user (or the probes') still alive now, forking faster than
        # the sweeps, could act after the verdict: the run is not to be trusted.
        outlived = []
        for who in (uid, probing.PROBE_UID):
            running.kill_all(who)
            outlived += [pid for pid in running.processes_of(who) if not _zombie(pid)]
    finally:
        channel.close()
        shutil.rmtree(kit, ignore_errors=True)
        servers.stop(started)  # after every grader process is gone (run_check kills them)
    shutil.rmtree(scratch, ignore_errors=True)
    if outlived:
        findings.append(f"{len(outlived)} process(es) of the grading user outlived the check")
    findings += strays + restoring.changed_during_check(project, reference)
    with open(os.path.join(out, "sessions.jsonl"), "w") as handle:
        for session in sessions:
            handle.write(json.dumps(session, sort_keys=True) + "\n")
    probe_check = probing.check(probes, ran) if probes else None
    if probes:
        # Root's alone: which probes failed would tell an agent graded again where to look.
        fd = os.open(os.path.join(out, "probe_results.json"), os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(ran, handle, sort_keys=True)
    verdict = judging.judge_sessions(
        exit_code,
        timed_out,
        seconds,
        sessions,
        config.get("structured") or (),
        reference=config.get("reference_passed") or None,
        findings=findings,
        baseline=baseline,
        reward=config.get("reward") or "all",
        start_failed=config.get("start_failed") or (),
        probes=probe_check,
    )
    return {
        "reward": verdict.reward,
        "reasons": list(verdict.reasons),
        "grading": verdict.grading,
        "passed": verdict.passed,
        "failed": list(verdict.failed),
        "controls": verdict.controls,
        "score": verdict.score,
        "findings": findings[:20],
        "probes": probing.summary(probe_check),
        "swept": (ran or {}).get("swept", 0),  # files the probe process left, removed
        "probe_seconds": (ran or {}).get("phase_seconds"),  # the probes' share of the grading
        "detail": verdict.detail,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "seconds": round(seconds, 3),
        "baseline": baseline,
        "removed": removed[:50],
        "restored": restored[:50],
        "output": output,
    }


def _zombie(pid):
    """A killed process its parent has not reaped yet: it can no longer act."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True  # gone


def main(judge=None):
    """Grade with ``judge(config, verifier, out)`` (``grade``; a qa task's ``answer_grade``
    passes its own) and write the verdict and the reward, whatever happens."""
    if len(sys.argv) > 1:  # the hidden probes are root's before anything else happens
        probing.lock(os.path.dirname(os.path.abspath(sys.argv[1])))
    if running.in_a_task_container():
        # Same-container grading: the agent's daemons would rewrite the project or the reward
        # files behind the grader's back.
        running.kill_strangers()
    verifier = os.environ.get("TRAJ2ENV_VERIFIER_DIR") or "/logs/verifier"
    if os.path.islink(verifier):
        os.unlink(verifier)
    os.makedirs(verifier, exist_ok=True)
    if os.geteuid() == 0:  # Harbor makes it world-writable: no one else may replace a file in it
        os.chown(verifier, 0, 0)
        os.chmod(verifier, 0o755)
    write_reward(verifier, 0.0)
    out = os.path.join(verifier, "traj2env")
    if os.path.islink(out) or os.path.isfile(out):
        os.unlink(out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    try:
        with open(sys.argv[1], encoding="utf-8") as handle:
            config = json.load(handle)
        outcome = (judge or grade)(config, verifier, out)
    except BaseException as exc:  # a grader failure is never a pass
        outcome = {"reward": 0.0, "error": f"{type(exc).__name__}: {exc}"}
        traceback.print_exc()
    output = outcome.pop("output", "")
    with open(os.path.join(out, "verdict.json"), "w") as handle:
        json.dump(outcome, handle, indent=1, sort_keys=True)
    if running.in_a_task_container():
        running.kill_strangers()  # whatever started meanwhile (a docker exec of the agent's)
    try:
        write_reward(verifier, float(outcome["reward"]))
    except RewardNotWritten as exc:  # never a pass: a 0 where Harbor reads, if it still can
        outcome = {"reward": 0.0, "error": str(exc)}
        write_reward(verifier, 0.0)
    sys.stdout.write(output)
    print(f"\ngrader: reward {outcome['reward']:g}")
    for reason in outcome.get("reasons") or [outcome.get("error", "")]:
        if reason:
            print(f"grader: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
