"""One self-contained HTML report per entity: charts, highlights with verdicts and evidence, alerts.

:func:`build_report` gathers what the page shows through the façade (the highlights
with their support, trend and, when present, verification; the alerts; each cited
sentence's review, date, rating and helpful votes); :func:`render_report` turns it
into one HTML document: inline CSS, charts as inline SVG
(:mod:`opinio_agents.report.charts`), no script, and a Content-Security-Policy
(``default-src 'none'``) so that the page cannot load anything, even if a review
tried to make it. All review text, queries, ids and names are HTML-escaped.

Every cited sentence (of a highlight or an alert) is listed once under *Evidence*
with an anchor (``id="ev-N"``); each citation links to it
(``<a class="evidence-link" href="#ev-N">``).

Example:
    >>> from opinio_agents import OpinioRAG                                      # doctest: +SKIP
    >>> rag = OpinioRAG(".opinio")                                                # doctest: +SKIP
    >>> html = render_report(build_report(rag, "101"))                            # doctest: +SKIP
    >>> Path("report.html").write_text(html)                                      # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from opinio_agents.io.outputs import plural
from opinio_agents.models import Evidence, Highlight, HighlightSet, Sentence
from opinio_agents.report.charts import sentiment_bars, trend_chart

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG, QueryFree
    from opinio_agents.trends import Weighting

__all__ = ["ReportData", "build_report", "render_report"]


@dataclass
class ReportData:
    """Everything the report shows.

    Attributes:
        result: The entity's highlights (with support, trend, verification), alerts and meta.
        n_reviews: Reviews of the entity.
        first_date: Publication date of its oldest dated review (None when none is dated).
        last_date: ... of its newest.
        sentences: The cited sentences by id, with their review's metadata.
        generated: When the report was made (UTC).
    """

    result: HighlightSet
    n_reviews: int = 0
    first_date: dt.date | None = None
    last_date: dt.date | None = None
    sentences: dict[str, Sentence] = field(default_factory=dict)
    generated: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))


def build_report(
    rag: OpinioRAG,
    entity_id: str | int,
    queries: Sequence[str] | None = None,
    *,
    query_free: QueryFree = "auto",
    weighting: Weighting | None = None,
    verify: bool = True,
) -> ReportData:
    """Run the highlights of one entity and collect what the report needs.

    Args:
        rag: The façade over a store where the entity is indexed.
        entity_id: The entity.
        queries: The queries; None takes the expert queries (or HIRO's aspects when there are none).
        query_free: As for :meth:`~opinio_agents.api.OpinioRAG.highlights` (default ``"auto"``).
        weighting: Support window and weights (the retrieval pipeline only).
        verify: Verify every highlight against its own evidence, so the page shows a
            verdict for each (on by default here: a report is read more often than made).

    Raises:
        StoreError: When the entity is not indexed.
        ConfigError: On settings the highlights refuse.
    """
    key = rag.store.require_entity(entity_id)
    options: dict[str, Any] = {}
    if weighting is not None and not weighting.is_default:
        options = {
            "since": weighting.since,
            "until": weighting.until,
            "half_life_days": weighting.half_life_days,
            "weight_helpful": weighting.helpful,
        }
    result = rag.highlights(
        key, list(queries) if queries else None, query_free=query_free, verify=verify, **options
    )
    stored = rag.store.sentences(key)
    cited = {e.sentence_id for h in result.highlights for e in h.evidence}
    cited |= {e.sentence_id for a in result.alerts for e in a.evidence}
    sentences = {s.sentence.sentence_id: s.sentence for s in stored if s.sentence.sentence_id in cited}
    dates = [s.sentence.publication_date for s in stored if s.sentence.publication_date is not None]
    return ReportData(
        result=result,
        n_reviews=rag.store.entity_record(key).n_reviews or len({s.sentence.review_id for s in stored}),
        first_date=min(dates) if dates else None,
        last_date=max(dates) if dates else None,
        sentences=sentences,
    )


# -- rendering --------------------------------------------------------------------------

_CSS = """
:root { --pos: #2e7d32; --neg: #c62828; --muted: #607d8b; --line: #e0e0e0; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #212121;
       max-width: 1080px; margin: 0 auto; padding: 24px; background: #fafafa; }
header h1 { margin: 0 0 4px; font-size: 26px; }
.meta, figcaption small, .evidence-meta { color: var(--muted); font-size: 13px; }
nav a { margin-right: 14px; font-size: 14px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px; margin: 18px 0; }
h2 { margin: 0 0 12px; font-size: 19px; }
h3 { margin: 18px 0 8px; font-size: 16px; }
figure { margin: 0; }
figure svg { max-width: 100%; height: auto; }
.trends { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 14px; }
.trends figure { border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figcaption { font-size: 13px; margin-top: 4px; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; font-weight: 600;
         background: #eceff1; color: #37474f; margin-right: 4px; }
.badge.improving, .badge.supported { background: #e8f5e9; color: var(--pos); }
.badge.worsening, .badge.contradicted { background: #ffebee; color: var(--neg); }
.badge.weak { background: #fff8e1; color: #8d6e00; }
.highlight { border-left: 4px solid var(--line); padding: 6px 12px; margin: 10px 0; }
.highlight.pros { border-color: var(--pos); }
.highlight.cons { border-color: var(--neg); }
.highlight h4 { margin: 0; font-size: 15px; }
.highlight .text { margin: 2px 0 4px; font-size: 16px; }
.highlight p { margin: 2px 0; }
ol.evidence { margin: 4px 0 0; padding-left: 20px; font-size: 14px; color: #424242; }
a.evidence-link { font-family: ui-monospace, Menlo, monospace; font-size: 12px; text-decoration: none; }
#evidence li { margin: 4px 0; }
#evidence li:target { background: #fff59d; }
.alert { border-left: 4px solid #f9a825; padding: 6px 12px; margin: 8px 0; }
footer { color: var(--muted); font-size: 12px; margin: 24px 0; }
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(value: object) -> str:
    """HTML-escaped text (quotes too: safe inside attributes)."""
    return html.escape(str(value), quote=True)


class _Anchors:
    """Numbers the cited sentences: ``sentence_id -> ev-N`` in order of first citation."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.evidence: dict[str, Evidence] = {}

    def link(self, evidence: Evidence) -> str:
        anchor = self.ids.setdefault(evidence.sentence_id, f"ev-{len(self.ids) + 1}")
        self.evidence.setdefault(evidence.sentence_id, evidence)
        return (
            f'<a class="evidence-link" href="#{anchor}" data-sentence-id="{_e(evidence.sentence_id)}">'
            f"[{_e(evidence.sentence_id)}]</a>"
        )


def _aspects(result: HighlightSet) -> list[Highlight]:
    """One highlight per query (the first), most mentioned first."""
    first: dict[str, Highlight] = {}
    for highlight in result.highlights:
        first.setdefault(highlight.query, highlight)
    return sorted(first.values(), key=lambda h: (-float(h.support.reviews), h.query))


def _verdict(highlight: Highlight) -> str:
    verification = getattr(highlight, "verification", None)
    if verification is None:
        return ""
    verdict = str(getattr(verification, "verdict", ""))
    scores = []
    for name, label in (
        ("aspect_relevance", "aspect relevance"),
        ("sentiment_factuality", "sentiment factuality"),
        ("opinion_faithfulness", "opinion faithfulness"),
    ):
        value = getattr(verification, name, None)
        if value is not None:
            scores.append(f"{label} {float(value):.2f}")
    reason = getattr(verification, "reason", "")
    action = getattr(verification, "action", "kept")
    extra = f" ({_e(action)})" if action and action != "kept" else ""
    return (
        f'<p class="verdict"><span class="badge {_e(verdict)}">{_e(verdict)}</span>{extra} {_e(reason)}'
        + (f' <small class="meta">{_e("; ".join(scores))}</small>' if scores else "")
        + "</p>"
    )


def _highlight(highlight: Highlight, anchors: _Anchors) -> str:
    parts = [
        f'<article class="highlight {highlight.polarity.value}" data-query="{_e(highlight.query)}">',
        f"<h4>{_e(highlight.query)}</h4>",
        f'<p class="text">{_e(highlight.text)}</p>',
        f'<p class="support meta">{_e(highlight.support.describe())}</p>',
    ]
    if highlight.polarity_agrees is False:
        parts.append('<p class="meta">note: the cited evidence leans the other way</p>')
    parts.append(_verdict(highlight))
    if highlight.trend is not None:
        trend = highlight.trend
        parts.append(
            f'<p class="trend"><span class="badge {_e(trend.label)}">{_e(trend.label)}</span>{_e(trend.summary)}</p>'
        )
    if highlight.evidence:
        items = "".join(f"<li>{anchors.link(ev)} {_e(ev.text)}</li>" for ev in highlight.evidence)
        parts.append(f'<ol class="evidence">{items}</ol>')
    parts.append("</article>")
    return "".join(parts)


def _evidence_meta(sentence: Sentence | None) -> str:
    if sentence is None:
        return ""
    bits = [f"review {sentence.review_id}"]
    if sentence.publication_date:
        bits.append(sentence.publication_date.isoformat())
    if sentence.rating is not None:
        bits.append(f"rating {sentence.rating:g}")
    if sentence.helpful_votes:
        bits.append(plural(sentence.helpful_votes, "helpful vote"))
    return f' <span class="evidence-meta">({_e(" · ".join(bits))})</span>'


def render_report(data: ReportData) -> str:
    """The report as one HTML document (self-contained: no script, no external resource).

    Example:
        >>> from opinio_agents.models import HighlightSet
        >>> page = render_report(ReportData(HighlightSet(entity_id=1, entity_name="<Inn>")))
        >>> "&lt;Inn&gt;" in page and "<Inn>" not in page
        True
    """
    result = data.result
    title = result.entity_name or f"Entity {result.entity_id}"
    anchors = _Anchors()
    aspects = _aspects(result)
    meta = result.meta
    weighting = next((h.support for h in result.highlights), None)
    facts = [f"entity {result.entity_id}", plural(data.n_reviews, "review")]
    if data.first_date and data.last_date:
        facts.append(f"{data.first_date.isoformat()} to {data.last_date.isoformat()}")
    facts.append(f"mode {meta.mode or 'queries'}")
    facts.append(f"synthesizer {meta.synthesizer}" + (f" ({meta.model})" if meta.model else ""))
    if weighting is not None and (weighting.weighting != "count" or weighting.window()):
        facts.append(f"support {weighting.weighting} {weighting.window()}".strip())

    body: list[str] = [
        f"<header><h1>{_e(title)}</h1><p class=\"meta\">{_e(' · '.join(facts))}</p>",
        '<nav><a href="#aspects">Aspects</a><a href="#trends">Over time</a><a href="#highlights">Highlights</a>'
        '<a href="#alerts">Alerts</a><a href="#evidence">Evidence</a></nav></header>',
    ]
    if result.summary:
        body.append(f'<section id="summary"><h2>Summary</h2><p>{_e(result.summary)}</p></section>')

    body.append('<section id="aspects"><h2>Aspect sentiment</h2>')
    if aspects:
        rows = [
            (h.query, float(h.support.positive), float(h.support.neutral), float(h.support.negative)) for h in aspects
        ]
        body.append(
            '<figure class="chart sentiment-chart">'
            + sentiment_bars(rows, salt="bars")
            + "<figcaption>Positive, neutral and negative share of the reviews that mention each aspect "
            + _e(f"({aspects[0].support.weighting})")
            + ".</figcaption></figure>"
        )
    else:
        body.append("<p>No highlights.</p>")
    body.append("</section>")

    body.append('<section id="trends"><h2>Over time</h2><div class="trends">')
    charted = 0
    for index, highlight in enumerate(aspects):
        trend = highlight.trend
        if trend is None or not trend.points:
            continue
        charted += 1
        p_value = f", p={trend.p_value:.3g}" if trend.p_value is not None else ""
        body.append(
            f'<figure class="chart trend-chart" data-aspect="{_e(highlight.query)}" data-label="{_e(trend.label)}">'
            + trend_chart(highlight.query, trend, salt=f"trend-{index}")
            + f'<figcaption><span class="badge {_e(trend.label)}">{_e(trend.label)}</span>{_e(trend.summary)}'
            + f"<br><small>{_e(trend.test + p_value)}</small></figcaption></figure>"
        )
    body.append("</div>")
    if not charted:
        body.append("<p>No dated mentions to chart.</p>")
    body.append("</section>")

    body.append('<section id="highlights"><h2>Highlights</h2>')
    for label, items in (("PROS", result.pros), ("CONS", result.cons)):
        if items:
            body.append(f"<h3>{label}</h3>")
            body.extend(_highlight(h, anchors) for h in items)
    if not result.highlights:
        body.append("<p>No highlights.</p>")
    for failure in result.failures:
        body.append(f'<p class="meta">query {_e(failure.query)} failed: {_e(failure.error)}</p>')
    body.append("</section>")

    body.append('<section id="alerts"><h2>Alerts</h2>')
    if result.alerts:
        for alert in result.alerts:
            noun = "review" if alert.support == 1 else "reviews"
            links = " ".join(anchors.link(ev) for ev in alert.evidence)
            body.append(
                f'<div class="alert"><strong>{_e(alert.category)}</strong> ({alert.support} {noun}): '
                f"{_e(alert.description)} {links}</div>"
            )
    else:
        body.append("<p>No critical complaints (safety, hygiene, bed bugs ...) found in the reviews.</p>")
    body.append("</section>")

    body.append('<section id="evidence"><h2>Evidence</h2><ol>')
    for sentence_id, anchor in anchors.ids.items():
        evidence = anchors.evidence[sentence_id]
        body.append(
            f'<li id="{anchor}" class="evidence-item" data-sentence-id="{_e(sentence_id)}">'
            f"<code>{_e(sentence_id)}</code> <q>{_e(evidence.text)}</q>"
            f"{_evidence_meta(data.sentences.get(sentence_id))}</li>"
        )
    body.append("</ol></section>")
    body.append(
        "<footer>Support counts the reviews that mention each aspect over the whole entity. Trends: "
        "Mann-Kendall test (Kendall's tau-b of stance against publication date over every dated mention, "
        "alpha 0.01) with Pettitt's change point; periods are years, or quarters with enough reviews. "
        f"Generated {_e(data.generated.strftime('%Y-%m-%d %H:%M UTC'))} by opinio_agents.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}: opinion report</title><style>{_CSS}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
