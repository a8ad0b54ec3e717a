"""The browser for the web-face tests: the system's Chromium driven by Playwright (its own
browser download is not reachable here), one per test module. `make test` installs the
`web` and `test` extras and .ci/run installs chromium, so in CI these run, never skip."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.support.web_face import CHROMIUM, Screen

MISSING = [
    name for name in ("playwright", "textual_serve") if importlib.util.find_spec(name) is None
]


def _skip_reason() -> str | None:
    if MISSING:
        return f"{', '.join(MISSING)} not installed (pip install -e '.[web,test]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} missing (apt-get install chromium; .ci/run does it)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def open_screen(browser):
    """Opens a page (its own browser context: cookies are not shared) on a URL."""
    contexts = []

    def open_(url: str, width: int = 1200, height: int = 700) -> Screen:
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        return Screen(context.new_page()).open(url)

    yield open_
    for context in contexts:
        context.close()
