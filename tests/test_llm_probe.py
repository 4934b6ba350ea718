"""The LLM and injection sections of the reliability probe, quick subset: every row must be ``ok``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain_openai")

REPO = Path(__file__).resolve().parents[1]


def _section(name: str):  # type: ignore[no-untyped-def]
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # scripts/ is imported as a namespace package from the repository root
    return importlib.import_module(f"scripts.probe.{name}")


@pytest.mark.slow  # the probe sections end to end: a loopback server and the real pipeline
@pytest.mark.parametrize("name", ["llm", "injection"])
def test_quick_probe_section_is_all_ok(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-only")
    rows = _section(name).run(tmp_path, quick=True)
    assert rows and {row.section for row in rows} == {name}
    bad = [(row.case, row.outcome, row.detail) for row in rows if row.outcome != "ok"]
    assert bad == []
    if name == "injection":
        assert sum(row.case.startswith("review x") for row in rows) >= 24


def test_the_probe_reports_a_broken_defence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the screen off the injection section must report injected claims (it can fail)."""
    from opinio_agents.pipeline import HighlightPipeline

    monkeypatch.setattr(HighlightPipeline, "_screen", lambda self, query, hits, flagged, screen: hits)
    from opinio_agents.chains.highlight import HighlightChain

    monkeypatch.setattr(HighlightChain, "screen", lambda self, item: (item, {}))
    rows = _section("injection").run(tmp_path, quick=True)
    assert sum(row.outcome == "injected" for row in rows) >= 5
