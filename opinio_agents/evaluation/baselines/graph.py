"""TextRank and LexRank baselines (App. F), implemented on numpy.

Both rank the entity's sentences by centrality in a sentence-similarity graph,
then take the highest-ranked positive sentences as PROS and the highest-ranked
negative ones as CONS, as many as the expert review has.

* **TextRank** (Mihalcea & Tarau, 2004): edge weight
  ``|Si & Sj| / (log|Si| + log|Sj|)`` over the sets of (stemmed) words,
  weighted PageRank with damping 0.85.
* **LexRank** (Erkan & Radev, 2004): TF-IDF cosine similarity, edges where it
  is at least ``threshold`` (0.1), degree-normalised, PageRank-style power
  iteration with damping 0.85.

Graph ranking is quadratic, so at most ``max_sentences`` sentences (1,000 by
default) are ranked: the opinionated ones first, drawn at random with a fixed
seed when there are more.

Example:
    >>> import numpy as np
    >>> scores = pagerank(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=float))
    >>> int(np.argmax(scores))
    0
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.baselines.base import (
    Baseline,
    BaselineInput,
    Candidate,
    make_highlights,
    unique_candidates,
)
from opinio_agents.evaluation.rouge import rouge_tokenize
from opinio_agents.models import HighlightSet
from opinio_agents.text.wordlists import word_set

__all__ = [
    "pagerank",
    "textrank_matrix",
    "lexrank_matrix",
    "GraphRankBaseline",
    "TextRankBaseline",
    "LexRankBaseline",
]


def pagerank(weights: np.ndarray, *, damping: float = 0.85, tol: float = 1e-8, max_iter: int = 200) -> np.ndarray:
    """Stationary scores of a weighted graph (rows normalised; dangling rows spread uniformly).

    Args:
        weights: Non-negative ``(n, n)`` edge weights; the diagonal is ignored.
        damping: Probability of following an edge.
        tol: L1 convergence tolerance.
        max_iter: Iteration cap.
    """
    n = weights.shape[0]
    if n == 0:
        return np.zeros(0)
    w = np.array(weights, dtype=float)
    np.fill_diagonal(w, 0.0)
    sums = w.sum(axis=1, keepdims=True)
    trans = np.where(sums > 0, w / np.where(sums > 0, sums, 1.0), 1.0 / n)
    scores = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        new = (1 - damping) / n + damping * (trans.T @ scores)
        if np.abs(new - scores).sum() < tol:
            return new
        scores = new
    return scores


def _words(text: str) -> list[str]:
    stop = word_set("evaluation_graph", "graph_stopwords")  # package data: resources/words/evaluation_graph.json
    return [t for t in rouge_tokenize(text) if t not in stop]


def _vocab_matrix(docs: Sequence[Sequence[str]]) -> tuple[np.ndarray, int]:
    vocab: dict[str, int] = {}
    for doc in docs:
        for w in doc:
            vocab.setdefault(w, len(vocab))
    counts = np.zeros((len(docs), len(vocab)), dtype=float)
    for i, doc in enumerate(docs):
        for w in doc:
            counts[i, vocab[w]] += 1
    return counts, len(vocab)


def textrank_matrix(texts: Sequence[str]) -> np.ndarray:
    """TextRank word-overlap similarities of the texts.

    Example:
        >>> m = textrank_matrix(["pool warm clean", "pool warm", "rude staff"])
        >>> bool(m[0, 1] > 0), float(m[0, 2])
        (True, 0.0)
    """
    docs = [sorted(set(_words(t))) for t in texts]
    counts, _ = _vocab_matrix(docs)
    binary = (counts > 0).astype(float)
    overlap = binary @ binary.T
    logs = np.array([math.log(len(d)) if len(d) > 0 else 0.0 for d in docs])
    denom = logs[:, None] + logs[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        sim = np.where(denom > 0, overlap / np.where(denom > 0, denom, 1.0), 0.0)
    np.fill_diagonal(sim, 0.0)
    return sim


def lexrank_matrix(texts: Sequence[str], *, threshold: float = 0.1) -> np.ndarray:
    """LexRank graph: 1 where the TF-IDF cosine similarity of two texts is >= ``threshold``.

    Example:
        >>> lexrank_matrix(["pool warm", "warm pool", "rude staff"])[0].tolist()
        [0.0, 1.0, 0.0]
    """
    docs = [_words(t) for t in texts]
    counts, _ = _vocab_matrix(docs)
    if counts.size == 0:
        return np.zeros((len(texts), len(texts)))
    df = (counts > 0).sum(axis=0)
    idf = np.log(len(docs) / df)
    tfidf = counts * idf
    norms = np.linalg.norm(tfidf, axis=1, keepdims=True)
    unit = np.divide(tfidf, norms, out=np.zeros_like(tfidf), where=norms > 0)
    sim = unit @ unit.T
    graph = (sim >= threshold).astype(float)
    np.fill_diagonal(graph, 0.0)
    return graph


class GraphRankBaseline(Baseline):
    """Rank sentences by graph centrality; pick the top positive as PROS, the top negative as CONS.

    Args:
        max_sentences: Cap on ranked sentences (the graph is quadratic).
        seed: Seed of the sampling used above the cap.
        min_words: Sentences with fewer content words are not ranked.
    """

    name = "graph"

    def __init__(self, *, max_sentences: int = 1000, seed: int = 13, min_words: int = 2) -> None:
        if max_sentences < 2:
            raise ConfigError(f"max_sentences={max_sentences} must be >= 2")
        self.max_sentences = max_sentences
        self.seed = seed
        self.min_words = min_words

    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        """The graph's edge weights."""
        raise NotImplementedError

    def select(self, data: BaselineInput) -> list[Candidate]:
        """The sentences that enter the graph (opinionated first, sampled above the cap)."""
        pool = [c for c in unique_candidates(data.candidates) if len(_words(c.text)) >= self.min_words]
        polar = [c for c in pool if c.label != 0]
        neutral = [c for c in pool if c.label == 0]
        rng = random.Random(f"{self.seed}:{data.entity_id}")
        if len(polar) > self.max_sentences:
            keep = {c.sentence_id for c in rng.sample(polar, self.max_sentences)}
            return [c for c in polar if c.sentence_id in keep]
        room = self.max_sentences - len(polar)
        extra = rng.sample(neutral, room) if len(neutral) > room else neutral
        keep = {c.sentence_id for c in [*polar, *extra]}
        return [c for c in pool if c.sentence_id in keep]

    def rank(self, sentences: Sequence[Candidate]) -> list[Candidate]:
        """The sentences, most central first (stable on ties)."""
        scores = pagerank(self.similarity([c.text for c in sentences]))
        order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
        return [sentences[i] for i in order]

    def run(self, data: BaselineInput) -> HighlightSet:
        """The baseline's PROS/CONS for one entity."""
        ranked = self.rank(self.select(data))
        pos = [c for c in ranked if c.label == 1]
        neg = [c for c in ranked if c.label == -1]
        pros = list(zip(data.expert.pros, pos, strict=False))
        cons = list(zip(data.expert.cons, neg, strict=False))
        return make_highlights(data, pros, cons, name=self.name)


class TextRankBaseline(GraphRankBaseline):
    """TextRank over word overlap (Mihalcea & Tarau, 2004)."""

    name = "textrank"

    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        """Word-overlap weights."""
        return textrank_matrix(texts)


class LexRankBaseline(GraphRankBaseline):
    """LexRank over thresholded TF-IDF cosine (Erkan & Radev, 2004).

    Args:
        threshold: Cosine threshold of an edge.
        **kwargs: See :class:`GraphRankBaseline`.
    """

    name = "lexrank"

    def __init__(self, *, threshold: float = 0.1, **kwargs: int) -> None:
        super().__init__(**kwargs)
        self.threshold = threshold

    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        """Thresholded TF-IDF cosine graph."""
        return lexrank_matrix(texts, threshold=self.threshold)
