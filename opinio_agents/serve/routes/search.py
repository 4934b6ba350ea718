"""``GET /entities/{id}/search`` (review sentences for a query) and ``GET /entities/{id}/aspects`` (aspect chips)."""

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ValidationError

from opinio_agents.agents.filters import ReviewFilters
from opinio_agents.agents.schemas import SearchResult
from opinio_agents.agents.toolkit import ReviewToolkit
from opinio_agents.api import OpinioRAG
from opinio_agents.kinds import AspectSource, RetrieverKind
from opinio_agents.serve.deps import EntityKey, Rag
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.schemas import AspectOut, AspectsOut
from opinio_agents.serve.streaming import json_response

__all__ = ["router"]

router = APIRouter()

Rating = Annotated[
    float | None,
    Query(ge=0, allow_inf_nan=False, description="Only reviews rated at least (or at most) this (a finite number)."),
]


@router.get("/entities/{entity_id:path}/aspects", response_model=AspectsOut, tags=["entities"])
def aspects(key: EntityKey, rag: Rag, top_k: Annotated[int, Query(ge=1, le=50)] = 10) -> Any:
    """The aspects reviewers talk about, most discussed first, with positive/negative counts.

    From the store's HIRO hierarchy when it has one, else the expert review's aspects.
    """
    record = rag.store.entity_record(key)
    source: AspectSource = "hiro" if rag.hiro_fitted else "expert-queries"
    items = _hiro_aspects(rag, key, top_k) if rag.hiro_fitted else _expert_aspects(rag, key, record.queries)
    items.sort(key=lambda a: a.mentions, reverse=True)
    return json_response(
        AspectsOut(entity_id=key, entity_name=record.entity_name, source=source, aspects=items[:top_k])
    )


def _hiro_aspects(rag: OpinioRAG, key: str, top_k: int) -> list[AspectOut]:
    return [
        AspectOut(
            aspect=a.aspect,
            mentions=a.mentions,
            positive=a.positive,
            negative=a.negative,
            neutral=a.neutral,
            total_reviews=a.total_reviews,
            score=a.score,
            example_sentence_ids=a.example_sentence_ids[:5],
        )
        for a in rag.aspects(key, top_k=top_k)
    ]


def _expert_aspects(rag: OpinioRAG, key: str, queries: list[str]) -> list[AspectOut]:
    if not queries:
        raise ApiError(
            409, "store_error",
            f"entity {key!r} has no expert review and the store has no HIRO hierarchy yet "
            "(index more reviews); search with /entities/{id}/search instead",
        )
    items = []
    for name in queries:
        s = rag.support(key, name)
        items.append(
            AspectOut(aspect=name, mentions=s.reviews, positive=s.positive, negative=s.negative,
                      neutral=s.neutral, total_reviews=s.total_reviews)
        )
    return items


@router.get("/entities/{entity_id:path}/search", response_model=SearchResult, tags=["reviews"])
def search(
    key: EntityKey,
    rag: Rag,
    q: Annotated[str, Query(min_length=1, max_length=500, description="What to look for.")],
    k: Annotated[int, Query(ge=1, le=50)] = 5,
    min_rating: Rating = None,
    max_rating: Rating = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    retriever: RetrieverKind | None = None,
) -> Any:
    """The ``k`` review sentences most relevant to ``q`` (optionally filtered), with support counts."""
    if not q.strip():
        raise ApiError(400, "bad_request", "q is blank; pass an aspect such as q=wi-fi", field="q")
    try:
        filters = ReviewFilters(min_rating=min_rating, max_rating=max_rating, since=since, until=until)
    except ValidationError as exc:
        message = str(exc.errors()[0].get("msg", "invalid filters")).removeprefix("Value error, ")
        field = "min_rating" if "rating" in message else "since"
        raise ApiError(400, "bad_request", message, field=field) from exc
    toolkit = ReviewToolkit(rag, retriever=retriever)
    return json_response(toolkit.search_reviews(key, q, k=k, filters=None if filters.is_empty else filters))
