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

__all__ = [
    "SentimentScorer",
    "VaderSentimentScorer",
    "sentiment_label",
    "default_sentiment_scorer",
    "REVIEW_LEXICON",
    "NEGATIVE_PHRASES",
]

#: Review-domain valences (VADER scale, -4..+4) added to / overriding VADER's lexicon.
REVIEW_LEXICON: dict[str, float] = {
    # Negative: condition and cleanliness.
    "dated": -1.5,
    "outdated": -1.8,
    "old-fashioned": -1.0,
    "tired": -1.0,
    "worn": -1.3,
    "run-down": -2.0,
    "rundown": -2.0,
    "shabby": -1.9,
    "dingy": -1.9,
    "grimy": -2.0,
    "filthy": -3.0,
    "unclean": -2.2,
    "unsanitary": -2.6,
    "stained": -1.8,
    "stains": -1.6,
    "moldy": -2.4,
    "mouldy": -2.4,
    "mold": -2.0,
    "mould": -2.0,
    "mildew": -1.9,
    "musty": -1.8,
    "smelly": -2.0,
    "stinky": -2.2,
    "stank": -2.0,
    "stale": -1.5,
    "leaky": -1.6,
    "leaking": -1.5,
    "broken": -1.9,
    "bedbugs": -3.2,
    "bedbug": -3.2,
    "bed-bugs": -3.2,
    "cockroach": -2.8,
    "cockroaches": -2.8,
    "roaches": -2.8,
    "roach": -2.6,
    "mice": -2.0,
    "rats": -2.2,
    "cramped": -1.7,
    "tiny": -0.8,
    "noisy": -1.6,
    "noisey": -1.6,
    "lukewarm": -1.2,
    # Negative: price and service.
    "overpriced": -2.0,
    "overcharged": -2.3,
    "overrated": -1.6,
    "pricey": -0.8,
    "underwhelming": -1.6,
    "subpar": -1.9,
    "sub-par": -1.9,
    "mediocre": -1.3,
    "unhelpful": -1.9,
    "unresponsive": -1.7,
    "understaffed": -1.6,
    "overbooked": -1.6,
    "rude": -2.3,
    "fee": -0.5,
    "fees": -0.6,
    "surcharge": -1.0,
    # Positive.
    "spotless": 2.6,
    "immaculate": 2.6,
    "pristine": 2.3,
    "complimentary": 1.6,
    "walkable": 1.5,
    "helpful": 1.9,
    "attentive": 1.9,
    "knowledgeable": 1.8,
    "accommodating": 1.9,
    "spacious": 1.8,
    "roomy": 1.6,
    "comfy": 1.8,
    "cozy": 1.6,
    "cosy": 1.6,
    "quiet": 1.2,
    "convenient": 1.6,
    "conveniently": 1.4,
    "soundproof": 1.3,
    "renovated": 1.2,
    "well-maintained": 1.8,
    "well-located": 1.8,
    "upgraded": 1.3,
    # Positive: speed and reliability ("the elevators were fast", "fast and reliable wi-fi").
    "fast": 1.2,
    "quick": 1.2,
    "speedy": 1.3,
    "reliable": 1.5,
}

#: Factual complaint phrases (regexes, case-insensitive) scored as negative.
NEGATIVE_PHRASES: tuple[str, ...] = (
    r"\bno (?:hot |warm )?(?:water|heat|heating|a/?c|air[- ]?con\w*|wi-?fi|internet"
    r"|towels?|toilet paper|soap|water pressure)\b",
    r"\b(?:had|have|having|has) to wait\b",
    r"\bwaited (?:for )?(?:over |more than |almost |nearly |about )?(?:an? |\d+ )?"
    r"(?:hour|hours|minutes|mins|ages|forever)\b",
    r"\b(?:did|does|do|was|were|is|are)(?:n't|n\u2019t| not) work(?:ing|ed)?\b",
    r"\b(?:not|stopped) working\b",
    r"\bout of order\b",
    r"\bnever (?:came|arrived|showed up|got fixed|fixed|cleaned|answered|responded|returned)\b",
    r"\b(?:hard|difficult|impossible) to (?:sleep|find|reach|get hold of)\b",
    r"\b(?:thin|paper[- ]thin) walls\b",
    r"\b(?:hair|hairs|blood|vomit) (?:in|on) the\b",
    r"\bwould (?:never|not|n't) (?:stay|return|go back|come back|book)\b",
    r"\b(?:hidden|extra|additional) (?:fee|fees|charge|charges)\b",
    r"\bcharged (?:us )?(?:extra|twice|for)\b",
    # Paying for what should come with the room, and "free" that is not ("the so-called free wi-fi").
    r"\b(?:had|have|has|having) to (?:buy|pay)\b",
    r"\bso[- ]called\b",
    r"\b(?:has|have|had) seen better days\b",
    r"\btook (?:over|more than|almost|nearly|well over) (?:an hour|\d+ (?:minutes|mins|hours))\b",
    r"\b(?:would|will|did|could)(?: not|n't|n\u2019t) budge\b",
)

_SENTINEL = "zzcomplaintzz"
_SENTINEL_VALENCE = -2.0


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
        self._phrases = re.compile("|".join(f"(?:{p})" for p in NEGATIVE_PHRASES), re.IGNORECASE)

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
                        analyzer.lexicon.update(REVIEW_LEXICON)
                        analyzer.lexicon[_SENTINEL] = _SENTINEL_VALENCE
                    analyzer.lexicon.update(self._extra)
                    self._analyzer = analyzer
        return self._analyzer

    def score_one(self, text: str) -> float:
        """Score one text; see :meth:`score`."""
        analyzer = self._get_analyzer()
        if self._use_rules:
            text = self._phrases.sub(f" {_SENTINEL} ", text)
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
