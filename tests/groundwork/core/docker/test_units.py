"""The Docker layer's pure parts: recipe and context hashes, labels, the base image recipe.

A fake stands in at the engine seam only to show that bootstrap leaves an existing image alone;
everything that needs a daemon is in test_docker_engine.py.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from groundwork.core.docker import InfraError, bootstrap
from groundwork.core.docker import labels as lbl
from groundwork.core.docker.base import BaseImageSpec, Variant, mmdebstrap_command
from groundwork.core.docker.engine import Engine, ImageInfo
from groundwork.core.docker.errors import SetupError
from groundwork.core.docker.hashing import context_hash, recipe_hash
from groundwork.core.docker.transfer import load_images

DIGEST = "sha256:" + "ab" * 32
EXTRA = Variant(name="extra", packages=("jq",), env=(("EXTRA", "1"),))


# -- hashes -------------------------------------------------------------------------------------


def test_recipe_hash_ignores_key_order_and_follows_values():
    assert recipe_hash({"a": 1, "b": [1, 2]}) == recipe_hash({"b": [1, 2], "a": 1})
    assert recipe_hash({"a": 1, "b": [1, 2]}) != recipe_hash({"a": 1, "b": [2, 1]})
    assert len(recipe_hash({})) == 16


def make_context(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Dockerfile").write_text("FROM scratch\n")
    (root / "src" / "app.py").write_text("print(1)\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    return root


def test_context_hash_depends_on_content_not_on_location_or_timestamps(tmp_path):
    one = make_context(tmp_path / "one")
    two = make_context(tmp_path / "two")
    os.utime(two / "src" / "app.py", (1, 1))
    assert context_hash(one) == context_hash(two)


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "src" / "app.py").write_text("print(2)\n"),
        lambda root: (root / "run.sh").chmod(0o755),
        lambda root: (root / "empty").mkdir(),
        lambda root: (root / "link").symlink_to("src/app.py"),
        lambda root: (root / "src" / "app.py").rename(root / "src" / "main.py"),
    ],
    ids=["content", "exec-bit", "new-folder", "new-symlink", "rename"],
)
def test_context_hash_changes_with_any_change_that_docker_would_see(tmp_path, change):
    root = make_context(tmp_path / "ctx")
    before = context_hash(root)
    change(root)
    assert context_hash(root) != before


def test_context_hash_does_not_follow_symlinks(tmp_path):
    root = make_context(tmp_path / "ctx")
    target = tmp_path / "outside.txt"
    target.write_text("one")
    (root / "link").symlink_to(target)
    before = context_hash(root)
    target.write_text("two")  # the link is sent as a link, so its target's content is not context
    assert context_hash(root) == before


# -- labels -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "traj2env.",
        "com.docker.compose.project",
        "traj2env.run=a b",
        "traj2env.run=a,b",
        "TRAJ2ENV.run",
        "traj2env.run=" + "x" * 200,
    ],
)
def test_cleanup_filters_outside_our_namespace_are_refused(bad):
    with pytest.raises(ValueError):
        lbl.label_filter(bad)


def test_run_filters():
    assert lbl.label_filter(lbl.run_filter()) == "traj2env.run"
    assert lbl.run_filter("trial-42:oracle.1") == "traj2env.run=trial-42:oracle.1"
    with pytest.raises(ValueError):
        lbl.run_filter("42; rm -rf /")


def test_this_process_owns_live_resources():
    assert lbl.owner_alive(lbl.owner_token())
    assert not lbl.is_orphan({lbl.OWNER: lbl.owner_token()})


def test_a_finished_process_leaves_orphans():
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    token = f"{lbl.owner_token().split(':')[0]}:{child.stdout.strip()}:12345"
    assert not lbl.owner_alive(token)
    assert lbl.is_orphan({lbl.OWNER: token})


def test_a_reused_pid_is_not_mistaken_for_the_owner():
    host, pid, _start = lbl.owner_token().split(":")
    assert not lbl.owner_alive(f"{host}:{pid}:1")  # our pid, but a process started at another time


def test_unknown_owners_are_kept_and_unowned_resources_are_orphans():
    assert lbl.owner_alive("some-other-host:1:1")
    assert lbl.owner_alive("garbage")
    assert lbl.is_orphan({lbl.RUN: "x"})


# -- the base image recipe ------------------------------------------------------------------------


def test_recipe_hash_ignores_where_images_are_stored_and_cached(tmp_path):
    default = BaseImageSpec()
    moved = BaseImageSpec(cache_dir=tmp_path, registry="127.0.0.1:5999")
    assert moved.recipe_hash == default.recipe_hash
    assert default.tag == f"bookworm-{default.recipe_hash}"


@pytest.mark.parametrize(
    "change",
    [
        {"packages": ("python3", "git")},
        {"suite": "trixie"},
        {"workdir": "/workspace"},
        {"users": (("agent", 1000), ("grader", 1002))},
        {"variants": (EXTRA,)},
        {"mirror": "http://snapshot.debian.org/x"},
    ],
)
def test_recipe_hash_follows_what_goes_into_the_image(change):
    assert BaseImageSpec(**change).recipe_hash != BaseImageSpec().recipe_hash


@pytest.mark.parametrize(
    "bad",
    [
        {"packages": ("python3;rm -rf /",)},
        {"packages": ()},
        {"workdir": "work"},
        {"workdir": "/a b"},
        {"user": "root"},
        {"users": (("agent", 0),)},
        {"users": (("Agent$", 1000),)},
        {"suite": "bookworm; true"},
        {"mirror": "ftp://x"},
        {"mirror": "http://x/$(id)"},
        {"public_image": "debian:bookworm"},
        {"repository": "Traj2env/Base"},
        {"variants": (EXTRA, Variant(name="extra", packages=("curl",)))},
    ],
)
def test_spec_values_that_would_reach_a_shell_or_an_image_config_are_checked(bad):
    with pytest.raises(ValueError):
        BaseImageSpec(**bad)


def test_image_config_runs_as_the_unprivileged_user_in_the_project_folder_and_is_labelled():
    spec = BaseImageSpec()
    changes = spec.changes()
    assert "USER agent" in changes and "WORKDIR /app" in changes
    # A task's Python packages go to the venv: first on PATH, so no task needs an ENV step.
    assert (
        "ENV PATH=/opt/traj2env/venv/bin:/usr/local/sbin:/usr/local/bin:"
        + ("/usr/sbin:/usr/bin:/sbin:/bin")
        in changes
    )
    assert not any(c.startswith("ENTRYPOINT") for c in changes)
    assert f"LABEL traj2env.recipe={spec.recipe_hash}" in changes
    assert "LABEL traj2env.kind=base" in changes


def test_mmdebstrap_command_builds_a_minbase_tar_with_both_users(tmp_path):
    out = tmp_path / "rootfs.tar"
    cmd = mmdebstrap_command(BaseImageSpec(), out)
    assert cmd[:3] == ["mmdebstrap", "--variant=minbase", "--format=tar"]
    include = next(a for a in cmd if a.startswith("--include="))
    assert set(include.removeprefix("--include=").split(",")) >= {
        "python3",
        "python3-venv",
        "python3-pip",
        "git",
        "make",
        "nodejs",
        "npm",
        "ca-certificates",
    }
    hooks = [a for a in cmd if a.startswith("--customize-hook=")]
    assert any("useradd --uid 1000" in h and h.endswith(" agent") for h in hooks)
    assert any("useradd --uid 1001" in h and h.endswith(" grader") for h in hooks)
    positional = cmd[cmd.index("bookworm") :]
    assert positional[1] == str(out)
    assert "deb http://deb.debian.org/debian-security bookworm-security main" in positional


def test_sources_without_a_security_mirror_are_the_suite_alone():
    assert BaseImageSpec(suite="sid", security_mirror=None).sources() == [
        "deb http://deb.debian.org/debian sid main"
    ]


class ExistingBaseEngine(Engine):
    """The engine seam with the base image already there, pinned; anything else is an error."""

    def __init__(self, spec: BaseImageSpec) -> None:
        self.spec = spec
        self.info = ImageInfo(
            id="sha256:" + "cd" * 32,
            tags=(f"{spec.repository}:{spec.tag}",),
            repo_digests=(f"{spec.registry}/{spec.repository}@{DIGEST}",),
            labels={lbl.RECIPE: spec.recipe_hash, lbl.KIND: lbl.KIND_BASE},
            size=123,
        )

    def images(self, *, labels):
        wanted = {lbl.RECIPE: self.spec.recipe_hash, lbl.KIND: lbl.KIND_BASE}
        return [self.info] if labels == wanted else []

    def __getattr__(self, name):
        raise AssertionError(f"bootstrap should not have called Engine.{name}")


def test_bootstrap_returns_the_existing_image_without_building_or_pushing(tmp_path):
    spec = BaseImageSpec(cache_dir=tmp_path, registry="127.0.0.1:1")  # nothing answers there
    record = bootstrap(spec, engine=ExistingBaseEngine(spec))
    assert record.source == "engine" and not record.built
    assert record.pinned_ref == f"127.0.0.1:1/traj2env/base@{DIGEST}"
    assert record.image_id == "sha256:" + "cd" * 32
    assert not (tmp_path / "base" / f"rootfs-{spec.recipe_hash}.tar").exists()


def test_an_unreachable_daemon_is_an_infra_error(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
    with pytest.raises(InfraError, match="tcp://127.0.0.1:1 is unreachable"):
        Engine.from_env(timeout=5)
    with pytest.raises(InfraError):
        bootstrap(BaseImageSpec(cache_dir=tmp_path))


def test_infra_errors_survive_pickling_between_worker_processes():
    import pickle

    error = pickle.loads(pickle.dumps(InfraError("build failed", log="step 3/4")))
    assert (type(error), error.message, error.log) == (InfraError, "build failed", "step 3/4")


# -- images export / load: what a file may hold


class NoEngine(Engine):
    """The engine seam, never to be reached: the file is refused before any Docker call."""

    def __init__(self) -> None:
        pass

    def __getattr__(self, name):
        raise AssertionError(f"load_images should not have called Engine.{name}")


def export_file(tmp_path, members: dict[str, bytes], index: object) -> Path:
    path = tmp_path / "images.tar"
    with tarfile.open(path, "w") as tar:
        for name, data in {"traj2env-images.json": json.dumps(index).encode(), **members}.items():
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data))
    return path


INDEX = {
    "format": 1,
    "images": [
        {
            "tag": "traj2env/base:bookworm-1",
            "pinned_ref": f"127.0.0.1:5000/traj2env/base@{DIGEST}",
            "image_id": "sha256:" + "cd" * 32,
        }
    ],
}


def test_a_file_whose_storage_escapes_its_folder_is_refused(tmp_path):
    path = export_file(tmp_path, {"registry/../../escaped": b"x"}, INDEX)
    with pytest.raises(SetupError, match="cannot unpack"):
        load_images(NoEngine(), path)
    assert not (tmp_path / "escaped").exists()


def test_a_file_naming_an_unpinned_image_is_refused(tmp_path):
    index = {**INDEX, "images": [{**INDEX["images"][0], "pinned_ref": "traj2env/base:latest"}]}
    with pytest.raises(SetupError, match="unpinned"):
        load_images(NoEngine(), export_file(tmp_path, {}, index))


def test_a_file_naming_a_remote_registry_is_refused(tmp_path):
    ref = f"registry.example.com/traj2env/base@{DIGEST}"
    index = {**INDEX, "images": [{**INDEX["images"][0], "pinned_ref": ref}]}
    with pytest.raises(SetupError, match="not a loopback registry"):
        load_images(NoEngine(), export_file(tmp_path, {}, index))


def test_the_task_venv_folder_is_roots_and_the_project_folder_the_agents():
    # /opt/traj2env/venv/bin is first on every PATH, root's too: an agent that could write
    # there would have root run its `bash` in same-container grading.
    hooks = BaseImageSpec(cache_dir=Path("/nonexistent")).hooks()
    assert not any("chown" in h and "/opt/traj2env" in h for h in hooks), hooks
    assert any('mkdir -p "$1/opt/traj2env"' in h for h in hooks)
    assert any("chown agent:agent /app" in h for h in hooks)
