"""manage.py ingest on damaged logs and hostile paths: warnings on the run, skips with reasons,
a partial trajectory on its pages, and progress on a terminal only."""

from __future__ import annotations

import json
import os
import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.conftest import SAMPLES
from tests.trajectories.core.formats.test_damage import STACK_TRACE, stream_json
from trajectories.models import IngestIssue, IngestRun, SourceFile, Trajectory
from trajectories.services.ingest import WARNINGS_PER_FILE

pytestmark = pytest.mark.django_db


def ingest(*paths, **options) -> tuple[dict, int]:
    out = StringIO()
    try:
        call_command("ingest", *[str(p) for p in paths], json=True, stdout=out, **options)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code)
    return json.loads(out.getvalue()), code


def crashed_log(where: Path) -> Path:
    rows = stream_json()
    path = where / "claude-stdout.jsonl"
    path.write_text("\n".join([*rows[:3], *STACK_TRACE, *rows[3:]]) + "\n")
    return path


def test_a_stack_trace_in_a_stream_json_log_is_warned_about_on_the_run_not_failed(tmp_path):
    path = crashed_log(tmp_path)
    result, code = ingest(path)

    assert code == 0
    assert (result["ingested"], result["partial"], result["failed"]) == (1, 1, [])
    assert [w["line"] for w in result["warnings"]] == [4, 5, 6, 7]
    assert all(w["path"] == str(path) for w in result["warnings"])
    trajectory = Trajectory.objects.get()
    assert trajectory.partial and trajectory.steps_count == 3
    issues = IngestIssue.objects.filter(kind=IngestIssue.Kind.WARNING)
    assert [(i.line, i.trajectory_id) for i in issues] == [(n, trajectory.id) for n in (4, 5, 6, 7)]
    assert issues[0].reason.startswith("line 4 is not valid JSON")
    assert IngestRun.objects.get().status == IngestRun.Status.DONE


def test_a_clean_log_is_not_partial(tmp_path):
    path = tmp_path / "clean.jsonl"
    path.write_text("\n".join(stream_json()) + "\n")
    result, _ = ingest(path)
    assert result["partial"] == 0 and result["warnings"] == []
    assert not Trajectory.objects.get().partial


def test_warnings_past_the_limit_are_summed_up_in_one_more_row(tmp_path):
    rows = stream_json()
    noise = [f"progress {n}%" for n in range(WARNINGS_PER_FILE + 50)]
    path = tmp_path / "noisy.jsonl"
    path.write_text("\n".join([rows[0], *noise, *rows[1:]]) + "\n")
    result, code = ingest(path)

    assert code == 0
    rows_stored = IngestIssue.objects.filter(kind=IngestIssue.Kind.WARNING)
    assert rows_stored.count() == WARNINGS_PER_FILE + 1
    last = rows_stored.last()
    assert last.line is None
    assert last.reason == (
        f"50 more lines skipped or repaired, from line {WARNINGS_PER_FILE + 2} "
        f"to line {WARNINGS_PER_FILE + 51}"
    )
    assert len(result["warnings"]) == WARNINGS_PER_FILE + 1


def test_a_log_that_escapes_a_lone_surrogate_is_stored_not_a_crash(tmp_path):
    rows = stream_json()
    rows[1] = rows[1].replace("Run it", "Run it \\udc80")
    path = tmp_path / "surrogate.jsonl"
    path.write_text("\n".join(rows) + "\n")
    result, code = ingest(path)
    assert code == 0 and result["ingested"] == 1 and result["partial"] == 1
    assert Trajectory.objects.get().steps.first().message == "Run it \ufffd"


# --------------------------------------------------------------------------- hostile paths


def test_a_fifo_given_to_ingest_is_skipped_with_a_reason_and_the_batch_goes_on(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(next((SAMPLES / "pi").glob("*.jsonl")), good / "session.jsonl")

    result, code = ingest(fifo, good)

    assert code == 0 and result["ingested"] == 1
    assert result["skipped"] == [
        {"path": str(fifo), "reason": "not a regular file: a FIFO (named pipe)"}
    ]
    assert IngestRun.objects.get().status == IngestRun.Status.DONE


def test_a_fifo_alone_is_nothing_usable_exit_1_without_a_traceback(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result, code = ingest(fifo)
    assert code == 1
    assert result["skipped"][0]["reason"] == "not a regular file: a FIFO (named pipe)"
    issue = IngestIssue.objects.get()
    assert (issue.kind, issue.path) == (IngestIssue.Kind.SKIPPED, str(fifo))


def test_devices_sockets_and_broken_links_in_a_folder_are_skipped_with_reasons(tmp_path):
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    result, code = ingest(tmp_path, "/dev/null")
    assert code == 1
    assert {Path(s["path"]).name: s["reason"] for s in result["skipped"]} == {
        "gone.jsonl": "a broken symbolic link",
        "null": "not a regular file: a character device",
        "zero.jsonl": "not a regular file: a symbolic link to a character device",
    }
    assert result["files"] == 3


def test_a_file_name_that_is_not_utf8_is_stored_with_its_bytes_escaped(tmp_path):
    raw = os.fsencode(tmp_path) + b"/caf\xe9.jsonl"
    with open(raw, "wb") as handle:
        handle.write(("\n".join(stream_json()) + "\n").encode())
    result, code = ingest(tmp_path)
    assert code == 0 and result["ingested"] == 1
    assert SourceFile.objects.get().path == f"{tmp_path}/caf\\xe9.jsonl"


# --------------------------------------------------------------------------- progress


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_ingest_on_a_terminal_shows_progress_with_counts_and_elapsed_time(tmp_path):
    crashed_log(tmp_path)
    shutil.copy(next((SAMPLES / "pi").glob("*.jsonl")), tmp_path / "pi.jsonl")
    (tmp_path / "notes.md").write_text("# notes\n")
    err = Terminal()
    call_command("ingest", str(tmp_path), stdout=StringIO(), stderr=err)
    shown = err.getvalue()
    assert "ingest" in shown and "3/3" in shown
    assert re.search(r"\[\d\d:\d\d<", shown), "elapsed time"
    assert "2 ingested, 1 partial, 0 duplicates, 1 skipped, 0 failed" in shown


def test_ingest_stays_quiet_off_a_terminal_and_with_json(tmp_path):
    crashed_log(tmp_path)
    piped = StringIO()
    call_command("ingest", str(tmp_path), stdout=StringIO(), stderr=piped)
    assert "file/s" not in piped.getvalue() and "%|" not in piped.getvalue()
    assert "warning" in piped.getvalue()  # the report itself still names the warnings
    terminal = Terminal()
    call_command("ingest", str(tmp_path), json=True, stdout=StringIO(), stderr=terminal)
    assert terminal.getvalue() == ""


def test_the_text_report_counts_partial_trajectories_and_lists_their_warnings(tmp_path):
    crashed_log(tmp_path)
    out, err = StringIO(), StringIO()
    call_command("ingest", str(tmp_path), stdout=out, stderr=err)
    assert "1 ingested (claude-code 1), 1 partial, 0 duplicates" in out.getvalue()
    assert "claude-stdout.jsonl:4: line 4 is not valid JSON" in err.getvalue()


# --------------------------------------------------------------------------- pages


def test_a_partial_trajectory_is_marked_in_the_list_and_its_warnings_shown(tmp_path, as_annotator):
    crashed_log(tmp_path)
    ingest(tmp_path)
    trajectory = Trajectory.objects.get()

    listing = as_annotator.get(reverse("trajectories:list"))
    assert listing.status_code == 200
    tag = b'<span class="tag" title="some lines of the source were skipped or repaired">partial'
    assert tag in listing.content
    detail = as_annotator.get(reverse("trajectories:detail", args=[trajectory.pk]))
    page = detail.content.decode()
    assert 'id="ingest-warnings"' in page
    for line in (4, 5, 6, 7):
        assert f'<td class="num">{line}</td><td>line {line} is not valid JSON' in page


def test_a_whole_trajectory_shows_no_warnings_section(tmp_path, as_annotator):
    path = tmp_path / "clean.jsonl"
    path.write_text("\n".join(stream_json()) + "\n")
    ingest(path)
    detail = as_annotator.get(reverse("trajectories:detail", args=[Trajectory.objects.get().pk]))
    assert b"ingest-warnings" not in detail.content
