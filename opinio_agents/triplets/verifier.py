"""Run the AOS verification of highlights: extract triplets, then score AR/SF/OF.

:class:`EmbeddingOpinionSimilarity` is the default OF similarity (cosine of
sentence embeddings, the shared MiniLM unless another encoder is given);
:class:`AOSVerifier` batches triplet extraction over every highlight and its
evidence and returns one :class:`~opinio_agents.triplets.aos.AOSScore` each.

Example:
    >>> from opinio_agents.triplets.base import Triplet, TripletExtractor
    >>> class Words(TripletExtractor):
    ...     def extract(self, sentences):
    ...         return [[Triplet(aspect=s.split()[0], opinion=s.split()[-1], sentiment=1)]
    ...                 for s in sentences]
    >>> verifier = AOSVerifier(Words(), similarity=lambda a, bs: [0.0] * len(bs))
    >>> [s.ar for s in verifier.verify([("pool great", ["pool great", "pool warm"])])]
    [1.0]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from opinio_agents.embeddings import SentenceEncoder, get_encoder
from opinio_agents.triplets.aos import AOSScore, OpinionSimilarity, score_aos
from opinio_agents.triplets.base import Triplet, TripletExtractor

__all__ = ["EmbeddingOpinionSimilarity", "AOSVerifier"]


class EmbeddingOpinionSimilarity:
    """Cosine similarity of opinion phrases under a sentence encoder (cached per phrase).

    Args:
        encoder: A :class:`~opinio_agents.embeddings.SentenceEncoder`; the shared
            MiniLM when ``None`` (loaded on first call).

    Example:
        >>> sim = EmbeddingOpinionSimilarity()                 # doctest: +SKIP
        >>> sim("beautiful", ["stunning", "dirty"])            # doctest: +SKIP
        [0.71, 0.18]
    """

    def __init__(self, encoder: SentenceEncoder | None = None) -> None:
        self._encoder = encoder
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def _vectors(self, phrases: Sequence[str]) -> list[np.ndarray]:
        missing = [p for p in dict.fromkeys(phrases) if p not in self._cache]
        if missing:
            encoder = self._encoder or get_encoder()
            vectors = encoder.encode(missing)
            with self._lock:
                self._cache.update(zip(missing, vectors, strict=False))
        return [self._cache[p] for p in phrases]

    def __call__(self, opinion: str, others: Sequence[str]) -> list[float]:
        """Cosine similarity of ``opinion`` to each of ``others``."""
        if not others:
            return []
        first, *rest = self._vectors([opinion, *others])
        return [float(first @ v) for v in rest]


class AOSVerifier:
    """Score highlights against their evidence with AR, SF and OF.

    Args:
        extractor: Any :class:`~opinio_agents.triplets.base.TripletExtractor`.
        similarity: OF similarity; :class:`EmbeddingOpinionSimilarity` by default.
        batch_size: Sentences per ``extractor.extract`` call.
    """

    def __init__(
        self,
        extractor: TripletExtractor,
        *,
        similarity: OpinionSimilarity | None = None,
        batch_size: int = 256,
    ) -> None:
        self.extractor = extractor
        self.similarity: OpinionSimilarity = similarity or EmbeddingOpinionSimilarity()
        self.batch_size = max(1, batch_size)
        self._cache: dict[str, list[Triplet]] = {}

    def triplets(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        """Triplets of each sentence, extracted once per distinct sentence."""
        todo = [s for s in dict.fromkeys(sentences) if s not in self._cache]
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i : i + self.batch_size]
            for sentence, found in zip(chunk, self.extractor.extract(chunk), strict=True):
                self._cache[sentence] = list(found)
        return [self._cache[s] for s in sentences]

    def verify(
        self,
        items: Sequence[tuple[str, Sequence[str]]],
        labels: Sequence[dict[str, Any]] | None = None,
    ) -> list[AOSScore]:
        """Score ``(highlight_text, evidence_texts)`` pairs.

        Args:
            items: Each highlight with the retrieved evidence sentences it was built from.
            labels: Optional identification stored on each score.
        """
        self.triplets([s for text, evidence in items for s in (text, *evidence)])
        out: list[AOSScore] = []
        for i, (text, evidence) in enumerate(items):
            ev = [t for found in self.triplets(list(evidence)) for t in found]
            label = labels[i] if labels is not None else None
            out.append(score_aos(ev, self.triplets([text])[0], self.similarity, label=label))
        return out
