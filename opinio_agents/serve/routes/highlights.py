"""``GET /entities/{id}/highlights`` and ``.../highlights/stream``: PROS/CONS highlights, whole or streamed.

The HTTP parameters become one :class:`~opinio_agents.synthesis.summarizer.HighlightRequest`
(:meth:`OpinioRAG.plan <opinio_agents.api.OpinioRAG.plan>` decides the entity, the queries and
the mode once); both routes run the façade's highlight stream and stop between queries once the client is gone
(:mod:`opinio_agents.serve.streaming`).
"""

import threading
from collections.abc import Generator
from typing import Annotated, Any

from fastapi import APIRouter, Query

from opinio_agents.api import OpinioRAG
from opinio_agents.kinds import RetrieverKind
from opinio_agents.models import HighlightSet
from opinio_agents.serve.deps import EntityKey, Rag, Settings
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.schemas import EVENT_STREAM_RESPONSES
from opinio_agents.serve.settings import ServeSettings
from opinio_agents.serve.streaming import Deferred, EventStream, check_cancel, sse
from opinio_agents.synthesis.summarizer import HighlightRequest, SummaryDone

__all__ = ["router", "plan", "check_queries"]

router = APIRouter(tags=["highlights"])

Queries = Annotated[
    list[str],
    Query(description="A user-centric query (aspect); repeat for several. None: HIRO query-free highlights."),
]
TopK = Annotated[
    int | None, Query(ge=1, le=100, description="Evidence sentences per query (aspects in query-free mode).")
]
Expert = Annotated[bool, Query(description="Answer the entity's expert-review aspects (needs no query).")]


def check_queries(queries: list[str], settings: ServeSettings) -> list[str]:
    """The queries as given, refused (400, ``field: query``) when one is empty, too long, or too many.

    Cleaning and deduplicating them is the façade's (:meth:`OpinioRAG.plan`).
    """
    if any(not q.strip() for q in queries):
        raise ApiError(400, "bad_request", "a query is empty; pass e.g. ?query=wi-fi&query=breakfast", field="query")
    if len(queries) > settings.max_queries:
        raise ApiError(
            400, "bad_request", f"{len(queries)} queries given; at most {settings.max_queries}", field="query",
            limit=settings.max_queries,
        )
    longest = max((q.strip() for q in queries), key=len, default="")
    if len(longest) > settings.max_query_chars:
        raise ApiError(
            400, "bad_request",
            f"a query has {len(longest):,} characters; at most {settings.max_query_chars} (a query names an aspect)",
            field="query", limit=settings.max_query_chars,
        )
    return queries


def plan(
    rag: OpinioRAG, key: str, settings: ServeSettings, query: list[str], retriever: RetrieverKind | None,
    top_k: int | None, expert: bool,
) -> HighlightRequest:
    """The façade's :class:`HighlightRequest` for the HTTP parameters (queries, else expert, else query-free)."""
    queries = check_queries(query, settings)
    if queries and expert:
        raise ApiError(400, "bad_request", "expert=true takes no query; drop one of them", field="expert")
    query_free = not queries and not expert
    if query_free and retriever is not None:
        raise ApiError(
            400, "bad_request",
            "retriever= applies to queries; without a query the highlights are HIRO's query-free ones "
            "(pass query=... or drop retriever)",
            field="retriever",
        )
    return rag.plan(key, queries or None, top_k=top_k, retriever=retriever, query_free=query_free)


def _as_string_id(result: HighlightSet, key: str) -> HighlightSet:
    return result.model_copy(update={"entity_id": key})  # the id is a string on every route


@router.get("/entities/{entity_id:path}/highlights", response_model=HighlightSet)
def highlights(
    key: EntityKey,
    rag: Rag,
    settings: Settings,
    query: Queries = [],  # noqa: B006 - FastAPI reads the default, never mutates it
    retriever: RetrieverKind | None = None,
    top_k: TopK = None,
    expert: Expert = False,
) -> Any:
    """PROS/CONS highlights with evidence, support and alerts (a ``HighlightSet``).

    With ``query`` (repeatable) the queries are answered; with ``expert=true`` the entity's
    expert-review aspects; with neither, HIRO's query-free highlights (``meta.mode``
    says which ran).
    """
    request = plan(rag, key, settings, query, retriever, top_k, expert)

    def work(cancel: threading.Event) -> HighlightSet:
        result: HighlightSet | None = None
        for event in rag.stream(request):
            if isinstance(event, SummaryDone):
                result = event.result
            check_cancel(cancel)  # the client left: answer no further query
        if result is None:  # pragma: no cover - a stream always ends with SummaryDone
            raise ApiError(500, "internal_error", "the highlight stream ended without a result")
        return _as_string_id(result, key)

    return Deferred(work)


@router.get(
    "/entities/{entity_id:path}/highlights/stream",
    response_class=EventStream,
    responses=EVENT_STREAM_RESPONSES,
)
def highlights_stream(
    key: EntityKey,
    rag: Rag,
    settings: Settings,
    query: Queries = [],  # noqa: B006
    retriever: RetrieverKind | None = None,
    top_k: TopK = None,
    expert: Expert = False,
) -> Any:
    """The same highlights as server-sent events, one per query as it completes.

    Events: ``highlight`` (``{"query", "highlights": [Highlight...], "failure"}``) for each
    query, then ``done`` (the complete ``HighlightSet``: alerts, failures, meta); an error
    after the stream started is an ``error`` event (``{"error": {...}}``).
    """
    request = plan(rag, key, settings, query, retriever, top_k, expert)

    def events() -> Generator[bytes, None, None]:
        for event in rag.stream(request):
            if isinstance(event, SummaryDone):
                yield sse("done", _as_string_id(event.result, key))
            else:
                yield sse(
                    "highlight",
                    {
                        "query": event.item.query,
                        "highlights": [h.model_dump(mode="json") for h in event.highlights],
                        "failure": None if event.failure is None else event.failure.model_dump(mode="json"),
                    },
                )

    return EventStream(events())  # errors before the first event keep their status (400, 404 ...)
