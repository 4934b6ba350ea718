"""Support counts: how many of an entity's reviews discuss a query, and how.

A sentence *mentions* a query when its App. D tokens cover at least
``coverage`` (default 60%) of the query's IDF mass over the entity's sentences
(so "shuttle" alone covers "shuttle service", while the common word "service"
does not), or, when embeddings are given, when its cosine similarity with the
query is at least ``dense_threshold`` (0.45 for MiniLM catches paraphrases such
as "the furniture looked tired" for "room decor" while rejecting neighbours).
A review mentions the query when any of its sentences does; its stance is the
mean sentiment of those sentences (positive > 0.05, negative < -0.05).

Example:
    >>> support = count_support("wi-fi", stored_sentences)     # doctest: +SKIP
    >>> support.describe()                                      # doctest: +SKIP
    'mentioned in 143 of 1500 reviews, 81% negative'
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from opinio_agents.models import Support
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.synthesis.polarity import SENTIMENT_THRESHOLD
from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = ["mention_mask", "count_support", "support_of", "DEFAULT_COVERAGE", "DEFAULT_DENSE_THRESHOLD"]

DEFAULT_COVERAGE = 0.6
DEFAULT_DENSE_THRESHOLD = 0.45


def mention_mask(
    query: str,
    sentences: Sequence[StoredSentence],
    *,
    embeddings: np.ndarray | None = None,
    query_embedding: np.ndarray | None = None,
    coverage: float = DEFAULT_COVERAGE,
    dense_threshold: float = DEFAULT_DENSE_THRESHOLD,
) -> np.ndarray:
    """Boolean mask over ``sentences``: which ones mention ``query``."""
    n = len(sentences)
    mask = np.zeros(n, dtype=bool)
    terms = list(dict.fromkeys(tokenize_for_bm25(query)))
    if terms and n:
        doc_freq = Counter()
        term_set = set(terms)
        token_sets = []
        for stored in sentences:
            present = term_set.intersection(stored.tokens)
            token_sets.append(present)
            doc_freq.update(present)
        idf = {t: math.log(1.0 + n / (1.0 + doc_freq[t])) for t in terms}
        total = sum(idf.values())
        for i, present in enumerate(token_sets):
            if present and sum(idf[t] for t in present) >= coverage * total - 1e-12:
                mask[i] = True
    if embeddings is not None and query_embedding is not None and len(embeddings) == n and n:
        mask |= (embeddings @ query_embedding) >= dense_threshold
    return mask


def count_support(
    query: str,
    sentences: Sequence[StoredSentence],
    *,
    total_reviews: int | None = None,
    embeddings: np.ndarray | None = None,
    query_embedding: np.ndarray | None = None,
    coverage: float = DEFAULT_COVERAGE,
    dense_threshold: float = DEFAULT_DENSE_THRESHOLD,
) -> Support:
    """Count the reviews that mention ``query`` and their positive / negative / neutral stance."""
    mask = mention_mask(
        query,
        sentences,
        embeddings=embeddings,
        query_embedding=query_embedding,
        coverage=coverage,
        dense_threshold=dense_threshold,
    )
    return support_of(sentences, np.flatnonzero(mask), total_reviews=total_reviews)


def support_of(
    sentences: Sequence[StoredSentence], indices: Iterable[int], *, total_reviews: int | None = None
) -> Support:
    """Review-level stance counts over the sentences at ``indices`` (the ones that mention something).

    A review counts once; its stance is the mean sentiment of its listed sentences.
    """
    per_review: dict[str, list[float]] = defaultdict(list)
    for i in indices:
        stored = sentences[int(i)]
        per_review[stored.sentence.review_id].append(stored.sentiment)
    positive = negative = neutral = 0
    for scores in per_review.values():
        mean = sum(scores) / len(scores)
        if mean > SENTIMENT_THRESHOLD:
            positive += 1
        elif mean < -SENTIMENT_THRESHOLD:
            negative += 1
        else:
            neutral += 1
    if total_reviews is None:
        total_reviews = len({s.sentence.review_id for s in sentences})
    return Support(
        reviews=len(per_review), positive=positive, negative=negative, neutral=neutral, total_reviews=total_reviews
    )
