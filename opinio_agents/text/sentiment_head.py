"""Sentence sentiment from MiniLM embeddings, blended with VADER.

A multinomial logistic-regression head (negative / neutral / positive) over the
frozen all-MiniLM-L6-v2 sentence embedding, trained by
``scripts/train_sentiment.py --extra zomato`` on the ASTE-V2 train sentences
(SemEval 2014-2016 restaurant and laptop reviews) plus one-sentence rated
Zomato restaurant reviews, and shipped as 1,155 numbers in
``weights/sentiment_head.json``. Lexicons miss implicit complaints ("you need a
taxi to get anywhere", "for that price I expected a lot more"); the embedding
head catches many of them, VADER handles intensity and negation, and their
average beats either alone on human-labelled text neither saw in training
(``benchmarks/sentiment_real.py``, positive/negative macro-F1: OpoSum segments
VADER 66.2, head 82.3, blend 83.9; SemEval-2015 hotel sentences 76.4, 85.2, 86.5).

Because indexing already embeds every sentence, the head costs one small
matrix product per batch.

Example:
    >>> import numpy as np
    >>> head = EmbeddingSentimentHead.default()
    >>> head.score_embeddings(np.zeros((1, 384), dtype=np.float32)).shape
    (1,)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.text.sentiment import VaderSentimentScorer, default_sentiment_scorer

if TYPE_CHECKING:
    from opinio_agents.embeddings import Encoder

__all__ = ["EmbeddingSentimentHead", "BlendedSentimentScorer", "blend"]

_LOCK = threading.Lock()
_DEFAULT: EmbeddingSentimentHead | None = None


class EmbeddingSentimentHead:
    """Logistic-regression sentiment over sentence embeddings: ``P(pos) - P(neg)``.

    Args:
        coef: ``(3, dim)`` weights for negative, neutral, positive.
        intercept: ``(3,)`` biases.
    """

    def __init__(self, coef: np.ndarray, intercept: np.ndarray) -> None:
        if coef.ndim != 2 or coef.shape[0] != 3 or intercept.shape != (3,):
            raise ConfigError(f"sentiment head needs coef (3, dim) and intercept (3,), got {coef.shape}")
        self.coef = coef.astype(np.float32)
        self.intercept = intercept.astype(np.float32)

    @classmethod
    def default(cls) -> EmbeddingSentimentHead:
        """The head shipped with the package (for all-MiniLM-L6-v2 embeddings)."""
        global _DEFAULT
        with _LOCK:
            if _DEFAULT is None:
                text = resources.files("opinio_agents.text").joinpath("weights/sentiment_head.json").read_text("utf-8")
                data = json.loads(text)
                _DEFAULT = cls(np.asarray(data["coef"]), np.asarray(data["intercept"]))
            return _DEFAULT

    def probabilities(self, embeddings: np.ndarray) -> np.ndarray:
        """``(n, 3)`` class probabilities (negative, neutral, positive)."""
        if embeddings.ndim != 2 or embeddings.shape[1] != self.coef.shape[1]:
            raise ConfigError(
                f"embeddings of shape {embeddings.shape} do not fit a head of dimension {self.coef.shape[1]}; "
                "the shipped head expects all-MiniLM-L6-v2 (384-d) vectors"
            )
        logits = embeddings @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def score_embeddings(self, embeddings: np.ndarray) -> np.ndarray:
        """Sentiment in [-1, 1]: ``P(positive) - P(negative)``."""
        if len(embeddings) == 0:
            return np.zeros(0, dtype=np.float32)
        probs = self.probabilities(embeddings)
        return probs[:, 2] - probs[:, 0]


def blend(head_scores: Sequence[float] | np.ndarray, lexicon_scores: Sequence[float]) -> list[float]:
    """The equal-weight average of the embedding head and VADER scores."""
    return [round(0.5 * float(h) + 0.5 * float(v), 4) for h, v in zip(head_scores, lexicon_scores)]


class BlendedSentimentScorer:
    """A :class:`~opinio_agents.text.sentiment.SentimentScorer`: embedding head + VADER.

    Args:
        encoder: Sentence encoder (shared MiniLM by default).
        head: The embedding head (the shipped one by default).
        lexicon: The VADER scorer (the review-tuned default).

    Example:
        >>> scorer = BlendedSentimentScorer()                                  # doctest: +SKIP
        >>> scorer.score(["You need a taxi to get anywhere."])[0] < 0          # doctest: +SKIP
        True
    """

    def __init__(
        self,
        encoder: Encoder | None = None,
        head: EmbeddingSentimentHead | None = None,
        lexicon: VaderSentimentScorer | None = None,
    ) -> None:
        self._encoder = encoder
        self.head = head or EmbeddingSentimentHead.default()
        self.lexicon = lexicon or default_sentiment_scorer()

    def score(self, texts: Sequence[str]) -> list[float]:
        """Blend of head and VADER for each text (encodes the texts)."""
        if self._encoder is None:
            from opinio_agents.embeddings import get_encoder

            self._encoder = get_encoder()
        return self.score_with_embeddings(texts, self._encoder.encode(list(texts)))

    def score_with_embeddings(self, texts: Sequence[str], embeddings: np.ndarray) -> list[float]:
        """Blend of head and VADER, reusing already computed embeddings."""
        return blend(self.head.score_embeddings(embeddings), self.lexicon.score(list(texts)))
