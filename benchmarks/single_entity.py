"""Each entity alone in its own store: the human-reference evaluation of ``real_reviews.py``, one store per entity.

A user with "thousands of reviews of one hotel" indexes that hotel alone. HIRO's query-free
selection then has no other entity to compare with (its baseline is the entity itself), which is
the case :func:`~opinio_agents.hiro.retriever.hierarchy_baseline` handles. ``real_reviews.py``
indexes a whole set into one store and never meets it; this benchmark indexes each entity of a
set into ``--store-root/<set>/<entity>`` and scores it exactly as ``real_reviews.py`` does
(:class:`~opinio_agents.evaluation.human.HumanReferenceEvaluator`, the same baselines on the same
store), with the specificity margin against the other entities' references added afterwards
(each text against every other entity's references of the same unit).

Usage:
    python benchmarks/single_entity.py --sets space_dev --tasks general
    python benchmarks/single_entity.py --sets fewsum --splits val --baselines none
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from data_paths import NO_DATA, real_reviews_dir  # this folder's modules
from real_reviews import SETS, baselines_arg, dev_entities


def add_margins(records: list[dict[str, Any]], refs: dict[str, Any], use_stemmer: bool = True) -> None:
    """Add ``RL_other`` and ``margin`` to each record: its text against the other entities' references."""
    from opinio_agents.evaluation.human import specificity_margin

    def of(entity: str, unit: str) -> list[str]:
        entry = refs[entity]
        return list(entry.general if unit == "general" else entry.aspects.get(unit, []))

    for record in records:
        unit, key = record["unit"], record["entity_id"]
        others = [of(k, unit) for k in refs if k != key and of(k, unit)]
        if not others or not record.get("text"):
            continue
        other, margin = specificity_margin(record["text"], of(key, unit), others, use_stemmer=use_stemmer)
        record["RL_other"], record["margin"] = other, margin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="space_dev", help="Comma-separated sets (space_dev, fewsum, oposum).")
    parser.add_argument("--entities", type=int, default=None, help="Only the first N entities of each set.")
    parser.add_argument("--tasks", default=None, help="Restrict tasks (aspect,general).")
    parser.add_argument("--splits", default=None, help="Only entities of these reference splits (e.g. val).")
    parser.add_argument("--baselines", default=None, help="Comma-separated baselines ('none': the system only).")
    parser.add_argument(
        "--store-root", type=Path, default=Path(tempfile.gettempdir()) / "opinio-single-entity-store"
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "opinio-single-entity-out")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args()
    baselines = baselines_arg(args.baselines)
    folder = real_reviews_dir()
    if folder is None:
        print(NO_DATA)
        return 0

    from opinio_agents.api import OpinioRAG
    from opinio_agents.evaluation.human import (
        HumanEvalConfig,
        HumanReferenceEvaluator,
        human_tables_markdown,
        write_human_tables,
    )

    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if not (folder / f"{name}.json").is_file() or not (folder / f"{name}.refs.json").is_file():
            print(f"{name} is not present in {folder}; skipped", file=sys.stderr)
            continue
        tasks = SETS.get(name, ("general",))
        if args.tasks:
            tasks = tuple(t for t in tasks if t in args.tasks.split(","))
        refs, entities = dev_entities(folder, name, splits=args.splits, limit=args.entities)
        scored = {e.key: refs[e.key] for e in entities}
        config = HumanEvalConfig(tasks=tasks, baselines=baselines, margin_entities=0)  # type: ignore[arg-type]
        records: list[dict[str, Any]] = []
        words: list[int] = []
        for i, entity in enumerate(entities, 1):
            print(f"[{i}/{len(entities)}] {name} {entity.key}: indexing alone", file=sys.stderr)
            rag = OpinioRAG(store_dir=args.store_root / name / entity.key)
            try:
                rag.index([entity])
                evaluator = HumanReferenceEvaluator(rag, refs, config)
                words.append(evaluator.general_words)
                records.extend(evaluator.run([entity.key]))
            finally:
                rag.close()
        add_margins(records, scored)
        summary = write_human_tables(
            records,
            args.out / name,
            label=f"{name}, one store per entity",
            plots=not args.no_plots,
            extra={"general_budget_words": statistics.mean(words) if words else None, "entities": len(entities)},
        )
        print(human_tables_markdown(summary["tables"], label=f"{name}, one store per entity") + "\n")
        print(f"wrote {args.out / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
