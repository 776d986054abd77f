"""The exports page: it queues an export a worker runs, its row polls until the export ends, and
the manifest is served as JSON."""

from __future__ import annotations

import pytest

from tasks_review.models import DatasetExport
from tasks_review.services import exports

pytestmark = pytest.mark.django_db


def test_the_exports_page_queues_an_export_that_a_worker_runs(
    people, client, settings, tmp_path, accepted, q_sync, django_capture_on_commit_callbacks
):
    settings.VAR_DIR = tmp_path
    client.force_login(people.bob)
    page = client.get("/review/exports/").content.decode()
    assert "Export 2 accepted tasks" in page
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post("/review/exports/")
    assert response.status_code == 302 and response["Location"] == "/review/exports/"
    assert len(callbacks) == 1
    export = DatasetExport.objects.get()
    assert export.status == DatasetExport.Status.DONE, export.error
    assert (tmp_path / "exports").is_dir()
    html = client.get("/review/exports/").content.decode()
    assert f'<tr id="export-{export.pk}"' in html and "manifest.json" in html


def test_a_running_export_row_polls_and_a_finished_one_stops_it(people, client, tmp_path):
    client.force_login(people.dave)
    export = exports.dataset_export_create(user=people.dave, destination=tmp_path / "d")
    hx = {"HX-Request": "true"}
    running = client.get(f"/review/exports/{export.pk}/", headers=hx)
    assert running.status_code == 200
    body = running.content.decode().strip()
    assert body.startswith(f'<tr id="export-{export.pk}"') and 'hx-trigger="every 1s"' in body
    exports.dataset_export_execute(export_id=export.pk)
    done = client.get(f"/review/exports/{export.pk}/", headers=hx)
    assert done.status_code == 286  # htmx stops polling, and swaps in the finished row
    assert "every 1s" not in done.content.decode()
    page = client.get(f"/review/exports/{export.pk}/")
    assert page.status_code == 200 and "<html" in page.content.decode()


def test_the_manifest_is_served_as_json(people, client, tmp_path, accepted):
    export = exports.dataset_export_create(user=people.bob, destination=tmp_path / "d")
    client.force_login(people.bob)
    assert client.get(f"/review/exports/{export.pk}/manifest.json").status_code == 404
    exports.dataset_export_execute(export_id=export.pk)
    response = client.get(f"/review/exports/{export.pk}/manifest.json")
    assert response.json()["task_count"] == 2
