"""The LLM families end to end with Docker: generate over two sessions with the recorded-answer
model, every build, extend and qa task verified by its trial matrix and kept, then the kept build
task graded on partial solutions: a share of its hidden tests, which deleting, skipping or
adding tests does not raise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from groundwork.core.docker import Engine, FileEntry, InfraError
from tasks_review.core.trials import prepare
from tasks_review.core.trials.plan import plan_check
from tasks_review.core.trials.taskdir import ReferenceFacts
from tasks_review.core.trials.verifier import Submission, grade_submission
from tasks_review.models import Candidate, PipelineRun, TrialRun
from tests.llm_server import MODEL, ModelServer, recorded
from tests.tasks_review.core.families.helpers import SHAPES, TEST_SHAPES, TEST_TRIANGLE, TRIANGLE
from tests.tasks_review.test_generate_families import ANSWERS, config, write_sessions

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def engine() -> Engine:
    try:
        return Engine.from_env(timeout=60)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


def graded(engine: Engine, task_dir: Path, files: dict[str, str]) -> float:
    """The reward the task's own grader gives ``files`` as the agent's project."""
    prepared = prepare(task_dir, engine)
    assert prepared.image is not None and prepared.drop is None
    spec = prepared.spec
    config = json.loads((task_dir / "tests" / "grading.json").read_text())
    facts = ReferenceFacts(
        passed=config["reference_passed"],
        start_failed=tuple(config["start_failed"]),
        controls={k: tuple(v) for k, v in config["reference_controls"].items()},
    )
    submission = Submission(files={p: FileEntry(t.encode()) for p, t in files.items()})
    reference = {p: t.encode() for p, t in files.items()}
    result = grade_submission(
        engine,
        spec,
        prepared.image.image_id,
        submission,
        facts=facts,
        plan=plan_check(spec.command, spec.workdir_rel, reference),
        run_id="families-partial",
        limits=prepared.limits,
    )
    return result.verdict.reward


def test_build_extend_and_qa_tasks_are_kept_by_their_matrices_and_partial_credit_holds(
    engine, settings, tmp_path
):
    sessions = write_sessions(tmp_path / "sessions")
    with ModelServer(recorded(ANSWERS)) as server:
        settings.TRAJ2ENV = {
            **settings.TRAJ2ENV,
            "VERIFY": True,
            "LLM_MODEL": MODEL,
            "LLM_API_BASE": server.url,
            "LLM_API_KEY": "unused",
            "LLM_CACHE_DIR": tmp_path / "llm-cache",
        }
        path = config(tmp_path, sessions, ["repair", "build", "extend", "qa"])
        text = path.read_text().replace('"families"', '"jobs": 2, "families"')
        path.write_text(text)
        with pytest.raises(SystemExit) as exit_:
            call_command("generate", config=str(path))
    assert exit_.value.code == 0
    run = PipelineRun.objects.get()
    rows = {c.family: c for c in Candidate.objects.filter(run=run)}
    assert set(rows) == {"build", "extend", "qa"}
    for family, candidate in rows.items():
        assert candidate.status == Candidate.Status.KEPT, (family, candidate.verification)
        trials = TrialRun.objects.filter(candidate=candidate)
        oracle = trials.filter(role="oracle")
        assert oracle.count() == 3 and all(t.reward == 1.0 for t in oracle)
        assert trials.get(role="noop").reward == 0.0
        controls = trials.exclude(role__in=("oracle", "noop")).filter(status="graded")
        assert controls.count() >= 5 and all(t.reward == 0.0 for t in controls), family
    roles = set(TrialRun.objects.filter(candidate=rows["qa"]).values_list("role", flat=True))
    assert {"answer_every_number", "answer_many_guesses", "answer_links_to_data"} <= roles
    assert TrialRun.objects.get(candidate=rows["build"], role="skip_every_test").reward == 0.0
    oracle = TrialRun.objects.filter(candidate=rows["extend"], role="oracle").first()
    score = dict(oracle.detail["score"])
    assert score.pop("probed") in (None, 0, 1, 2)  # scored tests a probe came from
    assert score == {
        "mode": "fraction",
        "scored": 2,
        "passed": 2,
        "kept": 4,
        "kept_failed": 0,
        "missed": [],
    }
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for family in ("build", "extend", "qa"):
        assert report["yield"][family]["kept"] == 1 and report["yield"][family]["llm"]["calls"] == 1

    # Partial solutions of the kept build task: six hidden tests, rectangle_area wrong in two.
    task = Path(rows["build"].task_dir)
    broken = (SHAPES + TRIANGLE).replace("return width * height", "return width + height")
    partial = {"shapes.py": broken}
    assert graded(engine, task, partial) == pytest.approx(4 / 6)
    # Deleting the tests, skipping the failing ones, adding passing ones: still four of six.
    skipping = broken.replace(
        "    return width + height",
        "    import unittest\n    raise unittest.SkipTest('not done')",
    )
    assert graded(engine, task, {"shapes.py": skipping}) == pytest.approx(4 / 6)
    extra = "import unittest\n\n\nclass T(unittest.TestCase):\n" + "".join(
        f"    def test_{i}(self):\n        pass\n" for i in range(20)
    )
    assert graded(engine, task, {**partial, "tests/test_more.py": extra}) == pytest.approx(4 / 6)
    assert graded(engine, task, {**partial, "tests/test_shapes.py": ""}) == pytest.approx(4 / 6)
    # The whole solution scores 1; the tests alone score 0.
    solved = {"shapes.py": SHAPES + TRIANGLE}
    assert graded(engine, task, solved) == 1.0
    tests_only = {"tests/test_shapes.py": TEST_SHAPES, "tests/test_triangle.py": TEST_TRIANGLE}
    assert graded(engine, task, tests_only) == 0.0
