import pytest
from django.urls import reverse

from tests.trajectories.factories import make_trajectory
from trajectories.models import SourceFile
from trajectories.store import blob_put, sha256_hex

pytestmark = pytest.mark.django_db


def test_detail_shows_the_header_facts_and_the_source_file(as_annotator):
    t = make_trajectory(
        title="Repair the CSV export", model_name="claude-opus-4-5", cwd="/home/dev/app"
    )
    body = as_annotator.get(reverse("trajectories:detail", args=[t.pk])).content.decode()
    for text in (
        "Repair the CSV export",
        "claude-opus-4-5",
        "/home/dev/app",
        t.source.path,
        "Not scanned",
    ):
        assert text in body


def test_detail_links_subagents_and_their_parent(as_annotator):
    parent = make_trajectory(title="the main session")
    child = make_trajectory(title="explore the repo", is_subagent=True, parent=parent)
    parent_page = as_annotator.get(
        reverse("trajectories:detail", args=[parent.pk])
    ).content.decode()
    child_page = as_annotator.get(reverse("trajectories:detail", args=[child.pk])).content.decode()
    assert "explore the repo" in parent_page
    assert "the main session" in child_page and "Spawned by" in child_page


def test_detail_shows_harbor_task_and_reward(as_annotator):
    t = make_trajectory(harbor_task="pdfminer__pdfminer.six", harbor_reward=1.0)
    body = as_annotator.get(reverse("trajectories:detail", args=[t.pk])).content.decode()
    assert "pdfminer__pdfminer.six" in body and "1.0" in body


def test_detail_shows_scan_findings_and_the_block(as_annotator):
    t = make_trajectory(
        scanned=True,
        blocked=True,
        scan_findings=[
            {
                "check": "destructive-command",
                "severity": "high",
                "title": "rm -rf outside the workspace",
                "detail": "",
                "step_id": 4,
            }
        ],
    )
    body = as_annotator.get(reverse("trajectories:detail", args=[t.pk])).content.decode()
    assert "destructive-command" in body and "rm -rf outside the workspace" in body
    assert "blocked by scan" in body


def test_outsiders_get_403_on_detail(client, people):
    t = make_trajectory()
    client.force_login(people.eve)
    assert client.get(reverse("trajectories:detail", args=[t.pk])).status_code == 403


def test_missing_trajectory_is_404(as_annotator):
    assert as_annotator.get(reverse("trajectories:detail", args=[999999])).status_code == 404


def test_detail_shows_every_source_of_the_session(as_annotator):
    t = make_trajectory(title="one session, two files")
    raw = b'{"schema_version": "ATIF-v1.7"}'
    twin = SourceFile.objects.create(
        sha256=sha256_hex(raw),
        path="/runs/trial-1/agent/trajectory.json",
        format="atif",
        size=len(raw),
        raw=blob_put(raw),
        twin_of=t,
    )
    body = as_annotator.get(reverse("trajectories:detail", args=[t.pk])).content.decode()
    assert t.source.path in body and twin.path in body
    assert "Also recorded in" in body and f'id="source-{twin.pk}"' in body
