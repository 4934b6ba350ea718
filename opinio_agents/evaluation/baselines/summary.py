"""Sentence-selection baselines for summaries scored against human-written references.

These baselines pick review sentences (texts) for a free-text summary, up to a
sentence count or a word budget, the way the opinion-summarization literature
reports them beside its systems:

* :func:`random_summary` - random sentences (seeded);
* :func:`lexrank_summary` - the most central sentences of a LexRank graph (TF-IDF cosine);
* :func:`centroid_summary` - the sentences nearest the mean embedding of the pool;
* :func:`oracle_summary` - greedy extractive oracle: the sentences that maximise
  mean ROUGE-1 + ROUGE-2 F1 against the references (an upper bound; it reads them).

Every function skips repeated texts (case and punctuation aside) and returns
the chosen texts in selection order.

Example:
    >>> pool = ["The staff were friendly.", "Great location near the beach.", "Rude staff."]
    >>> oracle_summary(pool, ["Friendly staff and a great location."], max_sentences=2)
    ['Great location near the beach.', 'The staff were friendly.']
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.baselines.graph import lexrank_matrix, pagerank
from opinio_agents.evaluation.rouge import rouge_tokenize

__all__ = [
    "random_summary",
    "lexrank_summary",
    "centroid_summary",
    "oracle_summary",
    "take_budget",
    "word_count",
]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def word_count(text: str) -> int:
    """Whitespace words of a text.

    Example:
        >>> word_count("Clean rooms, friendly staff.")
        4
    """
    return len(text.split())


def _key(text: str) -> str:
    return " ".join(_NON_ALNUM.sub(" ", text.lower()).split())


def take_budget(
    texts: Sequence[str],
    order: Sequence[int],
    *,
    max_sentences: int | None = None,
    budget_words: int | None = None,
) -> list[str]:
    """Texts in ``order`` (distinct ones only) until a sentence count or a word budget is reached.

    The sentence that crosses the word budget is kept (summaries end on a whole
    sentence), so a summary is never empty when the pool is not.

    Raises:
        ConfigError: When neither limit is given, or one is below 1.

    Example:
        >>> take_budget(["a b", "a b", "c d e", "f"], [0, 1, 2, 3], budget_words=4)
        ['a b', 'c d e']
    """
    if max_sentences is None and budget_words is None:
        raise ConfigError("give max_sentences or budget_words")
    if (max_sentences is not None and max_sentences < 1) or (
        budget_words is not None and budget_words < 1
    ):
        raise ConfigError("max_sentences and budget_words must be >= 1")
    seen: set[str] = set()
    out: list[str] = []
    words = 0
    for i in order:
        key = _key(texts[i])
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(texts[i])
        words += word_count(texts[i])
        if max_sentences is not None and len(out) >= max_sentences:
            break
        if budget_words is not None and words >= budget_words:
            break
    return out


def random_summary(
    texts: Sequence[str],
    *,
    seed: int | str = 13,
    max_sentences: int | None = None,
    budget_words: int | None = None,
) -> list[str]:
    """Random distinct sentences (a seeded shuffle of the pool).

    Example:
        >>> len(random_summary(["a.", "b.", "c."], seed=1, max_sentences=2))
        2
    """
    order = list(range(len(texts)))
    random.Random(str(seed)).shuffle(order)
    return take_budget(texts, order, max_sentences=max_sentences, budget_words=budget_words)


def lexrank_summary(
    texts: Sequence[str],
    *,
    max_sentences: int | None = None,
    budget_words: int | None = None,
    threshold: float = 0.1,
    max_pool: int = 1000,
    seed: int = 13,
) -> list[str]:
    """The most central sentences by LexRank (Erkan & Radev, 2004).

    Args:
        max_pool: Graph ranking is quadratic: at most this many sentences are
            ranked (a seeded random sample when the pool is larger).

    Example:
        >>> lexrank_summary(["warm pool", "pool was warm", "rude staff"], max_sentences=1)
        ['warm pool']
    """
    if not texts:
        return []
    index = list(range(len(texts)))
    if len(index) > max_pool:
        index = sorted(random.Random(seed).sample(index, max_pool))
    pool = [texts[i] for i in index]
    scores = pagerank(lexrank_matrix(pool, threshold=threshold))
    order = sorted(range(len(pool)), key=lambda i: (-scores[i], i))
    return take_budget(
        pool, order, max_sentences=max_sentences, budget_words=budget_words
    )


def centroid_summary(
    texts: Sequence[str],
    vectors: np.ndarray,
    *,
    max_sentences: int | None = None,
    budget_words: int | None = None,
) -> list[str]:
    """The sentences nearest (cosine) the mean embedding of the pool.

    Args:
        vectors: One L2-normalised embedding per text.

    Raises:
        ConfigError: When ``vectors`` does not have one row per text.

    Example:
        >>> v = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
        >>> centroid_summary(["a.", "b.", "c."], v, max_sentences=1)
        ['b.']
    """
    if len(texts) != len(vectors):
        raise ConfigError(f"{len(texts)} texts but {len(vectors)} vectors")
    if not texts:
        return []
    centre = np.asarray(vectors, dtype=float).mean(axis=0)
    norm = float(np.linalg.norm(centre))
    sims = np.asarray(vectors, dtype=float) @ (centre / norm if norm else centre)
    order = sorted(range(len(texts)), key=lambda i: (-float(sims[i]), i))
    return take_budget(texts, order, max_sentences=max_sentences, budget_words=budget_words)


def _grams(tokens: Sequence[str]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    return Counter(tokens), Counter(zip(tokens, tokens[1:]))


def _f1(hits: int, n_pred: int, n_ref: int) -> float:
    if not hits or not n_pred or not n_ref:
        return 0.0
    p, r = hits / n_pred, hits / n_ref
    return 2 * p * r / (p + r)


def oracle_summary(
    texts: Sequence[str],
    references: Sequence[str],
    *,
    max_sentences: int | None = 6,
    budget_words: int | None = None,
    max_candidates: int = 200,
    use_stemmer: bool = True,
) -> list[str]:
    """Greedy extractive oracle: add the sentence that most raises mean ROUGE-1 + ROUGE-2 F1.

    Stops when no sentence improves the score, or at a limit. Only the
    ``max_candidates`` sentences with the highest unigram recall of the
    references are considered (the rest cannot be the greedy choice in
    practice, and it keeps the oracle fast on 1,000-sentence entities).

    Example:
        >>> oracle_summary(["Rude staff.", "Friendly staff."], ["The staff were friendly."])
        ['Friendly staff.']
    """
    refs = [rouge_tokenize(r, use_stemmer=use_stemmer) for r in references]
    refs = [r for r in refs if r]
    if not texts or not refs:
        return []
    ref_grams = [_grams(r) for r in refs]
    ref_vocab = set().union(*(set(r) for r in refs))
    seen: set[str] = set()
    cands: list[tuple[int, list[str]]] = []
    for i, text in enumerate(texts):
        key = _key(text)
        if key and key not in seen:
            seen.add(key)
            cands.append((i, rouge_tokenize(text, use_stemmer=use_stemmer)))
    cands.sort(key=lambda c: -len(ref_vocab.intersection(c[1])))
    cands = cands[:max_candidates]

    def score(tokens: list[str]) -> float:
        uni, bi = _grams(tokens)
        total = 0.0
        for (r_uni, r_bi), ref in zip(ref_grams, refs, strict=True):
            total += _f1(sum((uni & r_uni).values()), len(tokens), len(ref))
            total += _f1(sum((bi & r_bi).values()), max(len(tokens) - 1, 0), max(len(ref) - 1, 0))
        return total / len(refs)

    chosen: list[int] = []
    tokens: list[str] = []
    best = 0.0
    words = 0
    while cands:
        gains = [(score(tokens + toks), -pos, pos) for pos, (_, toks) in enumerate(cands)]
        value, _, pos = max(gains)
        if value <= best:
            break
        best = value
        i, toks = cands.pop(pos)
        chosen.append(i)
        tokens = tokens + toks
        words += word_count(texts[i])
        if max_sentences is not None and len(chosen) >= max_sentences:
            break
        if budget_words is not None and words >= budget_words:
            break
    return [texts[i] for i in chosen]
