"""Rust crates vendored on the host through the user's Cargo configuration, pinned by Cargo.lock
or by the trajectory's date, kept in a cache; what cannot be had names the source and why.

The registry here is a local directory source the user's configuration puts in place of
crates.io (what a mirror looks like to Cargo), so these tests need no network.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tasks_review.core.trials.crates import (
    CRATES_IO,
    IMAGE_VENDOR,
    CratesUnavailable,
    find_cargo,
    registry_source,
    vendor_crates,
)
from tasks_review.core.trials.deps import (
    CRATES,
    OfflineSources,
    declared_dependencies,
    unavailable,
)
from tasks_review.core.trials.fetching import Fetch

BEFORE = datetime(2026, 3, 1, tzinfo=UTC)
MANIFEST = b"""[package]
name = "app"
version = "0.1.0"
edition = "2021"

[dependencies]
tinydep = "0.1"
helper = { path = "helper" }

[dev-dependencies]
renamed = { package = "otherdep", version = "1", optional = true }
"""
HELPER = b'[package]\nname = "helper"\nversion = "0.1.0"\nedition = "2021"\n'


def project(**more: bytes) -> dict[str, bytes]:
    manifest = MANIFEST.replace(b"\n[dev-dependencies]\n", b"\n[x]\n")  # otherdep is not served
    return {
        "Cargo.toml": manifest,
        "src/lib.rs": b"pub fn f() -> u32 { tinydep::two() + helper::one() }\n",
        "helper/Cargo.toml": HELPER,
        "helper/src/lib.rs": b"pub fn one() -> u32 { 1 }\n",
        **more,
    }


def directory_source(root: Path) -> Path:
    """A directory source holding tinydep 0.1.0, as ``cargo vendor`` would lay it out."""
    crate = root / "tinydep-0.1.0"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_bytes(
        b'[package]\nname = "tinydep"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (crate / "src/lib.rs").write_bytes(b"pub fn two() -> u32 { 2 }\n")
    sums = {
        str(p.relative_to(crate)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in crate.rglob("*")
        if p.is_file()
    }
    (crate / ".cargo-checksum.json").write_text(json.dumps({"files": sums, "package": None}))
    return root


@pytest.fixture
def user(tmp_path):
    """The user's Cargo home: a configuration that replaces crates.io with a local mirror."""
    if find_cargo(os.environ) is None:
        pytest.skip("cargo is not installed")
    mirror = directory_source(tmp_path / "mirror")
    home = tmp_path / "user-cargo"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[source.crates-io]\nreplace-with = "mirror"\n\n[source.mirror]\ndirectory = "{mirror}"\n'
    )
    return {**os.environ, "CARGO_HOME": str(home)}, mirror


def test_crates_are_vendored_through_the_users_source_as_of_the_trajectorys_date(user, tmp_path):
    environ, mirror = user
    got = vendor_crates(project(), ".", Fetch(BEFORE, tmp_path / "c", environ=environ))
    assert got is not None
    assert got.crates == ("tinydep 0.1.0",)  # the path dependency is the project's own
    assert got.source == str(mirror)
    assert (got.resolved_before, got.date_source) == (
        "2026-03-01T00:00:00Z",
        "no Cargo.lock: the newest crates published before 2026-03-01T00:00:00Z",
    )
    assert (got.vendor_dir / "tinydep-0.1.0" / ".cargo-checksum.json").is_file()
    # What the image reads: Cargo offline, crates.io replaced by the folder the crates go to.
    assert "[net]\noffline = true\n" in got.config
    assert 'replace-with = "vendored-sources"' in got.config
    assert f'directory = "{IMAGE_VENDOR}"' in got.config
    # A warm call runs no Cargo: offline, with no Cargo on PATH, it is the same folder.
    bare = {**environ, "PATH": "", "HOME": str(tmp_path)}
    again = vendor_crates(project(), ".", Fetch(BEFORE, tmp_path / "c", True, bare))
    assert again == got


def test_a_projects_cargo_lock_pins_the_crates(user, tmp_path):
    environ, _ = user
    first = vendor_crates(project(), ".", Fetch(BEFORE, tmp_path / "c", environ=environ))
    assert first is not None
    lock = next((tmp_path / "c" / "locks").iterdir()).read_bytes()
    locked = project(**{"Cargo.lock": lock})
    got = vendor_crates(locked, "src", Fetch(BEFORE, tmp_path / "d", environ=environ))
    assert got is not None
    assert (got.crates, got.date_source, got.resolved_before) == (
        ("tinydep 0.1.0",),
        "Cargo.lock",
        None,
    )
    # A lock the manifests have moved away from is refused, as --locked refuses it.
    stale = project(**{"Cargo.lock": lock.replace(b'"tinydep",\n', b"")})
    with pytest.raises(CratesUnavailable, match="cargo vendor failed") as caught:
        vendor_crates(stale, ".", Fetch(BEFORE, tmp_path / "e", environ=environ))
    assert caught.value.source == str(_mirror(environ))


def _mirror(environ) -> Path:
    return Path(environ["CARGO_HOME"]).parent / "mirror"


def test_an_unreachable_registry_is_named_with_cargos_error(tmp_path):
    if find_cargo(os.environ) is None:
        pytest.skip("cargo is not installed")
    home = tmp_path / "user-cargo"
    home.mkdir()
    (home / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "down"\n\n'
        '[source.down]\nregistry = "sparse+http://127.0.0.1:9/index/"\n'
    )
    environ = {**os.environ, "CARGO_HOME": str(home), "CARGO_NET_RETRY": "0"}
    with pytest.raises(CratesUnavailable) as caught:
        vendor_crates(project(), ".", Fetch(BEFORE, tmp_path / "c", environ=environ))
    assert caught.value.source == "sparse+http://127.0.0.1:9/index/"
    assert "cargo generate-lockfile failed" in caught.value.why
    assert str(caught.value).startswith("Rust crates from sparse+http://127.0.0.1:9/index/: ")


def test_without_cargo_or_offline_with_a_cold_cache_the_reason_says_so(tmp_path):
    bare = {"PATH": "", "HOME": str(tmp_path)}
    with pytest.raises(CratesUnavailable, match="cargo is not installed on this machine"):
        vendor_crates(project(), ".", Fetch(BEFORE, tmp_path, environ=bare))
    with pytest.raises(CratesUnavailable, match="offline, and the cache") as caught:
        vendor_crates(project(), ".", Fetch(BEFORE, tmp_path, environ=bare, offline=True))
    assert caught.value.source == CRATES_IO


def test_crates_with_only_path_dependencies_or_no_manifest_need_nothing(tmp_path):
    path_only = {"Cargo.toml": HELPER + b"[dependencies]\nh = { path = 'h' }\n"}
    for files in (path_only, {"src/main.rs": b"fn main() {}\n"}):
        assert vendor_crates(files, ".", Fetch(BEFORE, tmp_path)) is None


def test_the_registry_is_crates_io_unless_the_users_config_replaces_it():
    assert registry_source("", {}) == CRATES_IO
    mirror = '[source.crates-io]\nreplace-with = "m"\n[source.m]\nregistry = "sparse+https://m/"\n'
    assert registry_source(mirror, {}) == "sparse+https://m/"
    chained = (
        '[source.crates-io]\nreplace-with = "a"\n[source.a]\nreplace-with = "b"\n'
        '[source.b]\nlocal-registry = "/srv/crates"\n'
    )
    assert registry_source(chained, {}) == "/srv/crates"
    environ = {
        "CARGO_SOURCE_CRATES_IO_REPLACE_WITH": "env-mirror",
        "CARGO_SOURCE_ENV_MIRROR_REGISTRY": "sparse+https://env/",
    }
    assert registry_source("", environ) == "sparse+https://env/"
    assert registry_source("", {"CARGO_REGISTRIES_CRATES_IO_PROTOCOL": "git"}).startswith(
        "https://github.com/rust-lang/crates.io-index"
    )


def test_cargo_dependencies_are_declared_and_looked_up_in_the_vendored_crates(tmp_path):
    found = {
        (d.ecosystem, d.name, d.spec, d.optional)
        for d in declared_dependencies(
            {"Cargo.toml": MANIFEST + b'\n[target.x.dependencies]\ng = { git = "https://g/x" }\n'}
        )
    }
    assert found == {
        (CRATES, "tinydep", "0.1", False),
        (CRATES, "otherdep", "1", True),
        (CRATES, "g", "git https://g/x", False),
    }
    vendored = tmp_path / "crates"
    (vendored / "tinydep-0.1.0").mkdir(parents=True)
    deps = declared_dependencies({"Cargo.toml": MANIFEST})
    assert unavailable(deps, OfflineSources(crates=vendored)) == []
    why = dict((d.name, w) for d, w in unavailable(deps, OfflineSources()))
    assert why == {"tinydep": "the task carries no vendored crates"}
