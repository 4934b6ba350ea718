"""Extractive synthesizer: the default when no LLM is configured.

This is the paper's retrieval-only ablation done carefully. For each query:

1. **Side.** The entity-wide :class:`~opinio_agents.models.Support` decides
   which side the opinion falls on (share of positive vs negative reviews that
   mention the query); the top-K evidence decides when support is empty. When
   reviews genuinely split (the minority side holds at least
   ``split_threshold`` of the opinionated reviews and has at least
   ``min_side_evidence`` evidence sentences) the query yields a PRO *and* a CON.
2. **Sentence.** Among the evidence on that side, pick the one that best states
   the majority opinion: central (mean cosine similarity to the other evidence
   on that side), clearly opinionated (|sentiment|), on topic (mentions the
   query) and short.
3. **Key point.** Trim it to key-point style (:func:`to_key_point`).

Example:
    >>> synth = ExtractiveSynthesizer()                          # doctest: +SKIP
    >>> [h.text for h in synth.synthesize(query_evidence)]       # doctest: +SKIP
    ['Free, fast wi-fi throughout the hotel.']
"""

from __future__ import annotations

import re

import numpy as np

from opinio_agents.embeddings import Encoder, get_encoder
from opinio_agents.errors import ConfigError
from opinio_agents.models import SENTIMENT_THRESHOLD, Evidence, Highlight, Polarity
from opinio_agents.synthesis.base import QueryEvidence, Synthesizer
from opinio_agents.synthesis.keypoint import to_key_point
from opinio_agents.synthesis.polarity import evidence_polarity
from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = ["ExtractiveSynthesizer", "evidence_polarity"]

class ExtractiveSynthesizer(Synthesizer):
    """Query-focused extractive PROS/CONS from retrieved evidence, no LLM needed.

    Args:
        encoder: Sentence encoder for centrality (the shared MiniLM by default).
        split_threshold: Minority share of opinionated reviews above which a
            query yields both a PRO and a CON.
        min_side_evidence: Evidence sentences a side needs to get a highlight.
        max_cited: Evidence sentences cited per highlight.
        max_words: Word cap of a key point.
    """

    name = "extractive"

    def __init__(
        self,
        encoder: Encoder | None = None,
        *,
        split_threshold: float = 0.35,
        min_side_evidence: int = 2,
        max_cited: int = 5,
        max_words: int = 28,
    ) -> None:
        super().__init__()
        if not 0.0 < split_threshold <= 0.5:
            raise ConfigError(f"split_threshold={split_threshold} must be in (0, 0.5]")
        if min_side_evidence < 1 or max_cited < 1:
            raise ConfigError("min_side_evidence and max_cited must be >= 1")
        self._encoder = encoder
        self.split_threshold = split_threshold
        self.min_side_evidence = min_side_evidence
        self.max_cited = max_cited
        self.max_words = max_words

    @property
    def encoder(self) -> Encoder:
        """The sentence encoder (shared MiniLM unless one was given)."""
        if self._encoder is None:
            self._encoder = get_encoder()
        return self._encoder

    def sides(self, item: QueryEvidence) -> list[Polarity]:
        """Which side(s) the query's opinion falls on, majority first."""
        pos_ev = [e for e in item.evidence if (e.sentiment or 0.0) > SENTIMENT_THRESHOLD]
        neg_ev = [e for e in item.evidence if (e.sentiment or 0.0) < -SENTIMENT_THRESHOLD]
        support = item.support
        pos, neg = (support.positive, support.negative) if support.positive + support.negative else (
            len(pos_ev),
            len(neg_ev),
        )
        if pos + neg == 0:
            return []
        majority, minority = (Polarity.PROS, Polarity.CONS) if pos >= neg else (Polarity.CONS, Polarity.PROS)
        count = {Polarity.PROS: len(pos_ev), Polarity.CONS: len(neg_ev)}
        share_minority = min(pos, neg) / (pos + neg)
        out = [majority] if count[majority] else []
        if share_minority >= self.split_threshold and count[minority] >= self.min_side_evidence:
            out.append(minority)
        if not out and count[minority] >= self.min_side_evidence:
            # Support says one thing, but the retrieved evidence only shows the other side.
            out.append(minority)
        return out

    def synthesize(self, item: QueryEvidence) -> list[Highlight]:
        """Up to one PRO and one CON for the query, each citing its evidence."""
        highlights: list[Highlight] = []
        for side in self.sides(item):
            sign = 1 if side is Polarity.PROS else -1
            candidates = [e for e in item.evidence if sign * (e.sentiment or 0.0) > SENTIMENT_THRESHOLD]
            if not candidates:
                continue
            ranked = self._rank(item.query, candidates, self._vectors_of(item, candidates))
            best = ranked[0]
            cited = _distinct(ranked)[: self.max_cited]
            leaning = evidence_polarity(cited)
            highlights.append(
                Highlight(
                    query=item.query,
                    polarity=side,
                    text=to_key_point(best.text, item.query, sign=sign, max_words=self.max_words),
                    evidence=cited,
                    support=item.support,
                    evidence_polarity=leaning,
                    polarity_agrees=leaning is None or leaning is side,
                )
            )
        return highlights

    def _vectors_of(self, item: QueryEvidence, candidates: list[Evidence]) -> np.ndarray:
        """Embeddings of ``candidates``: the stored ones when given, else freshly encoded."""
        if item.vectors is not None and len(item.vectors) == len(item.evidence):
            row = {id(e): i for i, e in enumerate(item.evidence)}
            return item.vectors[[row[id(c)] for c in candidates]]
        return self.encoder.encode([c.text for c in candidates])

    def _rank(self, query: str, candidates: list[Evidence], vectors: np.ndarray) -> list[Evidence]:
        """Order same-side evidence by how well each states the shared opinion."""
        if len(candidates) == 1:
            return candidates
        sims = vectors @ vectors.T
        np.fill_diagonal(sims, 0.0)
        centrality = sims.sum(axis=1) / max(len(candidates) - 1, 1)
        terms = set(tokenize_for_bm25(query))
        scores = []
        for i, cand in enumerate(candidates):
            tokens = tokenize_for_bm25(cand.text)
            on_topic = len(terms.intersection(tokens)) / len(terms) if terms else 0.0
            n_words = len(cand.text.split())
            brevity = 1.0 if 6 <= n_words <= 25 else 0.5 if n_words < 6 else max(0.0, 1.0 - (n_words - 25) / 40)
            scores.append(
                0.45 * float(centrality[i]) + 0.25 * abs(cand.sentiment or 0.0) + 0.2 * on_topic + 0.1 * brevity
            )
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
        return [candidates[i] for i in order]


def _distinct(evidence: list[Evidence]) -> list[Evidence]:
    """Drop evidence whose text repeats an earlier one (case and punctuation aside)."""
    seen: set[str] = set()
    out: list[Evidence] = []
    for item in evidence:
        key = " ".join(re.findall(r"[a-z0-9]+", item.text.lower()))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
