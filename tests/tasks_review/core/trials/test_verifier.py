"""The separate verifier and the task's own grader (tests/test.sh), as Harbor runs them."""

from __future__ import annotations

import pytest

from groundwork.core.docker import FileEntry
from tasks_review.core.taskfiles import SourceTrace, write_task
from tasks_review.core.trials import CATALOGUE, Role, check_in_image, plan_check
from tasks_review.core.trials.image import task_limits
from tasks_review.core.trials.taskdir import ReferenceFacts, read_task
from tasks_review.core.trials.trial import control_context
from tasks_review.core.trials.verifier import Graded, Submission, grade_submission

from ..mining.test_repair_samples import mine_sample
from .helpers import DISAGREE, SHA, harbor_style, left_behind, new_run_id, with_check


@pytest.mark.docker
def test_the_verifier_runs_the_check_as_grader_without_network_and_with_limits(engine, prepared):
    """A check that passes only where the verifier promises: grader uid, no network, limits."""
    task = prepared["python"]
    cgroup = "/sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max"
    command = (
        '[ "$(id -un)" = grader ] && [ "$(id -u)" = 1001 ] '
        '&& [ "$(ls /sys/class/net)" = lo ] '
        f'&& [ "$(cat {cgroup} 2>/dev/null | head -n1)" = 512 ] '
        "&& [ ! -w /home/agent ] && [ -w . ]"
    )
    spec = with_check(task.spec, command)
    plan = plan_check(command, ".", {})
    graded = grade_submission(
        engine,
        spec,
        task.image.image_id,
        Submission(files={}),
        facts=ReferenceFacts(passed={}),
        plan=plan,
        run_id=new_run_id(),
        limits=task.limits,
    )
    assert graded.verdict.reward == 1.0, (graded.verdict.reasons, graded.logs)
    assert graded.detail["grading"] == "exit_code"


# -- the task's own grader (tests/test.sh), as Harbor runs it --------------------------------------


@pytest.mark.docker
@pytest.mark.parametrize("language", ["python", "node"])
def test_the_tasks_own_grader_scores_every_control_0_when_the_whole_project_crosses(
    engine, prepared, language
):
    task = prepared[language]
    run_id = new_run_id()
    baseline = check_in_image(task, engine=engine, run_id=run_id)
    oracle = harbor_style(engine, task, baseline, role=Role.ORACLE, run_id=run_id)
    assert oracle.verdict.reward == 1.0, (oracle.verdict.reasons, oracle.logs)
    noop = harbor_style(engine, task, baseline, role=Role.NOOP, run_id=run_id)
    assert noop.verdict.reward == 0.0
    context = control_context(task.spec, baseline)
    graded = 0
    for control in CATALOGUE:
        if control.skip_reason(context) is not None:
            continue
        trial = harbor_style(
            engine, task, baseline, role=Role.CONTROL, control=control, run_id=run_id
        )
        assert trial.verdict.reward == 0.0, (control.name, trial.logs)
        # reward.txt as the task's grader wrote it is the harness's verdict too.
        assert not any(DISAGREE in r for r in trial.verdict.reasons), control.name
        graded += 1
    assert graded >= 10
    if language == "node":
        (fake,) = [c for c in CATALOGUE if c.name == "fake_runner_in_project"]
        trial = harbor_style(engine, task, baseline, role=Role.CONTROL, control=fake, run_id=run_id)
        assert "node_modules/" in trial.detail["submission"]["removed"]
    assert left_behind(engine, run_id) == []


@pytest.fixture(scope="session")
def sample_grader(engine, base_ref, tmp_path_factory):
    """The Claude Code sample (unittest) under its own tests/test.sh, in the base image."""
    _, _, blobs, (candidate,), _ = mine_sample("claude-code")
    task_dir = write_task(
        tmp_path_factory.mktemp("sample-grader") / "task",
        candidate,
        candidate.instruction,
        blobs,
        source_trace=SourceTrace.for_candidate(SHA, candidate),
        source_model="test-model",
        base_image=base_ref,
        check_timeout=120,
    )
    spec = read_task(task_dir)
    start = {p: blobs.get(sha) for p, sha in candidate.start_files.items()}
    ref = {p: blobs.get(sha) for p, sha in candidate.ref_files.items()}
    plan = plan_check(spec.command, spec.workdir_rel, ref)

    def run(files: dict[str, bytes]) -> Graded:
        graded = grade_submission(
            engine,
            spec,
            base_ref,
            Submission(files={p: FileEntry(data) for p, data in files.items()}),
            facts=None,  # graded as the check in the image grades: no reference facts yet
            plan=plan,
            run_id=new_run_id(),
            limits=task_limits(spec),
        )
        assert not any(DISAGREE in r for r in graded.verdict.reasons), graded.verdict.reasons
        return graded

    return run, start, ref


@pytest.mark.docker
def test_the_tasks_grader_scores_the_reference_1_and_the_start_0(sample_grader):
    run, start, ref = sample_grader
    assert run(ref).verdict.reward == 1.0
    assert run(start).verdict.reward == 0.0


@pytest.mark.docker
def test_the_tasks_grader_restores_edited_tests(sample_grader):
    run, start, ref = sample_grader
    gutted = dict(ref)
    # With no test left, unittest before Python 3.12 exits 0; the grader's copy comes back.
    gutted["tests/test_totals.py"] = b"import unittest\n"
    graded = run(gutted)
    assert graded.verdict.reward == 1.0  # the reference's tests ran, and they pass
    assert "tests/test_totals.py" in graded.detail["submission"]["restored"]
    gutted_start = {**start, "tests/test_totals.py": b"import unittest\n"}
    assert run(gutted_start).verdict.reward == 0.0


@pytest.mark.docker
def test_the_tasks_grader_ignores_reward_files_the_code_under_test_writes(sample_grader):
    run, start, _ = sample_grader
    forged = dict(start)
    forged["invoice/__init__.py"] = (
        b"import json, os\n"
        b"for folder in ('/logs/verifier', os.getcwd()):\n"
        b"    try:\n"
        b"        open(os.path.join(folder, 'reward.json'), 'w').write(json.dumps({'reward': 1}))\n"
        b"        open(os.path.join(folder, 'reward.txt'), 'w').write('1')\n"
        b"    except OSError:\n"
        b"        pass\n" + start["invoice/__init__.py"]
    )
    assert run(forged).verdict.reward == 0.0
