"""`manage.py images`: the thin adapter over the Docker layer, and its exit codes."""

from __future__ import annotations

import io
import json
import socket
import tarfile

import pytest
from django.core.management import CommandError, call_command

from groundwork.core.docker import Engine, InfraError


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("images", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture(scope="module")
def engine() -> Engine:
    try:
        return Engine.from_env(timeout=30)
    except InfraError as exc:
        pytest.skip(f"no Docker engine: {exc}")


@pytest.mark.docker
def test_bootstrap_then_list_shows_the_base_with_its_pinned_reference(engine):
    record = json.loads(run("bootstrap", "--json"))
    assert record["kind"] == "base" and record["pinned_ref"].startswith(
        "127.0.0.1:5000/traj2env/base@sha256:"
    )
    rows = json.loads(run("list", "--json"))
    base = [row for row in rows if row["id"] == record["image_id"]]
    assert len(base) == 1 and base[0]["kind"] == "base"
    assert record["pinned_ref"] in base[0]["pinned_refs"]
    assert record["tag"] in base[0]["tags"]
    assert "FROM " + record["pinned_ref"] in run("list")


@pytest.mark.docker
@pytest.mark.slow  # a first bootstrap of each variant takes a few minutes; then it is reused
def test_bootstrap_builds_the_variants_asked_for_beside_the_default(engine):
    records = json.loads(run("bootstrap", "--variant", "go", "--variant", "services", "--json"))
    assert [r["tag"].split(":")[1].rsplit("-", 1)[0] for r in records] == [
        "bookworm",
        "bookworm-go",
        "bookworm-services",
    ]
    assert len({r["image_id"] for r in records}) == 3


@pytest.mark.docker
def test_an_unknown_variant_exits_2(engine):
    with pytest.raises(CommandError, match="unknown variants") as caught:
        run("bootstrap", "--variant", "cobol")
    assert caught.value.returncode == 2


@pytest.mark.docker
def test_cleanup_reports_what_it_removed(engine):
    report = json.loads(run("cleanup", "--json"))
    assert set(report) == {"containers", "networks", "volumes", "kept_live"}
    assert "removed" in run("cleanup", "--run", "no-such-run")


@pytest.mark.parametrize("action", ["bootstrap", "list", "cleanup"])
def test_an_unreachable_daemon_exits_2(monkeypatch, action):
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
    with pytest.raises(CommandError, match="unreachable") as caught:
        run(action)
    assert caught.value.returncode == 2


@pytest.mark.docker
def test_a_bad_run_id_exits_2(engine):
    with pytest.raises(CommandError, match="run id") as caught:
        run("cleanup", "--run", "a b")
    assert caught.value.returncode == 2


@pytest.mark.docker
@pytest.mark.slow  # pushes the base image (about 400 MB) to a throwaway registry and back
def test_export_then_load_brings_the_base_image_with_the_reference_task_dockerfiles_name(
    engine, tmp_path
):
    record = json.loads(run("bootstrap", "--json"))
    file = tmp_path / "base-images.tar"
    with pytest.raises(CommandError, match="no pinned base image traj2env/base:nope") as caught:
        run("export", str(file), "--image", "traj2env/base:nope")
    assert caught.value.returncode == 2 and not file.exists()
    # The default image alone (the variants this engine may have are not needed here).
    exported = json.loads(run("export", str(file), "--image", record["pinned_ref"], "--json"))
    assert [image["pinned_ref"] for image in exported] == [record["pinned_ref"]]
    # Loaded through another loopback address, not to disturb this machine's registry: the
    # engine records the reference under that address, with the same digest.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    loaded = json.loads(run("load", str(file), "--registry", address, "--json"))
    digest = record["pinned_ref"].split("@")[1]
    ref = f"{address}/traj2env/base@{digest}"
    try:
        assert ref in [image["pinned_ref"] for image in loaded]
        info = engine.image(ref)
        assert info is not None and info.id == record["image_id"] and ref in info.repo_digests
        assert "FROM " + ref in run("list")
    finally:
        engine.image_remove(ref)


def test_loading_a_file_that_is_not_an_export_exits_2(engine, tmp_path):
    file = tmp_path / "other.tar"
    with tarfile.open(file, "w") as tar:
        tar.add(__file__, arcname="README")
    with pytest.raises(CommandError, match="not a file of `images export`") as caught:
        run("load", str(file))
    assert caught.value.returncode == 2
