"""Go modules fetched on the host through the user's GOPROXY, pinned by go.sum, kept in a proxy
folder of their own; what cannot be fetched says which source and why."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime

import pytest

from tasks_review.core.trials.fetching import Fetch
from tasks_review.core.trials.gomodules import (
    GoModulesUnavailable,
    GoSettings,
    escape,
    fetch_go_modules,
    h1_hash,
    mod_hash,
    zip_hash,
)

from .registries import go_module_zip, go_proxy

GREET = "example.com/Greet"
GREET_FILES = {
    "go.mod": b"module example.com/Greet\n\ngo 1.21\n",
    "greet.go": b'package greet\n\nfunc Hello(name string) string { return "hello, " + name }\n',
}
PUBLISHED = "2025-01-01T00:00:00Z"
NOW = datetime(2026, 3, 1, tzinfo=UTC)  # go.sum pins the modules: the date plays no part


def fetch(files, cache, settings, offline=False):
    return fetch_go_modules(files, ".", Fetch(NOW, cache, offline), settings)


def project(go_sum: str, requires: str = f"require {GREET} v1.0.0\n") -> dict[str, bytes]:
    return {
        "go.mod": f"module example.com/app\n\ngo 1.21\n\n{requires}".encode(),
        "go.sum": go_sum.encode(),
        "main.go": b"package main\n",
    }


@pytest.fixture
def proxy(tmp_path):
    return go_proxy(tmp_path / "upstream", GREET, "v1.0.0", GREET_FILES, PUBLISHED)


def test_go_hashes_are_gos_own_dirhash():
    # A real go.sum line: go-spew v1.1.1 has no go.mod, so the proxy serves one line of its own.
    assert (
        mod_hash(b"module github.com/davecgh/go-spew\n")
        == "h1:J7Y8YcW2NihsgmVo/mv3lAwl/skON4iLHjSsI+c5H38="
    )
    # dirhash's own test (TestHash1): a line per file, "<sha256>  <name>", by file name
    files = [("xyz", b"data for xyz"), ("abc", b"data for abc")]
    lines = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in sorted(files))
    assert (
        h1_hash(files) == "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()
    )
    archive = go_module_zip("m", "v1", {"b": b"2", "a": b"1"})
    assert zip_hash(archive) == h1_hash([("m@v1/a", b"1"), ("m@v1/b", b"2")])
    assert escape("github.com/BurntSushi/toml") == "github.com/!burnt!sushi/toml"


def test_modules_come_through_a_file_proxy_into_a_proxy_folder_of_the_cache(proxy, tmp_path):
    folder, go_sum = proxy
    settings = GoSettings(proxy=f"file://{folder}")
    got = fetch(project(go_sum), tmp_path / "cache", settings)
    assert got is not None
    assert got.modules == (f"{GREET} v1.0.0",)
    assert got.source == f"GOPROXY=file://{folder}"
    base = "example.com/!greet/@v/v1.0.0"
    assert set(got.files) == {f"{base}.info", f"{base}.mod", f"{base}.zip"}
    for rel, path in got.files.items():  # the cache is itself a proxy folder
        assert path == tmp_path / "cache" / "proxy" / rel
        assert path.read_bytes() == (folder / rel).read_bytes()
    assert json.loads(got.files[f"{base}.info"].read_bytes())["Version"] == "v1.0.0"
    # Offline, the cache alone serves it; the source need not exist any more.
    again = fetch(
        project(go_sum), tmp_path / "cache", GoSettings("https://unreachable.invalid"), True
    )
    assert again is not None and again.files == got.files


def test_a_module_whose_bytes_differ_from_go_sum_is_refused(proxy, tmp_path):
    folder, go_sum = proxy
    zip_path = folder / "example.com/!greet/@v/v1.0.0.zip"
    zip_path.write_bytes(go_module_zip(GREET, "v1.0.0", {**GREET_FILES, "evil.go": b"package x"}))
    with pytest.raises(GoModulesUnavailable, match="does not match go.sum") as caught:
        fetch(project(go_sum), tmp_path / "c", GoSettings(f"file://{folder}"))
    assert caught.value.source == f"GOPROXY=file://{folder}"


def test_requirements_go_sum_does_not_pin_are_unavailable_as_go_would_say(tmp_path):
    with pytest.raises(GoModulesUnavailable, match=r"go.sum does not pin example.com/Greet v1"):
        fetch(project(""), tmp_path, GoSettings())


def test_an_unreachable_proxy_is_named_with_the_error(proxy, tmp_path):
    _, go_sum = proxy
    settings = GoSettings(proxy="http://127.0.0.1:9,direct")
    with pytest.raises(GoModulesUnavailable) as caught:
        fetch(project(go_sum), tmp_path, settings)
    assert caught.value.source == "GOPROXY=http://127.0.0.1:9,direct"
    # "," goes on only after a not-found: a proxy that cannot be reached stops the list there
    assert "http://127.0.0.1:9: not reachable" in caught.value.why
    assert "direct" not in caught.value.why


def test_a_pipe_goes_on_after_any_error_and_a_comma_after_not_found(proxy, tmp_path):
    folder, go_sum = proxy
    empty = tmp_path / "empty"
    empty.mkdir()
    for listing in (f"http://127.0.0.1:9|file://{folder}", f"file://{empty},file://{folder}"):
        got = fetch(project(go_sum), tmp_path / listing[-8:], GoSettings(listing))
        assert got is not None and got.modules == (f"{GREET} v1.0.0",)
    with pytest.raises(GoModulesUnavailable, match="version control"):
        fetch(project(go_sum), tmp_path / "d", GoSettings(f"file://{empty},direct"))
    with pytest.raises(GoModulesUnavailable, match="GOPROXY=off"):
        fetch(project(go_sum), tmp_path / "o", GoSettings("off"))


def test_goprivate_modules_go_to_their_version_control_which_is_not_fetched(proxy, tmp_path):
    folder, go_sum = proxy
    settings = GoSettings(proxy=f"file://{folder}", private="example.com/*")
    with pytest.raises(GoModulesUnavailable, match="GOPRIVATE") as caught:
        fetch(project(go_sum), tmp_path, settings)
    assert caught.value.source == f"the version control of {GREET}"


def test_vendored_replaced_and_requirement_free_modules_need_nothing(tmp_path):
    settings = GoSettings(proxy="off")
    cases = [
        {**project(""), "vendor/modules.txt": b"# example.com/Greet v1.0.0\n"},
        project("", f"require {GREET} v1.0.0\nreplace {GREET} => ./greet\n"),
        project("", ""),
        {"main.go": b"package main\n"},  # no go.mod at all
    ]
    for files in cases:
        assert fetch(files, tmp_path, settings) is None
    vendoring = GoSettings(proxy="off", flags="-mod=vendor -tags=x")
    assert fetch(project(""), tmp_path, vendoring) is None


def test_the_users_settings_come_from_the_environment_then_go_env_w(tmp_path):
    env_file = tmp_path / "go" / "env"
    env_file.parent.mkdir()
    env_file.write_text("GOPROXY=https://goproxy.example,direct\nGOPRIVATE=corp.example\n")
    saved = GoSettings.from_user({"XDG_CONFIG_HOME": str(tmp_path)})
    assert (saved.proxy, saved.private) == ("https://goproxy.example,direct", "corp.example")
    over = GoSettings.from_user({"XDG_CONFIG_HOME": str(tmp_path), "GOPROXY": "file:///p"})
    assert over.proxy == "file:///p"
    assert GoSettings.from_user({"GOENV": str(tmp_path / "none")}).proxy == (
        "https://proxy.golang.org,direct"
    )
