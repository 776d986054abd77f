"""traj2env task grader: ``tests/test.sh`` runs it as root in the separate verifier.

Standard library only (Python 3.8+), started with ``python3 -I`` so nothing in the project
can shadow what it imports. The submitted project is already at its place (Harbor uploads the
agent's project; the trial matrix writes the submission's regular files). Then:

1. **Clean**: symlinks, special files, ``__pycache__`` and installed-dependency folders
   (task images install dependencies outside the project) are removed; so is every guarded
   file (tests, test and runner configuration, start-up hooks) the reference lacks.
2. **Restore**: every guarded file the reference has takes the reference's exact bytes
   (``grading.json`` carries them base64-encoded).
3. **Run** the recorded check as an unprivileged ``grader`` user (created when the image has
   none), through the grader kit (a shim first on PATH that sends test runners through
   instrumented ones with two contradictory control tests), with a time limit; then every
   process of that user is killed, so nothing can touch the results afterwards.
4. **Judge** with ``judging.py`` (the same rules the trial matrix applies in its own process)
   and write ``reward.txt``; ``reward.json``, which Harbor would prefer, is removed. The raw
   results and the verdict go to ``<verifier dir>/traj2env/`` for whoever wants to re-judge.

Usage: python3 -I grade.py GRADING_JSON   (TRAJ2ENV_VERIFIER_DIR overrides /logs/verifier)
"""

import base64
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # -I leaves the script's own folder off sys.path

import judging  # noqa: E402

KIT_FILES = ("shim.py", "unittest_harness.py", "traj2env_pytest_controls.py", "node_controls.cjs")
WRAPPED = ("python3", "python", "pytest", "py.test", "node", "nodejs")
GRADER = "grader"
MAX_LOG = 64 << 10
MAX_RESULT_FILES = 200


class Rules:
    """``plan.is_guarded`` and the project/dependency split, rebuilt from grading.json."""

    def __init__(self, data):
        self.test_dirs = frozenset(data["test_dirs"])
        self.test_file = re.compile(data["test_file"])
        self.config_names = frozenset(data["config_names"])
        self.config = re.compile(data["config"])
        self.hook = re.compile(data["hook"])
        self.vcs_dirs = frozenset(data["vcs_dirs"])
        self.dependency_dirs = frozenset(data["dependency_dirs"])

    def guarded(self, path):
        parts = path.split("/")
        name = parts[-1]
        return bool(
            self.test_file.match(name)
            or set(parts[:-1]) & self.test_dirs
            or name in self.config_names
            or self.config.match(name)
            or self.hook.search(name)
        )


def clean(project, rules, reference):
    """Remove what may not take part in grading (see the module docstring); what was removed."""
    removed = []

    def walk(folder, rel):
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            path = rel + "/" + entry.name if rel else entry.name
            if entry.is_symlink():
                os.unlink(entry.path)
                removed.append(path)
            elif entry.is_dir(follow_symlinks=False):
                if not rel and entry.name in rules.vcs_dirs:
                    continue  # the repository the image made; never read by grading
                if entry.name in rules.dependency_dirs:
                    # Task images install dependencies outside the project; these came with
                    # the submission (a fake runner in node_modules/.bin, a stale .pyc).
                    shutil.rmtree(entry.path)
                    removed.append(path + "/")
                    continue
                walk(entry.path, path)
            elif not entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(path)
            elif rules.guarded(path) and path not in reference:
                os.unlink(entry.path)
                removed.append(path)

    walk(project, "")
    return removed


def restore(project, reference):
    """Write every reference file, making way for it; the paths that differed."""
    restored = []
    for rel in sorted(reference):
        data = base64.b64decode(reference[rel])
        parts = rel.split("/")
        folder = project
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            if os.path.lexists(folder) and not (
                os.path.isdir(folder) and not os.path.islink(folder)
            ):
                os.unlink(folder)
            if not os.path.lexists(folder):
                os.mkdir(folder, 0o755)
        target = os.path.join(project, rel)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        try:
            with open(target, "rb") as handle:
                same = handle.read() == data
        except OSError:
            same = False
        if not same:
            restored.append(rel)
        if os.path.lexists(target):
            os.unlink(target)
        # Not O_EXCL: fuse-overlayfs can refuse it on a name just unlinked over a lower layer.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(target, 0o644)
    return restored


def grader_account():
    """(uid, gid, home) of the grader user, created when the image has none."""
    try:
        entry = pwd.getpwnam(GRADER)
    except KeyError:
        for command in (
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", GRADER],
            ["adduser", "-S", "-H", "-s", "/bin/sh", GRADER],
        ):
            try:
                subprocess.run(command, check=True, capture_output=True)
                break
            except (OSError, subprocess.CalledProcessError):
                continue
        try:
            entry = pwd.getpwnam(GRADER)
        except KeyError:
            entry = pwd.getpwnam("nobody")
    if entry.pw_uid == 0:
        raise SystemExit("grade.py: the grader account must not be root")
    home = entry.pw_dir
    if not os.path.isdir(home) or os.stat(home).st_uid != entry.pw_uid:
        home = tempfile.mkdtemp(prefix="traj2env-home-")
        os.chown(home, entry.pw_uid, entry.pw_gid)
    return entry.pw_uid, entry.pw_gid, home


def chown_tree(root, uid, gid):
    os.lchown(root, uid, gid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, gid)


def install_kit(config, python):
    """The kit in a fresh root-owned folder: the shim, its wrappers and the check script."""
    kit = tempfile.mkdtemp(prefix="traj2env-grader-")
    os.chmod(kit, 0o755)
    for name in KIT_FILES:
        shutil.copyfile(os.path.join(HERE, name), os.path.join(kit, name))
        os.chmod(os.path.join(kit, name), 0o644)
    bin_dir = os.path.join(kit, "bin")
    os.mkdir(bin_dir, 0o755)
    os.symlink(python, os.path.join(kit, "python"))
    for tool in WRAPPED:
        with open(os.path.join(bin_dir, tool), "w") as handle:
            handle.write(f'#!/bin/sh\nexec {kit}/python -I {kit}/shim.py {tool} "$@"\n')
        os.chmod(os.path.join(bin_dir, tool), 0o755)
    # python3.11 and friends resolve to the same wrapper as python3.
    for folder in ("/usr/local/bin", "/usr/bin"):
        for name in os.listdir(folder) if os.path.isdir(folder) else ():
            if re.match(r"^python3\.\d+$", name) and not os.path.exists(
                os.path.join(bin_dir, name)
            ):
                os.symlink("python3", os.path.join(bin_dir, name))
    check = f"cd {quote(config['workdir'])} || exit 97\n{config['command']}\n"
    with open(os.path.join(kit, "check.sh"), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(check)
    os.chmod(os.path.join(kit, "check.sh"), 0o644)
    return kit


def quote(text):
    return "'" + text.replace("'", "'\"'\"'") + "'"


def safe_path(project, kit_bin):
    """The verifier's PATH with the kit first and nothing the submission could have written."""
    kept = [kit_bin]
    for folder in os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep):
        if not folder.startswith("/") or folder in kept:
            continue
        real = os.path.realpath(folder)
        if real == project or real.startswith(project.rstrip("/") + "/"):
            continue
        kept.append(folder)
    return os.pathsep.join(kept)


def processes_of(uid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            found.append(int(name))
                        break
        except (OSError, ValueError):
            continue
    return found


def kill_all(uid):
    """Kill every process of ``uid`` until none is left (a fork bomb races the first sweep)."""
    for _ in range(100):
        alive = processes_of(uid)
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def run_check(config, kit, uid, gid, home, results, nonce, log_path):
    env = {
        "PATH": safe_path(os.path.realpath(config["project"]), os.path.join(kit, "bin")),
        "HOME": home,
        "USER": GRADER,
        "LOGNAME": GRADER,
        "LANG": "C.UTF-8",
        "CI": "1",
        "NO_COLOR": "1",
        "TRAJ2ENV_RESULTS": results,
        "TRAJ2ENV_NONCE": nonce,
    }

    def demote():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    started = time.monotonic()
    timed_out = False
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            ["bash", os.path.join(kit, "check.sh")],
            cwd=config["project"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=demote,
            start_new_session=True,
        )
        try:
            status = process.wait(timeout=float(config["timeout"]))
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            status = process.wait()
    seconds = time.monotonic() - started
    kill_all(uid)
    exit_code = status if status >= 0 else 128 - status
    return exit_code, timed_out, seconds


def read_results(folder):
    """{name: bytes} of the regular files directly in ``folder``; links are not followed."""
    files = {}
    try:
        names = sorted(os.listdir(folder))[:MAX_RESULT_FILES]
    except OSError:
        return files
    for name in names:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                continue
            files[name] = handle.read(judging.MAX_RESULT_BYTES + 1)
    return files


def reported(files):
    """Only the manifest and the result files it names: what judging reads, and all that is
    copied out (a folder the graded code stuffed with files must not make grading fail)."""
    names = {judging.MANIFEST}
    manifest = files.get(judging.MANIFEST, b"").decode("utf-8", "replace")
    for line in manifest.splitlines()[: judging.MAX_INVOCATIONS]:
        try:
            names.add(str(json.loads(line)["result"]))
        except (ValueError, KeyError, TypeError):
            continue
    return {name: data for name, data in files.items() if name in names}


def tail(path, limit=MAX_LOG):
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - limit))
        text = handle.read().decode("utf-8", "replace")
    return ("[... output cut ...]\n" if size > limit else "") + text


def write_reward(verifier, reward):
    try:
        os.unlink(os.path.join(verifier, "reward.json"))
    except FileNotFoundError:
        pass
    with open(os.path.join(verifier, "reward.txt"), "w") as handle:
        handle.write(f"{reward:g}\n")


def grade(config, verifier, out):
    project = config["project"]
    if not os.path.isdir(project) or os.path.islink(project):
        return {"reward": 0.0, "reasons": [f"no project at {project}"], "grading": "none"}
    rules = Rules(config["rules"])
    reference = config.get("reference") or {}
    removed = clean(project, rules, reference)
    restored = restore(project, reference)
    uid, gid, home = grader_account()
    chown_tree(project, uid, gid)
    kit = install_kit(config, sys.executable)
    scratch = tempfile.mkdtemp(prefix="traj2env-run-")  # root-only: the log and results live here
    os.chmod(scratch, 0o711)
    results = os.path.join(scratch, "results")
    os.mkdir(results, 0o700)
    os.chown(results, uid, gid)
    nonce = secrets.token_hex(6)
    log_path = os.path.join(scratch, "check.log")
    try:
        exit_code, timed_out, seconds = run_check(
            config, kit, uid, gid, home, results, nonce, log_path
        )
        files = reported(read_results(results))
        output = tail(log_path)
    finally:
        shutil.rmtree(kit, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(os.path.join(out, "results"))
    for name, data in files.items():
        with open(os.path.join(out, "results", name), "wb") as handle:
            handle.write(data)
    verdict = judging.judge(
        exit_code,
        timed_out,
        seconds,
        judging.read_reports(files),
        config.get("structured") or (),
        nonce,
        reference=config.get("reference_passed") or None,
    )
    return {
        "reward": verdict.reward,
        "reasons": list(verdict.reasons),
        "grading": verdict.grading,
        "passed": verdict.passed,
        "detail": verdict.detail,
        "exit_code": exit_code,
        "timed_out": timed_out,
        "seconds": round(seconds, 3),
        "nonce": nonce,
        "removed": removed[:50],
        "restored": restored[:50],
        "output": output,
    }


def main():
    verifier = os.environ.get("TRAJ2ENV_VERIFIER_DIR") or "/logs/verifier"
    os.makedirs(verifier, exist_ok=True)
    write_reward(verifier, 0.0)
    out = os.path.join(verifier, "traj2env")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    try:
        with open(sys.argv[1], encoding="utf-8") as handle:
            config = json.load(handle)
        outcome = grade(config, verifier, out)
    except BaseException as exc:  # a grader failure is never a pass
        outcome = {"reward": 0.0, "error": f"{type(exc).__name__}: {exc}"}
        traceback.print_exc()
    output = outcome.pop("output", "")
    with open(os.path.join(out, "verdict.json"), "w") as handle:
        json.dump(outcome, handle, indent=1, sort_keys=True)
    write_reward(verifier, float(outcome["reward"]))
    sys.stdout.write(output)
    print(f"\ngrader: reward {outcome['reward']:g}")
    for reason in outcome.get("reasons") or [outcome.get("error", "")]:
        if reason:
            print(f"grader: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
