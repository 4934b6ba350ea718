"""Query latency of the façade's cached retrievers, beside the uncached LlamaIndex path, in one run.

For each entity size (a synthetic entity made with ``opinio synth``'s generator, indexed
once into ``--work-dir`` and reused by later runs) the script measures, per query:

* ``façade, cached``: ``OpinioRAG.retrieve`` as the pipeline calls it. The query's vector
  comes from the query cache (it was embedded before, e.g. for another entity); the
  scores are computed on the entity's cached BM25 matrix and stored vectors.
* ``façade, first time``: the same call for a query text never seen before (its
  embedding is computed: one MiniLM forward pass).
* ``LlamaIndex, embedding given``: the entity's cached LlamaIndex retriever objects
  (``RetrieverFactory.retriever``: OpinioBM25Retriever, the Chroma-backed dense
  retriever, ``QueryFusionRetriever``) with the query vector passed in a ``QueryBundle``.
* ``uncached baseline``: what a query cost before the query path was reworked: the
  LlamaIndex retriever objects embedding every query again (``OfflineSentenceEmbedding``
  over the encoder, no cache).

``aspects()`` and query-free highlights are measured by ``benchmarks/hiro_latency.py`` (same
entities, same work directory).

All figures of a table come from one process, one after the other, so they can be
compared with each other (the machine is shared and noisy); p50 and p95 over the
queries, every query repeated ``--repeat`` times.

Usage:
    python benchmarks/query_latency.py                                 # ~10.5K and ~50K sentences
    python benchmarks/query_latency.py --reviews 1500 --work-dir /tmp/qlat --prepare-only
    python benchmarks/query_latency.py --reviews 1500 6950 --repeat 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

QUERIES = [
    "wi-fi", "breakfast buffet", "parking", "pool", "front desk staff", "room cleanliness", "noise at night",
    "bed comfort", "shower pressure", "location", "price", "air conditioning", "elevators", "minibar",
    "room decor", "lobby", "bar", "restaurant", "check-in", "view", "gym", "spa", "housekeeping", "towels",
    "coffee", "street noise", "airport shuttle", "late checkout", "bathroom", "carpet",
]


def _ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return 1000 * statistics.median(ordered), 1000 * p95


def prepare(work_dir: Path, reviews: int, seed: int) -> tuple[Path, str, int]:
    """Index (once) a synthetic entity of ``reviews`` reviews; ``(store, entity key, sentences)``."""
    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset

    store = work_dir / f"store-{reviews}-{seed}"
    entity = generate_dataset(1, reviews, seed=seed).entities[0]
    rag = OpinioRAG(store)
    if not rag.indexer.up_to_date(entity):
        started = time.perf_counter()
        rag.index(entity, show_progress=True)
        print(f"indexed {reviews} reviews in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    elif not rag.hiro_fitted:
        rag.fit_hiro()
    n = rag.store.count_sentences(entity.key)
    rag.close()
    return store, entity.key, n


def measure(store: Path, key: str, repeat: int) -> dict[str, Any]:
    from llama_index.core.schema import QueryBundle

    from opinio_agents.api import OpinioRAG
    from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding

    rag = OpinioRAG(store)
    factory = rag.retrievers
    rows: dict[str, Any] = {"sentences": rag.store.count_sentences(key)}
    encoder = factory.encoder  # CachedQueryEncoder
    encoder.encode(QUERIES)  # as if asked before (for another entity, or by an earlier process)
    rag.retrieve(key, "warm-up", retriever="hybrid")  # loads the BM25 matrix and the stored vectors once
    for kind in ("bm25", "dense", "hybrid"):
        factory.retriever(key, kind, top_k=10).retrieve(
            QueryBundle("warm-up", embedding=[float(x) for x in encoder.encode(["x"])[0]])
        )
    uncached_embed = OfflineSentenceEmbedding(encoder.inner)
    timings: dict[str, dict[str, list[float]]] = {}
    for kind in ("bm25", "dense", "hybrid"):
        paths: dict[str, list[float]] = {
            "facade_cached": [], "facade_first": [], "llamaindex_given": [], "uncached": []
        }
        retriever = factory.retriever(key, kind, top_k=10)
        for r in range(repeat):
            for i, query in enumerate(QUERIES):
                started = time.perf_counter()
                rag.retrieve(key, query, retriever=kind, top_k=10)
                paths["facade_cached"].append(time.perf_counter() - started)

                fresh = f"{query} {kind} {r}-{i}"  # a text never embedded before
                started = time.perf_counter()
                rag.retrieve(key, fresh, retriever=kind, top_k=10)
                paths["facade_first"].append(time.perf_counter() - started)

                vector = [float(x) for x in encoder.encode([query])[0]]
                started = time.perf_counter()
                retriever.retrieve(QueryBundle(query_str=query, embedding=vector))
                paths["llamaindex_given"].append(time.perf_counter() - started)

                started = time.perf_counter()
                embedding = None if kind == "bm25" else uncached_embed.get_query_embedding(query)
                retriever.retrieve(QueryBundle(query_str=query, embedding=embedding))
                paths["uncached"].append(time.perf_counter() - started)
        timings[kind] = paths
    rows["retrieval"] = {kind: {path: _ms(v) for path, v in paths.items()} for kind, paths in timings.items()}

    rows["cache"] = {"hits": encoder.stats.hits, "disk_hits": encoder.stats.disk_hits, "misses": encoder.stats.misses}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--reviews", type=int, nargs="*", default=[1500, 6950], help="reviews per entity (~7.2 sentences each)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/opinio-query-latency"))
    parser.add_argument("--prepare-only", action="store_true", help="index the entities and stop")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    args.work_dir.mkdir(parents=True, exist_ok=True)

    results = []
    for reviews in args.reviews:
        store, key, n = prepare(args.work_dir, reviews, args.seed)
        if args.prepare_only:
            print(f"{store}: entity {key}, {n:,} sentences", file=sys.stderr)
            continue
        row = measure(store, key, args.repeat)
        row["reviews"] = reviews
        results.append(row)
    if args.prepare_only:
        return

    labels = {
        "facade_cached": "façade, query vector cached",
        "facade_first": "façade, query never seen (embedded)",
        "llamaindex_given": "LlamaIndex retrievers, vector given",
        "uncached": "uncached baseline (LlamaIndex, embeds every query)",
    }
    print("\n| sentences | retriever | path | p50 ms | p95 ms | x faster than baseline (p50) |")
    print("|---:|---|---|---:|---:|---:|")
    for row in results:
        for kind, paths in row["retrieval"].items():
            base = paths["uncached"][0]
            for path, (p50, p95) in paths.items():
                speedup = base / max(p50, 1e-9)
                print(f"| {row['sentences']:,} | {kind} | {labels[path]} | {p50:.2f} | {p95:.2f} | {speedup:.1f} |")
    print("\nTargets (issue 14 item 6): hybrid, query vector cached, p50 <= 5 ms at ~10.5K sentences and <= 15 ms "
          "at ~50K. aspects() and query-free highlights: benchmarks/hiro_latency.py.")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), "utf-8")


if __name__ == "__main__":
    main()
