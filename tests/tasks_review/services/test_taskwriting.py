"""The write stage's base image: the variant a candidate's check needs, or the configured one."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tasks_review.models import Candidate
from tasks_review.services import taskwriting
from tasks_review.services.taskwriting import candidate_payload, candidate_write_task
from tests.tasks_review.core.trials.helpers import (
    GO_FIX,
    GO_START,
    PYTHON_FIX,
    PYTHON_START,
    handmade,
)
from tests.tasks_review.factories import make_candidate
from trajectories.store import DbBlobs

pytestmark = pytest.mark.django_db
DEFAULT = "127.0.0.1:5000/traj2env/base@sha256:" + "ab" * 32
VARIANT = "127.0.0.1:5000/traj2env/base@sha256:" + "cd" * 32


def row(start, fix, **check) -> Candidate:
    blobs = DbBlobs()
    mined = handmade(blobs, start, fix, **check)
    blobs.flush()
    return make_candidate(
        status=Candidate.Status.PROPOSED, payload=candidate_payload(mined), trials=False
    )


@pytest.fixture
def bootstrapped(monkeypatch, settings):
    """The variants bootstrap was asked for (no Docker: the seam records and answers)."""
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": ""}
    asked: list[tuple[str, ...]] = []

    def base_image_ref(variants=()):
        asked.append(tuple(variants))
        return VARIANT

    monkeypatch.setattr(taskwriting, "base_image_ref", base_image_ref)
    return asked


def written(candidate: Candidate, tmp_path: Path) -> tuple[str, dict]:
    assert candidate_write_task(
        candidate=candidate, destination=tmp_path, task_name="t", base_image=DEFAULT
    ), Candidate.objects.get(id=candidate.id).drop_detail
    task = tmp_path / "t"
    return (task / "environment" / "Dockerfile").read_text(), tomllib.loads(
        (task / "task.toml").read_text()
    )


def test_a_go_check_is_written_from_the_go_variant(bootstrapped, tmp_path):
    go = row(GO_START, GO_FIX, command="go test ./...", language="go", runner="go")
    dockerfile, _ = written(go, tmp_path)
    assert bootstrapped == [("go",)]
    assert f"FROM {VARIANT}" in dockerfile


def test_a_check_with_services_is_written_from_the_services_variant_that_starts_them(
    bootstrapped, tmp_path
):
    python = dict(command="python3 -m unittest", language="python", runner="unittest")
    redis = row(PYTHON_START, PYTHON_FIX, services=("redis",), **python)
    dockerfile, toml = written(redis, tmp_path)
    assert bootstrapped == [("services",)] and f"FROM {VARIANT}" in dockerfile
    assert toml["environment"]["env"] == {"TRAJ2ENV_SERVICES": "redis"}
    assert toml["environment"]["healthcheck"]["command"].endswith("services.py wait redis")
    assert toml["metadata"]["check"]["services"] == ["redis"]


def test_a_self_contained_check_keeps_the_default_base(bootstrapped, tmp_path):
    python = dict(command="python3 -m unittest", language="python", runner="unittest")
    dockerfile, _ = written(row(PYTHON_START, PYTHON_FIX, **python), tmp_path)
    assert bootstrapped == [] and f"FROM {DEFAULT}" in dockerfile


def test_a_configured_public_image_serves_every_candidate_as_it_is(
    bootstrapped, settings, tmp_path
):
    public = "golang@sha256:" + "ef" * 32
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": public}
    go = row(GO_START, GO_FIX, command="go test ./...", language="go", runner="go")
    dockerfile, _ = written(go, tmp_path)
    assert bootstrapped == []
    assert "USER root" in dockerfile and "useradd" in dockerfile  # the public-image steps


def test_a_variant_that_cannot_be_built_drops_the_candidate_at_write(monkeypatch, settings):
    from tasks_review.services.images import NoBaseImage

    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "BASE_IMAGE": ""}

    def unavailable(variants=()):
        raise NoBaseImage("no base image bookworm-go-x: mmdebstrap failed")

    monkeypatch.setattr(taskwriting, "base_image_ref", unavailable)
    go = row(GO_START, GO_FIX, command="go test ./...", language="go", runner="go")
    assert not candidate_write_task(
        candidate=go, destination=Path("/nonexistent"), task_name="t", base_image=DEFAULT
    )
    go.refresh_from_db()
    assert (go.status, go.drop_stage, go.drop_reason) == (
        Candidate.Status.DROPPED,
        "write",
        "dependency_unavailable_offline",
    )
