"""What the routes get through ``Depends``: the façade, the settings, the jobs and the entity key, from ``app.state``.

:func:`~opinio_agents.serve.app.create_app` puts one :class:`AppState` on ``app.state.opinio``;
nothing else is shared between routes.

Example:
    >>> from fastapi import Depends                                  # doctest: +SKIP
    >>> def route(rag: Annotated[OpinioRAG, Depends(get_rag)]): ...    # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from fastapi import Path as PathParam

from opinio_agents.api import OpinioRAG
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.jobs import IndexJobs
from opinio_agents.serve.settings import ServeSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from opinio_agents.models import Review
    from opinio_agents.stores.catalog import StoredSentence

__all__ = [
    "AppState",
    "ReviewCache",
    "get_state",
    "get_rag",
    "get_settings",
    "get_jobs",
    "entity_key",
    "complete_entities",
    "entity_summary",
    "EntityKey",
    "Rag",
    "Settings",
    "State",
]


class ReviewCache:
    """Full reviews and their sentences per entity, cached by generation (a few entities at most)."""

    def __init__(self, rag: OpinioRAG, size: int = 8) -> None:
        self.rag = rag
        self.size = size
        self._cache: OrderedDict[str, tuple[int, dict[str, Any], dict[str, list[Any]]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, review_id: str) -> tuple[Review, list[StoredSentence]]:
        """The review ``review_id`` of entity ``key`` and its stored sentences (404 when unknown)."""
        generation = self.rag.store.generation(key)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == generation:
                self._cache.move_to_end(key)
        if cached is None or cached[0] != generation:
            entity = self.rag.store.entity(key)
            by_review: dict[str, list[Any]] = {}
            for stored in self.rag.store.sentences(key):
                by_review.setdefault(stored.sentence.review_id, []).append(stored)
            cached = (int(generation or 0), {str(r.review_id): r for r in entity.user_reviews}, by_review)
            with self._lock:
                self._cache[key] = cached
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        review = cached[1].get(review_id)
        if review is None:
            raise ApiError(404, "not_found", f"entity {key!r} has no review {review_id!r}", field="review_id")
        return review, cached[2].get(review_id, [])


@dataclass
class AppState:
    """Everything the routes share: the façade, the settings, the jobs, caches and the chat model."""

    rag: OpinioRAG
    settings: ServeSettings
    jobs: IndexJobs
    reviews: ReviewCache
    llm: BaseChatModel | None = None
    _llm_lock: threading.Lock = field(default_factory=threading.Lock)

    def chat_model(self) -> BaseChatModel | None:
        """The chat model: the one given to ``create_app``, else the façade's (built on first use)."""
        with self._llm_lock:
            if self.llm is None:
                self.llm = self.rag.llm
            return self.llm


def get_state(request: Request) -> AppState:
    """The app's :class:`AppState`."""
    state: AppState = request.app.state.opinio
    return state


def get_rag(request: Request) -> OpinioRAG:
    """The shared façade."""
    return get_state(request).rag


def get_settings(request: Request) -> ServeSettings:
    """The service's settings."""
    return get_state(request).settings


def get_jobs(request: Request) -> IndexJobs:
    """The index job runner."""
    return get_state(request).jobs


State = Annotated[AppState, Depends(get_state)]
Rag = Annotated[OpinioRAG, Depends(get_rag)]
Settings = Annotated[ServeSettings, Depends(get_settings)]


def entity_key(
    entity_id: Annotated[str, PathParam(description="Entity id, as listed by GET /entities.")],
    rag: Rag,
) -> str:
    """The store key of a complete, indexed entity (404 when unknown, 409 while it is being indexed)."""
    if not rag.store.has_entity(entity_id):
        known = rag.entities()
        listed = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "") if known else "none"
        raise ApiError(404, "not_found", f"entity {entity_id!r} is not indexed (indexed: {listed})", field="entity_id")
    if not rag.store.is_complete(entity_id):
        raise ApiError(
            409, "store_busy",
            f"entity {entity_id!r} is being indexed (or its last indexing run did not finish); "
            "retry when its job is done",
            field="entity_id",
        )
    return str(entity_id)


EntityKey = Annotated[str, Depends(entity_key)]


def complete_entities(rag: OpinioRAG) -> list[str]:
    """Entity keys readers may use (not those a writer is mid-way on), in indexing order."""
    return [key for key in rag.entities() if rag.store.is_complete(key)]


def entity_summary(rag: OpinioRAG, key: str) -> dict[str, Any]:
    """One row of ``GET /entities``."""
    record = rag.store.entity_record(key)
    return {
        "entity_id": key,
        "name": record.entity_name,
        "reviews": record.n_reviews,
        "sentences": rag.store.count_sentences(key),
        "queries": record.queries,
    }
