"""The base image recipe and bootstrap: users, image config, mmdebstrap, and reuse.

A fake stands in at the engine seam only to show that bootstrap leaves an existing image alone;
everything that needs a daemon is in test_engine.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from groundwork.core.docker import bootstrap
from groundwork.core.docker import docker_labels as lbl
from groundwork.core.docker.base import BaseImageSpec, Variant, mmdebstrap_command
from groundwork.core.docker.engine import Engine, ImageInfo

DIGEST = "sha256:" + "ab" * 32
EXTRA = Variant(name="extra", packages=("jq",), env=(("EXTRA", "1"),))


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


def test_an_existing_image_is_returned_while_another_process_builds_another_recipe(tmp_path):
    """The lock serialises builds, not answers: a worker whose image is there does not queue
    behind a bootstrap of the variants (scripts/test.sh runs one in the background)."""
    import fcntl
    import threading

    spec = BaseImageSpec(cache_dir=tmp_path, registry="127.0.0.1:1")
    (tmp_path / "base").mkdir()
    done = threading.Event()
    with (tmp_path / "base" / "bootstrap.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another open file: flock refuses this process too
        worker = threading.Thread(
            target=lambda: (bootstrap(spec, engine=ExistingBaseEngine(spec)), done.set())
        )
        worker.start()
        assert done.wait(5), "bootstrap waited on the lock for an image it already had"
        worker.join()


def test_a_waiter_takes_the_image_built_while_it_waited(tmp_path):
    import fcntl
    import threading

    spec = BaseImageSpec(cache_dir=tmp_path, registry="127.0.0.1:1")
    (tmp_path / "base").mkdir()
    engine = ExistingBaseEngine(spec)
    there = engine.info
    engine.info = dataclasses.replace(there, repo_digests=())  # imported, not yet pushed
    records = []
    with (tmp_path / "base" / "bootstrap.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        worker = threading.Thread(target=lambda: records.append(bootstrap(spec, engine=engine)))
        worker.start()
        worker.join(1.5)
        assert worker.is_alive()  # not pinned yet: it waits for the builder
        engine.info = there  # the builder pushed it
        worker.join(5)
    assert [r.pinned_ref for r in records] == [f"127.0.0.1:1/traj2env/base@{DIGEST}"]


def test_the_task_venv_folder_is_roots_and_the_project_folder_the_agents():
    # /opt/traj2env/venv/bin is first on every PATH, root's too: an agent that could write
    # there would have root run its `bash` in same-container grading.
    hooks = BaseImageSpec(cache_dir=Path("/nonexistent")).hooks()
    assert not any("chown" in h and "/opt/traj2env" in h for h in hooks), hooks
    assert any('mkdir -p "$1/opt/traj2env"' in h for h in hooks)
    assert any("chown agent:agent /app" in h for h in hooks)
