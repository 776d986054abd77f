"""manage.py generate: the pipeline over the samples, report.json, exit codes and the run row."""

import json
import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tasks_review.models import Candidate, PipelineRun
from tests.conftest import SAMPLES

pytestmark = pytest.mark.django_db
PINNED = "example.org/traj2env/base@sha256:" + "ab" * 32


@pytest.fixture(autouse=True)
def _public_base_image(settings):
    # Writing task files needs a pinned FROM, not Docker: the configured-public-image path.
    # Verification needs Docker; tests/tasks_review/test_verify_docker.py runs it for real.
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": PINNED, "VERIFY": False}


def config(tmp_path: Path, source: Path, **options) -> Path:
    lines = [
        f"source: {{kind: trajectory, path: {source}, format: auto}}",
        "pipeline:",
        "  name: trajectory_to_env",
        "  options: " + json.dumps({"families": ["repair"], **options}),
        f"output: {{destination: {tmp_path / 'out'}}}",
    ]
    path = tmp_path / "generate.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def generate(path: Path, **streams) -> int:
    try:
        call_command("generate", config=str(path), **streams)
    except SystemExit as exit_:
        return int(exit_.code)
    return 0


def test_samples_become_four_linted_harbor_tasks_with_a_report(tmp_path):
    assert generate(config(tmp_path, SAMPLES)) == 0
    out = tmp_path / "out"
    tasks = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(tasks) == 4
    for task in tasks:
        assert {p.name for p in task.iterdir()} >= {
            "instruction.md",
            "task.toml",
            "environment",
            "tests",
            "solution",
        }
        assert 'recipe = "trajectory_replay"' in (task / "task.toml").read_text()
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "done"
    assert report["counts"]["files"] == 5 and report["counts"]["trajectories"] == 4
    assert report["counts"]["candidates"] == 4 and report["counts"]["written"] == 4
    assert report["yield"]["repair"]["yield"] == 1.0
    assert set(report["timings"]) >= {"ingest", "replay", "mine", "write"}
    assert report["config"]["pipeline"]["options"]["families"] == ["repair"]
    assert report["started_at"] and report["finished_at"]
    run = PipelineRun.objects.get()
    assert run.status == "done" and run.report == report


def test_unknown_config_key_is_a_setup_error_naming_it(tmp_path):
    path = config(tmp_path, SAMPLES, famlies=["repair"])
    with pytest.raises(CommandError) as err:
        call_command("generate", config=str(path))
    assert err.value.returncode == 2
    assert "pipeline.options.famlies" in str(err.value)
    assert PipelineRun.objects.count() == 0


def test_a_missing_source_is_a_setup_error(tmp_path):
    with pytest.raises(CommandError) as err:
        call_command("generate", config=str(config(tmp_path, tmp_path / "nowhere")))
    assert err.value.returncode == 2


def test_nothing_usable_exits_1_and_still_writes_the_report(tmp_path):
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    doc = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "terminus-2", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Say hello."},
            {"step_id": 2, "source": "agent", "message": "Hello."},
        ],
    }
    (quiet / "hello.json").write_text(json.dumps(doc))
    assert generate(config(tmp_path, quiet)) == 1
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["counts"]["trajectories"] == 1 and report["counts"]["candidates"] == 0


def test_propose_only_stops_before_task_files(tmp_path):
    assert generate(config(tmp_path, SAMPLES, propose_only=True)) == 0
    assert not [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert Candidate.objects.filter(status=Candidate.Status.PROPOSED).count() == 4


# Verification runs in threads with their own connections: they must see committed rows.
@pytest.mark.django_db(transaction=True)
def test_why_candidates_are_ungraded_is_on_the_terminal_and_in_the_report(
    tmp_path, settings, monkeypatch
):
    import itertools
    from io import StringIO

    from tasks_review.core.trials.model import MatrixResult, MatrixStatus
    from tasks_review.services import verification

    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "VERIFY": True}
    calls = itertools.count()  # verify threads share it; next() is atomic under the GIL
    gone = tuple(f"oracle #{i} ungraded: the daemon went away" for i in range(3))

    def no_daemon(task_dir, **_):
        reasons = ("harness error: OSError: disk full",) if next(calls) == 0 else gone
        return MatrixResult(task_dir=task_dir, status=MatrixStatus.UNGRADED, reasons=reasons)

    monkeypatch.setattr(verification, "verify_task", no_daemon)
    out = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("generate", config=str(config(tmp_path, SAMPLES)), stdout=out)
    assert exit_.value.code == 1  # nothing kept
    lines = out.getvalue().splitlines()
    start = lines.index("4 ungraded, by reason:")
    assert lines[start + 1 : start + 3] == [
        "  3 × the daemon went away",
        "  1 × harness error: OSError: disk full",
    ]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["ungraded"]["count"] == 4
    assert report["ungraded"]["reasons"] == [
        {"reason": "the daemon went away", "count": 3},
        {"reason": "harness error: OSError: disk full", "count": 1},
    ]
    per_candidate = {c["candidate"]: c["reasons"] for c in report["ungraded"]["candidates"]}
    assert set(per_candidate) == set(
        Candidate.objects.filter(status=Candidate.Status.UNGRADED).values_list("id", flat=True)
    )
    assert sorted(per_candidate.values(), key=len) == [
        [{"reason": "harness error: OSError: disk full", "count": 1}],
        *[[{"reason": "the daemon went away", "count": 3}]] * 3,
    ]


def test_a_report_without_ungraded_candidates_says_none(tmp_path):
    assert generate(config(tmp_path, SAMPLES)) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["ungraded"] == {"count": 0, "reasons": [], "candidates": []}


def test_limit_bounds_the_candidates(tmp_path):
    assert generate(config(tmp_path, SAMPLES, limit=2)) == 0
    assert Candidate.objects.exclude(status=Candidate.Status.DROPPED).count() == 2


def install_instead_of_fix(src: Path) -> None:
    """The Codex sample with its fixing apply_patch replaced by `npm install`: the check passes
    after an install and no source edit, which is not a repair."""
    src.mkdir(exist_ok=True)
    shutil.copy(next((SAMPLES / "codex").glob("*.jsonl")), src / "rollout.jsonl")
    text = (src / "rollout.jsonl").read_text()
    assert "*** Update File:" in text
    lines = [json.loads(line) for line in text.splitlines()]
    for line in lines:  # turn the fixing patch into a dependency install
        payload = line.get("payload", {})
        if payload.get("type") == "custom_tool_call" and "*** Update File:" in payload.get(
            "input", ""
        ):
            payload.update(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps({"command": ["bash", "-lc", "npm install left-pad"]}),
                }
            )
            payload.pop("input", None)
    (src / "rollout.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")


def test_drops_are_recorded_with_stage_and_reason_code(tmp_path):
    src = tmp_path / "src"
    install_instead_of_fix(src)
    code = generate(config(tmp_path, src))
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert code == 1
    assert [d["reason"] for d in report["drops"]] == ["package_install_fix"]
    assert report["drops"][0]["stage"] == "mine" and report["drops"][0]["candidate"]


def test_a_second_run_on_the_same_files_mines_them_again_and_reuses_their_tasks(tmp_path):
    assert generate(config(tmp_path, SAMPLES)) == 0
    out = StringIO()
    assert generate(config(tmp_path, SAMPLES), stdout=out) == 0
    assert "4 found again by content key" in out.getvalue()
    second = PipelineRun.objects.order_by("-id").first()
    assert second.counts["trajectories"] == 4 and second.counts["reused"] == 4
    assert second.counts["written"] == 0  # the same tasks: no pending copies


def test_a_pytest_candidate_whose_wheels_cannot_be_had_offline_drops_at_write(tmp_path, settings):
    from tests.tasks_review.core.mining.test_repair import fixed_python_story

    atif, _ = fixed_python_story().builder.build()
    source = tmp_path / "sessions"
    source.mkdir()
    (source / "session.json").write_text(json.dumps(atif))
    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "WHEELHOUSE_DIR": tmp_path / "empty-wheelhouse",
        "WHEELHOUSE_OFFLINE": True,
    }
    assert generate(config(tmp_path, source)) == 1  # nothing usable
    (candidate,) = Candidate.objects.all()
    assert candidate.status == Candidate.Status.DROPPED
    assert (candidate.drop_stage, candidate.drop_reason) == (
        "write",
        "dependency_unavailable_offline",
    )
    assert "pytest" in candidate.drop_detail and "offline" in candidate.drop_detail
    assert not [p for p in (tmp_path / "out").iterdir() if p.is_dir()]  # no task folder


def test_a_pytest_candidate_ships_the_wheels_pypi_had_on_the_trajectorys_date(tmp_path, settings):
    import socket

    from tests.tasks_review.core.mining.test_repair import fixed_python_story

    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as exc:
        pytest.skip(f"PyPI unreachable ({exc}): the wheelhouse cannot be filled")
    atif, _ = fixed_python_story().builder.build()
    for i, step in enumerate(atif["steps"]):  # the session ran on 1 June 2025
        step["timestamp"] = f"2025-06-01T09:{i:02d}:00Z"
    source = tmp_path / "sessions"
    source.mkdir()
    (source / "session.json").write_text(json.dumps(atif))
    assert generate(config(tmp_path, source)) == 0
    (candidate,) = Candidate.objects.all()
    assert candidate.status == Candidate.Status.WRITTEN, candidate.drop_detail
    packages = candidate.payload["python_packages"]
    assert "pytest==8.3.5" in packages["pins"]  # the newest pytest before that morning
    assert packages["date_source"] == "trajectory"
    assert packages["resolved_before"] == "2025-06-01T09:00:00+00:00"
    wheels = Path(candidate.task_dir) / "environment" / "wheels"
    assert (wheels / "requirements.lock").read_text().startswith("iniconfig==")
    assert len(list(wheels.glob("*.whl"))) == len(packages["pins"])


def secrets_source(tmp_path: Path, **story) -> Path:
    from tests.tasks_review.core.secrets_story import secrets_story

    atif, _ = secrets_story(**story).builder.build()
    source = tmp_path / "sessions"
    source.mkdir()
    (source / "session.json").write_text(json.dumps(atif))
    return source


def test_a_session_with_secrets_becomes_a_task_without_them_and_counts_them(tmp_path):
    from tests.tasks_review.core.secrets_story import SECRETS
    from trajectories.core.redact import still_has_secrets

    assert generate(config(tmp_path, secrets_source(tmp_path))) == 0
    (candidate,) = Candidate.objects.all()
    assert candidate.status == Candidate.Status.WRITTEN, candidate.drop_detail
    assert candidate.payload["redactions"] == {
        "total": 5,
        "counts": {
            "aws_access_key_id": 1,
            "github_token": 1,
            "openai_api_key": 2,
            "private_key": 1,
        },
    }
    for path in Path(candidate.task_dir).rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            assert still_has_secrets(text) == () and not [s for s in SECRETS if s in text]


def test_a_secret_in_the_reference_drops_the_candidate_at_write(tmp_path):
    from tests.tasks_review.core.secrets_story import SECRETS, TEST

    test = TEST + f"const token = '{SECRETS[1]}';\n"
    assert generate(config(tmp_path, secrets_source(tmp_path, test=test))) == 1
    (candidate,) = Candidate.objects.all()
    assert (candidate.status, candidate.drop_stage, candidate.drop_reason) == (
        Candidate.Status.DROPPED,
        "write",
        "secret_in_reference",
    )
    assert "test/greet.test.js" in candidate.drop_detail
    assert not [p for p in (tmp_path / "out").iterdir() if p.is_dir()]


def test_report_gives_yield_per_harness_and_language_and_the_top_drop_reasons(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "claude-code", src / "claude-code")
    shutil.copytree(SAMPLES / "pi", src / "pi")
    install_instead_of_fix(src / "codex")
    assert generate(config(tmp_path, src)) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    one = {"trajectories": 1, "candidates": 1, "written": 1, "kept": 0, "dropped": 0}
    dropped = {"trajectories": 1, "candidates": 1, "written": 0, "kept": 0, "dropped": 1}
    assert report["by_harness"] == {"claude-code": one, "codex": dropped, "pi": one}
    languages = report["by_language"]
    assert sum(b["trajectories"] for b in languages.values()) == 3
    assert sum(b["written"] for b in languages.values()) == 2
    assert sum(b["dropped"] for b in languages.values()) == 1
    assert "unknown" not in languages  # the drop knows its check's language
    assert report["top_drops"] == [{"reason": "package_install_fix", "count": 1}]
    assert report["ungraded"]["count"] == 0  # the ungraded entry stays
    assert report["summary"]["by_harness"] == report["by_harness"]


def test_a_harness_whose_trajectories_gave_no_candidate_still_counts_them(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "pi", src / "pi")
    (src / "empty.trajectory.json").write_text(json.dumps(empty_atif()))
    generate(config(tmp_path, src))
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["by_harness"]["atif"] == {
        "trajectories": 1,
        "candidates": 0,
        "written": 0,
        "kept": 0,
        "dropped": 0,
    }


def empty_atif() -> dict:
    atif = json.loads(next((SAMPLES / "atif").glob("*.json")).read_text())
    atif["steps"] = atif["steps"][:1]
    return atif


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_generate_on_a_terminal_shows_each_stage_with_counts_and_elapsed_time(tmp_path):
    err = Terminal()
    with pytest.raises(SystemExit):
        call_command(
            "generate", config=str(config(tmp_path, SAMPLES)), stdout=StringIO(), stderr=err
        )
    shown = err.getvalue()
    for stage in ("ingest", "replay", "mine", "write"):
        assert stage in shown
    assert shown.index("replay") < shown.index("mine") < shown.index("write")
    assert "4/4" in shown and re.search(r"\[\d\d:\d\d<", shown), "counts and elapsed time"
    assert "4 candidates, 0 dropped, 4 written" in shown


def test_generate_shows_no_progress_off_a_terminal(tmp_path):
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit):
        call_command("generate", config=str(config(tmp_path, SAMPLES)), stdout=out, stderr=err)
    assert "%|" not in err.getvalue() and "4/4" not in err.getvalue()
    assert "4 written" in out.getvalue()


def test_generate_with_json_prints_the_reports_summary_and_nothing_else(tmp_path):
    out, err = Terminal(), Terminal()
    with pytest.raises(SystemExit) as exit_:
        call_command(
            "generate", config=str(config(tmp_path, SAMPLES)), json=True, stdout=out, stderr=err
        )
    assert exit_.value.code == 0
    assert err.getvalue() == ""
    summary = json.loads(out.getvalue())
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert summary == report["summary"]
    assert summary["counts"]["written"] == 4 and summary["status"] == "done"
    assert set(summary["by_harness"]) == {"atif", "claude-code", "codex", "pi"}
    assert summary["ungraded"] == {"count": 0, "reasons": []}


def atif_session(name: str, builder_calls) -> dict:
    """An ATIF trajectory of a Claude Code session ``name`` made of ``builder_calls(story)``."""
    from tests.tasks_review.core.mining.repair_helpers import Session

    story = Session(root="/repo").user("Make the tests pass.")
    builder_calls(story)
    atif, _ = story.builder.build()
    atif["session_id"] = name
    return atif


def test_report_and_summary_split_product_drops_from_environment_limits(tmp_path):
    from tests.tasks_review.core.mining.repair_helpers import CALC_BUGGY, TEST_CALC

    def java(story):  # no image runs Maven
        story.write("pom.xml", "<project/>\n").write("src/A.java", "class A {}\n")
        story.run("mvn test", fail=True, output="BUILD FAILURE")
        story.edit("src/A.java", "class A {}", "class A { }").run(
            "mvn test", output="BUILD SUCCESS"
        )

    def unseen_mise(story):  # the log never shows mise.toml, and there is no clone
        story.write("calc.py", CALC_BUGGY).write("tests/test_calc.py", TEST_CALC)
        story.run("mise run test", fail=True, output="1 failed")
        story.edit("calc.py", "a - b", "a + b").run("mise run test", output="1 passed")

    src = tmp_path / "src"
    src.mkdir()
    for name, calls in (("java", java), ("mise", unseen_mise)):
        (src / f"{name}.trajectory.json").write_text(json.dumps(atif_session(name, calls)))
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("generate", config=str(config(tmp_path, src)), stdout=out)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    sides = report["summary"]["drops"]
    assert sides["product"] == {
        "count": 1,
        "top": [{"reason": "check_manifest_unseen", "count": 1}],
    }
    assert sides["environment"] == {
        "count": 1,
        "limits": [{"kind": "language", "name": "java", "source": "", "count": 1}],
    }
    by_reason = {d["reason"]: d for d in report["drops"]}
    assert by_reason["unsupported_language"]["side"] == "environment"
    assert by_reason["check_manifest_unseen"] == {
        **by_reason["check_manifest_unseen"],
        "side": "product",
        "limit": None,
    }
    printed = out.getvalue()
    assert "1 product-side drops (top: check_manifest_unseen ×1)" in printed
    assert "1 environment limits (language java ×1)" in printed
