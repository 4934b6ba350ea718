"""Shared pieces of the App. F baselines: candidate sentences and the baseline interface.

A baseline turns an entity's candidate sentences (every review sentence, with
a sentiment label) into a :class:`~opinio_agents.models.HighlightSet` with as
many PROS and CONS as the expert review has (App. F). Baselines that do not
read the queries (random, TextRank, LexRank) attach the expert queries to
their sentences in order, so the query label of their highlights is nominal.

Example:
    >>> from opinio_agents.evaluation.baselines.base import Candidate
    >>> Candidate("1:1:0", "Great pool.", 1).label
    1
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

from opinio_agents.models import Evidence, ExpertReview, Highlight, HighlightSet, Polarity, RunMeta

__all__ = [
    "Candidate",
    "BaselineInput",
    "Baseline",
    "make_highlights",
    "unique_candidates",
    "MAX_TEXT",
]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")

#: Highlight texts are capped at this many characters (the Highlight model's limit).
MAX_TEXT = 600


@dataclass(frozen=True)
class Candidate:
    """A review sentence a baseline may select.

    Attributes:
        sentence_id: Stable id ``entity:review:index``.
        text: The sentence.
        label: Sentiment label -1/0/1 (the App. F sentiment constraint).
        score: Sentiment score in [-1, 1] when known.
    """

    sentence_id: str
    text: str
    label: int
    score: float | None = None


@dataclass
class BaselineInput:
    """Everything a baseline sees for one entity."""

    entity_id: str
    expert: ExpertReview
    candidates: Sequence[Candidate]
    entity_name: str = ""
    extra: dict[str, object] = field(default_factory=dict)


def unique_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates without repeated texts (case, punctuation, spacing ignored), first kept.

    Reviews repeat sentences verbatim ("Great location."); a baseline must not
    pick the same text twice.

    Example:
        >>> [c.sentence_id for c in unique_candidates(
        ...     [Candidate("a", "Great  pool.", 1), Candidate("b", "great pool!!", 1)])]
        ['a']
    """
    seen: set[str] = set()
    out: list[Candidate] = []
    for cand in candidates:
        key = " ".join(_NON_ALNUM.sub(" ", cand.text.lower()).split())
        if key not in seen:
            seen.add(key)
            out.append(cand)
    return out


def make_highlights(
    data: BaselineInput,
    pros: Sequence[tuple[str, Candidate]],
    cons: Sequence[tuple[str, Candidate]],
    *,
    name: str,
) -> HighlightSet:
    """Build the HighlightSet of ``(query, sentence)`` picks; each sentence is its own evidence."""

    def one(query: str, cand: Candidate, polarity: Polarity) -> Highlight:
        evidence = [
            Evidence(sentence_id=cand.sentence_id, text=cand.text, score=1.0, sentiment=cand.score)
        ]
        return Highlight(
            query=query, polarity=polarity, text=cand.text[:MAX_TEXT], evidence=evidence
        )

    return HighlightSet(
        entity_id=data.entity_id,
        entity_name=data.entity_name,
        pros=[one(q, c, Polarity.PROS) for q, c in pros],
        cons=[one(q, c, Polarity.CONS) for q, c in cons],
        meta=RunMeta(synthesizer=name, queries=data.expert.queries),
    )


class Baseline(ABC):
    """A non-LLM baseline of App. F."""

    #: Short name used in tables.
    name: str = "baseline"

    @abstractmethod
    def run(self, data: BaselineInput) -> HighlightSet:
        """The baseline's PROS and CONS for one entity (never the same text twice)."""
