"""The headless-Chromium fixture itself: it renders a page, collects console errors, saves screenshots."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.browser_support import Browser, browser_fixture, missing_reason  # noqa: F401  (provides `browser`)

pytestmark = pytest.mark.slow

_PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>probe</title>
<link rel="icon" href="data:,"></head><body><p id="hello">hello</p>
<button id="boom" onclick="console.error('probe-error-42')">boom</button></body></html>"""


@pytest.fixture(scope="module")
def probe_url() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(_PAGE)))
            self.end_headers()
            self.wfile.write(_PAGE)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_browser_renders_collects_console_errors_and_screenshots(browser: Browser, probe_url: str) -> None:
    browser.get(probe_url)
    assert browser.wait_css("#hello").text == "hello"
    browser.clear_console()
    assert browser.console_errors() == []
    browser.wait_css("#boom").click()
    errors = browser.wait_until(browser.console_errors, "the console.error to be collected")
    assert any("probe-error-42" in entry["message"] for entry in errors)
    shot = browser.screenshot("probe page")
    assert shot.parent == browser.screenshot_dir and shot.name == "probe_page.png"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_reason_names_the_install_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("OPINIO_CHROMIUM", str(tmp_path / "no-such-chromium"))
    reason = missing_reason()
    assert reason is not None and "apt-get install -y chromium chromium-driver" in reason
