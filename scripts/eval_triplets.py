"""Evaluate the embedded AOS triplet extractor; print markdown tables.

Usage:
    python scripts/eval_triplets.py [--weights opinio_agents/triplets/weights]

1. ASTE v2 dev sets (14lap, 14res, 15res, 16res): exact-match triplet
   precision / recall / F1 on the gold tokenization (implicit-aspect triplets
   are not emitted, as ASTE has none).
2. SemEval-2015 hotels (out of domain; aspects + polarity only): aspect-term
   F1 (case-insensitive exact string match, sentence-level sets) and polarity
   accuracy on the matched aspects (majority sentiment of the aspect's triplets).
3. Throughput: sentences/s of ``extract()`` on raw hotel sentences (CPU,
   encoder + head, after a warm-up batch).
"""

from __future__ import annotations

import argparse
import ast
import csv
import time
from collections import Counter
from pathlib import Path

import torch

from opinio_agents.triplets.aste import read_aste_file
from opinio_agents.triplets.embedded import EmbeddedTripletExtractor
from opinio_agents.triplets.metrics import triplet_scores
from opinio_agents.triplets.training import DATASETS

_POLARITY = {"positive": 1, "negative": -1, "neutral": 0}


def eval_aste(extractor: EmbeddedTripletExtractor, data_dir: Path) -> list[str]:
    """Markdown rows for the ASTE dev sets."""
    rows = ["| dataset | sentences | gold | pred | P | R | F1 |", "|---|---|---|---|---|---|---|"]
    all_pred, all_gold = [], []
    for name in DATASETS:
        examples = read_aste_file(data_dir / name / "dev_triplets.txt")
        preds = extractor.extract_tokens([e.tokens for e in examples])
        pred_sets = [set(p) for p in preds]
        gold_sets = [{(t.aspect, t.opinion, t.sentiment) for t in e.triplets} for e in examples]
        all_pred += pred_sets
        all_gold += gold_sets
        s = triplet_scores(pred_sets, gold_sets)
        rows.append(
            f"| {name} dev | {len(examples)} | {s.n_gold} | {s.n_pred} | "
            f"{100 * s.precision:.1f} | {100 * s.recall:.1f} | {100 * s.f1:.1f} |"
        )
    s = triplet_scores(all_pred, all_gold)
    rows.append(
        f"| all dev (micro) | {len(all_gold)} | {s.n_gold} | {s.n_pred} | "
        f"{100 * s.precision:.1f} | {100 * s.recall:.1f} | {100 * s.f1:.1f} |"
    )
    return rows


def eval_hotels(extractor: EmbeddedTripletExtractor, csv_path: Path) -> tuple[list[str], list[str]]:
    """Markdown rows for the hotel check, and the sentences (for the speed test)."""
    sentences, gold = [], []
    with csv_path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            sentences.append(row["raw_text"])
            terms = ast.literal_eval(row["aspectTerms"])
            gold.append(
                {
                    t["term"].lower(): _POLARITY[t["polarity"]]
                    for t in terms
                    if t["term"] != "noaspectterm" and t["polarity"] in _POLARITY
                }
            )
    predicted = extractor.extract(sentences)
    tp = n_pred = n_gold = correct = matched = 0
    implicit_hits = implicit_total = 0
    for triplets, gold_terms in zip(predicted, gold, strict=True):
        votes: dict[str, Counter[int]] = {}
        for t in triplets:
            if t.aspect:
                votes.setdefault(t.aspect.lower(), Counter())[t.sentiment] += 1
        n_pred += len(votes)
        n_gold += len(gold_terms)
        for term, polarity in gold_terms.items():
            if term in votes:
                tp += 1
                matched += 1
                correct += votes[term].most_common(1)[0][0] == polarity
        if not gold_terms:
            implicit_total += 1
            implicit_hits += any(t.is_implicit for t in triplets)
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    rows = [
        "| hotels (SemEval-15, out of domain) | value |",
        "|---|---|",
        f"| sentences | {len(sentences)} |",
        f"| aspect-term P / R / F1 | {100 * p:.1f} / {100 * r:.1f} / {100 * f1:.1f} |",
        f"| polarity accuracy on matched aspects | {100 * correct / max(matched, 1):.1f} "
        f"({correct}/{matched}) |",
        f"| no-aspect-term sentences with an implicit triplet | {implicit_hits}/{implicit_total} |",
    ]
    return rows, sentences


def main() -> None:
    """Run all evaluations and print the tables."""
    root = Path(__file__).resolve().parents[2] / "shared/data"
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, default=root / "aste-v2")
    parser.add_argument("--hotels", type=Path, default=root / "semeval15-hotels/hotels_aspects.csv")
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--show", type=int, default=0, help="print N hotel sentences with triplets")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    aste = EmbeddedTripletExtractor(
        args.weights, batch_size=args.batch_size, implicit_aspects=False
    )
    print("## ASTE v2 dev, exact-match triplets\n")
    print("\n".join(eval_aste(aste, args.data_dir)))
    hotel = EmbeddedTripletExtractor(args.weights, batch_size=args.batch_size)
    rows, sentences = eval_hotels(hotel, args.hotels)
    print("\n## Hotel check\n")
    print("\n".join(rows))
    if args.show:
        print()
    for sentence, found in zip(sentences[: args.show], hotel.extract(sentences[: args.show])):
        text = ", ".join(f"({t.aspect!r}, {t.opinion!r}, {t.sentiment})" for t in found)
        print(f"- {sentence} -> {text or 'none'}")
    hotel.extract(sentences[: args.batch_size])  # warm-up
    start = time.perf_counter()
    hotel.extract(sentences)
    elapsed = time.perf_counter() - start
    print(
        f"\n## Speed\n\n{len(sentences) / elapsed:.1f} sentences/s on CPU "
        f"({args.threads} threads, batch {args.batch_size}, {len(sentences)} raw hotel sentences)"
    )


if __name__ == "__main__":
    main()
