"""One session recorded in several files replays to the same bytes from each of them.

The corpus's OpenClaw trials hold each session three times: the pi log OpenClaw wrote
(``steps/run/agent/openclaw-sessions/<id>.jsonl``), Harbor's ATIF of that step
(``steps/run/agent/trajectory.json``) and the trial's own copy (``agent/trajectory.json``). The
ATIF export cuts the trailing white space off every tool result, so the ATIF replays read
``tests/test_report_client.py`` one newline short (1,007 bytes, where the run's own ``ls -la``
says 1,008). The ATIF reader now takes the results back from the log beside it. A Harbor
Claude Code trial (session JSONL and its ``trajectory.json``) agreed already; it is held here too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajectories.core import formats
from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import Status, replay

pytestmark = pytest.mark.corpus

OPENCLAW = "openclaw-harbor-15735640198/clawbench-19-kimi2.6"
TRIALS = {
    "t4-browser-research-and-code__56zvvqY": "7abc4cd7-ef7f-410d-9c58-342e1c1c9a28",
    "t3-data-pipeline-report__25HCHpE": "ade56673-37d9-4d03-a525-072041d6bcc2",
}
PDFMINER = (
    "evolving-skills/jobs_copy/2026-04-13__04-01-12/pdfminer__pdfminer.six.1a8bd2f7.__icWVexc/agent"
)


def final_files(path: Path) -> dict[str, bytes | str]:
    """The replay's last state of ``path``: bytes for known files, the status otherwise."""
    if not path.is_file():
        pytest.skip(f"{path} is not in this corpus")
    loaded = formats.load(path)
    assert isinstance(loaded, formats.Loaded), loaded
    blobs = MemoryBlobs()
    result = replay(loaded.atif, loaded.side_data, root=loaded.meta.cwd, blobs=blobs)
    return {
        key: blobs.get(entry.sha) if entry.status is Status.KNOWN and entry.sha else entry.status
        for key, entry in result.final_state.items()
    }


@pytest.mark.parametrize("trial", sorted(TRIALS))
def test_an_openclaw_session_replays_to_the_same_bytes_from_its_log_and_both_atif_copies(
    corpus, trial
):
    folder = corpus / OPENCLAW / trial
    log = final_files(folder / f"steps/run/agent/openclaw-sessions/{TRIALS[trial]}.jsonl")
    assert log == final_files(folder / "steps/run/agent/trajectory.json")
    assert log == final_files(folder / "agent/trajectory.json")


def test_the_newline_the_atif_export_cut_is_the_files_own(corpus):
    folder = corpus / OPENCLAW / "t4-browser-research-and-code__56zvvqY"
    files = final_files(folder / "steps/run/agent/trajectory.json")
    test_file = files["tests/test_report_client.py"]
    assert isinstance(test_file, bytes)
    assert len(test_file) == 1008 and test_file.endswith(b"10 * 1024 * 1024\n")  # `ls -la`: 1008


def test_a_harbor_claude_code_session_and_its_atif_replay_to_the_same_bytes(corpus):
    folder = corpus / PDFMINER
    session = next((folder / "sessions/projects/-testbed").glob("*.jsonl"), None)
    if session is None:
        pytest.skip(f"{PDFMINER} is not in this corpus")
    files = final_files(session)
    assert files and files == final_files(folder / "trajectory.json")
