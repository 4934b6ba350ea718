"""The review tools as plain Python: one implementation behind every agent framework.

:class:`ReviewToolkit` wraps an :class:`~opinio_agents.api.OpinioRAG` and
exposes ``list_entities``, ``search_reviews``, ``review_highlights``,
``aspect_overview``, ``compare_entities`` and ``ask_reviews`` (the guarded chat of
:class:`~opinio_agents.agents.chat.ReviewChat`); each takes the matching
``*Input`` model's fields and returns a result model from
:mod:`opinio_agents.agents.schemas`. The LangChain, LlamaIndex and MCP
adapters only translate calls to and from these methods.

Example:
    >>> from opinio_agents import OpinioRAG
    >>> toolkit = ReviewToolkit(OpinioRAG(store_dir="/tmp/opinio-demo"))   # doctest: +SKIP
    >>> toolkit.search_reviews("101", "wi-fi", k=3).hits[0].text            # doctest: +SKIP
    'The wifi kept dropping in our room.'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from opinio_agents.agents.chat import ChatAnswer, ReviewChat
from opinio_agents.agents.filters import ReviewFilters
from opinio_agents.agents.schemas import (
    AspectItem,
    AspectOverview,
    ChatTurn,
    ComparedEntity,
    Comparison,
    EntityInfo,
    EntityList,
    HighlightItem,
    HighlightsResult,
    ReviewHit,
    SearchResult,
    SupportInfo,
)
from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.kinds import RETRIEVERS, AspectSource
from opinio_agents.retrieval.factory import ScoredSentence

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG

__all__ = ["ReviewToolkit", "to_hit"]


def to_hit(scored: ScoredSentence) -> ReviewHit:
    """A retrieved sentence as a tool-result row."""
    s = scored.sentence
    return ReviewHit(
        sentence_id=s.sentence_id,
        text=s.text,
        score=round(scored.score, 4),
        sentiment=round(scored.sentiment, 3),
        review_id=s.review_id,
        rating=s.rating,
        publication_date=s.publication_date.isoformat() if s.publication_date else None,
        helpful_votes=s.helpful_votes,
    )


def _coerce_filters(filters: ReviewFilters | dict[str, Any] | None) -> ReviewFilters | None:
    if filters is None or isinstance(filters, ReviewFilters):
        return filters
    if isinstance(filters, dict):
        return ReviewFilters.model_validate(filters)
    raise ConfigError(f"filters={filters!r} must be a ReviewFilters, a dict of its fields, or None")


class ReviewToolkit:
    """Review tools over one store.

    Args:
        rag: The façade holding the index (and, optionally, the LLM used for highlights).
        retriever: Retriever for searches (``hybrid`` by default).
    """

    def __init__(self, rag: OpinioRAG, *, retriever: str | None = None) -> None:
        self.rag = rag
        self.retriever = retriever or rag.retriever
        if self.retriever not in RETRIEVERS:
            raise ConfigError(f"retriever={self.retriever!r} is not one of {', '.join(RETRIEVERS)}")

    # -- helpers -----------------------------------------------------------------
    def resolve_entity(self, entity: str | int) -> str:
        """The store key of ``entity``, given its id or its exact (case-insensitive) name."""
        text = str(entity).strip()
        keys = self.rag.entities()
        if text in keys:
            return text
        lowered = text.lower()
        for key in keys:
            if self.rag.store.entity_record(key).entity_name.strip().lower() == lowered and lowered:
                return key
        listed = ", ".join(keys[:10]) or "none"
        raise StoreError(f"unknown entity {text!r}; indexed entity ids: {listed} (call list_entities)")

    def _name(self, key: str) -> str:
        return self.rag.store.entity_record(key).entity_name

    def _search(
        self, key: str, query: str, k: int, filters: ReviewFilters | None
    ) -> tuple[list[ReviewHit], SupportInfo]:
        if not query.strip():
            raise ConfigError("query is empty; pass an aspect such as 'wi-fi' or a short question")
        if not 1 <= k <= 50:
            raise ConfigError(f"k={k} must be between 1 and 50")
        meta = filters.to_metadata_filters() if filters else None
        hits = self.rag.retrieve(key, query, top_k=k, retriever=self.retriever, filters=meta)  # type: ignore[arg-type]
        return [to_hit(h) for h in hits], SupportInfo.of(self.rag.support(key, query))

    # -- tools -----------------------------------------------------------------------
    def list_entities(self) -> EntityList:
        """The indexed entities with their names and review counts."""
        out = []
        for key in self.rag.entities():
            record = self.rag.store.entity_record(key)
            out.append(EntityInfo(entity_id=key, name=record.entity_name, reviews=record.n_reviews))
        return EntityList(entities=out)

    def search_reviews(
        self,
        entity: str | int,
        query: str,
        k: int = 5,
        filters: ReviewFilters | dict[str, Any] | None = None,
    ) -> SearchResult:
        """The ``k`` review sentences most relevant to ``query``, plus how many reviews mention it."""
        key = self.resolve_entity(entity)
        flt = _coerce_filters(filters)
        hits, support = self._search(key, query, k, flt)
        return SearchResult(
            entity_id=key,
            entity_name=self._name(key),
            query=query,
            filters=flt.describe() if flt else "",
            covered=support.reviews > 0 and bool(hits),
            support=support,
            hits=hits,
        )

    def review_highlights(self, entity: str | int, queries: Sequence[str] | None = None) -> HighlightsResult:
        """PROS/CONS highlights for ``queries`` (default: the entity's standard aspects)."""
        key = self.resolve_entity(entity)
        result = self.rag.highlights(key, list(queries) if queries else None)

        def item(h: Any) -> HighlightItem:
            return HighlightItem(
                query=h.query,
                polarity=h.polarity.value,
                text=h.text,
                sentence_ids=h.sentence_ids,
                support=h.support.describe(),
                verdict=h.verification.verdict if h.verification else None,
                verification=h.verification.describe() if h.verification else "",
            )

        return HighlightsResult(
            entity_id=key,
            entity_name=result.entity_name or self._name(key),
            synthesizer=result.meta.synthesizer,
            pros=[item(h) for h in result.pros],
            cons=[item(h) for h in result.cons],
            failures=[f"{f.query}: {f.error}" for f in result.failures],
        )

    def aspect_overview(self, entity: str | int, top_k: int = 10) -> AspectOverview:
        """The entity's main aspects with how many reviews praise or criticise each.

        Uses HIRO's aspect discovery over the façade's shared HIRO index
        (:meth:`OpinioRAG.aspects <opinio_agents.api.OpinioRAG.aspects>`) when the store has a
        fitted hierarchy, else the entity's expert-review queries, ranked by mentions. Nothing is
        fitted inside the tool call.
        """
        if not 1 <= top_k <= 50:
            raise ConfigError(f"top_k={top_k} must be between 1 and 50")
        key = self.resolve_entity(entity)
        names = _hiro_aspects(self.rag, key, top_k)
        source: AspectSource = "hiro"
        if names is None:
            names, source = self.rag.store.entity_record(key).queries, "expert-queries"
            if not names:
                raise ConfigError(
                    f"entity {key!r} has no expert-review queries and the store has no HIRO hierarchy "
                    "for aspect discovery; ask about specific aspects with search_reviews instead"
                )
        items = [AspectItem(aspect=name, support=SupportInfo.of(self.rag.support(key, name))) for name in names]
        items.sort(key=lambda a: a.support.reviews, reverse=True)
        return AspectOverview(
            entity_id=key,
            entity_name=self._name(key),
            source=source,
            aspects=items[:top_k],
        )

    def compare_entities(
        self,
        entities: Sequence[str | int],
        query: str,
        k: int = 3,
        filters: ReviewFilters | dict[str, Any] | None = None,
    ) -> Comparison:
        """How several entities fare on one aspect: support counts and example sentences each."""
        keys = list(dict.fromkeys(self.resolve_entity(e) for e in entities))
        if len(keys) < 2:
            raise ConfigError(f"entities={list(entities)!r} must name at least two different entities")
        flt = _coerce_filters(filters)
        sides = []
        for key in keys:
            hits, support = self._search(key, query, k, flt)
            sides.append(ComparedEntity(entity_id=key, entity_name=self._name(key), support=support, hits=hits))
        return Comparison(query=query, filters=flt.describe() if flt else "", entities=sides)

    def ask_reviews(
        self,
        entity: str | int,
        question: str,
        history: Sequence[ChatTurn | dict[str, Any]] | None = None,
    ) -> ChatAnswer:
        """Answer ``question`` from the entity's reviews with :class:`ReviewChat` and all its guards.

        The façade's LLM writes the answer (every sentence cited and checked against its
        excerpts); without one the answer is extractive. ``history`` holds the earlier turns
        (stateless: the caller keeps the conversation).
        """
        key = self.resolve_entity(entity)
        turns = [t if isinstance(t, ChatTurn) else ChatTurn.model_validate(t) for t in history or []]
        messages = [(t.role, t.content) for t in turns]
        chat = ReviewChat(self.rag, key, retriever=self.retriever)
        return chat.answer({"messages": [*messages, ("user", question)]})


def _hiro_aspects(rag: OpinioRAG, key: str, top_k: int) -> list[str] | None:
    """Aspect names from the façade's HIRO index, or None when the store has no fitted hierarchy."""
    if not rag.hiro_fitted:
        return None
    names = [a.aspect.strip() for a in rag.aspects(key, top_k=top_k) if a.aspect.strip()]
    return list(dict.fromkeys(names)) or None
