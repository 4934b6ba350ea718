"""The stages of indexing, each a small protocol with today's component as default.

The :class:`~opinio_agents.indexing.Indexer` runs them in this order:

1. **segment** (:class:`Segmenter`): a review into :class:`~opinio_agents.models.Sentence` objects
   with character offsets (default :class:`RuleSegmenter`, the offline splitter of
   :mod:`opinio_agents.text.segment`);
2. **tokenize** (:class:`Bm25Tokenizer`): each sentence into the tokens BM25 indexes
   (default :class:`AppendixDTokenizer`, the paper's App. D preprocessing); queries are
   tokenized by the same stage, so the store records its ``name``;
3. **encode** (:class:`~opinio_agents.embeddings.Encoder`): sentences into vectors (default:
   the shipped all-MiniLM-L6-v2);
4. **sentiment** (:class:`SentimentStage`): a score in [-1, 1] per sentence from its text and
   vector (default: :func:`default_sentiment`, the MiniLM head blended with VADER when the
   encoder is MiniLM, VADER alone otherwise).

Every stage has a ``name`` that identifies it; the store records the names of
the tokenizer and the sentiment scorer (and the identity of the encoder) and
refuses to mix them.

Example:
    >>> AppendixDTokenizer().tokenize("The Wi-Fi was FREE!")
    ['wifi', 'free']
    >>> LexiconSentiment().score(["Filthy carpet."], None)[0] < 0
    True
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from opinio_agents.embeddings import DEFAULT_MODEL_NAME, EmbeddingModelInfo
from opinio_agents.errors import ConfigError
from opinio_agents.models import EntityId, Review, Sentence

if TYPE_CHECKING:
    from opinio_agents.text.sentiment import SentimentScorer
    from opinio_agents.text.sentiment_head import EmbeddingSentimentHead

__all__ = [
    "Segmenter",
    "Bm25Tokenizer",
    "SentimentStage",
    "RuleSegmenter",
    "AppendixDTokenizer",
    "LexiconSentiment",
    "HeadBlendSentiment",
    "default_sentiment",
]

logger = logging.getLogger(__name__)


@runtime_checkable
class Segmenter(Protocol):
    """Splits a review into sentences (ids ``{entity}:{review}:{index}``, offsets into the review text)."""

    name: str

    def segment(self, entity_id: EntityId, review: Review) -> list[Sentence]:
        """The review's sentences, in order."""
        ...


@runtime_checkable
class Bm25Tokenizer(Protocol):
    """Turns a sentence (or a query) into the tokens BM25 indexes."""

    name: str

    def tokenize(self, text: str) -> list[str]:
        """The BM25 tokens of ``text``."""
        ...


@runtime_checkable
class SentimentStage(Protocol):
    """Scores sentences in [-1, 1] from their texts and (optionally) their vectors."""

    name: str

    def check_encoder(self, model: EmbeddingModelInfo) -> None:
        """Raise :class:`~opinio_agents.errors.ConfigError` when the scorer cannot use this model's vectors."""
        ...

    def score(self, texts: Sequence[str], embeddings: np.ndarray | None) -> list[float]:
        """One score per text (``embeddings`` row ``i`` is the vector of ``texts[i]``)."""
        ...


class RuleSegmenter:
    """The offline rule-based splitter (:func:`opinio_agents.text.segment.segment_review`).

    Example:
        >>> from opinio_agents.models import Review
        >>> [s.text for s in RuleSegmenter().segment(1, Review(review_id=2, text="Nice pool. Slow wifi."))]
        ['Nice pool.', 'Slow wifi.']
    """

    name = "rules-v1"

    def segment(self, entity_id: EntityId, review: Review) -> list[Sentence]:
        """Split ``review`` with the rule-based splitter."""
        from opinio_agents.text.segment import segment_review

        return segment_review(entity_id, review)


class AppendixDTokenizer:
    """OpinioRAG App. D preprocessing (:func:`opinio_agents.text.preprocess.tokenize_for_bm25`).

    Example:
        >>> AppendixDTokenizer().tokenize("Rooms were cleaned daily")
        ['room', 'clean', 'daily']
    """

    name = "appendix-d-v1"

    def tokenize(self, text: str) -> list[str]:
        """App. D tokens: lower case, contractions expanded, punctuation and stop words dropped, lemmatised."""
        from opinio_agents.text.preprocess import tokenize_for_bm25

        return tokenize_for_bm25(text)

    def __call__(self, text: str) -> list[str]:
        return self.tokenize(text)


class LexiconSentiment:
    """A text-only scorer (review-tuned VADER by default); works with any encoder.

    Args:
        scorer: Any :class:`~opinio_agents.text.sentiment.SentimentScorer`.
        name: Its identity in the store (give another name to a differently tuned scorer).

    Example:
        >>> LexiconSentiment().score(["Great staff!"], None)[0] > 0
        True
    """

    def __init__(self, scorer: SentimentScorer | None = None, *, name: str = "vader-review-v1") -> None:
        self._scorer = scorer
        self.name = name

    def check_encoder(self, model: EmbeddingModelInfo) -> None:
        """Any model: the vectors are not used."""

    def score(self, texts: Sequence[str], embeddings: np.ndarray | None) -> list[float]:
        """Lexicon scores of ``texts``."""
        if self._scorer is None:
            from opinio_agents.text.sentiment import default_sentiment_scorer

            self._scorer = default_sentiment_scorer()
        return [float(s) for s in self._scorer.score(list(texts))]


class HeadBlendSentiment:
    """A logistic head over the sentence vector, averaged with VADER (the shipped default for MiniLM).

    Args:
        head: The head (default: the one shipped for all-MiniLM-L6-v2).
        model_name: The embedding model the head was trained on.
        lexicon: The text scorer blended in (review-tuned VADER by default).
        name: Identity in the store.

    Raises:
        ConfigError: From :meth:`check_encoder`, for vectors of another model.

    Example:
        >>> stage = HeadBlendSentiment()
        >>> try:
        ...     stage.check_encoder(EmbeddingModelInfo("other-model", 384))
        ... except ConfigError as error:
        ...     print(str(error)[:70])
        the sentiment head 'vader+head:all-MiniLM-L6-v2' was trained on all-Mi
    """

    def __init__(
        self,
        head: EmbeddingSentimentHead | None = None,
        *,
        model_name: str = DEFAULT_MODEL_NAME,
        lexicon: SentimentScorer | None = None,
        name: str | None = None,
    ) -> None:
        self._head = head
        self._shipped_head = head is None
        self._expected_model: EmbeddingModelInfo | None = None
        self.model_name = model_name
        self._lexicon = LexiconSentiment(lexicon)
        self.name = name or f"vader+head:{model_name}"

    @property
    def head(self) -> EmbeddingSentimentHead:
        """The embedding head (the shipped one, loaded on first use, by default)."""
        if self._head is None:
            from opinio_agents.text.sentiment_head import EmbeddingSentimentHead

            self._head = EmbeddingSentimentHead.default()
        return self._head

    @property
    def dimension(self) -> int:
        """Dimension of the vectors the head takes."""
        return int(self.head.coef.shape[1])

    def _expected(self) -> EmbeddingModelInfo:
        if self._expected_model is None:
            fingerprint = None
            if self._shipped_head and self.model_name == DEFAULT_MODEL_NAME:
                from opinio_agents.embeddings import default_model_path, model_fingerprint

                fingerprint = model_fingerprint(default_model_path())  # the shipped head fits the shipped files
            self._expected_model = EmbeddingModelInfo(self.model_name, self.dimension, fingerprint=fingerprint)
        return self._expected_model

    def check_encoder(self, model: EmbeddingModelInfo) -> None:
        """Refuse vectors of another model than the one the head was trained on."""
        why = self._expected().conflict(model)
        if why is not None:
            raise ConfigError(
                f"the sentiment head {self.name!r} was trained on {self.model_name} vectors and cannot score "
                f"those of {model.describe()} ({why}); pass sentiment=LexiconSentiment() (VADER only), or a "
                "HeadBlendSentiment with a head trained for this model (scripts/train_sentiment.py)"
            )

    def score(self, texts: Sequence[str], embeddings: np.ndarray | None) -> list[float]:
        """Equal-weight blend of the head and the lexicon."""
        from opinio_agents.text.sentiment_head import blend

        if embeddings is None or len(embeddings) != len(texts):
            raise ConfigError("HeadBlendSentiment needs one vector per text; the indexer passes them")
        head = self.head.score_embeddings(np.asarray(embeddings, dtype=np.float32))
        return blend(head, self._lexicon.score(texts, None))


def default_sentiment(model: EmbeddingModelInfo) -> SentimentStage:
    """The default sentiment stage for vectors of ``model``.

    The shipped head only fits all-MiniLM-L6-v2; for any other model the
    scores come from VADER alone (said in a warning, and recorded in the store).

    Example:
        >>> default_sentiment(EmbeddingModelInfo("my-model", 768)).name
        'vader-review-v1'
    """
    blended = HeadBlendSentiment()
    try:
        blended.check_encoder(model)
    except ConfigError:
        logger.warning(
            "embedding model %s is not the one the shipped sentiment head was trained on (%s); "
            "sentence sentiment uses VADER only (pass sentiment= to choose another scorer)",
            model.describe(),
            DEFAULT_MODEL_NAME,
        )
        return LexiconSentiment()
    return blended
