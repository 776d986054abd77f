"""A mined task in the one trial loop (``runner``): how its agent's container starts, how its
oracle solves, how our grader kit scores it and which controls apply.

    task = MinedTrial(prepared, baseline)                       # or mined_task(task_dir, ...)
    runner.run_trial(task, role=Role.ORACLE, engine=engine, run_id=run_id)
"""

from __future__ import annotations

import shlex
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundwork.core.docker import Engine
from groundwork.core.docker.engine import Sandbox

from .baseline import Baseline, check_in_image
from .controls import NPM_SCRIPT, Control, ControlContext, family_sources, source_files
from .image import PreparedTask, prepare
from .model import TrialDrop
from .plan import named_paths, test_files
from .runner import Scored, TaskUnusable
from .taskdir import TaskSpec
from .verifier import SOLUTION_DIR, Submission, grade_submission, put_solution


def control_context(spec: TaskSpec, baseline: Baseline) -> ControlContext:
    files = spec.start_bytes()
    tests = test_files(files)
    runners = set(baseline.plan.structured)
    if baseline.plan.scripts:
        runners.add(NPM_SCRIPT)
    return ControlContext(
        language=spec.language,
        runners=frozenset(runners),
        project_dir=spec.project_dir,
        workdir=spec.workdir,
        tests=tuple(tests),
        # build and extend: also the modules the agent would write (controls/partial.py).
        sources=tuple(
            sorted({*source_files(files, spec.language, set(tests)), *family_sources(spec)})
        ),
        named=tuple(named_paths(spec.command, files)),
    )


@dataclass(frozen=True, slots=True)
class MinedTrial:
    """A mined task in the one trial loop (``runner.TrialTask``): its image as ``prepare`` built
    it, its oracle the recorded fix's solve.sh, graded by our grader kit with the facts the check
    in the image found on the reference. ``naive`` also runs each control's check where the agent
    left it, trusting its exit status: evidence that the control would fool such a grader."""

    prepared: PreparedTask
    baseline: Baseline
    naive: bool = False
    context: ControlContext = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", control_context(self.prepared.spec, self.baseline))

    @property
    def name(self) -> str:
        return self.prepared.spec.name

    @property
    def project_dir(self) -> str:
        return self.prepared.spec.project_dir

    @property
    def control_seconds(self) -> float | None:
        return None

    @property
    def image(self) -> str:
        assert self.prepared.image is not None
        return self.prepared.image.image_id

    def agent_box(self, engine: Engine, run_id: str) -> AbstractContextManager[Sandbox]:
        # The task's [environment.env], as Harbor starts the agent's container: the services
        # image's entrypoint starts the services it names.
        env = dict(self.prepared.spec.env) or None
        return engine.sandbox(self.image, run_id=run_id, limits=self.prepared.limits, env=env)

    def solve(self, box: Sandbox, logs: list[str], detail: dict[str, Any]) -> None:
        put_solution(box, self.prepared.spec)
        acted = box.exec(["bash", f"{SOLUTION_DIR}/solve.sh"], workdir=self.project_dir)
        logs.append(f"-- solve.sh (exit {acted.exit_code})\n{acted.stdout}{acted.stderr}")
        detail["solve_exit_code"] = acted.exit_code

    def after_act(
        self, box: Sandbox, control: Control | None, logs: list[str], detail: dict[str, Any]
    ) -> bool:
        if not self.naive or control is None:
            return False
        # The recorded check where the agent left the project, its status trusted: what a
        # naive grader would score. Evidence that the control is an attack at all.
        spec = self.prepared.spec
        script = f"cd {shlex.quote(spec.workdir)} || exit 97\n{spec.command}"
        ran = box.exec(["bash", "-c", script], workdir=spec.project_dir)
        detail["naive_exit_code"] = ran.exit_code
        detail["naive_timed_out"] = ran.timed_out
        logs.append(
            f"-- naive check (exit {ran.exit_code})\n{ran.stdout[-1500:]}{ran.stderr[-1500:]}"
        )
        return True

    def grade(self, engine: Engine, submission: Submission, *, run_id: str) -> Scored:
        graded = grade_submission(
            engine,
            self.prepared.spec,
            self.image,
            submission,
            facts=self.baseline.facts,
            plan=self.baseline.plan,
            run_id=run_id,
            limits=self.prepared.limits,
        )
        return Scored(graded.verdict.reward, graded.logs, graded.detail)

    def skip_reason(self, control: Control) -> str | None:
        return control.skip_reason(self.context)


def mined_task(task_dir: Path, *, engine: Engine, run_id: str) -> MinedTrial:
    """A kept mined task ready to grade again: its image prepared and its check run in it once.
    TaskUnusable when it no longer can be; InfraError when Docker fails."""
    prepared = prepare(task_dir, engine, run_id=run_id)
    if prepared.drop is not None or prepared.image is None:
        why = prepared.drop.detail if prepared.drop else "no image"
        raise TaskUnusable(f"the task cannot run: {why}")
    checked = check_in_image(prepared, engine=engine, run_id=run_id)
    if isinstance(checked, TrialDrop):
        raise TaskUnusable(f"the task's check no longer behaves in its image: {checked.detail}")
    return MinedTrial(prepared, checked)
