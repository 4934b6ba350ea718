"""Rendering of HighlightSets for the terminal: rich table, markdown, JSON.

Review text, queries, ids and names are untrusted: the rich renderable holds them as
:class:`rich.text.Text` (never parsed as markup) with control and bidi characters
escaped (:func:`~opinio_agents.io.outputs.terminal_safe`); the markdown escapes HTML,
link and emphasis syntax as well (:func:`~opinio_agents.io.outputs.markdown_safe`).
The JSON output is the data verbatim.

The terminal table keeps every field whole at any width from 80 columns up
(:func:`table_layout`): the support line and the verification verdict sit under
the highlight text, evidence ids get a narrow column, cells wrap at word boundaries
(only a token longer than its column folds) instead of ending in an ellipsis, and the
evidence sentences get a column of their own when the terminal is wide enough; on a
narrower one they are quoted under the highlight (``“...”``). A highlight whose support leans the other
way (a PRO of an aspect most reviews criticise) says that reviews are split
(:func:`support_line`).

Example:
    >>> print(to_markdown(HighlightSet(entity_id=1, entity_name="Harbor Inn")), end="")
    # Harbor Inn (entity 1)
    <BLANKLINE>
    _No highlights._
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group
from rich.table import Table
from rich.text import Text

from opinio_agents.cli.console import plain
from opinio_agents.io.outputs import markdown_safe, plural
from opinio_agents.models import Highlight, HighlightSet, Polarity, Verification

__all__ = [
    "to_markdown",
    "to_rich",
    "to_json",
    "support_line",
    "verdict_line",
    "trend_line",
    "table_layout",
    "TableLayout",
]

#: From this terminal width on, the table shows the evidence sentences in a column of their own.
WIDE_TABLE = 120
_VERDICT_STYLE = {"supported": "green", "weak": "yellow", "contradicted": "bold red"}


def _title(result: HighlightSet) -> str:
    name = result.entity_name or "Entity"
    return f"{name} (entity {result.entity_id})"


def to_json(result: HighlightSet, *, indent: int | None = 2) -> str:
    """The HighlightSet as JSON (the ``--format json`` output)."""
    return result.model_dump_json(indent=indent)


def _evidence_lines(highlight: Highlight, limit: int = 3) -> list[str]:
    return [f"[{e.sentence_id}] {e.text}" for e in highlight.evidence[:limit]]


def support_line(highlight: Highlight) -> str:
    """The support of a highlight in words, saying that reviews are split when they lean the other way.

    A PRO of an aspect most mentioning reviews criticise would otherwise read "52% negative"
    under a praise; it reads "reviews split, 40% positive: mentioned in ..., 52% negative".

    Example:
        >>> from opinio_agents.models import Support
        >>> h = Highlight(query="decor", polarity=Polarity.PROS, text="Pretty decor.",
        ...               support=Support(reviews=25, positive=10, negative=13, total_reviews=240))
        >>> support_line(h)
        'reviews split, 40% positive: mentioned in 25 of 240 reviews, 52% negative'
    """
    support = highlight.support
    text = support.describe()
    if not support.reviews or support.positive == support.negative == 0:
        return text
    if highlight.polarity is Polarity.PROS and support.negative > support.positive:
        return f"reviews split, {round(100 * support.share_positive)}% positive: {text}"
    if highlight.polarity is Polarity.CONS and support.positive >= support.negative:
        return f"reviews split, {round(100 * support.share_negative)}% negative: {text}"
    return text


def unanswered_line(queries: list[str]) -> str:
    """The line every text surface shows for the queries that got no highlight (``HighlightSet.unanswered``).

    Example:
        >>> unanswered_line(["parking"])
        'No highlight for parking: no review sentence about it takes a side'
    """
    them = "it" if len(queries) == 1 else "them"
    return f"No highlight for {', '.join(queries)}: no review sentence about {them} takes a side"


def verdict_line(verification: Verification | None) -> str:
    """The verification in one line: verdict, AR/SF/OF and the reason ('' when not verified).

    Example:
        >>> verdict_line(Verification(aspect_relevance=1.0, sentiment_factuality=1.0,
        ...     opinion_faithfulness=0.84, verdict="supported", reason="backed by 5 of its 5 cited sentences"))
        'supported (AR 1.00, SF 1.00, OF 0.84): backed by 5 of its 5 cited sentences'
    """
    return "" if verification is None else verification.describe()


@dataclass(frozen=True)
class TableLayout:
    """Column widths of the highlight table for one terminal width.

    Attributes:
        width: The terminal width laid out for.
        query: Width of the query column.
        ids: Width of the evidence-id column.
        evidence_text: Whether the evidence sentences get a column (wide terminals only).
    """

    width: int
    query: int
    ids: int
    evidence_text: bool


def table_layout(width: int, ids: list[str] | None = None) -> TableLayout:
    """The column layout of the highlight table at ``width`` columns (never below 80's needs).

    The query column takes up to 16 characters (a sixth of the width at most), the id
    column fits the longest evidence id (folded only when that is over a third of the width), the
    highlight column takes the rest, and from :data:`WIDE_TABLE` columns on the evidence
    sentences get a column too.

    Example:
        >>> table_layout(80, ["101:1010015:5"])
        TableLayout(width=80, query=13, ids=15, evidence_text=False)
    """
    width = max(width, 40)
    longest = max((len(i) for i in ids or []), default=8) + 2  # the id is shown in brackets
    return TableLayout(
        width=width,
        query=max(8, min(16, width // 6)),
        ids=max(10, min(width // 3, longest)),
        evidence_text=width >= WIDE_TABLE,
    )


def _highlight_cell(h: Highlight, quotes: int = 0) -> Text:
    """The highlight text, its support, verdict and trend lines, then ``quotes`` evidence sentences quoted."""
    cell = plain(h.text)
    cell.append("\n")
    cell.append_text(plain(support_line(h), "dim"))
    if h.verification is not None:
        cell.append("\n")
        cell.append_text(plain(f"verdict: {verdict_line(h.verification)}", _VERDICT_STYLE[h.verification.verdict]))
    trend = trend_line(h)
    if trend:
        cell.append("\n")
        cell.append_text(plain(trend, _TREND_STYLE.get(h.trend.label if h.trend else "", "")))
    for evidence in h.evidence[:quotes]:
        cell.append("\n")
        cell.append_text(plain(f"“{evidence.text}”", "italic dim"))
    return cell


_TREND_STYLE = {"improving": "green", "worsening": "red"}


def trend_line(highlight: Highlight) -> str:
    """The highlight's trend in one line when it changed over time ('' when stable, insufficient or absent).

    Example:
        >>> from opinio_agents.models import Trend
        >>> h = Highlight(query="wi-fi", polarity=Polarity.CONS, text="Slow wi-fi.", trend=Trend(
        ...     granularity="year", label="improving", test="Mann-Kendall", p_value=0.001,
        ...     summary="complaints about wi-fi fell from 40% of mentions in 2019 to 8% in 2024"))
        >>> trend_line(h)
        'trend: improving, complaints about wi-fi fell from 40% of mentions in 2019 to 8% in 2024'
    """
    trend = highlight.trend
    if trend is None or trend.label not in ("improving", "worsening"):
        return ""
    return f"trend: {trend.label}, {trend.summary}"


def to_markdown(result: HighlightSet, *, evidence: int = 3) -> str:
    """PROS, CONS and alerts as a markdown document with evidence bullets (untrusted text escaped)."""
    md = markdown_safe
    lines = [f"# {md(_title(result))}", ""]
    if result.summary:
        lines += ["## Summary", "", md(result.summary), ""]
    for label, items in (("PROS", result.pros), ("CONS", result.cons)):
        if not items:
            continue
        lines += [f"## {label}", ""]
        for h in items:
            lines.append(f"- **{md(h.query)}**: {md(h.text)} _({md(support_line(h))})_")
            if h.verification is not None:
                lines.append(f"  - _verification: {md(verdict_line(h.verification))}_")
            if h.trend is not None and h.trend.label != "insufficient":
                lines.append(f"  - _trend: {md(h.trend.label)}, {md(h.trend.summary)}_")
            for ev in h.evidence[:evidence]:
                lines.append(f"  - [{md(ev.sentence_id)}] {md(ev.text)}")
            if h.polarity_agrees is False:
                lines.append("  - _note: the evidence leans the other way_")
        lines.append("")
    if result.meta.dropped:
        n = len(result.meta.dropped)
        lines += [f"_Verification dropped {plural(n, 'highlight')} that {'its' if n == 1 else 'their'} evidence "
                  "contradicted._", ""]
    if result.alerts:
        lines += ["## Alerts", ""]
        for alert in result.alerts:
            lines.append(f"- **{md(alert.category)}** ({plural(alert.support, 'review')}): {md(alert.description)}")
        lines.append("")
    if result.unanswered:
        lines += [f"_{md(unanswered_line(result.unanswered))}._", ""]
    if result.failures:
        lines += ["## Failed queries", ""]
        lines += [f"- **{md(f.query)}**: {md(f.error)}" for f in result.failures]
        lines.append("")
    if len(lines) == 2:
        lines.append("_No highlights._")
    return "\n".join(lines).rstrip() + "\n"


def to_rich(result: HighlightSet, *, evidence: int = 2, width: int = 80) -> Group:
    """A rich renderable: one table per side, alerts and failures below.

    Args:
        result: The highlights.
        evidence: Evidence sentences shown per highlight: in a column of their own in the wide
            layout, quoted under the highlight otherwise (every id is listed in the id column).
        width: The terminal width it will be printed at (the table layout, :func:`table_layout`).
    """
    parts: list = [plain(_title(result), "bold")]
    if result.summary:
        parts.append(plain(result.summary))
    for label, items, style in (("PROS", result.pros, "green"), ("CONS", result.cons, "red")):
        if not items:
            continue
        layout = table_layout(width, [e.sentence_id for h in items for e in h.evidence])
        table = Table(title=label, title_style=f"bold {style}", show_lines=True, expand=True)
        table.add_column("query", style="bold", width=layout.query, overflow="fold")
        table.add_column("highlight", ratio=3, overflow="fold")
        table.add_column("evidence", width=layout.ids, style="dim", overflow="fold")
        if layout.evidence_text:
            table.add_column("what reviewers wrote", ratio=3, style="dim", overflow="fold")
        for h in items:
            ids = plain("\n".join(f"[{e.sentence_id}]" for e in h.evidence) or "none")
            row = [plain(h.query), _highlight_cell(h, quotes=0 if layout.evidence_text else evidence), ids]
            if layout.evidence_text:
                row.append(plain("\n".join(_evidence_lines(h, evidence))))
            table.add_row(*row)
        parts.append(table)
    if result.meta.dropped:
        n = len(result.meta.dropped)
        parts.append(
            plain(
                f"verification dropped {plural(n, 'highlight')} that {'its' if n == 1 else 'their'} "
                "evidence contradicted (listed under meta.dropped in --format json)",
                "yellow",
            )
        )
    if result.alerts:
        table = Table(title="ALERTS", title_style="bold yellow", expand=True)
        table.add_column("category", style="bold yellow", overflow="fold")
        table.add_column("reviews", overflow="fold")
        table.add_column("what reviewers report", ratio=4, overflow="fold")
        for alert in result.alerts:
            table.add_row(plain(alert.category), plain(alert.support), plain(alert.description))
        parts.append(table)
    if result.unanswered:
        parts.append(plain(unanswered_line(result.unanswered), "dim"))
    for failure in result.failures:
        parts.append(plain(f"query {failure.query!r} failed: {failure.error}", "red"))
    if len(parts) == 1:
        parts.append(Text("No highlights.", style="dim"))
    meta = result.meta
    parts.append(
        plain(
            f"retriever={meta.retriever} top_k={meta.top_k} synthesizer={meta.synthesizer}"
            + (f" model={meta.model}" if meta.model else "")
            + f" verified={'yes' if 'verification' in meta.timings else 'no'}"
            + f" time={meta.timings.get('total', 0.0):.2f}s",
            "dim",
        )
    )
    return Group(*parts)
