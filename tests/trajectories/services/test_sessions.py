"""One session recorded in several files (a Claude Code log, its ATIF twin) is one trajectory."""

import json
import shutil
from pathlib import Path

import pytest

from trajectories.core import formats
from trajectories.models import SourceFile, Step, Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute

pytestmark = pytest.mark.django_db

CC_SESSION = Path(__file__).resolve().parents[2] / "fixtures/formats/claude-code-session.json"
# A Harbor trial of the corpus: the session JSONL, its ATIF trajectory.json, and the ATIF of a
# second phase that resumed the session under the same id with a new first request.
HARBOR_AGENT = Path(
    "evolving-skills/jobs_copy/2026-04-13__06-09-31/mozilla__bleach.73871d76.func_ba__kwVZBCH/agent"
)
# An OpenClaw trial: the pi session log and two ATIF copies of it (the trial's and its step's).
OPENCLAW_TRIAL = Path(
    "openclaw-harbor-15735640198/clawbench-19-kimi2.6/t4-browser-research-and-code__56zvvqY"
)


def ingest(*paths):
    return ingest_run_execute(run_id=ingest_run_create(paths=paths).id)


def harbor_folder(tmp_path: Path, **changes) -> Path:
    """A run folder with the Claude Code session and the ATIF made from it (``changes`` applied
    to the ATIF's first step)."""
    folder = tmp_path / "agent"
    (folder / "sessions").mkdir(parents=True)
    shutil.copy(CC_SESSION, folder / "sessions" / "session.jsonl")
    twin = formats.load(CC_SESSION).atif
    twin["steps"][0].update(changes)
    (folder / "trajectory.json").write_text(json.dumps(twin, indent=2))
    return folder


def test_a_claude_code_log_and_its_atif_twin_ingest_to_one_trajectory_with_two_sources(tmp_path):
    summary = ingest(harbor_folder(tmp_path))
    assert (summary.ingested, summary.twins, summary.duplicates) == (1, 1, 0)
    trajectory = Trajectory.objects.get()
    assert trajectory.format == "claude-code"  # the file ingested first made it
    assert [(s.path.rsplit("/", 1)[-1], s.format) for s in trajectory.sources] == [
        ("session.jsonl", "claude-code"),
        ("trajectory.json", "atif"),
    ]
    assert len({s.sha256 for s in trajectory.sources}) == 2
    assert Step.objects.count() == trajectory.steps_count  # the twin stored no steps
    assert summary.trajectory_ids == [trajectory.id]
    assert summary.duplicate_ids == [trajectory.id]


def test_a_twin_ingested_later_joins_the_stored_trajectory(tmp_path):
    folder = harbor_folder(tmp_path)
    ingest(folder / "trajectory.json")
    later = ingest(folder / "sessions")
    assert (later.ingested, later.twins) == (0, 1)
    assert [s.format for s in Trajectory.objects.get().sources] == ["atif", "claude-code"]


def test_the_same_session_id_with_another_first_request_stays_its_own_trajectory(tmp_path):
    summary = ingest(harbor_folder(tmp_path, message="Now write down what you learned"))
    assert (summary.ingested, summary.twins) == (2, 0)
    assert Trajectory.objects.count() == 2
    assert SourceFile.objects.filter(twin_of__isnull=False).count() == 0


def test_another_session_id_with_the_same_request_stays_its_own_trajectory(tmp_path):
    folder = harbor_folder(tmp_path)
    twin = json.loads((folder / "trajectory.json").read_text())
    twin["session_id"] = "99999999-2222-4333-8444-555555555555"
    (folder / "trajectory.json").write_text(json.dumps(twin))
    assert ingest(folder).ingested == 2


def test_another_start_time_stays_its_own_trajectory(tmp_path):
    summary = ingest(harbor_folder(tmp_path, timestamp="2026-03-02T09:00:00.000Z"))
    assert (summary.ingested, summary.twins) == (2, 0)


def test_re_ingesting_the_same_bytes_adds_nothing(tmp_path):
    folder = harbor_folder(tmp_path)
    ingest(folder)
    before = (Trajectory.objects.count(), SourceFile.objects.count(), Step.objects.count())
    again = ingest(folder)
    assert (again.ingested, again.twins, again.duplicates) == (0, 0, 2)
    assert again.usable and again.duplicate_ids == [Trajectory.objects.get().id] * 2
    assert (Trajectory.objects.count(), SourceFile.objects.count(), Step.objects.count()) == before


def again_alone(folder: Path, indent: int | None = None) -> Path:
    """The folder's ATIF alone, written with other bytes: the same session recorded again."""
    (folder / "sessions" / "session.jsonl").unlink()
    atif = folder / "trajectory.json"
    atif.write_text(json.dumps(json.loads(atif.read_text()), indent=indent))
    return folder


def test_twins_scoped_to_a_folder_join_only_a_trajectory_first_seen_in_it(tmp_path):
    """A Harbor trial's logs are that trial's: another trial repeating the session id (a replay
    of the same recorded session, a rerun) ran on its own and gets its own trajectory."""
    first = harbor_folder(tmp_path / "trial-a")
    second = again_alone(harbor_folder(tmp_path / "trial-b"))
    within = ingest_run_execute(run_id=ingest_run_create(paths=[first]).id, twins_under=first)
    assert (within.ingested, within.twins) == (1, 1), "the trial's own log and ATIF are one"
    summary = ingest_run_execute(run_id=ingest_run_create(paths=[second]).id, twins_under=second)
    assert (summary.ingested, summary.twins) == (1, 0)
    own = Trajectory.objects.get(id=summary.trajectory_ids[0])
    assert [s.path for s in own.sources] == [str(second / "trajectory.json")]
    # Unscoped, the same session recorded once more is still a twin.
    assert ingest(again_alone(harbor_folder(tmp_path / "trial-c"), indent=1)).twins == 1


@pytest.mark.corpus
def test_a_real_harbor_trial_keeps_its_session_once_and_its_resumed_phase_apart(corpus, tmp_path):
    agent = corpus / HARBOR_AGENT
    if not agent.is_dir():
        pytest.skip(f"the Harbor trial {HARBOR_AGENT} is not in this corpus")
    summary = ingest(agent)
    assert (summary.ingested, summary.twins, summary.failed) == (2, 1, [])
    session = Trajectory.objects.get(format="claude-code")
    learning = Trajectory.objects.exclude(id=session.id).get()
    assert [s.format for s in session.sources] == ["claude-code", "atif"]
    assert session.sources[1].path.endswith("agent/trajectory.json")
    assert [s.path for s in learning.sources] == [str(agent / "learning" / "trajectory.json")]
    assert session.session_id == learning.session_id


@pytest.mark.corpus
def test_a_real_openclaw_pi_session_and_its_atif_twin_stamped_170_ms_apart_are_one(corpus):
    trial = corpus / OPENCLAW_TRIAL
    if not trial.is_dir():
        pytest.skip(f"the OpenClaw trial {OPENCLAW_TRIAL} is not in this corpus")
    summary = ingest(trial)
    # The trial-level ATIF copy is named after the trial, not the session: another id stays its
    # own trajectory (mining keeps one candidate of the two by its key, their bytes being equal).
    assert (summary.ingested, summary.twins, summary.failed) == (2, 1, [])
    session = Trajectory.objects.get(format="pi")
    assert [s.format for s in session.sources] == ["pi", "atif"]
    assert session.sources[1].path.endswith("steps/run/agent/trajectory.json")
