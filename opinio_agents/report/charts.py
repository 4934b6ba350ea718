"""The report's charts: matplotlib figures rendered to inline SVG (no file, no network, no pyplot state).

Each function returns an ``<svg>`` element as a string, ready to paste into HTML:
the XML prolog and DOCTYPE are cut, text stays text (``svg.fonttype = none``), and
every chart gets its own id salt so the clip-path ids of several charts in one page
never collide. Labels are drawn with mathtext off, so an aspect named ``$x$`` prints
as written; matplotlib escapes ``<``, ``>`` and ``&`` in SVG text.

Example:
    >>> svg = sentiment_bars([("wi-fi", 12, 3, 30), ("pool", 40, 2, 1)], salt="demo")  # doctest: +SKIP
    >>> svg.startswith("<svg")                                                     # doctest: +SKIP
    True
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from opinio_agents.errors import MissingDependencyError
from opinio_agents.models import Trend

__all__ = ["sentiment_bars", "trend_chart", "POSITIVE", "NEGATIVE", "NEUTRAL"]

POSITIVE = "#2e7d32"
NEGATIVE = "#c62828"
NEUTRAL = "#b0bec5"
MENTIONS = "#90a4ae"


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("matplotlib", "report", "the HTML report's charts") from exc
    return Figure(figsize=(width, height), dpi=96)


def _svg(figure: Any, salt: str) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"opinio-{salt}"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :].strip()


def _plain(text: str, limit: int = 40) -> str:
    """A label as plain text: one line, at most ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def sentiment_bars(rows: Sequence[tuple[str, float, float, float]], *, salt: str = "bars") -> str:
    """Horizontal stacked bars: the positive / neutral / negative share of each aspect's mentioning reviews.

    Args:
        rows: ``(aspect, positive, neutral, negative)`` per aspect (counts or weights), most discussed first.
        salt: Makes the SVG's internal ids unique within a page.
    """
    height = 0.9 + 0.42 * max(1, len(rows))
    figure = _figure(7.2, height)
    ax = figure.add_subplot(1, 1, 1)
    labels = [_plain(aspect) for aspect, *_ in rows]
    positions = list(range(len(rows)))[::-1]
    left = [0.0] * len(rows)
    for index, (name, colour) in enumerate((("positive", POSITIVE), ("neutral", NEUTRAL), ("negative", NEGATIVE))):
        shares = []
        for _, *counts in rows:
            total = sum(counts)
            shares.append(100.0 * counts[index] / total if total else 0.0)
        ax.barh(positions, shares, left=left, color=colour, label=name, height=0.62)
        for y, x0, share in zip(positions, left, shares):
            if share >= 9:
                ax.text(x0 + share / 2, y, f"{share:.0f}%", ha="center", va="center", fontsize=8,
                        color="white" if colour != NEUTRAL else "#263238", parse_math=False)  # fmt: skip
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(positions)
    ax.set_yticklabels(labels, fontsize=9)
    for tick in ax.get_yticklabels():
        tick.set_parse_math(False)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the reviews that mention the aspect (%)", fontsize=8)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return _svg(figure, salt)


def trend_chart(aspect: str, trend: Trend, *, salt: str = "trend") -> str:
    """One aspect over time: positive and negative share of its mentions per period, mention counts as bars.

    The change point (when the trend is improving or worsening) is a dashed vertical line.
    """
    figure = _figure(3.9, 2.5)
    ax = figure.add_subplot(1, 1, 1)
    periods = [p.period for p in trend.points]
    x = list(range(len(periods)))
    counts = [p.mentions for p in trend.points]
    bars = ax.twinx()
    bars.bar(x, counts, color=MENTIONS, alpha=0.35, width=0.7, label="mentions")
    bars.set_ylabel("mentions", fontsize=8, color="#546e7a")
    bars.tick_params(axis="y", labelsize=8, colors="#546e7a")
    ax.set_zorder(bars.get_zorder() + 1)
    ax.patch.set_visible(False)
    kept = [i for i, p in enumerate(trend.points) if p.mentions]
    pos = [100.0 * trend.points[i].positive / trend.points[i].mentions for i in kept]
    neg = [100.0 * trend.points[i].negative / trend.points[i].mentions for i in kept]
    ax.plot(kept, pos, marker="o", markersize=3, color=POSITIVE, label="positive %")
    ax.plot(kept, neg, marker="o", markersize=3, color=NEGATIVE, label="negative %")
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of mentions", fontsize=8)
    if trend.change_period in periods:
        ax.axvline(periods.index(trend.change_period) - 0.5, color="#37474f", linestyle="--", linewidth=1)
    step = max(1, (len(periods) + 5) // 6)
    ax.set_xticks(x[::step])
    ax.set_xticklabels(periods[::step], fontsize=8, rotation=0 if trend.granularity == "year" else 30)
    ax.tick_params(axis="y", labelsize=8)
    title = ax.set_title(f"{_plain(aspect, 32)}: {trend.label}", fontsize=10, loc="left")
    title.set_parse_math(False)
    ax.legend(loc="upper left", fontsize=7, frameon=False, ncol=2)
    for side in ("top",):
        ax.spines[side].set_visible(False)
        bars.spines[side].set_visible(False)
    return _svg(figure, salt)
