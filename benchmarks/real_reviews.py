"""Real reviews against human summaries: every reference set in ``../shared/data/real-reviews`` present.

Runs the evaluation of :mod:`opinio_agents.evaluation.human` (the system and
the random / BM25 top-2 / LexRank / centroid / oracle baselines, in the same
run) on each set found:

* ``space_dev`` - SPACE dev hotels: ``aspect`` and ``general`` tasks;
* ``fewsum`` - FewSum Amazon/Yelp: ``general``;
* ``oposum`` - OpoSum Amazon products: ``general`` (extractive human summaries).

Each set is indexed once into ``--store-root/<set>`` (default under /tmp, never
the repository), so reruns reuse the embeddings. Tables (markdown, JSON) and a
PNG per set go to ``--out/<set>``; the markdown is also printed. Without any
set present it prints why and exits 0.

Usage:
    python benchmarks/real_reviews.py                          # every set present
    python benchmarks/real_reviews.py --sets space_dev --entities 5
    python benchmarks/real_reviews.py --sets fewsum --splits val                # FewSum dev only (also per domain)
    python benchmarks/real_reviews.py --sets space_dev --encoder torch       # fp32 reference backend
    python benchmarks/real_reviews.py --sets space_dev --tasks general --baselines none   # the system only: fast reruns
    python benchmarks/real_reviews.py --sets space_dev --tasks general --baselines none --hiro-seeds 0,1,2,3

The query-free (general) summary is built on the HIRO hierarchy's clusters, and one k-means fit is one
draw: ``--hiro-seeds`` also copies each set's store once per seed (``<set>-hiro-seed<S>``, beside it),
refits each copy's hierarchy with that seed and scores the general task on it, then prints the mean RL and
specificity margin over the seeds (compare changes of the general summary on that mean, not on one fit).
    OPINIO_REAL_REVIEWS=/path/to/real-reviews python benchmarks/real_reviews.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from data_paths import NO_DATA, real_reviews_dir  # this folder's module (the script runs from here)

#: set name -> tasks that apply.
SETS: dict[str, tuple[str, ...]] = {
    "space_dev": ("aspect", "general"),
    "fewsum": ("general",),
    "oposum": ("general",),
}


#: reference splits kept aside for independent evaluation: never run here.
HELD_OUT_SPLITS = frozenset({"test"})


def reference_splits(path: Path) -> dict[str, str | None]:
    """Entity id -> the ``split`` its reference entry names (None when it names none)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): (v.get("split") if isinstance(v, dict) else None) for k, v in raw.items()}


def reference_domains(path: Path) -> dict[str, str]:
    """Entity id -> the ``domain`` its reference entry names (FewSum: amazon, yelp), for entries that name one."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v["domain"]) for k, v in raw.items() if isinstance(v, dict) and v.get("domain")}


def domain_tables(records: list[dict[str, Any]], domains: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """Per domain (when the set's entities name two or more), the tables of its entities' records alone.

    Example:
        >>> recs = [{"task": "general", "system": "x", "entity_id": e, "unit": "general", "R1": r, "R2": 0.0,
        ...          "RL": r, "words": 50} for e, r in (("a", 10.0), ("b", 20.0))]
        >>> [(d, t["general"]["rows"][0]["RL"]) for d, t in domain_tables(recs, {"a": "amazon", "b": "yelp"})]
        [('amazon', 10.0), ('yelp', 20.0)]
    """
    from opinio_agents.evaluation.human import summarize_records

    present = sorted({domains[r["entity_id"]] for r in records if r["entity_id"] in domains})
    if len(present) < 2:
        return []
    return [
        (domain, summarize_records([r for r in records if domains.get(r["entity_id"]) == domain]))
        for domain in present
    ]



def baselines_arg(text: str | None) -> list[str] | None:
    """The ``--baselines`` argument: None for every baseline that applies, ``none`` for the system only.

    Example:
        >>> baselines_arg(None), baselines_arg("none"), baselines_arg("lexrank,centroid")
        (None, [], ['lexrank', 'centroid'])
    """
    return None if text is None else [b for b in text.split(",") if b and b != "none"]


def dev_entities(
    folder: Path, name: str, *, splits: str | None = None, limit: int | None = None
) -> tuple[Any, list[Any]]:
    """The references of set ``name`` and its entities to run: never one of a held-out split.

    Args:
        folder: The real-reviews folder.
        name: The set (``space_dev``, ``fewsum``, ``oposum``).
        splits: Comma-separated reference splits to keep (e.g. ``val``); None: every non-held-out one.
        limit: Only the first N entities.
    """
    from opinio_agents.evaluation.human import load_references
    from opinio_agents.io.loaders import iter_entities

    refs = load_references(folder / f"{name}.refs.json")
    split_of = reference_splits(folder / f"{name}.refs.json")
    keep = {k for k, split in split_of.items() if split not in HELD_OUT_SPLITS}
    if splits:
        wanted = {s.strip() for s in splits.split(",") if s.strip()}
        keep = {k for k in keep if split_of[k] in wanted}
    held_out = sum(1 for split in split_of.values() if split in HELD_OUT_SPLITS)
    if held_out:
        print(f"{name}: {held_out} entities of a held-out split left out (never run)", file=sys.stderr)
    entities = [e for e in iter_entities(folder / f"{name}.json") if e.key in refs and e.key in keep]
    return refs, entities[:limit] if limit else entities


def seed_copy(store: Path, seed: int) -> Path:
    """A copy of ``store`` beside it whose HIRO hierarchy is fitted with ``seed`` (made once, then reused)."""
    from opinio_agents.hiro.store import HiroIndex
    from opinio_agents.stores import SentenceStore

    copy = store.with_name(f"{store.name}-hiro-seed{seed}")
    if not (copy / "hiro").is_dir():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(store, copy, ignore=shutil.ignore_patterns("hiro", "writer.lock"))
        HiroIndex(SentenceStore(copy), seed=seed).fit()
    return copy


def general_over_seeds(
    store: Path, seeds: list[int], refs: Any, keys: list[str], out: Path, encoder: str | None
) -> list[dict[str, Any]]:
    """The general task's mean RL and margin on one refitted copy of ``store`` per seed, one row each."""
    from opinio_agents.api import OpinioRAG
    from opinio_agents.evaluation.human import HumanEvalConfig, HumanReferenceEvaluator

    rows = []
    for seed in seeds:
        rag = OpinioRAG(store_dir=seed_copy(store, seed), encoder=encoder)
        evaluator = HumanReferenceEvaluator(rag, refs, HumanEvalConfig(tasks=("general",), baselines=[]))
        records = [r for r in evaluator.run(keys) if r["system"] == "opinio"]
        rag.close()
        out.mkdir(parents=True, exist_ok=True)
        with open(out / f"general_seed{seed}.jsonl", "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in records)
        rows.append({
            "seed": seed,
            "RL": statistics.mean(r["RL"] for r in records),
            "margin": statistics.mean(r["margin"] for r in records if r.get("margin") is not None),
        })
    return rows


def seeds_markdown(rows: list[dict[str, Any]], label: str) -> str:
    """The per-seed general rows and their mean as a markdown table.

    Example:
        >>> print(seeds_markdown([{"seed": 0, "RL": 27.0, "margin": 2.0}, {"seed": 1, "RL": 26.0, "margin": 1.0}], "x"))
        ### x general over hierarchy seeds
        <BLANKLINE>
        | seed | RL | margin |
        |---|---|---|
        | 0 | 27.00 | 2.00 |
        | 1 | 26.00 | 1.00 |
        | mean | 26.50 | 1.50 |
    """
    lines = [f"### {label} general over hierarchy seeds", "", "| seed | RL | margin |", "|---|---|---|"]
    lines += [f"| {r['seed']} | {r['RL']:.2f} | {r['margin']:.2f} |" for r in rows]
    mean_rl = statistics.mean(r["RL"] for r in rows)
    mean_margin = statistics.mean(r["margin"] for r in rows)
    lines.append(f"| mean | {mean_rl:.2f} | {mean_margin:.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS), help="Comma-separated sets (default: all present).")
    parser.add_argument("--entities", type=int, default=None, help="Only the first N entities of each set.")
    parser.add_argument("--tasks", default=None, help="Restrict tasks (aspect,general).")
    parser.add_argument(
        "--store-root", type=Path, default=Path(tempfile.gettempdir()) / "opinio-real-reviews-store"
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "opinio-real-reviews-out")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument(
        "--splits", default=None,
        help="Only entities whose reference 'split' is one of these (comma-separated, e.g. val); "
        "entities of a 'test' split are never run.",
    )
    parser.add_argument(
        "--encoder", choices=["torch", "onnx", "onnx-int8"], default=None,
        help="Encoder backend (default: auto); each gets its own store and output folder (<set>-<encoder>).",
    )
    parser.add_argument(
        "--baselines", default=None,
        help="Comma-separated baselines to run beside the system (default: all that apply; 'none': the system only).",
    )
    parser.add_argument(
        "--hiro-seeds", default=None,
        help="Comma-separated HIRO seeds: also score the general task on a copy of each set's store refitted "
        "with each seed, and print the mean (see above).",
    )
    args = parser.parse_args()
    baselines = baselines_arg(args.baselines)
    seeds = [int(s) for s in args.hiro_seeds.split(",") if s.strip()] if args.hiro_seeds else []
    folder = real_reviews_dir()
    if folder is None:
        print(NO_DATA)
        return 0
    wanted = [s.strip() for s in args.sets.split(",") if s.strip()]
    present = [s for s in wanted if (folder / f"{s}.json").is_file() and (folder / f"{s}.refs.json").is_file()]
    if not present:
        print(f"none of {', '.join(wanted)} is present in {folder}; nothing to run")
        return 0

    from opinio_agents.api import OpinioRAG
    from opinio_agents.evaluation.human import (
        HumanEvalConfig,
        HumanReferenceEvaluator,
        human_tables_markdown,
        write_human_tables,
    )

    for name in present:
        tasks = SETS.get(name, ("general",))
        if args.tasks:
            tasks = tuple(t for t in tasks if t in args.tasks.split(","))
        if not tasks:
            continue
        refs, entities = dev_entities(folder, name, splits=args.splits, limit=args.entities)
        folder_name = f"{name}-{args.encoder}" if args.encoder else name
        rag = OpinioRAG(store_dir=args.store_root / folder_name, encoder=args.encoder)
        rag.index(entities, show_progress=True)
        evaluator = HumanReferenceEvaluator(
            rag, refs, HumanEvalConfig(tasks=tasks, baselines=baselines, show_progress=True)  # type: ignore[arg-type]
        )
        records = evaluator.run([e.key for e in entities])
        summary = write_human_tables(
            records,
            args.out / folder_name,
            label=name,
            plots=not args.no_plots,
            extra={"general_budget_words": evaluator.general_words, "entities": len(entities)},
        )
        print(human_tables_markdown(summary["tables"], label=name) + "\n")
        for domain, tables in domain_tables(records, reference_domains(folder / f"{name}.refs.json")):
            print(human_tables_markdown(tables, label=f"{name} {domain}") + "\n")
        for note in summary["notes"]:
            print(note, file=sys.stderr)
        print(f"wrote {args.out / folder_name}", file=sys.stderr)
        rag.close()
        if seeds and "general" in tasks:
            rows = general_over_seeds(
                args.store_root / folder_name, seeds, refs, [e.key for e in entities],
                args.out / folder_name, args.encoder,
            )
            print(seeds_markdown(rows, name) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
