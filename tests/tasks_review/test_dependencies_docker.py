"""Sessions whose projects have dependencies, each kept end to end: ``generate`` over a small
synthetic Claude Code session, the dependencies fetched on the host as the user's own tools
fetch them, the image built with no network from what the task carries, the trial matrix run.

- Rust: a crate that depends on ``itoa`` from crates.io (the real registry, reached the way
  Cargo reaches it), with no Cargo.lock, so the crates are the newest published before the
  trajectory started; ``cargo test`` graded test by test.
- Go: a module that requires a module of the test's own, served by a ``file://`` GOPROXY that
  the test builds (the machine reaches no Go proxy), pinned by go.sum.
- npm: a package that depends on a package of the test's own, served by a registry on loopback
  that the project's .npmrc names, with a version published after the trajectory that
  ``--before`` leaves out.
"""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tasks_review.models import PipelineRun, TrialRun
from tasks_review.services.images import base_image_ref
from tests.claude_code_log import Log
from tests.tasks_review.core.trials.registries import go_proxy, npm_registry
from tests.tasks_review.kept import assert_kept, generate_over

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RUST_CWD = "/home/dev/digits"
CARGO_TOML = '[package]\nname = "digits"\nversion = "0.1.0"\nedition = "2021"\n\n'
CARGO_TOML += '[dependencies]\nitoa = "1"\n'
GROUPED = (
    "/// The number with a comma between each group of three digits, from the right.\n"
    "pub fn grouped(n: u64) -> String {\n"
    "    let mut buffer = itoa::Buffer::new();\n"
    "    let digits = buffer.format(n);\n"
    "    let mut out = String::new();\n"
    "    for (i, c) in digits.chars().enumerate() {\n"
    "        if i > 0 && i % 3 == 0 {\n"
    "            out.push(',');\n"
    "        }\n"
    "        out.push(c);\n"
    "    }\n"
    "    out\n"
    "}\n"
)
GROUPED_TEST = (
    "use digits::grouped;\n\n"
    "#[test]\nfn small_numbers_have_no_separator() {\n"
    '    assert_eq!(grouped(999), "999");\n}\n\n'
    "#[test]\nfn thousands_are_grouped_from_the_right() {\n"
    '    assert_eq!(grouped(1234567), "1,234,567");\n'
    '    assert_eq!(grouped(12345), "12,345");\n}\n\n'
    "#[test]\nfn zero_is_zero() {\n"
    '    assert_eq!(grouped(0), "0");\n}\n'
)
CARGO_FAIL = (
    "   Compiling itoa v1.0.14\n   Compiling digits v0.1.0 (/home/dev/digits)\n"
    "    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.02s\n"
    "     Running unittests src/lib.rs (target/debug/deps/digits-3f1c)\n\n"
    "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured\n\n"
    "     Running tests/grouped.rs (target/debug/deps/grouped-9a2e)\n\n"
    "running 3 tests\ntest small_numbers_have_no_separator ... ok\n"
    "test thousands_are_grouped_from_the_right ... FAILED\ntest zero_is_zero ... ok\n\n"
    "failures:\n\n---- thousands_are_grouped_from_the_right stdout ----\n"
    "thread 'thousands_are_grouped_from_the_right' panicked at tests/grouped.rs:10:5:\n"
    'assertion `left == right` failed\n  left: "123,456,7"\n right: "1,234,567"\n\n'
    "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n\n"
    "error: test failed, to rerun pass `--test grouped`"
)
CARGO_PASS = (
    "   Compiling digits v0.1.0 (/home/dev/digits)\n"
    "     Running tests/grouped.rs (target/debug/deps/grouped-9a2e)\n\n"
    "running 3 tests\ntest small_numbers_have_no_separator ... ok\n"
    "test thousands_are_grouped_from_the_right ... ok\ntest zero_is_zero ... ok\n\n"
    "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
)


def fail_fix_pass(
    log: Log, files: dict[str, str], check: tuple[str, str, str, int], fix: tuple[str, str, str]
) -> Log:
    """The session's shape: the files written, the check failing (``check``: the command, its
    failing and passing output, the failing exit status), the one edit, the check passing."""
    for n, (path, content) in enumerate(files.items()):
        log.write(f"w{n}", path, content)
    command, failing, passing, status = check
    log.bash("fail", command, failing, exit_code=status)
    log.edit("fix", *fix)
    return log.bash("pass", command, passing)


def rust_session(folder: Path) -> Path:
    """``cargo test`` fails (digits grouped from the left), the fix, then it passes."""
    log = Log(session_id="3c9d2b1e-7f4a-4e8b-9c6d-1a2b3c4d5e6f", cwd=RUST_CWD)
    log.user("grouped() puts the commas in the wrong places for 1234567. Fix it.")
    files = {"Cargo.toml": CARGO_TOML, "src/lib.rs": GROUPED, "tests/grouped.rs": GROUPED_TEST}
    fix = ("src/lib.rs", "if i > 0 && i % 3 == 0 {", "if i > 0 && (digits.len() - i) % 3 == 0 {")
    fail_fix_pass(log, files, ("cargo test", CARGO_FAIL, CARGO_PASS, 101), fix)
    log.say("Commas are now counted from the right; the tests pass.")
    return log.save(folder / "rust" / f"{log.session_id}.jsonl")


def _reachable(host: str) -> None:
    try:
        socket.create_connection((host, 443), timeout=5).close()
    except OSError as exc:
        pytest.skip(f"{host} is not reachable ({exc}): the crates cannot be fetched")


def test_a_rust_crate_with_a_crates_io_dependency_is_kept_end_to_end(
    docker_engine, tmp_path, settings, unique_run_ids
):
    _reachable("index.crates.io")
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "DEPENDENCY_CACHE_DIR": tmp_path / "deps"}
    sessions = tmp_path / "sessions"
    rust_session(sessions)
    rust = generate_over(sessions, tmp_path)[RUST_CWD]
    toml = assert_kept(rust)
    assert (rust.language, rust.runner, rust.payload["task_command"]) == (
        "rust",
        "cargo",
        "cargo test",
    )
    task = Path(rust.task_dir)
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert f"\nFROM {base_image_ref(['rust'])}\n" in dockerfile
    assert "COPY crates/ /" in dockerfile
    # itoa, as crates.io had it when the trajectory started (no Cargo.lock pinned it)
    crates = toml["metadata"]["dependencies"]["rust"]
    assert [c.split()[0] for c in crates["crates"]] == ["itoa"]
    assert crates["source"] == "sparse+https://index.crates.io/"
    assert crates["pinned_by"].startswith(
        "no Cargo.lock: the newest crates published before 2026-03-01"
    )
    assert (task / "environment/crates/.cargo/config.toml").is_file()
    # graded test by test, from libtest's own lines
    oracle = TrialRun.objects.filter(candidate=rust, role="oracle").first()
    (runner,) = oracle.detail["check"]["runners"]
    assert (runner["kind"], runner["tests"], runner["controls"]) == ("cargo-test", 3, 0)
    assert PipelineRun.objects.get().counts["kept"] == 1


# -- Go ------------------------------------------------------------------------------------------

GO_CWD = "/home/dev/welcome"
GREET = "example.com/greet"
GREET_FILES = {
    "go.mod": b"module example.com/greet\n\ngo 1.21\n",
    "greet.go": b"package greet\n\n// Hello greets one person.\n"
    b'func Hello(name string) string { return "hello, " + name }\n',
}
WELCOME = """package welcome

import (
\t"strings"

\t"example.com/greet"
)

// Welcome greets every name, one line each.
func Welcome(names []string) string {
\tlines := make([]string, 0, len(names))
\tfor _, name := range names {
\t\tlines = append(lines, greet.Hello(name))
\t}
\treturn strings.Join(lines, ", ")
}
"""
WELCOME_TEST = """package welcome

import "testing"

func TestWelcomeOne(t *testing.T) {
\tif got := Welcome([]string{"ada"}); got != "hello, ada" {
\t\tt.Fatalf("got %q", got)
\t}
}

func TestWelcomeTwoOnTwoLines(t *testing.T) {
\tif got := Welcome([]string{"ada", "bob"}); got != "hello, ada\\nhello, bob" {
\t\tt.Fatalf("got %q", got)
\t}
}
"""


def go_session(folder: Path, go_sum: str) -> Path:
    log = Log(session_id="8a1f3e5d-2c4b-4d6a-9e8f-7b6c5d4e3f2a", cwd=GO_CWD)
    log.user("Welcome should put each greeting on its own line.")
    go_mod = f"module example.com/welcome\n\ngo 1.21\n\nrequire {GREET} v1.0.0\n"
    files = {"go.mod": go_mod, "go.sum": go_sum, "welcome.go": WELCOME}
    failing = (
        "--- FAIL: TestWelcomeTwoOnTwoLines (0.00s)\n"
        '    welcome_test.go:13: got "hello, ada, hello, bob"\n'
        "FAIL\nFAIL\texample.com/welcome\t0.003s\nFAIL"
    )
    check = ("go test ./...", failing, "ok  \texample.com/welcome\t0.002s", 1)
    fix = ("welcome.go", 'strings.Join(lines, ", ")', 'strings.Join(lines, "\\n")')
    fail_fix_pass(log, {**files, "welcome_test.go": WELCOME_TEST}, check, fix)
    return log.save(folder / "go" / f"{log.session_id}.jsonl")


def test_a_go_module_whose_requirements_come_through_goproxy_is_kept_end_to_end(
    docker_engine, tmp_path, settings, unique_run_ids, monkeypatch
):
    proxy, go_sum = go_proxy(
        tmp_path / "proxy", GREET, "v1.0.0", GREET_FILES, "2025-06-01T00:00:00Z"
    )
    # The user's Go settings: their GOPROXY, here a file:// proxy (this machine reaches none).
    monkeypatch.setenv("GOPROXY", f"file://{proxy}")
    for name in ("GOPRIVATE", "GONOPROXY", "GOFLAGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOENV", str(tmp_path / "no-go-env"))
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "DEPENDENCY_CACHE_DIR": tmp_path / "deps"}
    go_session(tmp_path / "sessions", go_sum)
    go = generate_over(tmp_path / "sessions", tmp_path)[GO_CWD]
    toml = assert_kept(go)
    task = Path(go.task_dir)
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert f"\nFROM {base_image_ref(['go'])}\n" in dockerfile
    assert "ENV GOPROXY=file:///opt/traj2env/goproxy GOSUMDB=off" in dockerfile
    modules = toml["metadata"]["dependencies"]["go"]
    assert modules["modules"] == [f"{GREET} v1.0.0"]
    assert modules["source"] == f"GOPROXY=file://{proxy}"
    carried = sorted(p.name for p in (task / "environment/goproxy/example.com/greet/@v").iterdir())
    assert carried == ["v1.0.0.info", "v1.0.0.mod", "v1.0.0.zip"]
    oracle = TrialRun.objects.filter(candidate=go, role="oracle").first()
    assert [r["kind"] for r in oracle.detail["check"]["runners"]] == ["go-test"]


# -- npm -----------------------------------------------------------------------------------------

NODE_CWD = "/home/dev/column"
LEFTPAD = {
    "1.0.0": (datetime(2025, 3, 1, tzinfo=UTC), "module.exports = (s, n) => s.padStart(n);\n"),
    # published after the trajectory (2026-03-01): --before leaves it out, or the tests fail
    "1.1.0": (datetime(2026, 6, 1, tzinfo=UTC), "module.exports = () => 'too new';\n"),
}
COLUMN = """'use strict';

const pad = require('leftpad-x');

// Right-aligns each label to the widest one.
function column(labels) {
  const width = Math.max(...labels.map((label) => label.length));
  return labels.map((label) => pad(label, width - 1));
}

module.exports = { column };
"""
COLUMN_TEST = """'use strict';

const { test } = require('node:test');
const assert = require('node:assert');
const { column } = require('../column');

test('pads every label to the widest', () => {
  assert.deepStrictEqual(column(['a', 'bbb']), ['  a', 'bbb']);
});

test('a single label stays as it is', () => {
  assert.deepStrictEqual(column(['ab']), ['ab']);
});
"""


def node_session(folder: Path, registry: str) -> Path:
    log = Log(session_id="6d5c4b3a-2e1f-4a9b-8c7d-0e9f8a7b6c5d", cwd=NODE_CWD)
    log.user("column() leaves the short labels one space short. Fix it.")
    package = {
        "name": "column",
        "version": "1.0.0",
        "scripts": {"test": "node --test"},
        "dependencies": {"leftpad-x": "^1.0.0"},
    }
    files = {
        "package.json": json.dumps(package, indent=2) + "\n",
        ".npmrc": f"registry={registry}\n",
        "column.js": COLUMN,
        "test/column.test.js": COLUMN_TEST,
    }
    failing = (
        "> column@1.0.0 test\n> node --test\n\nnot ok 1 - pads every label to the widest\n"
        "ok 2 - a single label stays as it is\n# pass 1\n# fail 1"
    )
    passing = "> column@1.0.0 test\n> node --test\n\n# pass 2\n# fail 0"
    fix = ("column.js", "pad(label, width - 1)", "pad(label, width)")
    fail_fix_pass(log, files, ("npm test", failing, passing, 1), fix)
    return log.save(folder / "node" / f"{log.session_id}.jsonl")


def test_an_npm_package_from_the_projects_registry_before_the_trajectory_is_kept_end_to_end(
    docker_engine, tmp_path, settings, unique_run_ids
):
    settings.TRAJ2ENV = {**settings.TRAJ2ENV, "DEPENDENCY_CACHE_DIR": tmp_path / "deps"}
    with npm_registry({"leftpad-x": LEFTPAD}) as registry:
        node_session(tmp_path / "sessions", registry)
        node = generate_over(tmp_path / "sessions", tmp_path)[NODE_CWD]
    toml = assert_kept(node)
    task = Path(node.task_dir)
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert (
        "npm ci --offline" in dockerfile and "ln -s /opt/traj2env/node/node_modules" in dockerfile
    )
    packages = toml["metadata"]["dependencies"]["npm"]
    assert packages["packages"] == ["leftpad-x 1.0.0"]  # 1.1.0 came after the trajectory
    assert packages["registry"] == registry
    assert packages["pinned_by"].startswith("no package-lock.json: npm's --before=2026-03-01")
