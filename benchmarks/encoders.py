"""Encoder backends on real review sentences: agreement with torch fp32 and speed, in one run.

For each backend (``onnx``, ``onnx-int8``) against ``torch`` fp32, on the sentences
of real reviews (``../shared/data/real-reviews``, or ``$OPINIO_REAL_REVIEWS``):

* **cosine** of each sentence's vector to its torch fp32 vector: mean, 5th
  percentile and minimum;
* **dense top-10 overlap**: for every entity and query (the set's expert queries plus
  25 generic aspects), the share of the torch fp32 top-10 sentences (cosine, within
  the entity) that the backend's top-10 also holds; queries are encoded one at a time,
  as at query time;
* **rate**: sentences per second of each backend on the same sentences, sorted the
  same way (the machine is shared: compare within the run).

The quality gate of a faster backend (``onnx-int8``, opt-in) before it may be the default: mean
cosine >= 0.98 and top-10 overlap >= 0.9, and SPACE-dev ROUGE-L within 0.3 of fp32:
``OPINIO_ENCODER=onnx python benchmarks/real_reviews.py --sets space_dev`` beside ``OPINIO_ENCODER=onnx-int8``.

Usage:
    nice -n 10 python benchmarks/encoders.py                              # space_dev, 8 hotels
    nice -n 10 python benchmarks/encoders.py --sets space_dev,zomato --entities 5
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from data_paths import real_reviews_dir  # this folder's module (the script runs from here)

GENERIC = [
    "wi-fi", "breakfast", "staff", "pool", "parking", "room", "noise", "air conditioning", "location",
    "bed comfort", "bathroom", "price", "view", "cleanliness", "check-in", "restaurant", "service",
    "food", "value for money", "shower", "elevator", "bar", "quality", "delivery", "battery life",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="space_dev", help="comma-separated real-review sets")
    parser.add_argument("--entities", type=int, default=8, help="entities per set")
    parser.add_argument("--backends", default="onnx,onnx-int8")
    args = parser.parse_args()

    folder = real_reviews_dir()
    if folder is None:
        print("no real-reviews folder found (set OPINIO_REAL_REVIEWS); nothing to run")
        return 0
    from opinio_agents.embeddings import get_encoder
    from opinio_agents.io.loaders import iter_entities
    from opinio_agents.text.segment import segment_entity

    groups: list[tuple[str, list[str], list[str]]] = []  # (entity, sentence texts, queries)
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        path = folder / f"{name}.json"
        if not path.is_file():
            print(f"{path} is missing; skipped", file=sys.stderr)
            continue
        for i, entity in enumerate(iter_entities(path)):
            if i >= args.entities:
                break
            texts = [s.text for s in segment_entity(entity)]
            expert = entity.expert_review.queries if entity.expert_review else []
            groups.append((f"{name}:{entity.key}", texts, list(dict.fromkeys([*expert, *GENERIC]))))
    texts = [t for _, group, _ in groups for t in group]
    if not texts:
        print("no sentences found; nothing to run")
        return 0
    print(f"{len(texts):,} sentences of {len(groups)} entities ({args.sets})", file=sys.stderr)

    def run(backend: str) -> tuple[np.ndarray, float, dict[str, np.ndarray]]:
        encoder = get_encoder(backend=backend)
        encoder.encode(texts[:64])  # load (and export, the first time) and warm up
        started = time.perf_counter()
        vectors = encoder.encode(texts)
        rate = len(texts) / (time.perf_counter() - started)
        queries = {q for _, _, qs in groups for q in qs}
        return vectors, rate, {q: encoder.encode([q])[0] for q in sorted(queries)}

    reference, reference_rate, reference_queries = run("torch")
    rows = [("torch (fp32 reference)", 1.0, 1.0, 1.0, 1.0, reference_rate)]
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        vectors, rate, query_vectors = run(backend)
        cosines = (vectors * reference).sum(axis=1)
        overlaps = []
        start = 0
        for _, group, queries in groups:
            ref_block = reference[start : start + len(group)]
            block = vectors[start : start + len(group)]
            start += len(group)
            k = min(10, len(group))
            for query in queries:
                expected = set(np.argsort(-(ref_block @ reference_queries[query]))[:k])
                got = set(np.argsort(-(block @ query_vectors[query]))[:k])
                overlaps.append(len(expected & got) / k)
        rows.append((
            backend, float(cosines.mean()), float(np.percentile(cosines, 5)), float(cosines.min()),
            float(np.mean(overlaps)), rate,
        ))

    print(f"\n{len(texts):,} real review sentences ({args.sets}, {len(groups)} entities); "
          f"{sum(len(q) for _, _, q in groups)} entity-query pairs for the top-10 overlap\n")
    print("| backend | mean cosine to torch fp32 | p5 cosine | min cosine | dense top-10 overlap "
          "| rate (sent/s) | rate / torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, mean, p5, low, overlap, rate in rows:
        print(
            f"| {name} | {mean:.4f} | {p5:.4f} | {low:.4f} | {overlap:.3f} | {rate:.0f} "
            f"| {rate / reference_rate:.2f} |"
        )
    print("\nVector gate of a default backend: mean cosine >= 0.98, top-10 overlap >= 0.9.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
