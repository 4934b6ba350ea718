"""Sentence-sentiment benchmark on human-labelled real review text.

Run:
    python benchmarks/sentiment_real.py
    python benchmarks/sentiment_real.py --head other_head.json   # add a candidate head as extra columns

Data (read from ``../shared/data``; a set that is missing is skipped, and the
script prints a note and exits 0 when none is present):

* **OpoSum** (``real-reviews/oposum.refs.json``): every distinct review segment
  that carries a human polarity in [-1, 1] (``aspect_segments``; about 940
  Amazon segments over 6 product domains). 3-way gold: negative when
  polarity <= -0.2, positive when >= 0.2, neutral in between
  (:data:`NEUTRAL_BAND`); 2-way gold: the segments outside the neutral band.
* **SemEval-15 hotels** (``semeval15-hotels/hotels_aspects.csv``): the
  sentences whose annotated aspect terms all share one polarity (positive,
  negative or neutral; ``none`` = no opinion and mixed sentences are left out).
  2-way: the positive and negative ones.
* **Alexa** (``real-reviews/alexa.json``): whole reviews by their star rating (1-2 negative, 3
  neutral, 4-5 positive), all of them and those that negate with a typographic apostrophe
  ("didn’t", "wasn´t": :func:`~opinio_agents.text.preprocess.plain_apostrophes`).

Predictions: 3-way with :func:`~opinio_agents.text.sentiment.sentiment_label` at
the indexing threshold (``SENTIMENT_THRESHOLD`` = 0.05); 2-way by the sign of the
score (a score of exactly 0 counts as wrong). Columns, side by side: plain
VADER, VADER with the review rules (lexicon scorer), the embedding head alone,
and their blend (what indexing stores), for the shipped head and for any
``--head`` given. Accuracy and macro-F1 in percent.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from data_paths import SHARED_DATA  # this folder's module (the script runs from here)

from opinio_agents.models import SENTIMENT_THRESHOLD
from opinio_agents.text.sentiment import VaderSentimentScorer, sentiment_label
from opinio_agents.text.sentiment_head import EmbeddingSentimentHead, blend

DATA = SHARED_DATA
NEUTRAL_BAND = 0.2
_HOTEL = {"negative": -1, "neutral": 0, "positive": 1}


def oposum_segments(path: Path) -> tuple[list[str], list[float]]:
    """Distinct (product, review, text) segments with a human polarity."""
    refs = json.loads(path.read_text(encoding="utf-8"))
    seen: dict[tuple[str, str, str], float] = {}
    for asin, entry in refs.items():
        for segments in entry.get("aspect_segments", {}).values():
            for seg in segments:
                if seg.get("polarity") is not None:
                    seen.setdefault((asin, seg["review_id"], seg["text"]), float(seg["polarity"]))
    return [k[2] for k in seen], list(seen.values())


def oposum_gold(polarity: float) -> int:
    """3-way label of a human polarity in [-1, 1]."""
    if polarity <= -NEUTRAL_BAND:
        return -1
    if polarity >= NEUTRAL_BAND:
        return 1
    return 0


def hotel_sentences(path: Path) -> tuple[list[str], list[int]]:
    """SemEval-15 hotel sentences with one polarity over their aspect terms."""
    texts, labels = [], []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            polarities = {t["polarity"] for t in ast.literal_eval(row["aspectTerms"])} - {"none", "conflict"}
            if len(polarities) == 1:
                texts.append(row["raw_text"])
                labels.append(_HOTEL[polarities.pop()])
    return texts, labels


_TYPOGRAPHIC_NEGATION = re.compile("n[\u2019\u00b4\u02bc`]t\\b")


def alexa_reviews(path: Path, *, typographic: bool = False) -> tuple[list[str], list[int]]:
    """Alexa reviews with a star rating, labelled by it; with ``typographic`` only those negating with a
    typographic apostrophe ("didn’t")."""
    texts, labels = [], []
    for entity in json.loads(path.read_text(encoding="utf-8")):
        for review in entity.get("user_reviews", []):
            text, rating = review.get("text") or "", review.get("rating")
            if rating is None or not text.strip() or (typographic and not _TYPOGRAPHIC_NEGATION.search(text)):
                continue
            texts.append(text)
            labels.append(-1 if rating <= 2 else 1 if rating >= 4 else 0)
    return texts, labels


def scores_table(gold: Sequence[int], scores: Sequence[float]) -> tuple[float, float, float, float]:
    """(3-way accuracy, 3-way macro-F1, 2-way accuracy, 2-way macro-F1) in percent."""
    y = np.asarray(gold)
    s = np.asarray(scores, dtype=float)
    pred3 = np.array([sentiment_label(v, SENTIMENT_THRESHOLD) for v in s])
    polar = y != 0
    pred2 = np.sign(s[polar]).astype(int)
    return (
        100 * float(np.mean(pred3 == y)),
        100 * macro_f1(y, pred3, (-1, 0, 1)),
        100 * float(np.mean(pred2 == y[polar])) if polar.any() else 0.0,
        100 * macro_f1(y[polar], pred2, (-1, 1)) if polar.any() else 0.0,
    )


def macro_f1(y: np.ndarray, pred: np.ndarray, labels: Sequence[int]) -> float:
    """Unweighted mean of per-class F1 over ``labels`` (0 for a class never predicted nor gold)."""
    scores = []
    for label in labels:
        tp = float(np.sum((pred == label) & (y == label)))
        p = tp / max(float(np.sum(pred == label)), 1.0)
        r = tp / max(float(np.sum(y == label)), 1.0)
        scores.append(0.0 if p + r == 0 else 2 * p * r / (p + r))
    return float(np.mean(scores))


def load_head(path: Path) -> EmbeddingSentimentHead:
    """A head from a ``sentiment_head.json`` written by ``scripts/train_sentiment.py``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return EmbeddingSentimentHead(np.asarray(data["coef"]), np.asarray(data["intercept"]))


def variants(heads: dict[str, EmbeddingSentimentHead]) -> dict[str, Callable[[list[str], np.ndarray], list[float]]]:
    """Scorer name -> ``f(texts, embeddings) -> scores``."""
    plain = VaderSentimentScorer(use_review_rules=False)
    review = VaderSentimentScorer()
    out: dict[str, Callable[[list[str], np.ndarray], list[float]]] = {
        "VADER": lambda texts, _: plain.score(texts),
        "VADER + review rules": lambda texts, _: review.score(texts),
    }
    for name, head in heads.items():
        out[f"{name} head"] = lambda texts, emb, h=head: h.score_embeddings(emb).tolist()
        out[f"{name} blend"] = lambda texts, emb, h=head: blend(h.score_embeddings(emb), review.score(texts))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--head", type=Path, action="append", default=[], help="extra head JSON (repeatable)")
    args = parser.parse_args()
    sets: dict[str, tuple[list[str], list[int]]] = {}
    oposum = args.data / "real-reviews" / "oposum.refs.json"
    if oposum.is_file():
        texts, polarity = oposum_segments(oposum)
        sets["OpoSum segments"] = (texts, [oposum_gold(p) for p in polarity])
    hotels = args.data / "semeval15-hotels" / "hotels_aspects.csv"
    if hotels.is_file():
        sets["SemEval-15 hotels"] = hotel_sentences(hotels)
    alexa = args.data / "real-reviews" / "alexa.json"
    if alexa.is_file():
        sets["Alexa reviews (star rating)"] = alexa_reviews(alexa)
        sets["Alexa reviews negating with a typographic apostrophe"] = alexa_reviews(alexa, typographic=True)
    if not sets:
        print(f"no evaluation data under {args.data}: nothing to do")
        return
    from opinio_agents.embeddings import get_encoder

    encoder = get_encoder()
    heads = {"shipped": EmbeddingSentimentHead.default()}
    for path in args.head:
        heads[path.stem] = load_head(path)
    scorers = variants(heads)
    for name, (texts, gold) in sets.items():
        counts = {lab: gold.count(lab) for lab in (-1, 0, 1)}
        print(
            f"\n### {name}: {len(gold)} texts (negative {counts[-1]}, neutral {counts[0]}, positive {counts[1]})\n"
        )
        print("| scorer | 3-way accuracy | 3-way macro-F1 | 2-way accuracy | 2-way macro-F1 |")
        print("|---|---|---|---|---|")
        embeddings = encoder.encode(texts)
        for label, scorer in scorers.items():
            a3, f3, a2, f2 = scores_table(gold, scorer(texts, embeddings))
            print(f"| {label} | {a3:.1f} | {f3:.1f} | {a2:.1f} | {f2:.1f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
