"""Comparison: what sets one entity apart from the others in the corpus.

For each discovered aspect of the entity, the share of its reviews that
mention the aspect (and how positively) is compared with the same share in
every other indexed entity (lexical mentions of the aspect name, so the other
entities' vectors are never loaded). Aspects are ranked by *lift*, the
smoothed ratio of the share here to the mean share elsewhere.

Example:
    >>> report = compare_entity(index, "101")                        # doctest: +SKIP
    >>> report.items[0].describe()                                   # doctest: +SKIP
    'kids club: 47% of reviews here vs 3% elsewhere (x11.2); 30% positive here vs 52% elsewhere'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.aspects import discover_aspects
from opinio_agents.hiro.retriever import DEFAULT_ALPHA
from opinio_agents.hiro.store import HiroIndex, as_hiro_index
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.synthesis.support import count_support

__all__ = ["ComparisonItem", "EntityComparison", "compare_entity"]

_SMOOTH = 0.01


@dataclass(frozen=True)
class ComparisonItem:
    """One aspect of the entity against the rest of the corpus."""

    aspect: str
    share_here: float
    share_others: float
    positive_here: float
    positive_others: float
    lift: float
    example_sentence_ids: tuple[str, ...] = ()

    def describe(self) -> str:
        """One human-readable line."""
        return (
            f"{self.aspect}: {self.share_here:.0%} of reviews here vs {self.share_others:.0%} elsewhere "
            f"(x{self.lift:.1f}); {self.positive_here:.0%} positive here vs {self.positive_others:.0%} elsewhere"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        data = asdict(self)
        data["example_sentence_ids"] = list(self.example_sentence_ids)
        return data


@dataclass
class EntityComparison:
    """The distinctive aspects of an entity, most distinctive first."""

    entity_id: str
    entity_name: str
    compared_with: int
    items: list[ComparisonItem] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return {
            "entity_id": self.entity_id,
            "entity_name": self.entity_name,
            "compared_with": self.compared_with,
            "items": [item.to_dict() for item in self.items],
        }


def _share(aspect: str, stored: list[StoredSentence]) -> tuple[float, float]:
    """Share of reviews mentioning ``aspect`` and the positive share of those."""
    support = count_support(aspect, stored)
    if not support.total_reviews:
        return 0.0, 0.0
    return support.reviews / support.total_reviews, support.share_positive


def compare_entity(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = 8,
    alpha: float = DEFAULT_ALPHA,
) -> EntityComparison:
    """What distinguishes ``entity_id`` from the other indexed entities.

    Raises:
        ConfigError: When ``top_k < 1``.
        StoreError: When the entity is not indexed.
    """
    if top_k < 1:
        raise ConfigError(f"top_k={top_k} must be >= 1")
    hiro = as_hiro_index(index)
    key = hiro.index.require_entity(entity_id)
    others = [k for k in hiro.index.entity_keys() if k != key and hiro.index.is_complete(k)]  # not mid-write
    stored_here = hiro.index.sentences(key)
    stored_others = {k: hiro.index.sentences(k) for k in others}
    items: list[ComparisonItem] = []
    for aspect in discover_aspects(hiro, key, top_k=top_k, alpha=alpha):
        here, pos_here = _share(aspect.aspect, stored_here)
        shares = [_share(aspect.aspect, s) for s in stored_others.values()]
        there = float(np.mean([s for s, _ in shares])) if shares else 0.0
        weights = [s for s, _ in shares]
        pos_there = float(np.average([p for _, p in shares], weights=weights)) if sum(weights) > 0 else 0.0
        items.append(
            ComparisonItem(
                aspect=aspect.aspect,
                share_here=round(here, 4),
                share_others=round(there, 4),
                positive_here=round(pos_here, 4),
                positive_others=round(pos_there, 4),
                lift=round((here + _SMOOTH) / (there + _SMOOTH), 3),
                example_sentence_ids=tuple(aspect.example_sentence_ids),
            )
        )
    items.sort(key=lambda item: (-item.lift, item.aspect))
    return EntityComparison(key, hiro.index.entity_record(key).entity_name, len(others), items)
