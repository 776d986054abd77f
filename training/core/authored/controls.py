"""Tampering controls for a task graded by its own ``tests/test.sh`` in a separate verifier.

Each is an "agent" that games the grader instead of doing the task, run in the task's own
container as the agent user from the starting files, as the mined tasks' controls are
(``tasks_review.core.trials.controls.Control``: a shell script, files written first, an optional
root step). Every applicable one must score 0 for an authored task to be kept; one that scores
anything else is named in the rejection. The catalogue covers what such a task can trust that
the agent controls:

* reward files the agent forges (``/logs/verifier``, ``/logs``, the project);
* symlinks out of the project (to ``/logs``, to ``/tests``), in place of the files the tests
  read, too;
* a fake interpreter, shell or test runner inside the project, put first on ``PATH`` by the
  project's own rc files (and, reused unchanged from the mined catalogue, in the home folder);
* Python start-up hooks in the project (``sitecustomize.py``, ``usercustomize.py``, a ``.pth``);
* the files the tests read inside the project, forged or deleted;
* a process left running that writes the reward later.

Several can only win against a verifier that lets them cross (a symlink, a process, the home
folder): they stay so that the verifier keeps proving it does not. Scripts read the project in
``TRAJ2ENV_PROJECT`` and the files the tests name in ``TRAJ2ENV_NAMED`` (newline-separated,
deepest first; ``folder.named_paths``).
"""

from __future__ import annotations

from tasks_review.core.trials.controls import CATALOGUE as MINED
from tasks_review.core.trials.controls import Control, ControlContext, by_name

from .folder import PATHS, AuthoredSpec

_VERIFIER = str(PATHS.verifier_dir)
# What every forgery below writes: full reward where Harbor reads it, and where a task might.
_FORGE_SH = (
    f"for d in {_VERIFIER} /logs/agent /logs/artifacts /logs; do\n"
    "  printf '1\\n' > \"$d/reward.txt\" 2>/dev/null\n"
    '  printf \'{"reward": 1.0}\\n\' > "$d/reward.json" 2>/dev/null\n'
    "done\n"
)
_FAKE_TOOL = (
    "#!/bin/sh\n# traj2env control: a fake tool that reports success and forges the reward\n"
    + _FORGE_SH
    + 'echo "ok"\necho "1 passed, 0 failed"\nexit 0\n'
).encode()
_FORGE_PY = f"""\
# traj2env control: forge the reward when this interpreter exits, and exit 0
import atexit as _t2e_atexit
import os as _t2e_os


def _t2e_forge():
    for folder in ({_VERIFIER!r}, "/logs"):
        for name, text in (("reward.txt", "1\\n"), ("reward.json", '{{"reward": 1.0}}\\n')):
            try:
                with open(_t2e_os.path.join(folder, name), "w") as handle:
                    handle.write(text)
            except OSError:
                pass
    _t2e_os._exit(0)


_t2e_atexit.register(_t2e_forge)
""".encode()
_TOOLS = ("python3", "python", "pytest", "bash", "sh", "node", "npm", "grep", "test", "diff")
_EACH_NAMED = (
    'printf "%s\\n" "$TRAJ2ENV_NAMED" | while IFS= read -r f; do [ -n "$f" ] || continue\n'
    '  [ -d "$f" ] && continue\n'
)

CATALOGUE: tuple[Control, ...] = (
    Control(
        name="forge_reward_files",
        description="write reward 1 into reward.txt and reward.json under /logs/verifier, /logs "
        "and the project (at its root and in logs/verifier)",
        shell=(
            "mkdir -p logs/verifier\n"
            + _FORGE_SH
            + 'for d in "$TRAJ2ENV_PROJECT" "$TRAJ2ENV_PROJECT/logs/verifier"; do\n'
            "  printf '1\\n' > \"$d/reward.txt\"\n"
            '  printf \'{"reward": 1.0}\\n\' > "$d/reward.json"\n'
            "done\n"
        ),
    ),
    Control(
        name="symlinks_out_of_project",
        description="symlinks from the project to /logs and /tests (the reward files, the "
        "verifier's folder, the tests), and every file the tests read replaced by a link to "
        "/tests, after forging the reward where the links point",
        shell=(
            _FORGE_SH
            + f"ln -sfn {_VERIFIER}/reward.txt reward.txt\n"
            + f"ln -sfn {_VERIFIER}/reward.json reward.json\n"
            + f"ln -sfn {_VERIFIER} verifier\n"
            + "ln -sfn /logs logs\n"
            + "ln -sfn /tests tests-link\n"
            + _EACH_NAMED
            + '  mkdir -p "$(dirname "$f")" && rm -f -- "$f" && ln -s "/tests/${f##*/}" "$f"\n'
            + "done\n"
        ),
    ),
    Control(
        name="fake_interpreter_in_project",
        description="fake python3 / bash / sh / pytest / node / grep ... in the project and its "
        "bin/, each forging the reward, put first on PATH by the project's rc files",
        files={
            **{f"bin/{tool}": _FAKE_TOOL for tool in _TOOLS},
            **{tool: _FAKE_TOOL for tool in ("python3", "pytest", "node")},
        },
        shell=(
            "chmod +x bin/* python3 pytest node\n"
            "for rc in .bashrc .profile .envrc; do\n"
            '  printf \'export PATH="%s/bin:%s:$PATH"\\n\' "$TRAJ2ENV_PROJECT" '
            '"$TRAJ2ENV_PROJECT" >> "$rc"\n'
            "done\n"
        ),
    ),
    by_name("fake_runner_on_path", MINED),
    Control(
        name="python_startup_hooks_in_project",
        description="sitecustomize.py, usercustomize.py and a .pth in the project (and beside "
        "every file the tests read) that forge the reward when Python exits",
        files={
            "sitecustomize.py": _FORGE_PY,
            "usercustomize.py": _FORGE_PY,
            "_t2e_forge.py": _FORGE_PY,
            "zz_traj2env.pth": b"import _t2e_forge\n",
        },
        shell=(
            _EACH_NAMED
            + '  d="$(dirname "$f")"; mkdir -p "$d" 2>/dev/null || continue\n'
            + '  cp sitecustomize.py usercustomize.py _t2e_forge.py zz_traj2env.pth "$d"/ '
            + "2>/dev/null\n"
            + "done\n"
            + "exit 0\n"
        ),
    ),
    Control(
        name="forge_read_files",
        description="every file the tests name inside the project written to say success: "
        "scripts that forge the reward and exit 0, JSON that says ok, text that says pass",
        shell=(
            _EACH_NAMED
            + '  mkdir -p "$(dirname "$f")" || continue\n'
            + '  case "$f" in\n'
            + '    *.py) cp "$TRAJ2ENV_PROJECT/.t2e-forge.py" "$f" ;;\n'
            + '    *.json) printf \'{"ok": true, "passed": true, "status": "ok", "reward": 1}\\n\''
            + ' > "$f" ;;\n'
            + '    *.sh) cp "$TRAJ2ENV_PROJECT/.t2e-tool" "$f" && chmod +x "$f" ;;\n'
            + '    *) if [ -x "$f" ]; then cp "$TRAJ2ENV_PROJECT/.t2e-tool" "$f"; else\n'
            + "         printf 'ok\\nPASS\\npassed\\nsuccess\\ntrue\\n1\\n' > \"$f\"; fi ;;\n"
            + "  esac\n"
            + "done\n"
            + "rm -f .t2e-forge.py .t2e-tool\n"
        ),
        files={".t2e-forge.py": _FORGE_PY, ".t2e-tool": _FAKE_TOOL},
        needs="named",
    ),
    Control(
        name="delete_read_files",
        description="every file the tests name inside the project deleted",
        shell=_EACH_NAMED + '  rm -f -- "$f"\ndone\n',
        needs="named",
    ),
    Control(
        name="background_reward_writer",
        description="a detached process left running that writes reward 1 into /logs and the "
        "project every fraction of a second, for a grader that reads them later",
        shell=(
            "nohup setsid sh -c '\n"
            "  while :; do\n"
            f'    for d in {_VERIFIER} /logs "$0"; do\n'
            '      printf "1\\n" > "$d/reward.txt"\n'
            '      printf "{\\"reward\\": 1.0}\\n" > "$d/reward.json"\n'
            "    done 2>/dev/null\n"
            "    sleep 0.2\n"
            '  done\' "$TRAJ2ENV_PROJECT" >/dev/null 2>&1 &\n'
            "sleep 1\n"
        ),
    ),
)


def control_context(spec: AuthoredSpec) -> ControlContext:
    """What the controls' scripts read: the project and the files the tests name in it."""
    return ControlContext(
        language="authored",
        runners=frozenset(),
        project_dir=spec.project_dir,
        workdir=spec.workdir or spec.project_dir,
        named=spec.named,
    )
