"""An authored task's ``solution/solve.sh``, wrapped so that under Harbor it leaves its trajectory.

A mined task's solve.sh records what it did as ATIF in ``/logs/agent`` when Harbor runs it as
its oracle (``tasks_review.core.solution``); an authored one is the author's own script, which
records nothing, so its passing rollouts have no trajectory and cannot be exported. When the
task is stored, ``record_solution`` moves the author's script to ``solve.authored.sh``, unchanged,
and puts a wrapper in its place that runs it as Harbor would (by its ``#!`` line, else bash)
and, when ``/logs/agent`` is there and writable, records:

* the solution as one shell command (its text; an interpreter's invocation when it is not a
  shell script, or too long to show) with its real output and exit status;
* each file it then left changed in the project as a Write (text) or a written-file note
  (binary), and each file it removed as a deletion;

with the recorder every task run shares (``tasks_review.core.recording``), under a session id
of its own. The wrapper exits with the author's script's status: what the trial matrix verifies
is what runs under Harbor.

    record_solution(Path("store/ab12/stop-when-credentials-missing"), spec)
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import stat
from pathlib import Path

from tasks_review.core.recording import embedded_source

from .folder import AuthoredSpec, AuthoredTaskInvalid

AUTHORED = "solve.authored.sh"
MARKER = "# traj2env: records the authored solution's trajectory under Harbor"
AGENT_LOGS = "/logs/agent"
SHELLS = frozenset({"sh", "bash", "dash"})
MAX_SHOWN = 64 << 10  # a longer solution is shown by its invocation, not its text
MAX_OUTPUT = 64 << 10
MAX_FILES = 20_000  # files of the project compared before and after (the rest is not recorded)


def record_solution(task_dir: Path, spec: AuthoredSpec) -> bool:
    """Wrap ``task_dir``'s solve.sh in place; False when it is wrapped already."""
    solution = task_dir / "solution"
    solve, authored = solution / "solve.sh", solution / AUTHORED
    script = solve.read_bytes()
    if MARKER.encode() in script:
        return False
    if authored.exists():
        raise AuthoredTaskInvalid(
            [f"solution/{AUTHORED} is the name the authored solve.sh is kept under; rename it"]
        )
    mode = stat.S_IMODE(solution.stat().st_mode)
    solution.chmod(mode | stat.S_IWUSR)  # the copy kept the author's folder modes
    try:
        solve.rename(authored)
        solve.write_text(wrapper(script, spec), encoding="utf-8")
        solve.chmod(0o755)
    finally:
        solution.chmod(mode)
    return True


def wrapper(script: bytes, spec: AuthoredSpec) -> str:
    """The solve.sh that runs ``script`` (the author's) and records it under Harbor."""
    run, shown = _invocation(script)
    plan = {
        "project": spec.project_dir,
        "instruction": spec.instruction,
        "shown": shown,
        "max_output": MAX_OUTPUT,
        "max_files": MAX_FILES,
    }
    encoded = base64.b64encode(json.dumps(plan, sort_keys=True).encode()).decode("ascii")
    return "\n".join(
        [
            "#!/usr/bin/env bash",
            MARKER,
            f"# The task author's solution is {AUTHORED}, unchanged; this runs it as Harbor would.",
            "# Under Harbor (/logs/agent exists) it also leaves /logs/agent/trajectory.json: the",
            "# solution as one command with its output and status, then the files it changed.",
            "set -u",
            'HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"',
            f'AUTHORED="$HERE/{AUTHORED}"',
            f'RECORD="${{TRAJ2ENV_AGENT_LOGS:-{AGENT_LOGS}}}"',
            'if [ -d "$RECORD" ] && [ -w "$RECORD" ] && command -v python3 >/dev/null; then',
            '  STATE="$(mktemp -d)"',
            "  cat >\"$STATE/record.py\" <<'PY'",
            embedded_source() + _DRIVER,
            "PY",
            f'  python3 "$STATE/record.py" before "$STATE" {encoded} || true',
            f'  {run} 2>&1 | tee "$STATE/output"',
            "  STATUS=${PIPESTATUS[0]}",
            f'  python3 "$STATE/record.py" after "$STATE" {encoded} "$STATUS" "$AUTHORED" '
            '"$RECORD/trajectory.json" || true',
            '  rm -rf -- "$STATE"',
            '  exit "$STATUS"',
            "fi",
            f"exec {run}",
            "",
        ]
    )


def _invocation(script: bytes) -> tuple[str, str]:
    """How to run the author's script, as the kernel would by its ``#!`` line (bash without
    one, as Harbor's shell does); and its shown command: its text when it is a shell script
    short enough to read, else the invocation."""
    first = script.split(b"\n", 1)[0].decode("utf-8", "replace")
    words = first[2:].strip().split(None, 1) if first.startswith("#!") else []
    argv = words or ["bash"]  # Linux passes what follows the interpreter as one argument
    run = " ".join([*map(shlex.quote, argv), '"$AUTHORED"'])
    program = os.path.basename(argv[-1] if argv[0].endswith("/env") else argv[0]).split()[0]
    try:
        text = script.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if program in SHELLS and text and len(script) <= MAX_SHOWN:
        return run, ""  # the recorder shows the script's own text
    return run, " ".join([*map(shlex.quote, argv), f"solution/{AUTHORED}"])


# Runs inside the task's image, after the shared recorder: "before" keeps the project's file
# hashes, "after" compares and writes the trajectory. Standard library only (python3 3.8+).
_DRIVER = r"""
import base64, hashlib, uuid

def snapshot(project, limit):
    found = {}
    for folder, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            path = os.path.join(folder, name)
            if len(found) >= limit or os.path.islink(path) or not os.path.isfile(path):
                continue
            digest = hashlib.sha256()
            try:
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
            except OSError:
                continue
            found[os.path.relpath(path, project)] = digest.hexdigest()
    return found

def quoted(path):
    return "'%s'" % path.replace("'", "'\\''")

mode, state = sys.argv[1], sys.argv[2]
plan = json.loads(base64.b64decode(sys.argv[3]))
project = plan["project"]
if mode == "before":
    with open(os.path.join(state, "before.json"), "w") as handle:
        json.dump(snapshot(project, plan["max_files"]), handle)
    sys.exit(0)
status, authored, out = int(sys.argv[4]), sys.argv[5], sys.argv[6]
with open(os.path.join(state, "before.json")) as handle:
    before = json.load(handle)
after = snapshot(project, plan["max_files"])
shown = plan["shown"]
if not shown:
    with open(authored, "rb") as handle:
        shown = handle.read().decode("utf-8")
with open(os.path.join(state, "output"), "rb") as handle:
    output = handle.read()[-plan["max_output"]:].decode("utf-8", "replace")
record = Recorder(plan["instruction"], call_prefix="oracle")
record.bash(shown, output, status)
for rel in sorted(after):
    if before.get(rel) == after[rel]:
        continue
    where = os.path.join(project, rel)
    try:
        with open(where, "rb") as handle:
            record.write(where, handle.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        # Not text: the record says a file was written, not what it holds.
        record.call("Bash", {"command": "base64 -d > " + quoted(where)}, "")
for rel in sorted(set(before) - set(after)):
    record.call("Bash", {"command": "rm -f -- " + quoted(os.path.join(project, rel))}, "")
record.say("Ran the task's solution; it exited with %d." % status)
record.save(out, session_id="oracle-" + uuid.uuid4().hex, agent="oracle", version="traj2env",
            cwd=project)
""".strip("\n")
