"""A task's environment/ with every kind of dependency: what the build context carries, the
Dockerfile that installs it offline, outside the project, and task.toml's account of it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from harbor.lint import LintRule, lint_task
from harbor.models.task.task import Task

from tasks_review.core.taskimage import TaskDependencies
from tasks_review.core.trials.crates import VendoredCrates, image_config
from tasks_review.core.trials.gomodules import GoModules
from tasks_review.core.trials.npmdeps import NodePackages

from .mining.test_repair import fixed_python_story
from .test_taskfiles import write

PUBLIC = "docker.io/library/node@sha256:" + "cd" * 32


def dependencies(root: Path) -> TaskDependencies:
    """One of each, in the shape the fetchers leave them in their host caches."""
    npm_cache = root / "npm"
    (npm_cache / "_cacache" / "index-v5" / "ab").mkdir(parents=True)
    (npm_cache / "_cacache" / "index-v5" / "ab" / "cd").write_text("index line\n")
    (npm_cache / "_cacache" / "content-v2").mkdir()
    (npm_cache / "_cacache" / "content-v2" / "blob").write_bytes(b"\x1f\x8b tarball")
    proxy = root / "proxy" / "example.com" / "greet" / "@v"
    proxy.mkdir(parents=True)
    for suffix in ("info", "mod", "zip"):
        (proxy / f"v1.0.0.{suffix}").write_bytes(suffix.encode())
    crate = root / "vendor" / "itoa-1.0.14"
    (crate / "src").mkdir(parents=True)
    (crate / "src" / "lib.rs").write_text("// itoa\n")
    (crate / ".cargo-checksum.json").write_text('{"files":{},"package":"x"}')
    (root / "vendor" / ".traj2env-config.toml").write_text("not a crate\n")
    return TaskDependencies(
        node=NodePackages(
            folder=".",
            package_json=b'{"dependencies": {"leftpad-x": "^1.0.0"}}',
            lock=b'{"lockfileVersion": 3}',
            cache=npm_cache,
            registry="https://someone:secret@npm.example/",
            packages=("leftpad-x 1.0.0",),
            resolved_before="2026-03-01T00:00:00Z",
            date_source="no package-lock.json: npm's --before=2026-03-01T00:00:00Z",
        ),
        go=GoModules(
            files={
                f"example.com/greet/@v/v1.0.0.{s}": proxy / f"v1.0.0.{s}" for s in ("mod", "zip")
            },
            modules=("example.com/greet v1.0.0",),
            source="GOPROXY=https://goproxy.example",
        ),
        crates=VendoredCrates(
            crates=("itoa 1.0.14",),
            vendor_dir=root / "vendor",
            # what `cargo vendor` prints, its folder the host's
            config=image_config(
                '[source.crates-io]\nreplace-with = "vendored-sources"\n\n'
                '[source.vendored-sources]\ndirectory = "/home/u/cache/vendor/1f2e"\n'
            ),
            source="sparse+https://index.crates.io/",
            resolved_before=None,
            date_source="Cargo.lock",
        ),
    )


def test_the_build_context_carries_each_ecosystems_dependencies_in_its_own_folder(tmp_path):
    mined = fixed_python_story().mine()
    deps = dependencies(tmp_path / "cache")
    task = write(tmp_path / "task", mined.only, mined.blobs, dependencies=deps)
    env = task / "environment"
    assert (env / "node/package-lock.json").read_bytes() == b'{"lockfileVersion": 3}'
    assert (env / "node/cache/_cacache/content-v2/blob").read_bytes() == b"\x1f\x8b tarball"
    assert sorted(p.name for p in (env / "goproxy/example.com/greet/@v").iterdir()) == [
        "v1.0.0.mod",
        "v1.0.0.zip",
    ]
    # The crates and Cargo's configuration are laid out from / (one COPY), not the marker file.
    assert (env / "crates/opt/traj2env/crates/itoa-1.0.14/src/lib.rs").is_file()
    assert not (env / "crates/opt/traj2env/crates/.traj2env-config.toml").exists()
    config = (env / "crates/.cargo/config.toml").read_text()
    assert "offline = true" in config and 'directory = "/opt/traj2env/crates"' in config

    dockerfile = (env / "Dockerfile").read_text()
    steps = [line.split()[0] for line in dockerfile.splitlines() if line and line[0] in "FRCAUE"]
    # npm needs root and one RUN; Go and Rust need no RUN; then the project, in one ADD.
    assert steps == ["FROM", "USER", "COPY", "RUN", "USER", "COPY", "ENV", "COPY", "ADD"]
    assert "npm ci --offline --ignore-scripts" in dockerfile
    assert "--registry=https://npm.example/" in dockerfile  # the credentials stay out
    assert "secret" not in dockerfile
    assert "ENV GOPROXY=file:///opt/traj2env/goproxy GOSUMDB=off" in dockerfile
    assert "COPY crates/ /" in dockerfile

    meta = tomllib.loads((task / "task.toml").read_text())["metadata"]["dependencies"]
    assert meta["npm"]["packages"] == ["leftpad-x 1.0.0"]
    assert meta["npm"]["registry"] == "https://npm.example/"
    assert meta["go"] == {
        "modules": ["example.com/greet v1.0.0"],
        "source": "GOPROXY=https://goproxy.example",
        "pinned_by": "go.sum",
        "proxy": "file:///opt/traj2env/goproxy",
    }
    assert meta["rust"]["pinned_by"] == "Cargo.lock"
    assert lint_task(task, selected_rules=set(LintRule)) == []
    Task(task)


def test_on_a_public_base_the_dependencies_come_before_the_agent_takes_over(tmp_path):
    mined = fixed_python_story().mine()
    deps = dependencies(tmp_path / "cache")
    task = write(
        tmp_path / "task",
        mined.only,
        mined.blobs,
        dependencies=deps,
        base_image=PUBLIC,
        public_base=True,
    )
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert (
        dockerfile.index("npm ci") < dockerfile.index("COPY crates/ /") < dockerfile.index("ADD ")
    )
    assert dockerfile.rstrip().endswith("USER agent")
    assert dockerfile.count("USER root") == 1
