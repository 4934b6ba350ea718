"""The paper's tables from the evaluator's metric records, as markdown, JSON and PNG.

* Table 2: ROUGE-1/2/L F1 and BERTScore F1 (x 100) for PROS and CONS, macro
  averaged over entities;
* Table 3: LLM-judge scores (1-5), averaged over entities;
* Table 4: E[AR], E[SF], E[OF] (x 100) over all highlights of a system, with
  how many highlights each is defined for; the per-highlight breakdown goes to
  ``aos_breakdown.jsonl``;
* Table 5: TPR and TNR (x 100), counts summed over entities;
* RAGAs: mean of each RAGAs metric, when computed.

A table is written only when some record has its metric; the others are listed
in ``skipped`` with the reason. Plots need matplotlib (``eval`` extra) and are
skipped with a note without it.

Example:
    >>> recs = [{"system": "random", "entity_id": "1",
    ...          "rouge": {"pros": {"R1": 10.0, "R2": 1.0, "RL": 8.0}},
    ...          "alignment": {"positives": 2, "true_positives": 1,
    ...                        "negatives": 1, "true_negatives": 1}}]
    >>> tables = build_tables(recs)
    >>> tables["table2"]["rows"][0]["PROS R1"], tables["table5"]["rows"][0]["TPR"]
    (10.0, 50.0)
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opinio_agents.evaluation.aos import AOSScore, summarize_aos
from opinio_agents.evaluation.judge import JUDGE_CRITERIA
from opinio_agents.kinds import POLARITY_NAMES

__all__ = ["build_tables", "to_markdown", "write_tables", "TABLE_TITLES"]

TABLE_TITLES: dict[str, str] = {
    "table2": "Table 2: ROUGE-1/2/L and BERTScore F1 (x100) against the expert PROS and CONS",
    "table3": "Table 3: LLM-as-a-judge scores (1-5)",
    "table4": "Table 4: AOS verification, E[AR], E[SF], E[OF] (x100)",
    "table5": "Table 5: sentiment alignment with the expert highlights, TPR / TNR (x100)",
    "ragas": "RAGAs metrics (mean over entities)",
}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _by_system(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[record["system"]].append(record)
    return grouped


def _table2(grouped: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for system, recs in grouped.items():
        row: dict[str, Any] = {"System": system, "Entities": len(recs)}
        for side in POLARITY_NAMES:
            for metric in ("R1", "R2", "RL"):
                row[f"{side.upper()} {metric}"] = _mean(
                    [r["rouge"][side][metric] for r in recs if side in r.get("rouge", {})]
                )
            bs = [r["bertscore"][side] for r in recs if side in (r.get("bertscore") or {})]
            row[f"{side.upper()} BS"] = _mean(bs)
        rows.append(row)
    return rows


def _table3(grouped: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for system, recs in grouped.items():
        judged = [r["judge"] for r in recs if r.get("judge")]
        if judged:
            rows.append(
                {
                    "System": system,
                    "Entities": len(judged),
                    **{k: _mean([j[k] for j in judged]) for k in JUDGE_CRITERIA},
                }
            )
    return rows


def _aos_scores(recs: Sequence[dict[str, Any]]) -> list[AOSScore]:
    return [AOSScore(**item) for r in recs for item in (r.get("aos") or [])]


def _table4(grouped: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for system, recs in grouped.items():
        if not any("aos" in r for r in recs):
            continue
        s = summarize_aos(_aos_scores(recs))
        scale = lambda v: None if v is None else 100 * v  # noqa: E731
        rows.append(
            {
                "System": system,
                "Highlights": s.n_highlights,
                "AR": scale(s.ar),
                "SF": scale(s.sf),
                "OF": scale(s.of),
                "n AR": s.n_ar,
                "n SF": s.n_sf,
                "n OF": s.n_of,
            }
        )
    return rows


def _table5(grouped: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for system, recs in grouped.items():
        counts: defaultdict[str, int] = defaultdict(int)
        for r in recs:
            for key in ("positives", "true_positives", "negatives", "true_negatives"):
                counts[key] += int((r.get("alignment") or {}).get(key, 0))
        if not counts["positives"] and not counts["negatives"]:
            continue
        rows.append(
            {
                "System": system,
                "TPR": 100 * counts["true_positives"] / counts["positives"]
                if counts["positives"]
                else None,
                "TNR": 100 * counts["true_negatives"] / counts["negatives"]
                if counts["negatives"]
                else None,
                "Expert PROS": counts["positives"],
                "Expert CONS": counts["negatives"],
            }
        )
    return rows


def _ragas(grouped: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for system, recs in grouped.items():
        found = [r["ragas"] for r in recs if r.get("ragas")]
        if not found:
            continue
        names = sorted({k for f in found for k in f})
        row: dict[str, Any] = {"System": system}
        for name in names:
            values = [f[name] for f in found if isinstance(f.get(name), (int, float))]
            row[name] = _mean(values)
        rows.append(row)
    return rows


def build_tables(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{table_id: {"title", "rows"}}`` for every table some record has data for."""
    grouped = _by_system(records)
    builders = {
        "table2": _table2,
        "table3": _table3,
        "table4": _table4,
        "table5": _table5,
        "ragas": _ragas,
    }
    out: dict[str, dict[str, Any]] = {}
    for key, build in builders.items():
        rows = build(grouped)
        if rows:
            out[key] = {"title": TABLE_TITLES[key], "rows": rows}
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def to_markdown(table: dict[str, Any]) -> str:
    """One table as a GitHub markdown table under its title.

    Example:
        >>> print(to_markdown({"title": "T", "rows": [{"System": "x", "AR": 0.5, "SF": None}]}))
        ### T
        <BLANKLINE>
        | System | AR | SF |
        | --- | --- | --- |
        | x | 0.50 | - |
    """
    rows = table["rows"]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    lines = [
        f"### {table['title']}",
        "",
        "| " + " | ".join(columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def _plot(tables: dict[str, dict[str, Any]], out_dir: Path) -> list[str]:
    """Bar charts of Tables 2 and 5; returns the written file names."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written: list[str] = []
    specs = [
        ("table2", "table2_rouge_l.png", ["PROS RL", "CONS RL", "PROS BS", "CONS BS"], "F1 x100"),
        ("table5", "table5_tpr_tnr.png", ["TPR", "TNR"], "rate x100"),
        ("table4", "table4_aos.png", ["AR", "SF", "OF"], "x100"),
    ]
    for key, name, columns, ylabel in specs:
        if key not in tables:
            continue
        rows = tables[key]["rows"]
        columns = [c for c in columns if any(r.get(c) is not None for r in rows)]
        if not columns:
            continue
        fig, ax = plt.subplots(figsize=(min(14.0, 4 + 0.6 * len(rows)), 4.8))
        width = 0.8 / len(columns)
        for i, column in enumerate(columns):
            xs = [j + i * width for j in range(len(rows))]
            ax.bar(xs, [r.get(column) or 0.0 for r in rows], width=width, label=column)
        ax.set_xticks([j + width * (len(columns) - 1) / 2 for j in range(len(rows))])
        ax.set_xticklabels([r["System"] for r in rows], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(tables[key]["title"], fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / name, dpi=110)
        plt.close(fig)
        written.append(name)
    return written


def write_tables(
    records: Sequence[dict[str, Any]],
    out_dir: str | Path,
    *,
    skipped: dict[str, str] | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Write ``tables.md``/``.json``, each ``<table>.md``/``.json``, the AOS breakdown and plots.

    Args:
        records: The evaluator's metric records.
        out_dir: Output directory.
        skipped: ``{table_id: reason}`` for tables that were not computed.
        plots: Draw PNG plots when matplotlib is available.

    Returns:
        ``{"tables": ..., "skipped": ..., "plots": [...], "notes": [...]}``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = build_tables(records)
    skipped = {k: v for k, v in (skipped or {}).items() if k not in tables}
    notes: list[str] = []
    sections = ["# Evaluation", ""]
    for key, table in tables.items():
        (out / f"{key}.md").write_text(to_markdown(table) + "\n", encoding="utf-8")
        (out / f"{key}.json").write_text(json.dumps(table, indent=1), encoding="utf-8")
        sections += [to_markdown(table), ""]
    for key, reason in skipped.items():
        sections += [f"### {TABLE_TITLES.get(key, key)}", "", f"Not computed: {reason}", ""]
    breakdown = [item for r in records for item in (r.get("aos") or [])]
    if breakdown:
        with (out / "aos_breakdown.jsonl").open("w", encoding="utf-8") as handle:
            for item in breakdown:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    written = _plot(tables, out) if plots else []
    if plots and not written and tables:
        notes.append(
            "PNG plots skipped: matplotlib is not installed (pip install 'opinio-agents[eval]')"
        )
    if notes:
        sections += ["", *[f"> {n}" for n in notes]]
    (out / "tables.md").write_text("\n".join(sections) + "\n", encoding="utf-8")
    summary = {"tables": tables, "skipped": skipped, "plots": written, "notes": notes}
    (out / "tables.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary
