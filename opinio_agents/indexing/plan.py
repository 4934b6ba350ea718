"""The plan of an incremental index run: which reviews of an entity are new, changed, removed or pending.

One pure function, :func:`plan_reviews`, compares an entity's reviews with what the
store's catalog records about them (:class:`~opinio_agents.stores.sentence_store.ReviewState`:
content hash, whether its vectors were written, position). Both writers, the
in-process :class:`~opinio_agents.indexing.Indexer` and the Ray indexer of
:mod:`opinio_agents.scale.distributed`, follow the plan it returns, so they cannot
disagree about what an update does.

Example:
    >>> from opinio_agents.models import Entity
    >>> from opinio_agents.stores.sentence_store import ReviewState
    >>> entity = Entity.model_validate({"entity_id": 1, "user_reviews": [
    ...     {"review_id": "a", "text": "Nice."}, {"review_id": "c", "text": "New."}]})
    >>> known = {"a": ReviewState(review_hash(entity.user_reviews[0]), True, 0), "b": ReviewState("x", True, 1)}
    >>> plan = plan_reviews(entity, known)
    >>> plan.removed, plan.new, plan.unchanged, plan.catalog_changed
    (['b'], ['c'], 1, True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

from opinio_agents.models import REVIEW_METADATA_FIELDS, Entity, Review
from opinio_agents.stores.sentence_store import ReviewState

__all__ = ["ReviewPlan", "plan_reviews", "review_hash"]


def review_hash(review: Review) -> str:
    """Content hash of a review: its text and metadata (any change re-indexes it).

    Example:
        >>> review_hash(Review(review_id=1, text="Nice.")) == review_hash(Review(review_id=1, text="Nice!"))
        False
    """
    payload = {"text": review.text, **{k: getattr(review, k) for k in REVIEW_METADATA_FIELDS}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class ReviewPlan:
    """What one index run does with an entity's reviews (review ids in dataset order).

    Attributes:
        hashes: Content hash of every review in the input (:func:`review_hash`).
        positions: Position of every review in the input.
        removed: Recorded reviews the input no longer has: their sentences and vectors go.
        changed: Reviews whose content changed: replaced.
        new: Reviews the store has never seen: added.
        pending_old: Unchanged reviews whose vectors an interrupted run left unwritten: embedded now.
        moved: Some review changed position (the catalog's order is rewritten).
    """

    hashes: dict[str, str]
    positions: dict[str, int]
    removed: list[str]
    changed: list[str]
    new: list[str]
    pending_old: list[str]
    moved: bool

    @property
    def to_insert(self) -> list[str]:
        """Reviews to segment, tokenize and write: the changed ones, then the new ones."""
        return [*self.changed, *self.new]

    @property
    def to_finish(self) -> list[str]:
        """Reviews whose sentences are embedded and scored in this run."""
        return [*self.to_insert, *self.pending_old]

    @property
    def unchanged(self) -> int:
        """Reviews kept as they are (pending ones not counted)."""
        return len(self.hashes) - len(self.changed) - len(self.new) - len(self.pending_old)

    @property
    def catalog_changed(self) -> bool:
        """Whether the catalog's record of the entity changes (and with it the entity's generation)."""
        return bool(self.removed or self.changed or self.new or self.moved)


def plan_reviews(entity: Entity, known: Mapping[str, ReviewState]) -> ReviewPlan:
    """The :class:`ReviewPlan` for indexing ``entity`` into a store that records ``known`` about it."""
    hashes = {str(r.review_id): review_hash(r) for r in entity.user_reviews}
    positions = {str(r.review_id): i for i, r in enumerate(entity.user_reviews)}
    return ReviewPlan(
        hashes=hashes,
        positions=positions,
        removed=[rid for rid in known if rid not in hashes],
        changed=[rid for rid, h in hashes.items() if rid in known and known[rid].content_hash != h],
        new=[rid for rid in hashes if rid not in known],
        pending_old=[  # unchanged, but an interrupted run left some of their vectors unwritten
            rid
            for rid, h in hashes.items()
            if rid in known and known[rid].content_hash == h and not known[rid].embedded
        ],
        moved=any(rid in known and known[rid].position != pos for rid, pos in positions.items()),
    )
