"""Recall of planted opinions without queries (synthetic data with known ground truth).

A planted aspect counts as *found* when a discovered aspect is about it: its
name mentions one of the aspect's terms, or at least half of its sentences
that name it (its cluster sentences when none do) mention the planted aspect.
It counts as found *on the right side* when, in addition, that discovered
aspect leans the planted way (more positive than negative reviews for a PRO).

Example:
    >>> report = planted_recall(discovered, data.planted["1"], index.sentences("1"))   # doctest: +SKIP
    >>> report.recall, report.side_recall                                             # doctest: +SKIP
    (0.83, 0.83)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from opinio_agents.datasets import phrases
from opinio_agents.datasets.phrases import mentions
from opinio_agents.datasets.synthetic import PlantedOpinion
from opinio_agents.hiro.aspects import DiscoveredAspect
from opinio_agents.stores.catalog import StoredSentence

__all__ = ["PlantedRecall", "planted_recall", "matches_planted"]


@dataclass
class PlantedRecall:
    """Which dominant planted aspects were found, and on which side."""

    planted: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    right_side: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        """Share of the planted aspects found."""
        return len(self.found) / len(self.planted) if self.planted else 0.0

    @property
    def side_recall(self) -> float:
        """Share found on the planted side."""
        return len(self.right_side) / len(self.planted) if self.planted else 0.0


def matches_planted(aspect: DiscoveredAspect, name: str, stored: Sequence[StoredSentence]) -> bool:
    """Whether a discovered aspect is about the planted aspect ``name``."""
    if name not in phrases.ASPECTS:
        return False
    if mentions(name, aspect.aspect):
        return True
    pool = [i for i in aspect.sentence_indices if i in set(aspect.term_indices)] or aspect.sentence_indices
    if not pool:
        return False
    hits = sum(1 for i in pool if mentions(name, stored[i].sentence.text))
    return hits >= 0.5 * len(pool)


def planted_recall(
    discovered: Sequence[DiscoveredAspect],
    planted: Sequence[PlantedOpinion],
    stored: Sequence[StoredSentence],
    *,
    min_prevalence: float = 0.3,
) -> PlantedRecall:
    """Recall of the planted aspects with prevalence >= ``min_prevalence`` among ``discovered``."""
    report = PlantedRecall()
    for opinion in planted:
        if opinion.prevalence < min_prevalence:
            continue
        report.planted.append(opinion.aspect)
        matching = [a for a in discovered if matches_planted(a, opinion.aspect, stored)]
        if not matching:
            continue
        report.found.append(opinion.aspect)
        want_positive = opinion.polarity == "pros"
        if any((a.positive > a.negative) == want_positive and a.positive != a.negative for a in matching):
            report.right_side.append(opinion.aspect)
    return report
