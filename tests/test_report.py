"""``opinio report``: one self-contained HTML page; hostile text stays text; charts and evidence links in Chromium."""

from __future__ import annotations

import datetime as dt
import html.parser
import os
import shutil
from pathlib import Path

import pytest

from opinio_agents.models import (
    Alert,
    Evidence,
    Highlight,
    HighlightSet,
    Polarity,
    Support,
    Trend,
    TrendPoint,
    Verification,
)
from tests.browser_support import Browser, browser_fixture  # noqa: F401  (provides `browser`)

pytest.importorskip("matplotlib", reason="the report's charts need matplotlib (pip install 'opinio-agents[report]')")

HOSTILE = '</q><script>alert("x")</script><img src="http://example.com/x.png" onerror="alert(1)"> $\\alpha$ & co'


class _Page(html.parser.HTMLParser):
    """Tags, ids, links and resource attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.resources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and "evidence-link" in (values.get("class") or ""):
            self.links.append(str(values.get("href")))
        for name in ("src", "srcset", "href", "xlink:href"):
            value = values.get(name)
            if value and not value.startswith("#"):  # in-page references (#ev-1, SVG defs) load nothing
                self.resources.append(f"{tag}.{name}={value}")


def _result() -> HighlightSet:
    trend = Trend(
        granularity="year",
        points=[
            TrendPoint(period="2019", mentions=10, share=0.5, positive=2, negative=8),
            TrendPoint(period="2020", mentions=12, share=0.4, positive=10, negative=1),
        ],
        label="improving",
        test="Mann-Kendall tau=+0.61, n=22, alpha=0.01; change point (Pettitt) at 2020",
        p_value=0.0004,
        summary=f"complaints about {HOSTILE} fell from 80% of mentions in 2019 to 8% in 2020",
        change_period="2020",
    )
    result = HighlightSet(entity_id="e<1>", entity_name=f"Hotel {HOSTILE}")
    result.add(
        Highlight(
            query=HOSTILE,
            polarity=Polarity.PROS,
            text=f"Guests praise it: {HOSTILE}",
            evidence=[
                Evidence(sentence_id="e:r1:0", text=HOSTILE),
                Evidence(sentence_id='e:r"2:1', text="The wi-fi is fast now."),
            ],
            support=Support(reviews=22, positive=12, negative=9, neutral=1, total_reviews=40),
            trend=trend,
            verification=Verification(
                aspect_relevance=1.0, sentiment_factuality=0.5, opinion_faithfulness=0.61, verdict="weak",
                reason=f"PRO, but 1 of 2 cited sentences is negative about {HOSTILE}",
            ),
        )
    )
    result.add(
        Highlight(
            query="parking",
            polarity=Polarity.CONS,
            text="Parking is expensive.",
            evidence=[Evidence(sentence_id="e:r3:0", text="Parking cost a fortune.")],
            support=Support(reviews=5, positive=0, negative=5, total_reviews=40),
        )
    )
    result.alerts.append(
        Alert(
            category="bed bugs",
            description="Bed bugs reported in 1 review",
            support=1,
            evidence=[
                Evidence(sentence_id="e:r4:2", text=f"Bed bugs! {HOSTILE}"),
                Evidence(sentence_id="e:r1:0", text=HOSTILE),
            ],
        )
    )
    return result


def test_report_escapes_review_text_and_loads_nothing() -> None:
    from opinio_agents.report import ReportData, render_report

    page = render_report(ReportData(_result(), n_reviews=40, first_date=dt.date(2019, 1, 2)))
    parsed = _Page()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags  # hostile text never became markup
    assert parsed.resources == []  # nothing to fetch: no src, no outside href
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "&lt;script&gt;" in page and "http://example.com" in page  # shown, as text
    assert page.count("<svg") == 2  # the sentiment bars and one trend chart (parking has no trend)
    # Every citation links to an evidence item; a sentence cited twice is listed once.
    assert parsed.links and all(link.startswith("#") and link[1:] in parsed.ids for link in parsed.links)
    assert len(parsed.links) == 5 and len({link for link in parsed.links}) == 4
    assert 'data-sentence-id="e:r&quot;2:1"' in page
    assert '<span class="badge weak">weak</span>' in page and "sentiment factuality 0.50" in page


@pytest.mark.slow
def test_report_in_headless_chromium(tmp_path: Path, browser: Browser) -> None:
    from fake_encoder import HashEncoder

    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.datasets.synthetic import PlantedTrend
    from opinio_agents.models import Review
    from opinio_agents.report import build_report, render_report

    data = generate_dataset(
        1, 120, seed=5, trends=[PlantedTrend("wi-fi", dt.date(2019, 7, 1))], prevalence=(0.6, 0.6),
        strength=(0.9, 0.9), aspects_per_entity=(2, 2), sentences_per_review=(1, 5), mean_sentences=3.0,
    )  # fmt: skip
    entity = data.entities[0]
    entity.user_reviews += [
        Review(review_id="bugs", text="We found bed bugs in the bed. Awful.", publication_date=dt.date(2024, 3, 2)),
        Review(review_id="x", text=f"The wi-fi was terrible {HOSTILE}.", publication_date=dt.date(2016, 3, 1)),
    ]
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder(), top_k=4)
    rag.index(entity, fit_hiro=False)
    report = build_report(rag, entity.key)
    target = tmp_path / "report.html"
    target.write_text(render_report(report), encoding="utf-8")

    browser.get(target.as_uri())
    browser.wait_css("#evidence")
    driver = browser.driver
    run = driver.execute_script
    bars = "figure.sentiment-chart svg"
    assert run(f"return document.querySelectorAll('{bars} rect, {bars} path').length") > 5
    aspects = {h.query for h in report.result.highlights if h.trend is not None and h.trend.points}
    figures = "Array.from(document.querySelectorAll('figure.trend-chart'))"
    charted = run(f"return {figures}.map(f => f.dataset.aspect)")
    assert set(charted) == aspects and "wi-fi" in charted
    assert run(f"return {figures}.every(f => f.querySelector('svg path'))")
    labels = dict(zip(charted, run(f"return {figures}.map(f => f.dataset.label)")))
    assert labels["wi-fi"] == "improving"
    # Every cited sentence (highlights and alerts) is linked, and every link lands on its evidence item.
    cited = {e.sentence_id for h in report.result.highlights for e in h.evidence}
    cited |= {e.sentence_id for a in report.result.alerts for e in a.evidence}
    links = run(
        "return Array.from(document.querySelectorAll('a.evidence-link')).map(a => {"
        "  const target = document.getElementById(a.getAttribute('href').slice(1));"
        "  return [a.dataset.sentenceId, target ? target.dataset.sentenceId : null]; })"
    )
    assert {source for source, _ in links} == cited
    assert all(source == target for source, target in links)
    assert report.result.alerts and run("return document.querySelectorAll('#alerts .alert a.evidence-link').length") > 0
    verdicts = run("return document.querySelectorAll('#highlights article .verdict .badge').length")
    assert verdicts == len(report.result.highlights) > 0  # the report verifies every highlight
    # Self-contained: nothing was fetched, no script runs, the hostile review is text.
    assert run("return performance.getEntriesByType('resource').length") == 0
    assert run("return document.scripts.length + document.images.length") == 0
    browser.wait_css("a.evidence-link").click()
    assert run("return location.hash").startswith("#ev-")
    driver.set_window_size(1280, 2400)
    try:
        shot = browser.screenshot("report")
    finally:
        driver.set_window_size(1280, 900)  # the session's browser is shared
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("OPINIO_REPORT_SCREENSHOT")
    if keep:  # e.g. to refresh docs/images/report.png by hand
        shutil.copyfile(shot, keep)
    assert browser.console_errors() == []


@pytest.mark.slow
def test_cli_synth_trend_highlight_window_and_report(tmp_path: Path, monkeypatch, capsys) -> None:
    import json

    import opinio_agents.api as api
    from opinio_agents.cli.main import main
    from tests.fake_encoder import HashEncoder

    encoder = HashEncoder()
    monkeypatch.setattr(api, "get_encoder", lambda model_path=None, **_: encoder)
    data = tmp_path / "trend.json"
    assert main(["synth", str(data), "--entities", "1", "--reviews-per-entity", "80",
                 "--trend", "wi-fi:2020-01-01:improving", "--seed", "3"]) == 0  # fmt: skip
    truth = json.loads((tmp_path / "trend.json.truth.json").read_text())
    assert truth["1"]["trends"] == [{"aspect": "wi-fi", "change": "2020-01-01", "direction": "improving"}]
    store = str(tmp_path / "store")
    capsys.readouterr()
    code = main(["highlight", str(data), "-e", "1", "-q", "wi-fi", "--store", store, "--quiet", "-f", "json",
                 "--since", "2021-01-01", "--half-life", "365", "--weight-helpful"])  # fmt: skip
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    support = result["pros"][0]["support"] if result["pros"] else result["cons"][0]["support"]
    assert support["weighting"] == "recency half-life 365 d x helpful votes" and support["since"] == "2021-01-01"
    assert (result["pros"] or result["cons"])[0]["trend"]["points"][0]["period"] == "2021"
    assert main(["highlight", str(data), "-e", "1", "--store", store, "--since", "2022-01-01",
                 "--until", "2021-01-01"]) == 2  # fmt: skip
    assert "before it starts" in capsys.readouterr().err
    page = tmp_path / "out" / "report.html"
    assert main(["report", str(data), "-e", "1", "--store", store, "-o", str(page), "--quiet", "--no-verify"]) == 0
    assert capsys.readouterr().err == ""  # --quiet: the file is the result, no "wrote" line
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'class="chart trend-chart" data-aspect="wi-fi"' in text
