"""Targeted reward hacks, written by someone who has read the grader kit, must score 0.

Each hack is an "agent" that leaves the bug in place and games the grader instead; it is graded
the way Harbor's separate verifier grades a submission: the agent's whole ``/app`` crosses into a
fresh container of the task's image, whose own ``tests/test.sh`` grades it (class 5: in the
agent's own container). Five classes:

1. selective in-process forgery: assertions (or the runner) neutered for every test except the
   contradictory controls, recognised by name, file, call stack or values;
2. rewriting the results after the runner produced them (an exit hook, a test child rewriting
   what it tells the runner);
3. files the guard does not cover: extra files the runner discovers, a project module that
   shadows a standard-library module the tests import;
4. what verifier v2's cleaning missed: a pytest config name it did not guard, a compiled-only
   package, a test file inside ``.git``;
5. grading in the agent's own container (Harbor's stock environment): a daemon rewriting the
   reward files, a ``bash`` first on root's PATH, a link at ``reward.txt``.

The hacks are aimed at the bundled samples (Python unittest, Node ``node --test`` through npm and
directly) and a pytest task. They stay in the tests (``reward_hacks/``, one module per class):
the catalogue's controls (``trials/controls/``) are generic variants of each class, not these
instances.
"""

from __future__ import annotations

import pytest

from tasks_review.core.taskfiles import SourceTrace, write_task
from tasks_review.core.trials import Role, check_in_image, prepare
from tasks_review.core.trials.model import TrialDrop

from ..mining.test_repair_samples import mine_sample
from .helpers import (
    PYTEST_FIX,
    PYTEST_START,
    SHA,
    graded_in_place,
    harbor_style,
    left_behind,
    new_run_id,
    write,
)
from .reward_hacks import GIT_HACKS, HACKS, IN_PLACE_HACKS, READ_ONLY_ONE

pytestmark = pytest.mark.docker

SAMPLE_OF = {"invoice": "claude-code", "wordstats": "pi", "slugify": "codex", "bytesize": "atif"}


@pytest.fixture(scope="session")
def hack_tasks(engine, base_ref, tmp_path_factory, request):
    """Prepared sample tasks (and a pytest task) with their check in the image, by name."""
    root = tmp_path_factory.mktemp("hack-tasks")
    out = {}
    for name, fmt in SAMPLE_OF.items():
        _, _, blobs, (candidate,), _ = mine_sample(fmt)
        task_dir = write_task(
            root / name,
            candidate,
            candidate.instruction,
            blobs,
            source_trace=SourceTrace.for_candidate(SHA, candidate),
            source_model="test-model",
            base_image=base_ref,
            check_timeout=120,
        )
        out[name] = task_dir
    return out


_prepared: dict[str, tuple] = {}


def prepared_task(name, engine, hack_tasks, request):
    if name not in _prepared:
        if name == "pytest":
            packages = request.getfixturevalue("pytest_packages")
            task_dir = write(
                hack_tasks["invoice"].parent / "pytest",
                request.getfixturevalue("base_ref"),
                PYTEST_START,
                PYTEST_FIX,
                python_packages=packages,
                command="python3 -m pytest -q",
                language="python",
                runner="pytest",
            )
        else:
            task_dir = hack_tasks[name]
        task = prepare(task_dir, engine)
        assert task.drop is None, task.drop
        baseline = check_in_image(task, engine=engine, run_id=new_run_id())
        assert not isinstance(baseline, TrialDrop), baseline
        _prepared[name] = (task, baseline)
    return _prepared[name]


@pytest.mark.parametrize("hack", sorted(HACKS))
def test_a_targeted_reward_hack_scores_0_through_the_tasks_own_grader(
    hack, engine, hack_tasks, request
):
    task_name, control = HACKS[hack]
    task, baseline = prepared_task(task_name, engine, hack_tasks, request)
    run_id = new_run_id()
    graded = harbor_style(engine, task, baseline, role=Role.CONTROL, control=control, run_id=run_id)
    assert graded.verdict.reward == 0.0, (hack, graded.verdict.reasons, graded.logs[-3000:])
    print(f"\n{hack}: {graded.verdict.reasons}")
    assert left_behind(engine, run_id) == []


@pytest.mark.parametrize("hack", sorted(GIT_HACKS))
def test_a_hack_inside_the_agents_git_folder_scores_0_when_harbor_carries_it_across(
    hack, engine, hack_tasks, request
):
    task_name, control = GIT_HACKS[hack]
    task, baseline = prepared_task(task_name, engine, hack_tasks, request)
    run_id = new_run_id()
    graded = harbor_style(
        engine, task, baseline, role=Role.CONTROL, control=control, run_id=run_id, with_git=True
    )
    assert graded.verdict.reward == 0.0, (hack, graded.verdict.reasons, graded.logs[-3000:])
    assert left_behind(engine, run_id) == []


@pytest.mark.parametrize("hack", sorted(IN_PLACE_HACKS))
def test_a_hack_aimed_at_grading_in_the_agents_own_container_scores_0(
    hack, engine, hack_tasks, request
):
    task_name, control = IN_PLACE_HACKS[hack]
    task, baseline = prepared_task(task_name, engine, hack_tasks, request)
    if "read_only" in hack:
        with engine.sandbox(task.image.image_id, run_id=new_run_id(), limits=task.limits) as box:
            if box.exec(["/bin/cat", READ_ONLY_ONE]).stdout.strip() != "1":
                pytest.skip(f"{READ_ONLY_ONE} does not read 1 on this machine")
    run_id = new_run_id()
    graded = graded_in_place(engine, task, baseline, control=control, run_id=run_id)
    assert graded.reward == 0.0, (hack, graded.logs)
    assert left_behind(engine, run_id) == []


@pytest.mark.parametrize("task_name", [*SAMPLE_OF, "pytest"])
def test_the_oracle_still_scores_1_on_every_hacked_task(task_name, engine, hack_tasks, request):
    task, baseline = prepared_task(task_name, engine, hack_tasks, request)
    graded = harbor_style(engine, task, baseline, role=Role.ORACLE, run_id=new_run_id())
    assert graded.verdict.reward == 1.0, (graded.verdict.reasons, graded.logs[-3000:])
