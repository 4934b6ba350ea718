"""HIRO benchmark: representation quality per depth, planted-aspect recall, timings at paper size.

Run:
    python benchmarks/hiro.py                       # full run (~10.5K-sentence entity)
    python benchmarks/hiro.py --reviews 300         # quicker

Prints markdown tables:

1. purity, colocation and purity - colocation per depth (tf-idf similarity, as
   in the paper, and MiniLM cosine) on real text: the shipped sample and the
   SemEval-2015 hotel sentences (read from ``../shared/data`` at run time if
   present), for the per-node tree and the shared-codebook (paper baseline)
   residual k-means;
2. time to index (segment + embed), fit the hierarchy, and cluster/retrieve
   for a synthetic paper-sized entity (1500 reviews, ~10.5K sentences) with a
   few other entities as the baseline corpus;
3. recall of the dominant planted aspects (prevalence >= 0.3) among the
   discovered aspects without queries, and on the planted side.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import numpy as np
from data_paths import SHARED_DATA  # this folder's module (the script runs from here)

from opinio_agents.datasets import sample_path
from opinio_agents.datasets.synthetic import generate_entity
from opinio_agents.embeddings import get_encoder
from opinio_agents.hiro import HiroIndex, ResidualKMeansIndexer, depth_quality, discover_aspects, tfidf_quality
from opinio_agents.hiro.evaluation import planted_recall
from opinio_agents.hiro.retriever import retrieve_clusters
from opinio_agents.indexing import Indexer
from opinio_agents.models import Entity
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.text.preprocess import tokenize_for_bm25

SEMEVAL = SHARED_DATA / "semeval15-hotels" / "hotels_aspects.csv"


def _quality_rows(name: str, texts: list[str], vectors: np.ndarray, depth: int, seed: int) -> list[str]:
    tokens = [tokenize_for_bm25(t) for t in texts]
    rows = []
    for tree in (True, False):
        indexer = ResidualKMeansIndexer(n_codes=12, depth=depth, seed=seed, tree=tree).fit(vectors)
        paths = indexer.encode(vectors)
        lexical = tfidf_quality(tokens, paths)
        dense = depth_quality(vectors, paths)
        for lx, dn in zip(lexical, dense):
            rows.append(
                f"| {name} | {'tree' if tree else 'shared'} | {lx.depth} | {lx.clusters} | {lx.purity:.3f} | "
                f"{lx.colocation:.3f} | **{lx.score:.3f}** | {dn.score:.3f} |"
            )
    return rows


def quality_section(encoder, depth: int, seed: int) -> str:
    import json

    corpora: list[tuple[str, list[str]]] = []
    sample = json.loads(Path(sample_path()).read_text(encoding="utf-8"))
    from opinio_agents.models import Review
    from opinio_agents.text.segment import segment_review

    sample_sents = [
        s.text
        for entity in sample
        for review in entity["user_reviews"]
        for s in segment_review(entity["entity_id"], Review.model_validate(review))
    ]
    corpora.append((f"sample ({len(sample_sents)} sents)", sample_sents))
    if SEMEVAL.is_file():
        with SEMEVAL.open(encoding="utf-8") as handle:
            semeval = [row["raw_text"] for row in csv.DictReader(handle) if row.get("raw_text", "").strip()]
        corpora.append((f"SemEval-15 hotels ({len(semeval)} sents)", semeval))
        corpora.append((f"sample + SemEval ({len(sample_sents) + len(semeval)})", sample_sents + semeval))
    lines = [
        "### Representation quality (K = 12): purity - colocation per depth",
        "",
        "| corpus | codebooks | depth | clusters | purity (tf-idf) | colocation (tf-idf) | P - C (tf-idf)"
        " | P - C (MiniLM cos) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, texts in corpora:
        vectors = encoder.encode(texts)
        lines += _quality_rows(name, texts, vectors, depth, seed)
    return "\n".join(lines)


def paper_size_section(encoder, reviews: int, others: int, other_reviews: int, seed: int, store: Path) -> str:
    t0 = time.perf_counter()
    records = [generate_entity(0, reviews, seed=seed)] + [
        generate_entity(i, other_reviews, seed=seed) for i in range(1, others + 1)
    ]
    entities = [Entity.model_validate(r) for r, _ in records]
    planted = {e.key: p for e, (_, p) in zip(entities, records)}
    gen_s = time.perf_counter() - t0
    index = SentenceStore(store)
    indexer = Indexer(index, encoder)
    t0 = time.perf_counter()
    stats = indexer.index_entity(entities[0])
    index_main = time.perf_counter() - t0
    t0 = time.perf_counter()
    indexer.index_entities(entities[1:])
    index_others = time.perf_counter() - t0
    n_main = len(index.sentences(entities[0].key))
    n_all = sum(len(index.sentences(e.key)) for e in entities)
    hiro = HiroIndex(index, depth=3)
    t0 = time.perf_counter()
    hiro.fit()
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    hiro.baseline()
    encode_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    clusters = retrieve_clusters(hiro, entities[0].key)
    retrieve_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    aspects = discover_aspects(hiro, entities[0].key, top_k=10)
    aspects_s = time.perf_counter() - t0

    lines = [
        f"### Paper-sized entity: {reviews} reviews, {n_main} sentences"
        f" (+{others} baseline entities, {n_all} sentences in all)",
        "",
        "| step | seconds |",
        "|---|---|",
        f"| generate data | {gen_s:.1f} |",
        f"| index the entity (segment, sentiment, embed {n_main} sentences with MiniLM, Chroma, BM25)"
        f" | {index_main:.1f} |",
        f"| of which embedding + Chroma | {stats.timings.get('embed', 0.0):.1f} |",
        f"| index the {others} baseline entities | {index_others:.1f} |",
        f"| fit the hierarchy (K=12, D=3, per-node residual k-means over {n_all} sentences,"
        f" incl. loading vectors) | {fit_s:.1f} |",
        f"| encode all entities + baseline popularity | {encode_s:.1f} |",
        f"| retrieve the top-8 clusters | {retrieve_s:.2f} |",
        f"| discover 10 aspects (retrieve 20 clusters, name, count) | {aspects_s:.2f} |",
        "",
        "Top clusters: " + "; ".join(f"{c.subpaths[0]} score {c.score:.2f}, {c.reviews} reviews" for c in clusters[:4]),
        "",
        "Aspects: " + ", ".join(f"{a.aspect} ({a.mentions}, +{a.positive}/-{a.negative})" for a in aspects),
        "",
        "### Planted-aspect recall without queries (prevalence >= 0.3, top 10 aspects)",
        "",
        "| entity | reviews | planted | found | on the right side | missed |",
        "|---|---|---|---|---|---|",
    ]
    total_p = total_f = total_s = 0
    for entity in entities:
        found = aspects if entity is entities[0] else discover_aspects(hiro, entity.key, top_k=10)
        report = planted_recall(found, planted[entity.key], index.sentences(entity.key))
        total_p += len(report.planted)
        total_f += len(report.found)
        total_s += len(report.right_side)
        missed = sorted(set(report.planted) - set(report.right_side))
        lines.append(
            f"| {entity.key} | {len(entity.user_reviews)} | {len(report.planted)} | {len(report.found)} | "
            f"{len(report.right_side)} | {', '.join(missed) or '-'} |"
        )
    if total_p:
        lines.append(
            f"| **all** | | {total_p} | {total_f} ({total_f / total_p:.0%}) | {total_s} ({total_s / total_p:.0%}) | |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=1500, help="reviews of the paper-sized entity")
    parser.add_argument("--others", type=int, default=3, help="baseline entities")
    parser.add_argument("--other-reviews", type=int, default=300)
    parser.add_argument("--depth", type=int, default=4, help="depth for the quality table")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", type=Path, default=None, help="store directory (default: a temporary one)")
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    encoder = get_encoder()
    t0 = time.perf_counter()
    encoder.encode(["warm up"])
    print(f"_model load: {time.perf_counter() - t0:.1f} s_\n")
    if not args.skip_quality:
        print(quality_section(encoder, args.depth, args.seed), "\n", flush=True)
    if args.store is None:
        with tempfile.TemporaryDirectory() as tmp:
            print(paper_size_section(encoder, args.reviews, args.others, args.other_reviews, args.seed, Path(tmp)))
    else:
        print(paper_size_section(encoder, args.reviews, args.others, args.other_reviews, args.seed, args.store))


if __name__ == "__main__":
    main()
