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
    assert toml["environment"]["healthcheck"]["command"].endswith("servers.py wait redis")
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


# -- dependencies: fetched before writing, or the candidate drops naming the source ------------

GO_WITH_MODULE = {
    **GO_START,
    "go.mod": b"module example.com/calc\n\ngo 1.21\n\nrequire example.com/greet v1.0.0\n",
    "go.sum": b"example.com/greet v1.0.0 h1:a=\nexample.com/greet v1.0.0/go.mod h1:b=\n",
}
RUST_START = {
    "Cargo.toml": b'[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
    b'[dependencies]\nitoa = "1"\n',
    "src/lib.rs": b"pub fn add(a: u32, b: u32) -> u32 { a - b }\n",
    "tests/add.rs": b"#[test]\nfn adds() { assert_eq!(calc::add(2, 2), 4); }\n",
}
RUST_FIX = {"src/lib.rs": b"pub fn add(a: u32, b: u32) -> u32 { a + b }\n"}


def dropped_at_write(candidate: Candidate, tmp_path: Path) -> Candidate:
    assert not candidate_write_task(
        candidate=candidate, destination=tmp_path, task_name="t", base_image=DEFAULT
    )
    candidate.refresh_from_db()
    assert (candidate.status, candidate.drop_stage, candidate.drop_reason) == (
        Candidate.Status.DROPPED,
        "write",
        "dependency_unavailable_offline",
    )
    assert not (tmp_path / "t").exists()
    return candidate


def test_go_modules_a_proxy_cannot_serve_drop_the_candidate_naming_the_proxy(
    bootstrapped, tmp_path, settings, monkeypatch
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "DEPENDENCY_CACHE_DIR": tmp_path / "cache"}
    monkeypatch.setenv("GOPROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("GOPRIVATE", raising=False)
    monkeypatch.delenv("GONOPROXY", raising=False)
    go = row(GO_WITH_MODULE, GO_FIX, command="go test ./...", language="go", runner="go")
    detail = dropped_at_write(go, tmp_path / "out").drop_detail
    assert detail.startswith("Go modules from GOPROXY=http://127.0.0.1:9: example.com/greet v1.0.0")
    assert "not reachable" in detail


def test_crates_not_in_the_cache_offline_drop_the_candidate_naming_the_registry(
    bootstrapped, tmp_path, settings
):
    settings.TRAJ2ENV = {
        **settings.TRAJ2ENV,
        "DEPENDENCY_CACHE_DIR": tmp_path / "cache",
        "DEPENDENCIES_OFFLINE": True,
    }
    rust = row(RUST_START, RUST_FIX, command="cargo test", language="rust", runner="cargo")
    detail = dropped_at_write(rust, tmp_path / "out").drop_detail
    assert detail.startswith("Rust crates from sparse+https://index.crates.io/: offline")
    assert bootstrapped == [("rust",)]  # the Rust variant, asked for before anything is fetched


def test_npm_packages_of_an_unreachable_registry_drop_the_candidate_naming_it(
    bootstrapped, tmp_path, settings
):
    import shutil

    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "DEPENDENCY_CACHE_DIR": tmp_path / "cache"}
    start = {
        "package.json": b'{"scripts": {"test": "node --test"}, '
        b'"dependencies": {"leftpad-x": "^1.0.0"}}\n',
        ".npmrc": b"registry=http://127.0.0.1:9/\n",
        "index.js": b"module.exports = 1;\n",
        "test/index.test.js": b"require('node:test')('x', () => {});\n",
    }
    fix = {"index.js": b"module.exports = 2;\n"}
    node = row(start, fix, command="npm test", language="node", runner="npm")
    detail = dropped_at_write(node, tmp_path / "out").drop_detail
    assert detail.startswith("npm packages from http://127.0.0.1:9/: npm install failed")
