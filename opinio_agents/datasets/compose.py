"""Compose realistic, noisy review texts from the phrase bank.

A :class:`ReviewComposer` turns a list of aspect :class:`Mention` objects into
one OpinioBank review record: it orders the aspect sentences among narrative
ones (arrival, trip details, a closing recommendation), varies length and
writing style (terse, rambling, enthusiastic, non-native English, all lower
case), adds paragraphs, the odd ``<br/>`` or ``&amp;``, emoji and typos, and
derives a star rating consistent with the sentiment of what was said. The
same seed always gives the same text.

Example:
    >>> import random
    >>> from opinio_agents.datasets.compose import Mention, ReviewComposer
    >>> composer = ReviewComposer(random.Random(0))
    >>> record = composer.compose(1, [Mention("pool", 1)])
    >>> sorted(record)[:3]
    ['helpful_votes', 'publication_date', 'rating']
    >>> 1 <= record["rating"] <= 5
    True
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opinio_agents.datasets import phrases as bank
from opinio_agents.errors import ConfigError
from opinio_agents.models import SENTIMENT_NAMES, Sentiment

__all__ = ["Mention", "ReviewComposer", "STYLES"]


#: Writing styles and how often each is drawn.
STYLES: dict[str, float] = {
    "plain": 0.55,
    "terse": 0.12,
    "rambling": 0.10,
    "enthusiastic": 0.10,
    "non_native": 0.08,
    "lowercase": 0.05,
}

_SENTIMENTS: tuple[Sentiment, ...] = (1, -1, 0)
_SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Mention:
    """One aspect a review talks about, and with which sentiment.

    Attributes:
        aspect: An aspect name of the phrase bank (``"wi-fi"``).
        sentiment: 1 positive, -1 negative, 0 neutral (:data:`~opinio_agents.models.Sentiment`).
    """

    aspect: str
    sentiment: Sentiment


class ReviewComposer:
    """Builds review records (text, rating, metadata) from aspect mentions.

    Args:
        rng: The random source; the composer draws everything from it.
        sentences_per_review: ``(min, max)`` number of sentences of a review.
        mean_sentences: Target average number of sentences per review.
        extra: Entity-specific sentences, ``{aspect: {sentiment name: [sentence, ...]}}``
            (names as in :data:`~opinio_agents.models.SENTIMENT_NAMES`: ``"positive"``, ...),
            used in preference to the bank's (see ``extra_share``).
        extra_share: Probability of picking an entity-specific sentence when one exists.
        date_range: First and last possible publication date.
        missing_metadata: Probability that each optional user field is left out.

    Raises:
        ConfigError: On an inconsistent length range or probability.

    Example:
        >>> import random
        >>> composer = ReviewComposer(random.Random(1), sentences_per_review=(1, 3), mean_sentences=2)
        >>> text = composer.compose(7, [])["text"]
        >>> isinstance(text, str) and len(text) > 0
        True
    """

    def __init__(
        self,
        rng: random.Random,
        *,
        sentences_per_review: tuple[int, int] = (1, 25),
        mean_sentences: float = 7.0,
        extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
        extra_share: float = 0.5,
        date_range: tuple[dt.date, dt.date] = (dt.date(2015, 1, 1), dt.date(2024, 12, 31)),
        missing_metadata: float = 0.1,
    ) -> None:
        low, high = sentences_per_review
        if low < 1 or high < low:
            raise ConfigError(
                f"sentences_per_review={sentences_per_review!r} is invalid; "
                "give (min, max) with 1 <= min <= max, e.g. (1, 25)"
            )
        if not low <= mean_sentences <= high:
            raise ConfigError(
                f"mean_sentences={mean_sentences!r} must lie within sentences_per_review={sentences_per_review!r}"
            )
        for name, value in (("extra_share", extra_share), ("missing_metadata", missing_metadata)):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name}={value!r} must be a probability between 0 and 1")
        if date_range[1] < date_range[0]:
            raise ConfigError(f"date_range={date_range!r} ends before it starts; give (first, last)")
        for name in extra or {}:
            bank.aspect(name)
        self.rng = rng
        self.low, self.high = low, high
        self.sigma = 0.65
        # Length is log-normal around the requested mean (before clipping).
        self.mu = math.log(mean_sentences) - self.sigma**2 / 2
        self.extra = extra or {}
        self.extra_share = extra_share
        self.first_day = date_range[0]
        self.days = (date_range[1] - date_range[0]).days
        self.missing = missing_metadata
        self._style_names = list(STYLES)
        self._style_weights = list(STYLES.values())

    # -- sentences ---------------------------------------------------------------

    def aspect_sentence(self, name: str, sentiment: Sentiment) -> str:
        """One sentence about ``name`` with the given sentiment.

        Example:
            >>> import random
            >>> s = ReviewComposer(random.Random(0)).aspect_sentence("wi-fi", -1)
            >>> bank.mentions("wi-fi", s)
            True
        """
        if sentiment not in _SENTIMENTS:
            raise ConfigError(f"sentiment={sentiment!r} must be one of {_SENTIMENTS}")
        word = SENTIMENT_NAMES[sentiment]
        own = self.extra.get(name, {}).get(word, ())
        if own and self.rng.random() < self.extra_share:
            return self.rng.choice(list(own))
        phrases = bank.aspect(name)
        return self.rng.choice(getattr(phrases, word))

    def _fill(self, sentence: str) -> str:
        return _SLOT.sub(lambda m: self.rng.choice(bank.SLOTS[m.group(1)]), sentence)

    def _with_prefix(self, sentence: str, sentiment: Sentiment) -> str:
        if sentiment == 1:
            prefix = self.rng.choice(bank.PREFIXES_POSITIVE)
        elif sentiment == -1:
            prefix = self.rng.choice(bank.PREFIXES_NEGATIVE)
        else:
            prefix = self.rng.choice(bank.PREFIXES_ANY)
        keep_case = sentence[:2] == "I " or (len(sentence) > 1 and sentence[1].isupper())
        return prefix + (sentence if keep_case else sentence[0].lower() + sentence[1:])

    def _typo(self, sentence: str) -> str:
        words = sentence.split(" ")
        candidates = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
        if not candidates:
            return sentence
        i = self.rng.choice(candidates)
        word = words[i]
        j = self.rng.randrange(1, len(word) - 2)
        words[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
        return " ".join(words)

    # -- rating and metadata -----------------------------------------------------

    def rating_for(self, mentions: Sequence[Mention], critical: bool = False) -> int:
        """A 1-5 star rating consistent with the sentiment of the mentions."""
        if critical:
            return 1
        pos = sum(m.sentiment == 1 for m in mentions)
        neg = sum(m.sentiment == -1 for m in mentions)
        score = (pos - neg) / (pos + neg) if pos + neg else 0.0
        value = 3.7 + 1.6 * score + self.rng.gauss(0.0, 0.6)
        return max(1, min(5, round(value)))

    def metadata(self) -> dict[str, Any]:
        """Review metadata in OpinioBank field order; optional fields are sometimes missing."""
        rng = self.rng
        day = self.first_day + dt.timedelta(days=rng.randint(0, self.days))
        posted = 1 + int(rng.lognormvariate(2.0, 1.3))
        meta: dict[str, Any] = {
            "helpful_votes": int(rng.expovariate(0.7)),
            "publication_date": day.isoformat(),
            "user_reviews_posted": posted,
            "user_cities_visited": max(1, int(posted * rng.uniform(0.3, 1.0))),
            "user_helpful_votes": int(posted * rng.uniform(0.0, 2.0)),
        }
        for name in ("helpful_votes", "user_reviews_posted", "user_cities_visited", "user_helpful_votes"):
            if rng.random() < self.missing:
                del meta[name]
        return meta

    # -- the review --------------------------------------------------------------

    def _length(self, style: str) -> int:
        n = round(self.rng.lognormvariate(self.mu, self.sigma))
        if style == "terse":
            n = min(n, 3)
        elif style == "rambling":
            n = max(n, 10)
        return max(self.low, min(self.high, n))

    def compose(
        self,
        review_id: int | str,
        mentions: Sequence[Mention],
        *,
        critical: str | None = None,
    ) -> dict[str, Any]:
        """Write one review record mentioning exactly the given aspects.

        Args:
            review_id: The review's id.
            mentions: The aspects the review talks about, each once.
            critical: A critical-complaint category of
                :data:`~opinio_agents.datasets.phrases.CRITICAL_COMPLAINTS` to include.

        Returns:
            ``{"review_id", "text", "rating", ...metadata}`` in OpinioBank form.
        """
        rng = self.rng
        style = rng.choices(self._style_names, self._style_weights)[0]
        rating = self.rating_for(mentions, critical is not None)
        target = self._length(style)

        body: list[str] = []
        for mention in mentions:
            sentence = self.aspect_sentence(mention.aspect, mention.sentiment)
            if rng.random() < 0.2:
                sentence = self._with_prefix(sentence, mention.sentiment)
            body.append(sentence)
        rng.shuffle(body)
        if critical is not None:
            complaints = bank.CRITICAL_COMPLAINTS.get(critical)
            if not complaints:
                raise ConfigError(
                    f"critical={critical!r} is unknown; choose one of {sorted(bank.CRITICAL_COMPLAINTS)}"
                )
            body.insert(rng.randint(0, len(body)), rng.choice(complaints))

        narrative: list[str] = []
        if not body and target <= 1:
            pool = bank.ONE_LINERS_POSITIVE if rating >= 4 else bank.ONE_LINERS_NEGATIVE
            body = [rng.choice(pool)]
        opener = self._fill(rng.choice(bank.OPENERS)) if style != "terse" and rng.random() < 0.7 else None
        closer = None
        if style != "terse" and rng.random() < 0.6 or not body:
            pool = (
                bank.CLOSERS_POSITIVE
                if rating >= 4
                else bank.CLOSERS_NEGATIVE
                if rating <= 2
                else bank.CLOSERS_MIXED
            )
            closer = rng.choice(pool)
        spare = target - len(body) - (opener is not None) - (closer is not None)
        filler_pool = bank.NON_NATIVE_FILLER if style == "non_native" else bank.FILLER
        if spare > 0:
            # Without replacement while the pool lasts: no sentence twice in a review.
            picks = rng.sample(filler_pool, min(spare, len(filler_pool)))
            picks += [rng.choice(filler_pool) for _ in range(spare - len(picks))]
            narrative.extend(self._fill(sentence) for sentence in picks)
        if narrative and rng.random() < 0.1:
            k = rng.randrange(len(narrative))
            narrative[k] = self._typo(narrative[k])

        sentences = list(body)
        for sentence in narrative:
            sentences.insert(rng.randint(0, len(sentences)), sentence)
        if opener:
            sentences.insert(0, opener)
        if closer:
            sentences.append(closer)
        sentences = self._stylise(sentences, style, rating)
        text = self._join(sentences, style, rating)
        record: dict[str, Any] = {"review_id": review_id, "text": text, "rating": rating}
        record.update(self.metadata())
        return record

    def _stylise(self, sentences: list[str], style: str, rating: int) -> list[str]:
        rng = self.rng
        out: list[str] = []
        for sentence in sentences:
            if style == "enthusiastic" and sentence.endswith(".") and rng.random() < 0.5:
                sentence = sentence[:-1] + rng.choice(("!", "!!", "!!!"))
            if style == "non_native":
                sentence = re.sub(r"^The (\w)", lambda m: m.group(1).upper(), sentence)
                sentence = sentence.replace(" the ", " ", 1) if rng.random() < 0.4 else sentence
            if rng.random() < (0.12 if style == "enthusiastic" or rating == 1 else 0.01):
                sentence = sentence.upper()
            out.append(sentence)
        if style == "lowercase":
            out = [s.lower().rstrip(".") if rng.random() < 0.5 else s.lower() for s in out]
        if rating == 1 and rng.random() < 0.15:
            out.append("NEVER AGAIN!!!")
        return out

    def _join(self, sentences: list[str], style: str, rating: int) -> str:
        rng = self.rng
        if len(sentences) >= 6 and rng.random() < 0.6:
            cuts = sorted(rng.sample(range(1, len(sentences)), min(len(sentences) - 1, rng.randint(1, 3))))
            paragraphs: list[str] = []
            start = 0
            for cut in [*cuts, len(sentences)]:
                paragraphs.append(" ".join(sentences[start:cut]))
                start = cut
            separator = "<br/><br/>" if rng.random() < 0.06 else "\n\n" if rng.random() < 0.85 else "\n"
            text = separator.join(paragraphs)
        else:
            text = " ".join(sentences)
        if rng.random() < 0.04:
            text = text.replace(" and ", " &amp; ", 1)
        if rng.random() < 0.12:
            for right, wrong in rng.sample(sorted(bank.MISSPELLINGS.items()), 3):
                text = re.sub(rf"\b{right}\b", wrong, text, count=1)
        emoji_rate = 0.5 if style == "enthusiastic" else 0.05
        if rng.random() < emoji_rate:
            pool = bank.EMOJI_POSITIVE if rating >= 4 else bank.EMOJI_NEGATIVE if rating <= 2 else ("🤷",)
            text = f"{text} {rng.choice(pool) * rng.randint(1, 3)}"
        return text
