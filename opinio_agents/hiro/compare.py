"""Comparison: what sets one entity apart from the others in the corpus.

For each discovered aspect of the entity, the share of its reviews that
mention the aspect (and how positively) is compared with the same share in
every other indexed entity (lexical mentions of the aspect name, so the other
entities' vectors are never loaded). "Elsewhere" is the other entities' reviews
taken together (each review weighs the same). Aspects are ranked by *lift*, the
smoothed ratio of the share here to the share elsewhere. A store with no other
entity has nothing to compare with: :func:`compare_entity` refuses it in one line.

With ``since``, each aspect also gets its standing in time: over the reviews
published since that date (*now*) and over the year before it (*a year
earlier*), the positive share of the mentions here and elsewhere, and the
entity's rank among the entities with at least ``MIN_STANDING_MENTIONS``
mentions of the aspect in that window (1 = the most positive), so a reader sees
"wi-fi: 2nd of 6 now, 5th of 6 a year earlier".

Example:
    >>> report = compare_entity(index, "101")                        # doctest: +SKIP
    >>> report.items[0].describe()                                   # doctest: +SKIP
    'kids club: 47% of reviews here vs 3% elsewhere (x11.2); 30% positive here vs 52% elsewhere'
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.aspects import discover_aspects
from opinio_agents.hiro.retriever import DEFAULT_ALPHA
from opinio_agents.hiro.store import HiroIndex, as_hiro_index
from opinio_agents.io.outputs import plural
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.synthesis.support import count_support
from opinio_agents.trends import in_window

__all__ = ["ComparisonItem", "EntityComparison", "Standing", "compare_entity", "MIN_STANDING_MENTIONS"]

_SMOOTH = 0.01
#: Mentions an entity needs in a window to be ranked on an aspect.
MIN_STANDING_MENTIONS = 3


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class Standing:
    """Where the entity stands on one aspect within a window of publication dates.

    Attributes:
        window: The window in words (``"since 2024-01-01"``, ``"2023-01-01 to 2023-12-31"``).
        mentions: Reviews of the entity in the window that mention the aspect.
        positive_here: Positive share of those mentions.
        positive_others: Positive share of the other entities' mentions in the window (pooled).
        mentions_others: The other entities' reviews in the window that mention the aspect.
        rank: The entity's rank by positive share among the entities with at least
            :data:`MIN_STANDING_MENTIONS` mentions in the window (1 = most positive);
            None when the entity itself has fewer.
        ranked: How many entities were ranked.
    """

    window: str
    mentions: int
    positive_here: float
    positive_others: float
    mentions_others: int
    rank: int | None
    ranked: int

    def describe(self) -> str:
        """E.g. ``'62% positive vs 48% elsewhere, 2nd of 6'``."""
        if self.rank is None:
            return f"{plural(self.mentions, 'mention')}: too few to rank"
        elsewhere = f"{self.positive_others:.0%} elsewhere" if self.mentions_others else "no mention elsewhere"
        return f"{self.positive_here:.0%} positive vs {elsewhere}, {_ordinal(self.rank)} of {self.ranked}"

    def cell(self) -> str:
        """A short table cell, e.g. ``'62% vs 48%, 2nd/6'``."""
        if self.rank is None:
            return f"{plural(self.mentions, 'mention')}, too few"
        elsewhere = f"{self.positive_others:.0%}" if self.mentions_others else "-"
        return f"{self.positive_here:.0%} vs {elsewhere}, {_ordinal(self.rank)}/{self.ranked}"


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
    now: Standing | None = None
    year_before: Standing | None = None

    def describe(self) -> str:
        """One human-readable line."""
        line = (
            f"{self.aspect}: {self.share_here:.0%} of reviews here vs {self.share_others:.0%} elsewhere "
            f"(x{self.lift:.1f}); {self.positive_here:.0%} positive here vs {self.positive_others:.0%} elsewhere"
        )
        if self.now is not None and self.year_before is not None:
            line += f"; now {self.now.describe()}, a year earlier {self.year_before.describe()}"
        return line

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        data = asdict(self)
        data["example_sentence_ids"] = list(self.example_sentence_ids)
        return data


@dataclass
class EntityComparison:
    """The distinctive aspects of an entity, most distinctive first.

    Attributes:
        entity_id: The entity.
        entity_name: Its name.
        compared_with: How many other entities it is compared with.
        items: The aspects, most distinctive (highest lift) first.
        since: The date of the "now" window, when asked.
        others: The names (else ids) of the entities compared with.
    """

    entity_id: str
    entity_name: str
    compared_with: int
    items: list[ComparisonItem] = field(default_factory=list)
    since: dt.date | None = None
    others: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready)."""
        return {
            "entity_id": self.entity_id,
            "entity_name": self.entity_name,
            "compared_with": self.compared_with,
            "others": list(self.others),
            "since": self.since.isoformat() if self.since else None,
            "items": [item.to_dict() for item in self.items],
        }


def _share(aspect: str, stored: list[StoredSentence]) -> tuple[float, float]:
    """Share of reviews mentioning ``aspect`` and the positive share of those."""
    support = count_support(aspect, stored)
    if not support.total_reviews:
        return 0.0, 0.0
    return support.reviews / support.total_reviews, support.share_positive


def _pooled_share(aspect: str, stored: dict[str, list[StoredSentence]]) -> tuple[float, float]:
    """:func:`_share` over several entities' reviews taken together (each review weighs the same)."""
    supports = [count_support(aspect, sentences) for sentences in stored.values()]
    total = sum(float(s.total_reviews) for s in supports)
    mentioning = sum(float(s.reviews) for s in supports)
    positive = sum(float(s.positive) for s in supports)
    return (mentioning / total if total else 0.0), (positive / mentioning if mentioning else 0.0)


def _year_before(day: dt.date) -> dt.date:
    """The same day a year earlier (28 February for 29 February)."""
    return day.replace(year=day.year - 1, day=28) if (day.month, day.day) == (2, 29) else day.replace(year=day.year - 1)


def _window(stored: list[StoredSentence], since: dt.date | None, until: dt.date | None) -> list[StoredSentence]:
    return [s for s in stored if in_window(s.sentence.publication_date, since, until)]


def _standing(
    aspect: str,
    here: list[StoredSentence],
    others: dict[str, list[StoredSentence]],
    label: str,
) -> Standing:
    """The entity's standing on ``aspect`` among all entities, over sentences already cut to one window."""
    support_here = count_support(aspect, here)
    stances = {"": support_here}
    stances.update({key: count_support(aspect, stored) for key, stored in others.items()})
    ranked = sorted(
        (key for key, sup in stances.items() if sup.reviews >= MIN_STANDING_MENTIONS),
        key=lambda key: (-stances[key].share_positive, key),
    )
    pooled = [sup for key, sup in stances.items() if key]
    mentions_others = sum(float(s.reviews) for s in pooled)
    positive_others = sum(float(s.positive) for s in pooled) / mentions_others if mentions_others else 0.0
    rank = ranked.index("") + 1 if "" in ranked else None
    return Standing(
        window=label,
        mentions=int(support_here.reviews),
        positive_here=round(support_here.share_positive, 4),
        positive_others=round(positive_others, 4),
        mentions_others=int(mentions_others),
        rank=rank,
        ranked=len(ranked),
    )


def compare_entity(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = 8,
    alpha: float = DEFAULT_ALPHA,
    since: dt.date | None = None,
) -> EntityComparison:
    """What distinguishes ``entity_id`` from the other indexed entities.

    Args:
        index: The store (or its HIRO index).
        entity_id: The entity.
        top_k: How many aspects.
        alpha: HIRO's smoothing constant.
        since: Also rank the entity against the others on each aspect over the reviews
            published since this date (``now``) and over the year before it (``year_before``).

    "Elsewhere" is the other entities' reviews taken together: ``share_others`` is the share of
    them that mention the aspect and ``positive_others`` the positive share of those mentions.

    Raises:
        ConfigError: When ``top_k < 1``, when the store holds no other (complete) entity to compare
            with, or ``since`` is given and no review has a publication date.
        StoreError: When the entity is not indexed.
    """
    if top_k < 1:
        raise ConfigError(f"top_k={top_k} must be >= 1")
    hiro = as_hiro_index(index)
    key = hiro.index.require_entity(entity_id)
    others = [k for k in hiro.index.entity_keys() if k != key and hiro.index.is_complete(k)]  # not mid-write
    if not others:
        raise ConfigError(
            f"entity {key} has no other entity to compare with: the store holds only it; "
            "index another entity into the same store first (opinio index OTHER.json --store STORE)"
        )
    stored_here = hiro.index.sentences(key)
    stored_others = {k: hiro.index.sentences(k) for k in others}
    windows: list[tuple[str, list[StoredSentence], dict[str, list[StoredSentence]]]] = []
    if since is not None:
        if not any(s.sentence.publication_date for s in stored_here) and not any(
            s.sentence.publication_date for stored in stored_others.values() for s in stored
        ):
            raise ConfigError(
                "--since needs dated reviews, and no review in this store has a publication_date; drop --since"
            )
        start = _year_before(since)
        end = since - dt.timedelta(days=1)
        for label, low, high in ((f"since {since.isoformat()}", since, None),
                                 (f"{start.isoformat()} to {end.isoformat()}", start, end)):  # fmt: skip
            windows.append(
                (label, _window(stored_here, low, high), {k: _window(v, low, high) for k, v in stored_others.items()})
            )
    items: list[ComparisonItem] = []
    for aspect in discover_aspects(hiro, key, top_k=top_k, alpha=alpha):
        here, pos_here = _share(aspect.aspect, stored_here)
        there, pos_there = _pooled_share(aspect.aspect, stored_others)
        standings = [_standing(aspect.aspect, w_here, w_others, label) for label, w_here, w_others in windows]
        items.append(
            ComparisonItem(
                aspect=aspect.aspect,
                share_here=round(here, 4),
                share_others=round(there, 4),
                positive_here=round(pos_here, 4),
                positive_others=round(pos_there, 4),
                lift=round((here + _SMOOTH) / (there + _SMOOTH), 3),
                example_sentence_ids=tuple(aspect.example_sentence_ids),
                now=standings[0] if standings else None,
                year_before=standings[1] if standings else None,
            )
        )
    items.sort(key=lambda item: (-item.lift, item.aspect))
    names = tuple(hiro.index.entity_record(k).entity_name or k for k in others)
    return EntityComparison(
        key, hiro.index.entity_record(key).entity_name, len(others), items, since=since, others=names
    )
