"""The wheelhouse: requirements resolved by date into hash-checked wheels and a lock.

Tests using the ``pypi`` fixture talk to the real index (skipped when it is unreachable) and
share one resolution of "pytest" through a module-scoped fixture; the others fake uv and pip or
use no tool at all, and need no network.
"""

from __future__ import annotations

import glob
import hashlib
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tasks_review.core.trials import wheelhouse as wh_module
from tasks_review.core.trials.wheelhouse import (
    Wheelhouse,
    WheelhouseUnavailable,
    build_wheelhouse,
)
from tests.conftest import subprocess_env

BEFORE = datetime(2025, 6, 1, tzinfo=UTC)
UV = Path(sys.executable).parent / "uv"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lock_hashes(lock: str) -> dict[str, str]:
    return dict(re.findall(r"^(\S+==\S+) --hash=sha256:([0-9a-f]{64})$", lock, re.MULTILINE))


# --- the real index ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pypi() -> None:
    """Skip when the package index cannot be reached (probed once with uv, as the module does)."""
    uv = str(UV) if UV.is_file() else shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed next to the interpreter nor on PATH")
    try:
        probe = subprocess.run(
            [uv, "pip", "compile", "-", "--python-version", "3.11", "--no-header"],
            input="iniconfig\n",
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
        )
    except subprocess.TimeoutExpired:
        pytest.skip("PyPI unreachable: `uv pip compile iniconfig` timed out after 60 s")
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1].strip()
        pytest.skip(f"PyPI unreachable: `uv pip compile iniconfig` failed: {last}")


@pytest.fixture(scope="module")
def pytest_wheelhouse(pypi, tmp_path_factory) -> tuple[Wheelhouse, Path]:
    """One cold resolution of "pytest" before 2025-06-01, shared by the tests that only read it."""
    cache = tmp_path_factory.mktemp("wheel-cache")
    return build_wheelhouse(["pytest"], before=BEFORE, cache_dir=cache), cache


def test_pytest_before_june_2025_resolves_to_8_3_5_with_its_dependencies(pytest_wheelhouse):
    house, cache = pytest_wheelhouse
    pins = [line.split(" ")[0] for line in house.lock.splitlines()]
    assert pins == ["iniconfig==2.1.0", "packaging==25.0", "pluggy==1.6.0", "pytest==8.3.5"]
    assert house.resolved_before == BEFORE
    assert [p.name for p in house.wheels] == [
        "iniconfig-2.1.0-py3-none-any.whl",
        "packaging-25.0-py3-none-any.whl",
        "pluggy-1.6.0-py3-none-any.whl",
        "pytest-8.3.5-py3-none-any.whl",
    ]


def test_every_wheel_is_in_the_cache_and_matches_the_lock_hash(pytest_wheelhouse):
    house, cache = pytest_wheelhouse
    hashes = lock_hashes(house.lock)
    assert len(hashes) == len(house.wheels) == 4
    for pin, wheel in zip(sorted(hashes), house.wheels, strict=True):
        assert wheel.parent == cache
        assert wheel.is_file()
        assert sha256(wheel) == hashes[pin]


def test_a_second_call_offline_returns_the_same_lock_and_wheels(pytest_wheelhouse, monkeypatch):
    house, cache = pytest_wheelhouse

    def no_tools(*args, **kwargs):
        raise AssertionError("a cached wheelhouse must not run uv or pip")

    monkeypatch.setattr(wh_module, "run_tool", no_tools)
    again = build_wheelhouse(["pytest"], before=BEFORE, cache_dir=cache, offline=True)
    assert again == house
    # Online, a warm cache runs no tool either; the same instant in another zone is the same key.
    paris = BEFORE.astimezone(timezone(timedelta(hours=2)))
    assert build_wheelhouse([" pytest "], before=paris, cache_dir=cache) == house


def test_the_lock_and_wheels_install_offline_in_a_python_3_11_venv(pytest_wheelhouse, tmp_path):
    house, _ = pytest_wheelhouse
    found = sorted(glob.glob("/root/.pyenv/versions/3.11*/bin/python3"))
    python = found[-1] if found else shutil.which("python3.11")
    if python is None:
        pytest.skip("no Python 3.11 interpreter (the base image's) on this machine")
    context = tmp_path / "context"
    context.mkdir()
    for wheel in house.wheels:
        shutil.copy2(wheel, context)
    (context / "requirements.lock").write_text(house.lock)
    venv = tmp_path / "venv"
    env = subprocess_env()
    env.pop("PIP_FIND_LINKS", None)  # only the wheels in the context
    subprocess.run([python, "-m", "venv", str(venv)], check=True, env=env, timeout=120)
    install = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--no-index",
            "--find-links",
            str(context),
            "--require-hashes",
            "-r",
            str(context / "requirements.lock"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    version = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert version.returncode == 0
    assert "pytest 8.3.5" in version.stdout + version.stderr


def test_a_package_that_does_not_exist_is_unavailable_by_name(pypi, tmp_path):
    name = "traj2env-no-such-package-xyzzy"
    with pytest.raises(WheelhouseUnavailable, match=name) as caught:
        build_wheelhouse([name], before=BEFORE, cache_dir=tmp_path)
    assert "\n" not in str(caught.value)
    assert "not found" in str(caught.value)


def test_a_requirement_with_no_version_before_the_date_is_unavailable(pypi, tmp_path):
    with pytest.raises(WheelhouseUnavailable, match=r"pytest>=9.*only pytest<=8\.3\.5"):
        build_wheelhouse(["pytest>=9", "iniconfig"], before=BEFORE, cache_dir=tmp_path)


def test_an_sdist_only_package_is_unavailable(pypi, tmp_path):
    # docopt has never published a wheel: PyPI lists only docopt-0.1.tar.gz to
    # docopt-0.6.2.tar.gz (checked on the index's simple API, 2026-11-29).
    with pytest.raises(WheelhouseUnavailable, match=r"docopt.*no usable wheels"):
        build_wheelhouse(["docopt"], before=BEFORE, cache_dir=tmp_path)


def test_a_tampered_cached_wheel_is_downloaded_again_online(pytest_wheelhouse, tmp_path):
    house, cache = pytest_wheelhouse
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    (copy / "pytest-8.3.5-py3-none-any.whl").write_bytes(b"not the real wheel")
    again = build_wheelhouse(["pytest"], before=BEFORE, cache_dir=copy)
    assert again.lock == house.lock
    assert sha256(copy / "pytest-8.3.5-py3-none-any.whl") == sha256(house.wheels[-1])


def test_a_failing_download_reports_pips_last_line(pypi, tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    with pytest.raises(
        WheelhouseUnavailable, match=r"cannot download iniconfig==2\.1\.0"
    ) as caught:
        build_wheelhouse(["iniconfig"], before=BEFORE, cache_dir=tmp_path)
    assert "No matching distribution found for iniconfig==2.1.0" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None


# --- no network -------------------------------------------------------------------------------


def test_an_unreachable_index_is_unavailable_with_uvs_last_line(tmp_path, monkeypatch):
    if not UV.is_file() and shutil.which("uv") is None:
        pytest.skip("uv is not installed")
    monkeypatch.setenv("UV_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    with pytest.raises(WheelhouseUnavailable, match=r"cannot resolve iniconfig") as caught:
        build_wheelhouse(["iniconfig"], before=BEFORE, cache_dir=tmp_path, timeout=60)
    message = str(caught.value)
    assert "Connection refused" in message
    assert "\n" not in message and "Traceback" not in message
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert not (tmp_path / "locks").exists()  # a failure caches nothing


def test_no_requirements_is_an_empty_wheelhouse_without_running_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(wh_module, "run_tool", lambda *a, **k: pytest.fail("ran a tool"))
    house = build_wheelhouse(["", "  "], before=BEFORE, cache_dir=tmp_path / "cache")
    assert house == Wheelhouse(lock="", wheels=(), resolved_before=BEFORE)
    assert not (tmp_path / "cache").exists()


def test_a_naive_cutoff_is_refused(tmp_path):
    with pytest.raises(ValueError, match="timezone-aware"):
        build_wheelhouse(["pytest"], before=datetime(2025, 6, 1), cache_dir=tmp_path)


def test_options_and_urls_are_not_requirements(tmp_path, monkeypatch):
    monkeypatch.setattr(wh_module, "run_tool", lambda *a, **k: pytest.fail("ran a tool"))
    with pytest.raises(WheelhouseUnavailable, match=r"'--index-url http://x': not a PEP 508"):
        build_wheelhouse(["pytest", "--index-url http://x"], before=BEFORE, cache_dir=tmp_path)
    with pytest.raises(WheelhouseUnavailable, match=r"'demo @ https://x/demo.whl': a direct URL"):
        build_wheelhouse(["demo @ https://x/demo.whl"], before=BEFORE, cache_dir=tmp_path)


def test_offline_with_an_empty_cache_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(wh_module, "run_tool", lambda *a, **k: pytest.fail("offline ran a tool"))
    with pytest.raises(WheelhouseUnavailable, match=r"pytest: .*not in the offline cache"):
        build_wheelhouse(["pytest"], before=BEFORE, cache_dir=tmp_path, offline=True)


def test_without_uv_the_wheelhouse_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(WheelhouseUnavailable, match="uv is needed"):
        build_wheelhouse(["pytest"], before=BEFORE, cache_dir=tmp_path)


class FakeTools:
    """Stands in for uv and pip: resolves anything to demo==1.0 and downloads its one wheel."""

    WHEEL = "demo-1.0-py3-none-any.whl"
    BYTES = b"demo wheel bytes"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, argv, *, stdin, cwd, deadline):
        if argv[1:3] == ["pip", "compile"]:
            self.calls.append("uv")
            assert "--exclude-newer" in argv and "2025-06-01T00:00:00Z" in argv
            digest = hashlib.sha256(self.BYTES).hexdigest()
            other = "0" * 64  # another artifact of the release (an sdist, say)
            return (
                True,
                f"demo==1.0 \\\n    --hash=sha256:{digest} \\\n    --hash=sha256:{other}\n",
                "",
            )
        assert argv[1:4] == ["-m", "pip", "download"]
        self.calls.append("pip")
        target = Path(argv[argv.index("-d") + 1])
        (target / self.WHEEL).write_bytes(self.BYTES)
        return True, "", ""


def test_a_tampered_cached_wheel_is_refused_offline_and_replaced_online(tmp_path, monkeypatch):
    tools = FakeTools()
    monkeypatch.setattr(wh_module, "run_tool", tools)
    house = build_wheelhouse(["demo"], before=BEFORE, cache_dir=tmp_path)
    digest = hashlib.sha256(FakeTools.BYTES).hexdigest()
    assert house.lock == f"demo==1.0 --hash=sha256:{digest}\n"
    assert house.wheels == (tmp_path / FakeTools.WHEEL,)
    assert tools.calls == ["uv", "pip"]
    assert not list(tmp_path.glob(".download-*"))  # the scratch folder is gone

    (tmp_path / FakeTools.WHEEL).write_bytes(b"tampered")
    with pytest.raises(WheelhouseUnavailable, match=r"does not match the lock's sha256"):
        build_wheelhouse(["demo"], before=BEFORE, cache_dir=tmp_path, offline=True)
    assert tools.calls == ["uv", "pip"]  # offline ran nothing

    # Online, the bad file is downloaded again (the cached resolution is reused: no uv).
    assert build_wheelhouse(["demo"], before=BEFORE, cache_dir=tmp_path) == house
    assert tools.calls == ["uv", "pip", "pip"]
    assert (tmp_path / FakeTools.WHEEL).read_bytes() == FakeTools.BYTES


def test_offline_without_the_cached_wheel_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(wh_module, "run_tool", FakeTools())
    build_wheelhouse(["demo"], before=BEFORE, cache_dir=tmp_path)
    (tmp_path / FakeTools.WHEEL).unlink()
    with pytest.raises(WheelhouseUnavailable, match=r"demo==1\.0 .*not in the offline cache"):
        build_wheelhouse(["demo"], before=BEFORE, cache_dir=tmp_path, offline=True)


def test_a_download_whose_hash_is_not_in_the_resolution_is_refused(tmp_path, monkeypatch):
    tools = FakeTools()
    tools.BYTES = b"something else"  # pip "downloads" these bytes; uv resolved other hashes
    real = FakeTools()

    def run(argv, **kwargs):
        return (real if argv[1:3] == ["pip", "compile"] else tools)(argv, **kwargs)

    monkeypatch.setattr(wh_module, "run_tool", run)
    with pytest.raises(WheelhouseUnavailable, match=r"not one of the lock's hashes"):
        build_wheelhouse(["demo"], before=BEFORE, cache_dir=tmp_path)
    assert not (tmp_path / FakeTools.WHEEL).exists()


def test_conflicting_requirements_name_both_in_one_line(pypi, tmp_path):
    with pytest.raises(WheelhouseUnavailable, match=r"flask>=3, werkzeug<1 before") as caught:
        build_wheelhouse(["werkzeug<1", "flask>=3"], before=BEFORE, cache_dir=tmp_path)
    assert "And because you require flask>=3 and werkzeug<1" in str(caught.value)


def test_a_timeout_is_unavailable_naming_the_requirement(tmp_path, monkeypatch):
    if not UV.is_file() and shutil.which("uv") is None:
        pytest.skip("uv is not installed")
    with pytest.raises(WheelhouseUnavailable, match=r"cannot resolve iniconfig .*: timed out"):
        build_wheelhouse(["iniconfig"], before=BEFORE, cache_dir=tmp_path, timeout=0.001)
