"""Planted-opinion recovery: does every planted aspect land on its planted side?

Generates synthetic entities with planted opinions (aspect, polarity, prevalence),
indexes them, runs the extractive pipeline with the planted aspects as queries
(the synthetic expert review) and prints, per retriever, the share of planted
PROS found among the PROS and planted CONS among the CONS, plus how many
queries also got a minority highlight on the other side.

Usage:
    python benchmarks/planted.py --entities 5 --reviews 300 --seed 21
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=5)
    parser.add_argument("--reviews", type=int, default=300)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()

    from opinio_agents.datasets import generate_dataset
    from opinio_agents.indexing import Indexer
    from opinio_agents.pipeline import HighlightPipeline
    from opinio_agents.retrieval import RetrieverFactory
    from opinio_agents.stores import SentenceStore

    data = generate_dataset(n_entities=args.entities, reviews_per_entity=args.reviews, seed=args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        index = SentenceStore(Path(tmp))
        Indexer(index).index_entities(data.entities, show_progress=True)
        factory = RetrieverFactory(index)
        print(f"\n{args.entities} entities x {args.reviews} reviews, seed {args.seed}, top-{args.top_k}\n")
        print("| retriever | planted | on the planted side | recall | also a minority highlight |")
        print("|---|---:|---:|---:|---:|")
        for retriever in ("bm25", "dense", "hybrid"):
            pipeline = HighlightPipeline(factory, retriever=retriever, top_k=args.top_k)
            planted = found = minority = 0
            misses: list[str] = []
            for entity in data.entities:
                result = pipeline.run(entity.key)
                truth = data.truth[entity.key]
                sides = {"pros": {h.query for h in result.pros}, "cons": {h.query for h in result.cons}}
                for side, other in (("pros", "cons"), ("cons", "pros")):
                    for aspect in truth[side]:
                        planted += 1
                        if aspect in sides[side]:
                            found += 1
                        else:
                            misses.append(f"{entity.key}:{aspect} ({side})")
                        minority += aspect in sides[other]
            print(f"| {retriever} | {planted} | {found} | {100 * found / planted:.1f}% | {minority} |")
            if misses:
                print(f"|   missed: {', '.join(misses)} | | | | |")


if __name__ == "__main__":
    main()
