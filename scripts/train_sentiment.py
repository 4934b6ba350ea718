"""Train the embedding sentiment head shipped in opinio_agents/text/weights/.

A multinomial logistic regression (negative / neutral / positive) over the
frozen all-MiniLM-L6-v2 sentence embeddings, trained on the sentences of the
ASTE-V2 train splits (SemEval 2014-2016 restaurant and laptop reviews) whose
triplets all share one polarity, optionally plus short rated real reviews
(``--extra zomato alexa``: one-sentence reviews of ``real-reviews/zomato.json``
and ``alexa.json``, 3-40 words; rating >= 4 positive, <= 2 negative, 3 neutral
with ``--rating3-neutral``, else left out). The ASTE dev splits select the
regularisation strength; the SemEval-2015 hotel sentences are a held-out domain
check (never trained on; ``benchmarks/sentiment_real.py`` also scores OpoSum).

Usage:
    python scripts/train_sentiment.py --data ../shared/data --seed 13 --extra zomato alexa \
        --out opinio_agents/text/weights/sentiment_head.json
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import time
from pathlib import Path

import numpy as np

LABELS = {"NEG": 0, "NEU": 1, "POS": 2}
HOTEL = {"negative": 0, "neutral": 1, "positive": 2}


def read_aste(path: Path) -> tuple[list[str], list[int]]:
    texts, labels = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if "####" not in line:
            continue
        sentence, triplets = line.split("####", 1)
        polarities = {t[2] for t in ast.literal_eval(triplets)}
        if len(polarities) == 1:
            texts.append(sentence.strip())
            labels.append(LABELS[polarities.pop()])
    return texts, labels


def read_hotels(path: Path) -> tuple[list[str], list[int]]:
    texts, labels = [], []
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            polarities = {a["polarity"] for a in ast.literal_eval(row["aspectTerms"])} - {"conflict", "none"}
            if len(polarities) == 1:
                texts.append(row["raw_text"])
                labels.append(HOTEL[polarities.pop()])
    return texts, labels


def read_rated(path: Path, rating3_neutral: bool) -> tuple[list[str], list[int]]:
    """One-sentence rated reviews (3-40 words) as weakly labelled sentences."""
    from opinio_agents.models import Review
    from opinio_agents.text.segment import segment_review

    texts, labels = [], []
    for entity in json.loads(path.read_text(encoding="utf-8")):
        for raw in entity["user_reviews"]:
            rating = raw.get("rating")
            if rating is None:
                continue
            label = 2 if rating >= 4 else 0 if rating <= 2 else 1 if rating == 3 and rating3_neutral else None
            if label is None:
                continue
            review = Review.model_validate(raw)
            sentences = segment_review(str(entity["entity_id"]), review)
            if len(sentences) == 1 and 3 <= len(sentences[0].text.split()) <= 40:
                texts.append(sentences[0].text)
                labels.append(label)
    return texts, labels


def fit(x: np.ndarray, y: np.ndarray, c: float, seed: int):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced", random_state=seed)
    return model.fit(x, y)


def macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    scores = []
    for label in range(3):
        tp = np.sum((pred == label) & (y == label))
        p = tp / max(np.sum(pred == label), 1)
        r = tp / max(np.sum(y == label), 1)
        scores.append(0.0 if p + r == 0 else 2 * p * r / (p + r))
    return float(np.mean(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=Path("opinio_agents/text/weights/sentiment_head.json"))
    parser.add_argument("--extra", nargs="*", default=[], choices=["zomato", "alexa"], help="rated reviews to add")
    parser.add_argument("--rating3-neutral", action="store_true", help="rating-3 extra reviews as neutral")
    parser.add_argument("--cache-dir", type=Path, default=None, help="cache embeddings here (outside the repo)")
    args = parser.parse_args()

    from opinio_agents.embeddings import get_encoder
    from opinio_agents.text.sentiment import VaderSentimentScorer

    encoder = get_encoder()

    def embed(texts: list[str]) -> np.ndarray:
        if args.cache_dir is None:
            return encoder.encode(texts, batch_size=64)
        key = hashlib.sha256(("\n".join(texts) + encoder.name).encode()).hexdigest()[:16]
        path = args.cache_dir / f"sentiment-{key}.npy"
        if path.is_file():
            return np.load(path)
        vectors = encoder.encode(texts, batch_size=64)
        args.cache_dir.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    started = time.perf_counter()
    splits, features = {}, {}
    for split in ("train", "dev"):
        texts, labels = [], []
        for domain in ("14lap", "14res", "15res", "16res"):
            t, lab = read_aste(args.data / "aste-v2" / domain / f"{split}_triplets.txt")
            texts += t
            labels += lab
        parts = [embed(texts)]
        if split == "train":
            for name in args.extra:
                t, lab = read_rated(args.data / "real-reviews" / f"{name}.json", args.rating3_neutral)
                print(f"{name}: {len(t)} one-sentence rated reviews ({np.bincount(lab, minlength=3).tolist()})")
                parts.append(embed(t))
                texts += t
                labels += lab
        splits[split] = (texts, np.array(labels))
        features[split] = np.concatenate(parts)
    hotels = read_hotels(args.data / "semeval15-hotels" / "hotels_aspects.csv")
    splits["hotels"] = (hotels[0], np.array(hotels[1]))
    features["hotels"] = embed(hotels[0])
    print(f"embedded {sum(len(t) for t, _ in splits.values())} sentences in {time.perf_counter() - started:.1f}s")

    best = None
    for c in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0):
        model = fit(features["train"], splits["train"][1], c, args.seed)
        score = macro_f1(splits["dev"][1], model.predict(features["dev"]))
        print(f"C={c}: dev macro-F1 {score:.3f}")
        if best is None or score > best[0]:
            best = (score, c, model)
    assert best is not None
    _, c, model = best

    vader = VaderSentimentScorer()
    print("\n| split | n | head macro-F1 | VADER macro-F1 |\n|---|---|---|---|")
    for name in ("train", "dev", "hotels"):
        texts, y = splits[name]
        head = model.predict(features[name])
        v = np.array([0 if s < -0.05 else 2 if s > 0.05 else 1 for s in vader.score(texts)])
        print(f"| {name} | {len(y)} | {macro_f1(y, head):.3f} | {macro_f1(y, v):.3f} |")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "labels": ["negative", "neutral", "positive"],
        "encoder": encoder.name,
        "C": c,
        "seed": args.seed,
        "train": {"aste_v2": "train splits", "extra": list(args.extra), "rating3_neutral": args.rating3_neutral,
                  "sentences": int(len(splits["train"][1]))},
        "coef": model.coef_.round(6).tolist(),
        "intercept": model.intercept_.round(6).tolist(),
    }
    args.out.write_text(json.dumps(payload), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
