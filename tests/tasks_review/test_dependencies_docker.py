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

import socket
from pathlib import Path

import pytest

from tasks_review.models import PipelineRun, TrialRun
from tasks_review.services.images import base_image_ref
from tests.claude_code_log import Log
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


def rust_session(folder: Path) -> Path:
    """``cargo test`` fails (digits grouped from the left), the fix, then it passes."""
    log = Log(session_id="3c9d2b1e-7f4a-4e8b-9c6d-1a2b3c4d5e6f", cwd=RUST_CWD)
    log.user("grouped() puts the commas in the wrong places for 1234567. Fix it.")
    log.write("r1", "Cargo.toml", CARGO_TOML)
    log.write("r2", "src/lib.rs", GROUPED)
    log.write("r3", "tests/grouped.rs", GROUPED_TEST)
    log.bash("r4", "cargo test", CARGO_FAIL, exit_code=101)
    log.edit(
        "r5", "src/lib.rs", "if i > 0 && i % 3 == 0 {", "if i > 0 && (digits.len() - i) % 3 == 0 {"
    )
    log.bash("r6", "cargo test", CARGO_PASS)
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
