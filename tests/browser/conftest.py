"""Playwright driving Debian's chromium against pytest-django's live server.

No browser is downloaded (the machines cannot): the tests use the system chromium and skip, saying
so, where it is absent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

SCREENSHOTS = Path(
    os.environ.get(
        "TRAJ2ENV_SCREENSHOTS", Path(__file__).resolve().parents[2] / "var" / "screenshots"
    )
)


def _chromium() -> str | None:
    explicit = os.environ.get("TRAJ2ENV_CHROMIUM")
    if explicit and Path(explicit).exists():
        return explicit
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser():
    executable = _chromium()
    if executable is None:
        pytest.skip(
            "no chromium on this machine (apt-get install chromium, or set TRAJ2ENV_CHROMIUM)"
        )
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API keeps an event loop on this thread; the ORM calls the tests make
    # between page actions are still plain synchronous calls.
    # Only while the browser lives: a process a later test starts must not inherit it.
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            yield browser
            browser.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    refused: list[str] = []  # the pages' own Content Security Policy must never bite
    page.on("console", lambda m: refused.append(m.text) if _refused(m.text) else None)
    yield page
    context.close()
    assert not refused, f"the page broke its Content Security Policy: {refused}"


@pytest.fixture
def login(page, people):
    def do(user) -> None:
        page.goto("/accounts/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", "pw-" + user.username)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)

    return do


@pytest.fixture
def screenshot(page):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


# sha-256 of nothing: an empty style="" that htmx's settle step copies from an element it swaps
# out (none of our markup has one) is refused with nothing lost.
_EMPTY_STYLE = "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="


def _refused(text: str) -> bool:
    return "Content Security Policy" in text and _EMPTY_STYLE not in text
