"""Core types of AOS (aspect-opinion-sentiment) triplet extraction.

A :class:`Triplet` decomposes an opinionated sentence into the aspect being
discussed, the opinion expressed about it and the sentiment of that opinion
(-1 negative, 0 neutral, 1 positive), as in OpinioRAG Sec. 4.1. Every
extractor implements :class:`TripletExtractor`.

An *implicit* aspect (an opinion with no explicit aspect term, e.g. "Very
clean and quiet.") is represented by :data:`IMPLICIT_ASPECT`, the empty string.

Example:
    >>> from opinio_agents.triplets.base import Triplet
    >>> Triplet(aspect="staff", opinion="friendly", sentiment=1).polarity_label
    'POS'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from opinio_agents.models import Sentiment

__all__ = [
    "IMPLICIT_ASPECT",
    "Sentiment",
    "SENTIMENT_FROM_LABEL",
    "LABEL_FROM_SENTIMENT",
    "Triplet",
    "SentenceTriplets",
    "TripletExtractor",
]

#: Aspect string used when an opinion has no explicit aspect term.
IMPLICIT_ASPECT = ""


#: ASTE polarity label -> sentiment value.
SENTIMENT_FROM_LABEL: dict[str, Sentiment] = {"NEG": -1, "NEU": 0, "POS": 1}
#: Sentiment value -> ASTE polarity label.
LABEL_FROM_SENTIMENT: dict[int, str] = {v: k for k, v in SENTIMENT_FROM_LABEL.items()}


class Triplet(BaseModel):
    """One aspect-opinion-sentiment triplet.

    Attributes:
        aspect: Surface string of the aspect term as it appears in the sentence,
            or :data:`IMPLICIT_ASPECT` (``""``) when the aspect is implicit.
        opinion: Surface string of the opinion expression.
        sentiment: -1 (negative), 0 (neutral) or 1 (positive).

    Example:
        >>> Triplet(aspect="room", opinion="dirty", sentiment=-1).is_implicit
        False
    """

    model_config = ConfigDict(frozen=True)

    aspect: str = Field(description="Aspect term as written in the sentence; '' if implicit.")
    opinion: str = Field(description="Opinion expression as written in the sentence.")
    sentiment: Sentiment = Field(description="-1 negative, 0 neutral, 1 positive.")

    @property
    def is_implicit(self) -> bool:
        """Whether the aspect is implicit (no aspect term in the sentence)."""
        return self.aspect == IMPLICIT_ASPECT

    @property
    def polarity_label(self) -> str:
        """The ASTE label of the sentiment: ``'POS'``, ``'NEG'`` or ``'NEU'``."""
        return LABEL_FROM_SENTIMENT[self.sentiment]


class SentenceTriplets(BaseModel):
    """A sentence with the triplets extracted from it.

    Example:
        >>> SentenceTriplets(sentence="Great pool.", triplets=[
        ...     Triplet(aspect="pool", opinion="Great", sentiment=1)]).triplets[0].aspect
        'pool'
    """

    sentence: str
    triplets: list[Triplet] = Field(default_factory=list)


class TripletExtractor(ABC):
    """Extracts AOS triplets from sentences.

    Subclasses implement :meth:`extract` (batched); :meth:`extract_one` is a
    convenience wrapper. Implementations must load models lazily, on first use.

    Example:
        >>> class Constant(TripletExtractor):
        ...     def extract(self, sentences):
        ...         return [[] for _ in sentences]
        >>> Constant().extract_one("Nice view.")
        []
    """

    @abstractmethod
    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        """Extract the triplets of every sentence.

        Args:
            sentences: Raw (untokenized) sentences.

        Returns:
            One list of triplets per input sentence, in input order.
        """

    def extract_one(self, sentence: str) -> list[Triplet]:
        """Extract the triplets of a single sentence."""
        return self.extract([sentence])[0]

    def extract_records(self, sentences: Sequence[str]) -> list[SentenceTriplets]:
        """Like :meth:`extract`, but pairs each sentence with its triplets."""
        return [
            SentenceTriplets(sentence=s, triplets=t)
            for s, t in zip(sentences, self.extract(sentences), strict=True)
        ]
