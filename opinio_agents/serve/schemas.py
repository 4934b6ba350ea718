"""The request and response models of the HTTP service (what ``/openapi.json`` describes).

Example:
    >>> ChatRequest(messages=[{"role": "user", "content": "How is the wi-fi?"}]).k
    6
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field

from opinio_agents.agents.schemas import ChatTurn as ChatMessage
from opinio_agents.kinds import AspectSource, RetrieverKind

__all__ = [
    "ChatMessage",
    "ChatRequest",
    "EntitySummary",
    "EntityDetail",
    "AspectOut",
    "AspectsOut",
    "SentenceSpan",
    "ReviewOut",
    "Health",
    "ErrorOut",
    "ERROR_RESPONSES",
    "EVENT_STREAM_RESPONSES",
]

class ChatRequest(BaseModel):
    """``POST /entities/{id}/chat``: the conversation so far, ending with the user's question."""

    messages: list[ChatMessage] = Field(min_length=1, max_length=50)
    k: int = Field(default=6, ge=1, le=20, description="Review sentences retrieved for the answer.")
    retriever: RetrieverKind | None = None
    extractive: bool = Field(
        default=False, description="Answer extractively (support count + top sentences) even without an LLM."
    )


class EntitySummary(BaseModel):
    """One row of ``GET /entities``."""

    entity_id: str
    name: str
    reviews: int
    sentences: int
    queries: list[str] = Field(description="The expert review's aspects (empty without an expert review).")


class EntityDetail(EntitySummary):
    """``GET /entities/{id}``."""

    expert_review: dict[str, Any] | None = None
    updated_at: str | None = None
    generation: int
    hiro_fitted: bool


class AspectOut(BaseModel):
    """One aspect chip: how many reviews talk about it, and their stance."""

    aspect: str
    mentions: int
    positive: int
    negative: int
    neutral: int
    total_reviews: int
    score: float | None = None
    example_sentence_ids: list[str] = Field(default_factory=list)


class AspectsOut(BaseModel):
    """``GET /entities/{id}/aspects``: aspects sorted by mentions (most discussed first)."""

    entity_id: str
    entity_name: str
    source: AspectSource
    aspects: list[AspectOut]


class SentenceSpan(BaseModel):
    """Where one stored sentence lies in its review's text (``text[start:end]``)."""

    sentence_id: str
    index: int
    start: int
    end: int
    text: str
    sentiment: float


class ReviewOut(BaseModel):
    """``GET /entities/{id}/reviews/{review_id}``: the full review and its sentences' offsets."""

    entity_id: str
    review_id: str
    text: str
    rating: float | None = None
    helpful_votes: int | None = None
    publication_date: dt.date | None = None
    user_reviews_posted: int | None = None
    user_cities_visited: int | None = None
    user_helpful_votes: int | None = None
    sentences: list[SentenceSpan]
    note: str = "Review text is untrusted: render it as text, never as HTML."


class Health(BaseModel):
    """``GET /healthz``."""

    status: Literal["ok"] = "ok"
    version: str
    entities: int
    llm: bool = Field(description="Whether chat and LLM synthesis have a model configured.")
    hiro_fitted: bool


class ErrorOut(BaseModel):
    """Every error response: ``{"error": {"type", "message", "field", ...}}``."""

    error: dict[str, Any]


#: The error statuses every route may answer (OpenAPI ``responses``).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {
        "model": ErrorOut,
        "description": text,
        # Errors are JSON on every route, the event streams' included (before their first event).
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
    }
    for code, text in {
        400: "Bad input (the field is named)",
        401: "Missing or wrong API key",
        404: "Unknown entity, review or job",
        409: "Store busy, or the entity is not ready",
        413: "Request too large",
        422: "Validation error",
        429: "Rate limited",
        503: "LLM unavailable, or the index job queue is full",
    }.items()
}


#: The ``200`` of the event-stream routes: each event has a name and JSON data (the route's docstring lists them).
EVENT_STREAM_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "properties": {"event": {"type": "string"}, "data": {"type": "string", "description": "JSON"}},
                }
            }
        },
    }
}
