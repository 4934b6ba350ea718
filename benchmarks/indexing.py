"""Indexing and query benchmark: prints a markdown table (no timing is asserted anywhere).

For synthetic entities of ~10.5K and ~50K sentences (the paper's average and a
large entity) it measures, in one run and side by side:

* raw MiniLM encoding throughput (sentences/s) — the baseline;
* the full ``index`` pipeline throughput (segment, App. D tokens, catalog,
  embeddings, Chroma, blended sentiment, BM25) and its ratio to raw encoding;
* re-indexing the unchanged entity (time and share of the first run);
* hybrid / BM25 / dense query latency p50 / p95, and ``rank_bm25`` (the paper's
  library) on the same tokens as a BM25 baseline;
* peak RSS of the process.

Usage:
    python benchmarks/indexing.py                     # both sizes
    python benchmarks/indexing.py --reviews 1500      # one size (~10.5K sentences)
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERIES = [
    "wi-fi", "breakfast buffet", "shuttle service", "pool", "parking", "room decor", "noise level",
    "air conditioning", "front desk staff", "location", "bed comfort", "bathroom", "gym", "restaurant",
    "price", "view", "elevators", "housekeeping", "spa", "bar", "check-in", "cleanliness", "towels",
    "coffee", "balcony",
]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bench(reviews: int, seed: int, rounds: int) -> dict[str, float]:
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.embeddings import get_encoder
    from opinio_agents.indexing import Indexer
    from opinio_agents.retrieval import RetrieverFactory
    from opinio_agents.stores import SentenceStore
    from opinio_agents.text.segment import segment_entity

    entity = generate_dataset(n_entities=1, reviews_per_entity=reviews, seed=seed).entities[0]
    texts = [s.text for s in segment_entity(entity)]
    encoder = get_encoder()
    encoder.encode(texts[:64])  # load + warm up

    t0 = time.perf_counter()
    encoder.encode(texts)
    raw = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        index = SentenceStore(Path(tmp))
        t0 = time.perf_counter()
        stats = Indexer(index, encoder).index_entity(entity, show_progress=True)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        Indexer(SentenceStore(Path(tmp)), encoder).index_entity(entity)
        again = time.perf_counter() - t0

        factory = RetrieverFactory(index, encoder)
        query_vectors = encoder.encode(QUERIES)
        latency: dict[str, list[float]] = {"hybrid": [], "bm25": [], "dense": []}
        for kind in latency:
            factory.retrieve(entity.key, QUERIES[0], retriever=kind)  # warm caches
            for _ in range(rounds):
                for query, vector in zip(QUERIES, query_vectors):
                    t0 = time.perf_counter()
                    factory.retrieve(entity.key, query, retriever=kind, top_k=10, query_embedding=vector)
                    latency[kind].append((time.perf_counter() - t0) * 1000)

        rank_ms: list[float] = []
        try:
            from rank_bm25 import BM25Okapi

            from opinio_agents.text.preprocess import tokenize_for_bm25

            reference = BM25Okapi([list(s.tokens) for s in index.sentences(entity.key)])
            for query in QUERIES * rounds:
                t0 = time.perf_counter()
                scores = reference.get_scores(tokenize_for_bm25(query))
                np.argsort(-scores)[:10]
                rank_ms.append((time.perf_counter() - t0) * 1000)
        except ImportError:
            pass

    n = len(texts)
    row = {
        "sentences": n,
        "raw_sps": n / raw,
        "pipeline_sps": n / first,
        "ratio": raw / first,
        "first_s": first,
        "reindex_s": again,
        "reindex_share": again / first,
        "embed_s": stats.timings.get("embed", 0.0),
        "peak_rss_mb": peak_rss_mb(),
    }
    for kind, values in latency.items():
        row[f"{kind}_p50"] = percentile(values, 50)
        row[f"{kind}_p95"] = percentile(values, 95)
    if rank_ms:
        row["rank_bm25_p50"] = percentile(rank_ms, 50)
        row["rank_bm25_p95"] = percentile(rank_ms, 95)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, nargs="*", default=[1500, 7000], help="reviews per synthetic entity")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=4, help="passes over the 25 queries")
    args = parser.parse_args()

    import torch

    rows = []
    for reviews in args.reviews:
        print(f"benchmarking an entity with {reviews} reviews ...", file=sys.stderr)
        rows.append(bench(reviews, args.seed, args.rounds))

    print(f"\ntorch threads: {torch.get_num_threads()}, batch 64, all-MiniLM-L6-v2 on CPU\n")
    print(
        "| sentences | raw encode (sent/s) | index pipeline (sent/s) | pipeline / raw | first index (s) "
        "| re-index unchanged (s) | re-index / first | peak RSS (MB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['sentences']:,} | {r['raw_sps']:.0f} | {r['pipeline_sps']:.0f} | {r['ratio']:.2f} "
            f"| {r['first_s']:.1f} | {r['reindex_s']:.2f} | {100 * r['reindex_share']:.1f}% | {r['peak_rss_mb']:.0f} |"
        )
    print("\n| sentences | hybrid p50 / p95 (ms) | BM25 p50 / p95 (ms) | dense p50 / p95 (ms) "
          "| rank_bm25 baseline p50 / p95 (ms) |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        base = (
            f"{r['rank_bm25_p50']:.1f} / {r['rank_bm25_p95']:.1f}"
            if "rank_bm25_p50" in r
            else "n/a (pip install rank-bm25)"
        )
        print(
            f"| {r['sentences']:,} | {r['hybrid_p50']:.1f} / {r['hybrid_p95']:.1f} "
            f"| {r['bm25_p50']:.1f} / {r['bm25_p95']:.1f} | {r['dense_p50']:.1f} / {r['dense_p95']:.1f} | {base} |"
        )
    print(f"\n({len(QUERIES) * args.rounds} queries per retriever; query embeddings precomputed, as the pipeline does)")


if __name__ == "__main__":
    main()
