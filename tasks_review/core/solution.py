"""A repair task's ``solution/solve.sh``: the oracle, which also leaves the trajectory it made.

The script turns the starting files into the reference files, byte for byte (contents travel
base64-encoded in quoted here-documents, names shell-quoted, nothing is a patch). When Harbor
runs it as its ``oracle`` agent, ``/logs/agent`` exists and Harbor collects it into the trial
folder; the oracle then also runs the task's check, as the recorded agent did before it
finished, and writes ``trajectory.json`` (ATIF) of exactly what it did: a read of each file it
replaced (its content as found), the edit or write of each file, each deletion, and the check
with its real output and exit status. Without that record, an eval of the oracle's rollout
would see no action at all. The trial matrix runs ``solve.sh`` with no ``/logs/agent``, so it
records nothing there and pays nothing for it.

    script = solve_sh(candidate, blobs)   # the whole solve.sh, as text
"""

from __future__ import annotations

import base64
import json
import re
import shlex

from trajectories.core.blobs import BlobStore

from .mining.repair import RepairCandidate
from .recording import embedded_source

_B64 = "TRAJ2ENV_B64"
# Where Harbor's agent logs live inside the environment (harbor.models.trial.paths).
AGENT_LOGS = "/logs/agent"
CHECK_TIMEOUT = 900
MAX_OUTPUT = 64 << 10


def b64_lines(data: bytes) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))


def sh_quote(value: str) -> str:
    """A shell word for ``value`` that stays on one line and keeps its exact bytes.

    Plain names use single quotes; names with control characters (a newline would break the
    script into lines) or bytes that are not UTF-8 use bash's $'...' with \\xHH escapes.
    """
    raw = value.encode("utf-8", "surrogateescape")  # path_problem has ruled out the rest
    try:
        raw.decode("utf-8")
        printable = not re.search(r"[\x00-\x1f\x7f]", value)
    except UnicodeDecodeError:
        printable = False
    if printable:
        return shlex.quote(value)
    escaped = "".join(
        chr(b) if 0x20 <= b < 0x7F and chr(b) not in "'\\" else f"\\x{b:02x}" for b in raw
    )
    return f"$'{escaped}'"


def _write_call(path: str, data: bytes) -> str:
    body = b64_lines(data)
    if not body:
        return f"write_file {sh_quote(path)} </dev/null"
    return f"write_file {sh_quote(path)} <<'{_B64}'\n{body}\n{_B64}"


_WRITE_FILE = """\
write_file() {
  # $1: a path relative to the project; the content arrives base64-encoded on stdin.
  case "$1" in */*) mkdir -p -- "${1%/*}" ;; esac
  rm -f -- "$1"
  base64 -d > "$1"
  chmod 0644 -- "$1"
}"""


def solve_sh(candidate: RepairCandidate, blobs: BlobStore) -> str:
    replaced = sorted({*candidate.modified, *candidate.deleted})
    lines = [
        "#!/usr/bin/env bash",
        "# The oracle of a repair task: turns the starting files into the reference files, the",
        "# project as it was just before the recorded check passed. Exact bytes: contents are",
        "# base64, names are shell-quoted. Under Harbor (/logs/agent exists) it also runs the",
        "# check and leaves the trajectory of what it did in /logs/agent/trajectory.json.",
        "set -euo pipefail",
        f"cd {shlex.quote(candidate.project_dir)}",
        "",
        _WRITE_FILE,
        "",
        *_record_start(replaced),
        "",
    ]
    for path in candidate.deleted:
        lines.append(f"rm -f -- {sh_quote(path)}")
    for path in sorted({*candidate.added, *candidate.modified}):
        lines.append(_write_call(path, blobs.get(candidate.ref_files[path])))
    lines += ["", *_record_end(candidate)]
    return "\n".join(lines) + "\n"


def _record_start(replaced: list[str]) -> list[str]:
    """Keep the files about to be replaced as they are found: the trajectory's reads."""
    keep = " ".join(sh_quote(p) for p in replaced)
    return [
        f'RECORD="${{TRAJ2ENV_AGENT_LOGS:-{AGENT_LOGS}}}"',
        'if [ -d "$RECORD" ] && [ -w "$RECORD" ] && command -v python3 >/dev/null; then',
        '  FOUND="$(mktemp -d)"',
        f"  for f in {keep}; do" if replaced else "  for f in; do",
        '    if [ -f "$f" ]; then mkdir -p -- "$FOUND/$(dirname -- "$f")"; '
        'cp -p -- "$f" "$FOUND/$f"; fi',
        "  done",
        "else",
        "  RECORD=",
        "fi",
    ]


def _record_end(candidate: RepairCandidate) -> list[str]:
    """Run the check as the recorded agent did, then write the trajectory (python3 is in every
    task image: the grader needs it)."""
    workdir = (
        candidate.project_dir
        if candidate.cwd in ("", ".")
        else f"{candidate.project_dir}/{candidate.cwd}"
    )
    plan = {
        "project": candidate.project_dir,
        "workdir": workdir,
        "command": candidate.task_command,
        "deleted": sorted(candidate.deleted),
        "written": sorted({*candidate.added, *candidate.modified}),
        "instruction": candidate.instruction,
        "key": candidate.key,
        "max_output": MAX_OUTPUT,
    }
    encoded = base64.b64encode(json.dumps(plan, sort_keys=True).encode()).decode("ascii")
    return [
        'if [ -n "$RECORD" ]; then',
        "  set +e",
        f"  (cd {shlex.quote(workdir)} && timeout {CHECK_TIMEOUT} bash -c "
        f'{shlex.quote(candidate.task_command)}) >"$FOUND/.check-output" 2>&1',
        "  STATUS=$?",
        "  set -e",
        f'  python3 - "$FOUND" "$STATUS" "$RECORD/trajectory.json" {encoded} <<\'PY\'',
        _RECORDER,
        "PY",
        '  rm -rf -- "$FOUND"',
        "fi",
    ]


# Runs inside the task's image (any python3 3.8+), standard library only, after the recorder
# every task run shares (``recording``); the agent is named "oracle".
_DRIVER = r"""
import base64, os
found, status, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
plan = json.loads(base64.b64decode(sys.argv[4]))
project = plan["project"]
record = Recorder(plan["instruction"], call_prefix="oracle")

def text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None

for rel in plan["deleted"]:
    record.call("Bash", {"command": "rm -f -- '%s'" % rel.replace("'", "'\\''")}, "")
for rel in plan["written"]:
    where = os.path.join(project, rel)
    before, after = text(os.path.join(found, rel)), text(where)
    if before is not None and after is not None:
        record.read(where, before)
        record.edit(where, before, after)
    elif after is not None and not os.path.exists(os.path.join(found, rel)):
        record.write(where, after)
    else:
        # Not text: the record says a file was written, not what it holds.
        record.call("Bash", {"command": "base64 -d > '%s'" % rel.replace("'", "'\\''")}, "")
with open(os.path.join(found, ".check-output"), "rb") as handle:
    output = handle.read()[-plan["max_output"]:].decode("utf-8", "replace")
command = plan["command"]
if plan["workdir"] != project:
    command = "cd '%s' && %s" % (plan["workdir"].replace("'", "'\\''"), command)
record.bash(command, output, status)
record.say("Put the reference files in place; the check exited with %d." % status)
record.save(out, session_id="oracle-" + plan["key"], agent="oracle", version="traj2env",
            cwd=project)
""".strip("\n")
_RECORDER = embedded_source() + _DRIVER
