"""Planted-trend recovery: are planted changes of opinion found, on the right side, at the right time?

Generates synthetic entities (``opinio synth``'s generator), each with planted
trends: a planted aspect whose mentions turn from negative to positive
(``improving``) or the reverse (``worsening``) at a known date, drawn in the middle
60% of 2015-2024. It indexes them, runs ``opinio highlight`` (the extractive
pipeline, expert queries) and reads the ``trend`` of each highlight:

* **found**: the trend aspect's highlights are labelled with the planted direction;
* **wrong side**: labelled the opposite direction;
* **on time**: found, and the change period (Pettitt's change point) is within one
  period (year or quarter) of the period of the planted date;
* **false positives**: planted aspects *without* a trend that are labelled
  improving or worsening, over all such aspects with a highlight.

Usage:
    python benchmarks/trends.py --entities 20 --reviews 300 --trends 1 --seed 13
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
from pathlib import Path


def _period_index(period: str) -> int:
    """``"2019"`` -> 2019 * 4 (years in quarter units are not mixed: both sides use one granularity)."""
    if "-Q" in period:
        year, quarter = period.split("-Q")
        return int(year) * 4 + int(quarter) - 1
    return int(period)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=20)
    parser.add_argument("--reviews", type=int, default=300)
    parser.add_argument("--trends", type=int, default=1, help="Planted trends per entity.")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()

    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.trends import period_of

    data = generate_dataset(
        n_entities=args.entities, reviews_per_entity=args.reviews, seed=args.seed, trends=args.trends
    )
    planted = found = wrong = on_time = no_highlight = 0
    tested = false_pos = 0
    labels: dict[str, int] = {}
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        rag = OpinioRAG(Path(tmp) / "store")
        rag.index(data.entities, show_progress=False, fit_hiro=False)
        for entity in data.entities:
            result = rag.highlights(entity.key)
            by_query = {h.query: h.trend for h in result.highlights if h.trend is not None}
            trend_aspects = {t.aspect for t in data.trends.get(entity.key, [])}
            for trend in data.trends.get(entity.key, []):
                planted += 1
                got = by_query.get(trend.aspect)
                if got is None:
                    no_highlight += 1
                    rows.append(
                        f"| {entity.key} | {trend.aspect} | {trend.direction} {trend.change} | no highlight | |"
                    )
                    continue
                labels[got.label] = labels.get(got.label, 0) + 1
                timely = ""
                if got.label == trend.direction:
                    found += 1
                    expected = period_of(trend.change, got.granularity)
                    off = abs(_period_index(got.change_period or expected) - _period_index(expected))
                    if got.change_period is not None and off <= 1:
                        on_time += 1
                    timely = f"{got.change_period} (planted {expected}, off by {off})"
                elif got.label in ("improving", "worsening"):
                    wrong += 1
                rows.append(
                    f"| {entity.key} | {trend.aspect} | {trend.direction} {trend.change} | {got.label} "
                    f"p={got.p_value} | {timely} |"
                )
            for query, got in by_query.items():
                if query in trend_aspects or got.label == "insufficient":
                    continue
                tested += 1
                false_pos += got.label in ("improving", "worsening")

    print(
        f"\n{args.entities} entities x {args.reviews} reviews, {args.trends} planted trend(s) each, "
        f"seed {args.seed} ({dt.date.today().isoformat()})\n"
    )
    print("| entity | aspect | planted | label | change period |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("| planted | found (right side) | within one period | wrong side | missed | no highlight |")
    print("|---:|---:|---:|---:|---:|---:|")
    missed = planted - found - wrong - no_highlight
    print(f"| {planted} | {found} | {on_time} | {wrong} | {missed} | {no_highlight} |")
    rate = false_pos / tested if tested else 0.0
    print(f"\nfalse positives: {false_pos} of {tested} tested aspects without a planted trend ({rate:.1%})")
    print(f"labels of planted trends: {labels}")


if __name__ == "__main__":
    main()
