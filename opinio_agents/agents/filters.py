"""Review metadata filters shared by the agent tools and the LangChain retriever.

:class:`ReviewFilters` is the agent-facing form (rating range, date range,
minimum helpful votes, reviewer experience). It converts to LlamaIndex
``MetadataFilters`` for the stores: BM25 applies them in Python, the dense
retriever hands them to Chroma as a ``where`` clause, so only numeric
comparisons are used (dates go through ``publication_ordinal``, ``YYYYMMDD``).
A sentence whose review lacks a filtered field never matches that filter.

Example:
    >>> import datetime as dt
    >>> f = ReviewFilters(min_rating=4, since=dt.date(2019, 1, 1))
    >>> [(x.key, x.operator.value, x.value) for x in f.to_metadata_filters().filters]
    [('rating', '>=', 4.0), ('publication_ordinal', '>=', 20190101)]
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from opinio_agents.models import Sentence

if TYPE_CHECKING:
    from llama_index.core.vector_stores.types import MetadataFilters

__all__ = ["ReviewFilters", "date_ordinal"]


def date_ordinal(day: dt.date) -> int:
    """A date as the integer ``YYYYMMDD`` stored in ``publication_ordinal``.

    Example:
        >>> date_ordinal(dt.date(2021, 3, 9))
        20210309
    """
    return day.year * 10000 + day.month * 100 + day.day


class ReviewFilters(BaseModel):
    """Restrict retrieval to reviews matching every given condition (all optional)."""

    model_config = ConfigDict(extra="forbid")

    min_rating: float | None = Field(default=None, ge=0, description="Only reviews rated at least this (e.g. 4).")
    max_rating: float | None = Field(default=None, ge=0, description="Only reviews rated at most this (e.g. 2).")
    since: dt.date | None = Field(default=None, description="Only reviews published on or after this date.")
    until: dt.date | None = Field(default=None, description="Only reviews published on or before this date.")
    min_helpful_votes: int | None = Field(
        default=None, ge=0, description="Only reviews with at least this many helpful votes."
    )
    min_reviews_posted: int | None = Field(
        default=None, ge=0, description="Only reviewers who posted at least this many reviews (experience)."
    )
    min_cities_visited: int | None = Field(
        default=None, ge=0, description="Only reviewers who visited at least this many cities (experience)."
    )

    @model_validator(mode="after")
    def _ranges_ordered(self) -> ReviewFilters:
        if self.min_rating is not None and self.max_rating is not None and self.min_rating > self.max_rating:
            raise ValueError(f"min_rating={self.min_rating} is above max_rating={self.max_rating}; swap them")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError(f"since={self.since} is after until={self.until}; swap them")
        return self

    def _conditions(self) -> list[tuple[str, str, float | int]]:
        """``(metadata key, operator, value)`` for each condition that is set."""
        out: list[tuple[str, str, float | int]] = []
        if self.min_rating is not None:
            out.append(("rating", ">=", float(self.min_rating)))
        if self.max_rating is not None:
            out.append(("rating", "<=", float(self.max_rating)))
        if self.since is not None:
            out.append(("publication_ordinal", ">=", date_ordinal(self.since)))
        if self.until is not None:
            out.append(("publication_ordinal", "<=", date_ordinal(self.until)))
        if self.min_helpful_votes is not None:
            out.append(("helpful_votes", ">=", self.min_helpful_votes))
        if self.min_reviews_posted is not None:
            out.append(("user_reviews_posted", ">=", self.min_reviews_posted))
        if self.min_cities_visited is not None:
            out.append(("user_cities_visited", ">=", self.min_cities_visited))
        return out

    @property
    def is_empty(self) -> bool:
        """True when no condition is set."""
        return not self._conditions()

    def to_metadata_filters(self) -> MetadataFilters | None:
        """LlamaIndex ``MetadataFilters`` (AND of every condition), or None when empty."""
        from llama_index.core.vector_stores.types import (
            FilterCondition,
            FilterOperator,
            MetadataFilter,
            MetadataFilters,
        )

        conditions = self._conditions()
        if not conditions:
            return None
        ops = {">=": FilterOperator.GTE, "<=": FilterOperator.LTE}
        return MetadataFilters(
            filters=[MetadataFilter(key=key, operator=ops[op], value=value) for key, op, value in conditions],
            condition=FilterCondition.AND,
        )

    def matches(self, sentence: Sentence) -> bool:
        """Whether a sentence's review satisfies every condition (missing fields never match)."""
        for key, op, value in self._conditions():
            actual: Any
            if key == "publication_ordinal":
                actual = None if sentence.publication_date is None else date_ordinal(sentence.publication_date)
            else:
                actual = getattr(sentence, key)
            if actual is None:
                return False
            if (op == ">=" and actual < value) or (op == "<=" and actual > value):
                return False
        return True

    def describe(self) -> str:
        """Short human form, e.g. ``'rating >= 4, since 2019-01-01'`` (empty when unset)."""
        parts: list[str] = []
        if self.min_rating is not None:
            parts.append(f"rating >= {self.min_rating:g}")
        if self.max_rating is not None:
            parts.append(f"rating <= {self.max_rating:g}")
        if self.since is not None:
            parts.append(f"since {self.since.isoformat()}")
        if self.until is not None:
            parts.append(f"until {self.until.isoformat()}")
        if self.min_helpful_votes is not None:
            parts.append(f"helpful votes >= {self.min_helpful_votes}")
        if self.min_reviews_posted is not None:
            parts.append(f"reviews posted >= {self.min_reviews_posted}")
        if self.min_cities_visited is not None:
            parts.append(f"cities visited >= {self.min_cities_visited}")
        return ", ".join(parts)
