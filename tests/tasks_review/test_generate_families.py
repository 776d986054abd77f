"""manage.py generate with the LLM families: qa over a CSV written as a Harbor task, the model
asked once through LiteLLM (a recorded-answer server on loopback), report.json's cost, and what
happens without a model."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tasks_review.models import Candidate, PipelineRun
from tests.llm_server import MODEL, ModelServer, recorded
from tests.tasks_review.core.families.helpers import (
    BUILD_ANSWER,
    BUILD_REQUEST,
    EXTEND_ANSWER,
    EXTEND_REQUEST,
    QA_ANSWER,
    QA_MARKER,
    sales_question,
    shapes_session,
)

ANSWERS = [
    ("qa_question", QA_MARKER, QA_ANSWER),
    ("build_instruction", BUILD_REQUEST, BUILD_ANSWER),
    ("extend_instruction", EXTEND_REQUEST, EXTEND_ANSWER),
]

pytestmark = pytest.mark.django_db
PINNED = "example.org/traj2env/base@sha256:" + "ab" * 32


@pytest.fixture
def model(settings, tmp_path):
    """A recorded-answer model server, configured as the pipeline's model."""
    with ModelServer(recorded(ANSWERS)) as server:
        settings.TRAJ2ENV = {
            **settings.TRAJ2ENV,
            "BASE_IMAGE": PINNED,
            "VERIFY": False,
            "LLM_MODEL": MODEL,
            "LLM_API_BASE": server.url,
            "LLM_API_KEY": "unused",
            "LLM_CACHE_DIR": tmp_path / "llm-cache",
        }
        yield server


def write_sessions(folder: Path) -> Path:
    """The qa session and the build-then-extend session, as ATIF files in ``folder``."""
    folder.mkdir()
    for name, session in (("sales", sales_question()), ("shapes", shapes_session())):
        atif, _ = session.builder.build()
        (folder / f"{name}.json").write_text(json.dumps(atif))
    return folder


@pytest.fixture
def sessions(tmp_path) -> Path:
    return write_sessions(tmp_path / "sessions")


def config(tmp_path: Path, source: Path, families: list[str], out: str = "out") -> Path:
    path = tmp_path / f"{out}.yaml"
    path.write_text(
        f"source: {{kind: trajectory, path: {source}, format: auto}}\n"
        "pipeline:\n  name: trajectory_to_env\n"
        f"  options: {json.dumps({'families': families})}\n"
        f"output: {{destination: {tmp_path / out}}}\n"
    )
    return path


def generate(path: Path, stderr: StringIO | None = None) -> int:
    try:
        call_command("generate", config=str(path), stderr=stderr or StringIO())
    except SystemExit as exit_:
        return int(exit_.code)
    return 0


def test_a_qa_candidate_becomes_a_linted_task_and_report_json_shows_its_llm_cost(
    model, sessions, tmp_path
):
    assert generate(config(tmp_path, sessions, ["repair", "qa"])) == 0
    assert model.of("build_instruction") == []  # only the families asked for are mined
    (candidate,) = Candidate.objects.filter(family="qa")
    assert candidate.status == Candidate.Status.WRITTEN, candidate.drop_detail
    task = Path(candidate.task_dir)
    grading = json.loads((task / "tests" / "grading.json").read_text())
    assert grading["grading"] == "answer" and grading["answer_file"] == "answer.txt"
    assert grading["expected"] == {"type": "numeric", "value": "3", "tolerance": 0.0}
    assert "answer_grade.py" in (task / "tests" / "test.sh").read_text()
    assert "answer.txt" in (task / "solution" / "solve.sh").read_text()
    assert (task / "environment" / "project" / "sales.csv").is_file()
    assert not (task / "environment" / "project" / "answer.txt").exists()
    toml = (task / "task.toml").read_text()
    assert 'family = "qa"' in toml and "Answer a question" in toml
    assert "/app/answer.txt" in (task / "instruction.md").read_text()
    assert candidate.payload["llm"]["prompt_tokens"] == 1200

    report = json.loads((tmp_path / "out" / "report.json").read_text())
    qa = report["yield"]["qa"]
    assert (qa["candidates"], qa["written"], qa["yield"]) == (1, 1, 1.0)
    assert qa["llm"]["calls"] == 1 and qa["llm"]["cache_hits"] == 0
    assert qa["llm"]["cost_usd"] == pytest.approx(1200 * 0.15e-6 + 150 * 0.6e-6)
    assert qa["llm"]["models"] == [MODEL] and "llm" not in report["yield"].get("repair", {})
    assert report["skipped_families"] == {}

    # A second run over the same sessions reuses the candidate, verdicts and all: nothing is
    # mined again, so the model is not asked.
    assert generate(config(tmp_path, sessions, ["qa"], out="again")) == 0
    rerun = json.loads((tmp_path / "again" / "report.json").read_text())
    assert rerun["counts"]["reused"] == 1 and "qa" not in rerun["yield"]
    assert len(model.of("qa_question")) == 1

    # On a desk without the candidate (another database), the cache answers instead.
    Candidate.objects.all().delete()
    assert generate(config(tmp_path, sessions, ["qa"], out="fresh")) == 0
    assert len(model.of("qa_question")) == 1
    again = json.loads((tmp_path / "fresh" / "report.json").read_text())["yield"]["qa"]["llm"]
    assert (again["calls"], again["cache_hits"], again["cost_usd"]) == (0, 1, 0.0)
    assert again["cost_usd_saved"] == qa["llm"]["cost_usd"]


def test_without_a_model_asking_only_llm_families_is_a_setup_error(settings, sessions, tmp_path):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LLM_MODEL": ""}
    with pytest.raises(CommandError) as err:
        call_command("generate", config=str(config(tmp_path, sessions, ["qa"])))
    assert err.value.returncode == 2 and "TRAJ2ENV_LLM_MODEL" in str(err.value)
    assert PipelineRun.objects.count() == 0


def test_without_a_model_repair_runs_and_the_run_says_qa_was_skipped(settings, sessions, tmp_path):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "LLM_MODEL": "", "BASE_IMAGE": PINNED}
    settings.TRAJ2ENV["VERIFY"] = False
    stderr = StringIO()
    generate(config(tmp_path, sessions, ["repair", "qa"]), stderr)
    assert "TRAJ2ENV_LLM_MODEL is not set: qa will not run" in stderr.getvalue()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["skipped_families"] == {"qa": "no LLM model configured (set TRAJ2ENV_LLM_MODEL)"}
    assert not Candidate.objects.filter(family="qa").exists()


def test_build_and_extend_candidates_become_linted_tasks_scored_by_a_share_of_tests(
    model, sessions, tmp_path
):
    assert generate(config(tmp_path, sessions, ["repair", "build", "extend", "qa"])) == 0
    rows = {c.family: c for c in Candidate.objects.exclude(family="repair")}
    assert set(rows) == {"build", "extend", "qa"}
    for family in ("build", "extend"):
        candidate = rows[family]
        assert candidate.status == Candidate.Status.WRITTEN, candidate.drop_detail
        task = Path(candidate.task_dir)
        grading = json.loads((task / "tests" / "grading.json").read_text())
        assert grading["reward"] == "fraction" and "tests/test_triangle.py" in grading["reference"]
        assert not (task / "environment" / "project" / "tests" / "test_triangle.py").exists()
        assert f'family = "{family}"' in (task / "task.toml").read_text()
    environment = Path(rows["build"].task_dir) / "environment"
    # an empty start: the image gets the repository alone (repository.tar), no project/ folder
    assert not (environment / "project").exists() and (environment / "repository.tar").is_file()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for family in ("build", "extend", "qa"):
        assert report["yield"][family]["written"] == 1
        assert report["yield"][family]["llm"]["calls"] == 1
    assert len(model.requests) == 3
