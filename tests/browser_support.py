"""Headless Chromium for browser tests: one Selenium session per test session.

The ``browser`` fixture (:func:`browser_fixture`) starts the system Chromium (Debian packages ``chromium`` and
``chromium-driver``; ``.ci/run`` installs them when missing) through Selenium, headless,
in a fresh profile under a temp dir. When Selenium, the browser or the driver is missing
it calls ``pytest.skip`` with the reason and the install line, so a machine without them
skips rather than fails. ``OPINIO_CHROMIUM`` / ``OPINIO_CHROMEDRIVER`` point it at other
binaries; ``OPINIO_REQUIRE_BROWSER=1`` turns the skip into a failure (for CI that must run them).

:class:`Browser` wraps the driver with what page tests need: waiting for an element or a
condition, collecting the browser console's errors (uncaught exceptions, ``console.error``,
failed loads), and saving screenshots into the session's screenshot dir (its path is
kept in :attr:`Browser.screenshot_dir`; ``OPINIO_SCREENSHOT_DIR=DIR`` keeps them in ``DIR`` instead, since
pytest prunes old temp dirs).

Use it from a test module (or a conftest) by importing the fixture, which is named ``browser``::

    from tests.browser_support import Browser, browser_fixture  # noqa: F401  (provides `browser`)

    @pytest.mark.slow
    def test_page(browser: Browser) -> None:
        browser.get("http://127.0.0.1:8000/")
        browser.wait_css("#entity")
        browser.screenshot("loaded")
        assert browser.console_errors() == []

Example:
    >>> find_chromedriver() is None or Path(find_chromedriver()).name.startswith("chromedriver")
    True
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "Browser",
    "browser_fixture",
    "find_chromium",
    "find_chromedriver",
    "missing_reason",
    "INSTALL_HINT",
]

#: How to get what the browser tests need on Debian/Ubuntu.
INSTALL_HINT = "apt-get install -y chromium chromium-driver && pip install selenium"

_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_DRIVER_PATHS = ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver", "/usr/lib/chromium-browser/chromedriver")


def find_chromium() -> str | None:
    """The Chromium (or Chrome) binary to drive: ``$OPINIO_CHROMIUM`` or the first on ``PATH``."""
    override = os.environ.get("OPINIO_CHROMIUM")
    if override:
        return override if Path(override).is_file() else None
    for name in _CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def find_chromedriver() -> str | None:
    """The chromedriver binary: ``$OPINIO_CHROMEDRIVER``, ``chromedriver`` on ``PATH`` or Debian's path."""
    override = os.environ.get("OPINIO_CHROMEDRIVER")
    if override:
        return override if Path(override).is_file() else None
    found = shutil.which("chromedriver")
    if found:
        return found
    return next((path for path in _DRIVER_PATHS if Path(path).is_file()), None)


def missing_reason() -> str | None:
    """Why no browser test can run here (``None`` when Selenium, Chromium and chromedriver are all present)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return f"selenium is not installed ({INSTALL_HINT})"
    if find_chromium() is None:
        return f"no chromium binary on PATH (or $OPINIO_CHROMIUM) ({INSTALL_HINT})"
    if find_chromedriver() is None:
        return f"no chromedriver on PATH (or $OPINIO_CHROMEDRIVER) ({INSTALL_HINT})"
    return None


@dataclass
class Browser:
    """A headless Chromium session with console-error collection and screenshots.

    Attributes:
        driver: The Selenium ``WebDriver`` (use it directly for anything not wrapped here).
        screenshot_dir: Where :meth:`screenshot` writes PNG files.
        timeout: Default seconds :meth:`wait_css` and :meth:`wait_until` wait.
    """

    driver: Any
    screenshot_dir: Path
    timeout: float = 10.0
    _console: list[dict[str, Any]] = field(default_factory=list)

    def get(self, url: str) -> None:
        """Open ``url`` (the console log is drained first, so errors are attributed to this page)."""
        self._drain()
        self.driver.get(url)

    def wait_css(self, selector: str, *, visible: bool = True, timeout: float | None = None) -> Any:
        """The first element matching ``selector`` once present (and displayed, when ``visible``)."""

        def found() -> Any:
            for element in self.driver.find_elements("css selector", selector):
                if not visible or element.is_displayed():
                    return element
            return None

        return self.wait_until(found, f"an element matching {selector!r}", timeout=timeout)

    def wait_until(self, condition: Callable[[], Any], what: str, *, timeout: float | None = None) -> Any:
        """Poll ``condition`` until it returns something truthy; fail with ``what`` and a screenshot otherwise."""
        from selenium.common.exceptions import StaleElementReferenceException

        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                value = condition()
            except StaleElementReferenceException:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                shot = self.screenshot("timeout")
                errors = self.console_errors()
                pytest.fail(f"timed out waiting for {what} (screenshot {shot}; console errors: {errors})")
            time.sleep(0.05)

    def screenshot(self, name: str, *, full_page: bool = False) -> Path:
        """Save a PNG as ``<screenshot_dir>/<name>.png`` and return its path.

        Args:
            name: File stem (anything but letters, digits, ``-`` and ``_`` becomes ``_``).
            full_page: The whole scrollable page (through the DevTools protocol), not just the viewport.
        """
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name) or "page"
        path = self.screenshot_dir / f"{safe}.png"
        if full_page:
            import base64

            size = self.driver.execute_script(
                "const d = document.documentElement; return [d.scrollWidth, d.scrollHeight];"
            )
            shot = self.driver.execute_cdp_cmd(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1},
                },
            )
            path.write_bytes(base64.b64decode(shot["data"]))
        else:
            self.driver.save_screenshot(str(path))
        return path

    def console_errors(self) -> list[dict[str, Any]]:
        """Console entries of level SEVERE seen so far (uncaught errors, ``console.error``, failed loads)."""
        self._drain()
        return [entry for entry in self._console if entry.get("level") == "SEVERE"]

    def console(self) -> list[dict[str, Any]]:
        """Every console entry seen so far (each a dict with ``level``, ``message``, ``source``)."""
        self._drain()
        return list(self._console)

    def clear_console(self) -> None:
        """Forget the console entries collected so far."""
        self._drain()
        self._console.clear()

    def _drain(self) -> None:
        try:
            self._console.extend(self.driver.get_log("browser"))
        except Exception:  # a driver without the log endpoint: nothing to collect
            pass


def _start_driver(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = find_chromium() or ""
    for arg in (
        "--headless=new",
        "--no-sandbox",  # CI containers run as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--disable-extensions",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=find_chromedriver())
    return webdriver.Chrome(options=options, service=service)


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("OPINIO_REQUIRE_BROWSER") == "1":
        pytest.fail(f"OPINIO_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session", name="browser")
def browser_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium for the whole session (skips with the reason when it cannot start)."""
    reason = missing_reason()
    if reason:
        _skip_or_fail(reason)
    base = tmp_path_factory.mktemp("browser")
    shots = Path(os.environ.get("OPINIO_SCREENSHOT_DIR") or base / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    try:
        driver = _start_driver(base / "profile")
    except Exception as exc:  # e.g. a driver/browser version mismatch: say so instead of erroring
        first = (str(exc).splitlines() or [""])[0][:300]
        _skip_or_fail(f"headless chromium did not start: {type(exc).__name__}: {first}")
    driver.set_page_load_timeout(30)
    session = Browser(driver=driver, screenshot_dir=shots)
    try:
        yield session
    finally:
        driver.quit()
