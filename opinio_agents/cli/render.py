"""Rendering of HighlightSets for the terminal: rich table, markdown, JSON.

Review text, queries, ids and names are untrusted: the rich renderable holds them as
:class:`rich.text.Text` (never parsed as markup) with control and bidi characters
escaped (:func:`~opinio_agents.io.outputs.terminal_safe`); the markdown escapes HTML,
link and emphasis syntax as well (:func:`~opinio_agents.io.outputs.markdown_safe`).
The JSON output is the data verbatim.

Example:
    >>> print(to_markdown(HighlightSet(entity_id=1, entity_name="Harbor Inn")), end="")
    # Harbor Inn (entity 1)
    <BLANKLINE>
    _No highlights._
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from opinio_agents.io.outputs import markdown_safe, terminal_safe
from opinio_agents.models import Highlight, HighlightSet

__all__ = ["to_markdown", "to_rich", "to_json"]


def _title(result: HighlightSet) -> str:
    name = result.entity_name or "Entity"
    return f"{name} (entity {result.entity_id})"


def to_json(result: HighlightSet, *, indent: int | None = 2) -> str:
    """The HighlightSet as JSON (the ``--format json`` output)."""
    return result.model_dump_json(indent=indent)


def _evidence_lines(highlight: Highlight, limit: int = 3) -> list[str]:
    return [f"[{e.sentence_id}] {e.text}" for e in highlight.evidence[:limit]]


def _t(text: object, style: str = "") -> Text:
    return Text(terminal_safe(str(text)), style=style)


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
            lines.append(f"- **{md(h.query)}**: {md(h.text)} _({h.support.describe()})_")
            for ev in h.evidence[:evidence]:
                lines.append(f"  - [{md(ev.sentence_id)}] {md(ev.text)}")
            if h.polarity_agrees is False:
                lines.append("  - _note: the evidence leans the other way_")
        lines.append("")
    if result.alerts:
        lines += ["## Alerts", ""]
        for alert in result.alerts:
            noun = "review" if alert.support == 1 else "reviews"
            lines.append(f"- **{md(alert.category)}** ({alert.support} {noun}): {md(alert.description)}")
        lines.append("")
    if result.failures:
        lines += ["## Failed queries", ""]
        lines += [f"- **{md(f.query)}**: {md(f.error)}" for f in result.failures]
        lines.append("")
    if len(lines) == 2:
        lines.append("_No highlights._")
    return "\n".join(lines).rstrip() + "\n"


def to_rich(result: HighlightSet, *, evidence: int = 2) -> Group:
    """A rich renderable: one table per side, alerts and failures below."""
    parts: list = [_t(_title(result), "bold")]
    if result.summary:
        parts.append(_t(result.summary))
    for label, items, style in (("PROS", result.pros, "green"), ("CONS", result.cons, "red")):
        if not items:
            continue
        table = Table(title=label, title_style=f"bold {style}", show_lines=True, expand=True)
        table.add_column("query", style="bold", ratio=1)
        table.add_column("highlight", ratio=3)
        table.add_column("support", ratio=1)
        table.add_column("evidence", ratio=4, style="dim")
        for h in items:
            cited = "\n".join(_evidence_lines(h, evidence))
            table.add_row(_t(h.query), _t(h.text), _t(h.support.describe()), _t(cited))
        parts.append(table)
    if result.alerts:
        table = Table(title="ALERTS", title_style="bold yellow", expand=True)
        table.add_column("category", style="bold yellow")
        table.add_column("reviews")
        table.add_column("what reviewers report", ratio=4)
        for alert in result.alerts:
            table.add_row(_t(alert.category), _t(alert.support), _t(alert.description))
        parts.append(table)
    for failure in result.failures:
        parts.append(_t(f"query {failure.query!r} failed: {failure.error}", "red"))
    if len(parts) == 1:
        parts.append(Text("No highlights.", style="dim"))
    meta = result.meta
    parts.append(
        _t(
            f"retriever={meta.retriever} top_k={meta.top_k} synthesizer={meta.synthesizer}"
            + (f" model={meta.model}" if meta.model else "")
            + f" time={meta.timings.get('total', 0.0):.2f}s",
            "dim",
        )
    )
    return Group(*parts)
