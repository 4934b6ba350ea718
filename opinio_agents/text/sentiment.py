"""Offline sentence sentiment for review text.

:class:`VaderSentimentScorer` wraps VADER (rule-based, no model download, ~10K+
sentences/s) and adapts it to hotel/restaurant reviews in two ways:

* **Lexicon additions** (:data:`REVIEW_LEXICON`): review words VADER lacks or
  under-weights (``dated``, ``overpriced``, ``filthy``, ``bedbugs``,
  ``spotless``, ``walkable`` ...), on VADER's -4..+4 valence scale.
* **Complaint phrases** (:data:`NEGATIVE_PHRASES`): factual complaints without
  an opinion word (``had to wait``, ``didn't work``, ``out of order``, ``no hot
  water``, ``thin walls``, ``would never stay again``). A matched phrase is
  replaced, in a private copy of the sentence, by a sentinel token whose
  lexicon valence is negative, so VADER's own scoring (intensifiers, ``but``,
  capitals, ``!``) still applies to the rest of the sentence. The phrase is
  removed whole, so its own negation words cannot flip the sentinel.
* **Boosters** (``boosters``): "super" is praise in VADER's lexicon ("Super!")
  but only an intensifier before a word with a valence, so "super expensive"
  is read as VADER's "very expensive", a complaint.

Scores are VADER's ``compound`` in [-1, 1]; :func:`sentiment_label` maps them
to -1/0/+1 with VADER's customary +-0.05 threshold.

The analyzer is built lazily on first use (never at import) and guarded by a
lock; scoring itself only reads the lexicon and is safe from many threads.

Example:
    >>> scorer = default_sentiment_scorer()
    >>> [sentiment_label(s) for s in scorer.score(["Spotless room!", "We had to wait an hour."])]
    [1, -1]
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.models import SENTIMENT_THRESHOLD
from opinio_agents.text.preprocess import plain_apostrophes
from opinio_agents.text.wordlists import word_patterns, word_set, word_table

__all__ = [
    "SentimentScorer",
    "VaderSentimentScorer",
    "sentiment_label",
    "default_sentiment_scorer",
    "REVIEW_LEXICON",  # noqa: F822 - read from package data on first access (module __getattr__)
    "NEGATIVE_PHRASES",  # noqa: F822 - read from package data on first access (module __getattr__)
]

# REVIEW_LEXICON (word -> valence, VADER scale -4..+4, added to / overriding VADER's lexicon) and
# NEGATIVE_PHRASES (complaint regexes scored as negative) are package data,
# ``resources/words/sentiment.json``, read on first use (see :func:`__getattr__`).


def __getattr__(name: str) -> Any:
    """``REVIEW_LEXICON`` and ``NEGATIVE_PHRASES``, read from the package data on first access."""
    if name == "REVIEW_LEXICON":
        return word_table("sentiment", "review_lexicon")
    if name == "NEGATIVE_PHRASES":
        return word_patterns("sentiment", "negative_phrases")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SENTINEL = "zzcomplaintzz"
_SENTINEL_VALENCE = -2.0
#: Stands for a ``positive_phrases`` match ("no queues"): praise of moderate strength.
_PRAISE = "zzpraisezz"
_PRAISE_VALENCE = 1.5


@runtime_checkable
class SentimentScorer(Protocol):
    """Anything that scores texts with a sentiment in [-1, 1]."""

    def score(self, texts: Sequence[str]) -> list[float]:
        """Return one score in [-1, 1] per text (negative < 0 < positive)."""
        ...


class VaderSentimentScorer:
    """VADER with review-domain lexicon additions and complaint phrases.

    Args:
        extra_lexicon: More ``{word: valence}`` entries (VADER scale -4..+4),
            applied after :data:`REVIEW_LEXICON`.
        use_review_rules: Apply :data:`REVIEW_LEXICON` and :data:`NEGATIVE_PHRASES`.
            False gives plain VADER.

    Example:
        >>> VaderSentimentScorer().score(["The carpet was filthy."])[0] < 0
        True
    """

    def __init__(
        self, extra_lexicon: dict[str, float] | None = None, *, use_review_rules: bool = True
    ) -> None:
        for word, valence in (extra_lexicon or {}).items():
            if not isinstance(valence, (int, float)) or not -4.0 <= float(valence) <= 4.0:
                raise ConfigError(
                    f"extra_lexicon[{word!r}]={valence!r}: "
                    "valences must be numbers in [-4, 4] (VADER's scale)"
                )
        self._extra = {str(word).lower(): float(v) for word, v in (extra_lexicon or {}).items()}
        self._use_rules = use_review_rules
        self._analyzer: Any = None
        self._lock = threading.Lock()
        phrases = word_patterns("sentiment", "negative_phrases")
        self._phrases = re.compile("|".join(f"(?:{p})" for p in phrases), re.IGNORECASE)
        praise = word_patterns("sentiment", "positive_phrases")
        self._praise = re.compile("|".join(f"(?:{p})" for p in praise), re.IGNORECASE)
        boosters = sorted(word_set("sentiment", "boosters"))
        self._boosters = re.compile(rf"\b(?:{'|'.join(map(re.escape, boosters))})\s+(?=([\w'-]+))", re.IGNORECASE)

    def _get_analyzer(self) -> Any:
        if self._analyzer is None:
            with self._lock:
                if self._analyzer is None:
                    try:
                        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
                    except ImportError as exc:  # pragma: no cover - a core dependency
                        raise MissingDependencyError(
                            "vaderSentiment", purpose="sentiment scoring"
                        ) from exc
                    analyzer = SentimentIntensityAnalyzer()
                    if self._use_rules:
                        analyzer.lexicon.update(word_table("sentiment", "review_lexicon"))
                        analyzer.lexicon[_SENTINEL] = _SENTINEL_VALENCE
                        analyzer.lexicon[_PRAISE] = _PRAISE_VALENCE
                    analyzer.lexicon.update(self._extra)
                    self._analyzer = analyzer
        return self._analyzer

    def opinion_words(self) -> frozenset[str]:
        """The words this scorer gives a valence (VADER's lexicon with the review-domain additions)."""
        return frozenset(w for w in self._get_analyzer().lexicon if w not in (_SENTINEL, _PRAISE))

    def score_one(self, text: str) -> float:
        """Score one text; see :meth:`score`."""
        analyzer = self._get_analyzer()
        text = plain_apostrophes(text)  # VADER negates "didn't", not "didn’t" or "wasn´t"
        if self._use_rules:
            text = self._phrases.sub(f" {_SENTINEL} ", self._praise.sub(f" {_PRAISE} ", text))
            lexicon = analyzer.lexicon
            text = self._boosters.sub(lambda m: "very " if m.group(1).lower() in lexicon else m.group(0), text)
        return float(analyzer.polarity_scores(text)["compound"])

    def score(self, texts: Sequence[str]) -> list[float]:
        """VADER compound score in [-1, 1] for each text.

        Example:
            >>> [round(s, 2) for s in VaderSentimentScorer().score(["", "Great staff!"])]
            [0.0, 0.66]
        """
        if isinstance(texts, str):
            raise ConfigError(
                "score() takes a sequence of texts, not one string; wrap it: score([text])"
            )
        return [self.score_one(text) for text in texts]


def sentiment_label(score: float, threshold: float = SENTIMENT_THRESHOLD) -> int:
    """Map a score to -1 (negative), 0 (neutral) or +1 (positive).

    Example:
        >>> [sentiment_label(s) for s in (-0.6, 0.01, 0.3)]
        [-1, 0, 1]
    """
    if threshold < 0:
        raise ConfigError(f"threshold={threshold!r}: must be >= 0 (e.g. 0.05)")
    if score >= threshold and score > 0:
        return 1
    if score <= -threshold and score < 0:
        return -1
    return 0


@lru_cache(maxsize=1)
def default_sentiment_scorer() -> VaderSentimentScorer:
    """The shared default scorer (constructed once; the analyzer loads on first use)."""
    return VaderSentimentScorer()
