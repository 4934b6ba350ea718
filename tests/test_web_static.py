"""The web page's static files, checked without a browser (fast tier).

The browser test (tests/test_browser_page.py) proves that hostile review text renders as text;
these checks keep the page's sources from drifting into what would break that or the offline
promise: no HTML sinks in the script, nothing loaded from another site, relative URLs only (the
app may be mounted under a prefix), a Content-Security-Policy without inline script, and every
file shipped as package data.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[1] / "opinio_agents" / "serve" / "static"
ROOT = STATIC.parents[2]


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.inline_scripts = 0
        self.inline_styles = 0
        self.handlers: list[str] = []
        self.csp = ""
        self.labels: set[str] = set()
        self.controls: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.refs += [values[k] for k in ("src", "href") if k in values]
        self.handlers += [k for k in values if k.startswith("on")]
        if "style" in values:
            self.inline_styles += 1
        if tag == "style":
            self.inline_styles += 1
        if tag == "script":
            self._in_script = "src" not in values
        if tag == "meta" and values.get("http-equiv", "").lower() == "content-security-policy":
            self.csp = values.get("content", "")
        if tag == "label" and "for" in values:
            self.labels.add(values["for"])
        if tag in ("input", "select", "textarea"):
            self.controls.append(values.get("id", ""))

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


@pytest.fixture(scope="module")
def page() -> _Refs:
    parser = _Refs()
    parser.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    return parser


def test_script_has_no_html_sinks() -> None:
    source = (STATIC / "app.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                 "setAttribute(\"style\"", "createContextualFragment"):
        assert sink not in source, f"app.js uses {sink}: render untrusted text with textContent / text nodes"
    # Attributes set from data never include event handlers or URLs.
    assert not re.search(r"setAttribute\(\s*[\"'](on\w+|href|src)[\"']", source)


def test_nothing_is_loaded_from_elsewhere_and_urls_are_relative(page: _Refs) -> None:
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), f"{path.name} names another site"
        if path.suffix == ".css":
            assert "@import" not in text and "url(" not in text, path.name
    assert page.refs and all(not ref.startswith(("/", "//")) and ":" not in ref for ref in page.refs), page.refs
    assert {"static/app.js", "static/style.css", "static/favicon.svg"} <= set(page.refs)
    for ref in page.refs:
        if ref.startswith("static/"):
            assert (STATIC / ref.removeprefix("static/")).is_file(), ref
    script = (STATIC / "app.js").read_text(encoding="utf-8")
    for call in re.findall(r"(?:getJSON|request)\(\s*[\"'`]([^\"'`$]+)", script):
        assert not call.startswith("/"), f"absolute API path {call!r}: the page must work under a mount prefix"


def test_csp_forbids_inline_script_and_the_page_has_none(page: _Refs) -> None:
    directives = {part.split()[0]: part.split()[1:] for part in page.csp.split(";") if part.strip()}
    assert directives["script-src"] == ["'self'"] and directives["object-src"] == ["'none'"]
    assert directives["connect-src"] == ["'self'"] and "'unsafe-inline'" not in page.csp
    assert page.inline_scripts == 0 and page.inline_styles == 0 and page.handlers == []


def test_every_form_control_has_a_label(page: _Refs) -> None:
    assert page.controls and all(control in page.labels for control in page.controls), (page.controls, page.labels)


def test_static_files_are_package_data() -> None:
    tomllib = pytest.importorskip("tomllib", reason="Python < 3.11 has no tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["opinio_agents"]
    for path in STATIC.iterdir():
        rel = path.relative_to(ROOT / "opinio_agents").as_posix()
        assert any(Path(rel).match(pattern) for pattern in patterns), f"{rel} is not shipped (package-data)"
