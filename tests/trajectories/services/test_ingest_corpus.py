"""Ingest of the whole real corpus through the Django services (skips when it is absent)."""

import re
from collections import Counter

import pytest

from trajectories.models import IngestIssue, SourceFile, Trajectory
from trajectories.services.ingest import ingest_run_create, ingest_run_execute

pytestmark = [pytest.mark.django_db, pytest.mark.corpus, pytest.mark.slow]


FORMAT_OF_README_LABEL = {
    "pi session": "pi",
    "codex cli rollout": "codex",
    "claude code session": "claude-code",
    "atif json": "atif",
}


def expected_formats(corpus) -> dict[str, int]:
    """What the corpus README's table says each file is: an oracle independent of detection."""
    counts = dict.fromkeys(FORMAT_OF_README_LABEL.values(), 0)
    for row in re.finditer(r"^\| (\S+) \| ([^|]+) \|", (corpus / "README.md").read_text(), re.M):
        label = row.group(2).strip().lower()
        for prefix, fmt in FORMAT_OF_README_LABEL.items():
            if label.startswith(prefix):
                counts[fmt] += 1
    return counts


def test_every_corpus_trajectory_ingests_and_everything_else_is_skipped_with_a_reason(corpus):
    summary = ingest_run_execute(run_id=ingest_run_create(paths=[corpus]).id)
    assert summary.failed == []
    # A file recording a session another file already stored is a source of that trajectory.
    twin_files = SourceFile.objects.filter(twin_of__isnull=False)
    twins = Counter(twin_files.values_list("format", flat=True))
    assert summary.twins == twins.total() > 0
    assert {f: n + twins[f] for f, n in summary.by_format.items()} == expected_formats(corpus)
    for skipped in summary.skipped:
        assert skipped["reason"].startswith("not a trajectory"), skipped
    names = {s["path"].rsplit("/", 1)[-1] for s in summary.skipped}
    assert {"result.json", "reward.txt", "metadata.json", "prompt.txt", "README.md"} <= names

    # subagents point at their parent session; Harbor trials carry task and reward
    pdf_sub = Trajectory.objects.get(source__path__endswith="agent-a90795522da6172b3.jsonl")
    assert pdf_sub.is_subagent and pdf_sub.parent is not None
    assert pdf_sub.parent.format == "claude-code"
    assert (
        Trajectory.objects.exclude(harbor_task="").filter(harbor_reward__isnull=False).count() >= 5
    )

    again = ingest_run_execute(run_id=ingest_run_create(paths=[corpus]).id)
    assert again.ingested == 0 and again.duplicates == summary.ingested + summary.twins
    assert IngestIssue.objects.filter(kind="failed").count() == 0
