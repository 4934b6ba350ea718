"""``GET /entities/{id}/highlights`` and ``.../highlights/stream``: PROS/CONS highlights, whole or streamed.

Both run the façade's highlight stream and stop between queries once the client is gone
(:mod:`opinio_agents.serve.streaming`).
"""

import threading
from collections.abc import Generator, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query

from opinio_agents.kinds import RetrieverKind
from opinio_agents.models import HighlightSet
from opinio_agents.serve.deps import EntityKey, Rag, Settings
from opinio_agents.serve.errors import ApiError
from opinio_agents.serve.settings import ServeSettings
from opinio_agents.serve.streaming import Deferred, EventStream, check_cancel, sse
from opinio_agents.synthesis.summarizer import SummaryDone

__all__ = ["router", "highlight_args", "clean_queries"]

router = APIRouter(tags=["highlights"])

Queries = Annotated[
    list[str],
    Query(description="A user-centric query (aspect); repeat for several. None: HIRO query-free highlights."),
]
TopK = Annotated[
    int | None, Query(ge=1, le=100, description="Evidence sentences per query (aspects in query-free mode).")
]
Expert = Annotated[bool, Query(description="Answer the entity's expert-review aspects (needs no query).")]


def clean_queries(queries: list[str], settings: ServeSettings) -> list[str]:
    """The queries stripped and de-duplicated; 400 on an empty one, too many or too long."""
    cleaned = [q.strip() for q in queries]
    if any(not q for q in cleaned):
        raise ApiError(400, "bad_request", "a query is empty; pass e.g. ?query=wi-fi&query=breakfast", field="query")
    if len(cleaned) > settings.max_queries:
        raise ApiError(
            400, "bad_request", f"{len(cleaned)} queries given; at most {settings.max_queries}", field="query",
            limit=settings.max_queries,
        )
    longest = max(cleaned, key=len, default="")
    if len(longest) > settings.max_query_chars:
        raise ApiError(
            400, "bad_request",
            f"a query has {len(longest):,} characters; at most {settings.max_query_chars} (a query names an aspect)",
            field="query", limit=settings.max_query_chars,
        )
    return list(dict.fromkeys(cleaned))


def highlight_args(
    settings: ServeSettings, query: list[str], retriever: RetrieverKind | None, top_k: int | None, expert: bool
) -> tuple[list[str] | None, dict[str, Any]]:
    """The queries and the façade's keyword arguments for one highlight request."""
    queries = clean_queries(query, settings)
    if queries and expert:
        raise ApiError(400, "bad_request", "expert=true takes no query; drop one of them", field="expert")
    if queries or expert:
        return queries or None, {"top_k": top_k, "retriever": retriever}
    if retriever is not None:
        raise ApiError(
            400, "bad_request",
            "retriever= applies to queries; without a query the highlights are HIRO's query-free ones "
            "(pass query=... or drop retriever)",
            field="retriever",
        )
    return None, {"top_k": top_k, "query_free": True}


def _events(rag: Rag, key: str, queries: list[str] | None, options: dict[str, Any]) -> Iterator[Any]:
    query_free = options.pop("query_free", False)
    return rag.stream_highlights(key, queries, query_free=query_free, **options)


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
    queries, options = highlight_args(settings, query, retriever, top_k, expert)

    def work(cancel: threading.Event) -> HighlightSet:
        result: HighlightSet | None = None
        for event in _events(rag, key, queries, options):
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
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-sent events"}},
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
    queries, options = highlight_args(settings, query, retriever, top_k, expert)

    def events() -> Generator[bytes, None, None]:
        for event in _events(rag, key, queries, options):
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
