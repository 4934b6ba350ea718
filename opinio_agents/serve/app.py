"""The FastAPI app over one shared :class:`~opinio_agents.api.OpinioRAG` (see :mod:`opinio_agents.serve`).

Every route is a plain ``def``: FastAPI runs it in its thread pool, so retrieval,
embedding and LLM calls never block the event loop, and the streaming routes iterate
their (blocking) generators in the pool too. The façade is shared by all those threads.

Example:
    >>> from opinio_agents import OpinioRAG
    >>> app = create_app(OpinioRAG(".opinio"), api_key="s3cret")     # doctest: +SKIP
    >>> import uvicorn; uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
"""

import contextlib
import datetime as dt
import json
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.io.base import DEFAULT_MAX_REVIEW_CHARS
from opinio_agents.kinds import AspectSource, RetrieverKind
from opinio_agents.serve.errors import ApiError, classify, error_body
from opinio_agents.serve.guard import Guard, RateLimit
from opinio_agents.serve.jobs import IndexJobs, JobStatus

if TYPE_CHECKING:
    from fastapi import FastAPI
    from langchain_core.language_models import BaseChatModel

    from opinio_agents.api import OpinioRAG
    from opinio_agents.models import Review
    from opinio_agents.stores.catalog import StoredSentence

__all__ = [
    "create_app",
    "STATIC_DIR",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_UPLOAD_BYTES",
    "DEFAULT_RATE_LIMIT",
    "ChatRequest",
    "ChatMessage",
]

#: The web page (owned by the page's own module): ``index.html`` is served at ``/``, the rest at ``/static/``.
STATIC_DIR = Path(__file__).resolve().parent / "static"
DEFAULT_MAX_BODY_BYTES = 1 << 20
DEFAULT_MAX_UPLOAD_BYTES = 64 << 20
DEFAULT_RATE_LIMIT = RateLimit(per_second=20.0, burst=60)
MAX_QUERIES = 20

_NO_UI = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>opinio serve</title></head>
<body><h1>opinio serve</h1><p>The web page is not installed in this copy of opinio_agents
(<code>opinio_agents/serve/static/index.html</code> is missing). The HTTP API works:
see <a href="docs">/docs</a> for the OpenAPI schema and <a href="entities">/entities</a>.</p></body></html>
"""

_NO_DOCS = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>opinio serve API</title></head>
<body><h1>opinio serve API</h1><p>The interactive docs need Swagger UI's files, which come with
<code>pip install "opinio_agents[serve]"</code> (the <code>swagger-ui-bundle</code> package).
The OpenAPI schema is at <a href="{schema}">{schema}</a>.</p></body></html>
"""

# ----------------------------------------------------------------------------- request / response models
class ChatMessage(BaseModel):
    """One turn of the conversation the client keeps (the server keeps none)."""

    role: Literal["user", "assistant"]
    content: str = Field(max_length=4000)


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


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": text}
    for code, text in {
        400: "Bad input (the field is named)",
        401: "Missing or wrong API key",
        404: "Unknown entity, review or job",
        413: "Request too large",
        422: "Validation error",
        429: "Rate limited",
        503: "LLM unavailable",
    }.items()
}


# ----------------------------------------------------------------------------- helpers
class _Reviews:
    """Full reviews and their sentences per entity, cached by generation (a few entities at most)."""

    def __init__(self, rag: "OpinioRAG", size: int = 8) -> None:
        self.rag = rag
        self.size = size
        self._cache: OrderedDict[str, tuple[int, dict[str, Any], dict[str, list[Any]]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, review_id: str) -> "tuple[Review, list[StoredSentence]]":
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


def _json(model: BaseModel, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    from fastapi.responses import Response

    return Response(model.model_dump_json(), status_code=status, media_type="application/json", headers=headers)


def _sse(event: str, data: Any) -> bytes:
    payload = data.model_dump_json() if isinstance(data, BaseModel) else json.dumps(data, ensure_ascii=False)
    return f"event: {event}\ndata: {payload}\n\n".encode()


def _stream(events: Iterator[bytes]) -> Any:
    from fastapi.responses import StreamingResponse

    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _primed(events: Iterator[bytes]) -> Iterator[bytes]:
    """Run ``events`` up to its first event now (so an error before it keeps its HTTP status), then the rest.

    An error after the response started becomes an ``error`` event.
    """
    first = next(events, None)
    return _guarded(first, events)


def _guarded(first: bytes | None, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first is None:
        return
    yield first
    try:
        yield from rest
    except Exception as exc:  # noqa: BLE001 - the status line is gone: report in-band, never a traceback
        _, body = classify(exc)
        yield _sse("error", body)


def _clean_queries(queries: list[str]) -> list[str]:
    cleaned = [q.strip() for q in queries]
    if any(not q for q in cleaned):
        raise ApiError(400, "bad_request", "a query is empty; pass e.g. ?query=wi-fi&query=breakfast", field="query")
    if len(cleaned) > MAX_QUERIES:
        raise ApiError(400, "bad_request", f"{len(cleaned)} queries given; at most {MAX_QUERIES}", field="query")
    return list(dict.fromkeys(cleaned))


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("query", "path", "body", "header", "cookie", "form"):
        parts = parts[1:]
    return ".".join(parts)


def _safe_name(filename: str | None) -> str:
    """A plain file name for the private copy of an upload (its extension picks the reader)."""
    base = Path((filename or "").replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._") or "upload"
    return base[-120:]


# ----------------------------------------------------------------------------- the app
def create_app(
    rag: "OpinioRAG",
    *,
    api_key: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    rate_limit: RateLimit | None = DEFAULT_RATE_LIMIT,
    cors_origins: list[str] | None = None,
    llm: "BaseChatModel | None" = None,
    static_dir: str | Path | None = None,
    max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS,
) -> "FastAPI":
    """The HTTP service (routes in :mod:`opinio_agents.serve`) over one shared façade.

    Args:
        rag: The façade every request uses (shared across the server's threads).
        api_key: When set, every route requires it (see :mod:`opinio_agents.serve.guard`).
        max_body_bytes: Largest request body (``413`` above), uploads excepted.
        max_upload_bytes: Largest upload to ``POST /index`` (and largest file indexed).
        rate_limit: Per-client token bucket, or None for no limit.
        cors_origins: Origins allowed to call the API from a browser; None (default): CORS off.
        llm: The chat model of ``POST /entities/{id}/chat`` (default: ``rag.llm``).
        static_dir: The web page's directory (default: the package's ``serve/static``).
        max_review_chars: Longest review accepted by ``POST /index``.

    Raises:
        MissingDependencyError: When FastAPI is not installed (``pip install 'opinio-agents[serve]'``).
        ConfigError: On a bad limit.

    Example:
        >>> from fastapi.testclient import TestClient                 # doctest: +SKIP
        >>> client = TestClient(create_app(rag))                      # doctest: +SKIP
        >>> client.get("/entities").json()[0]["entity_id"]            # doctest: +SKIP
        '101'
    """
    try:
        from fastapi import FastAPI, File, Form, Query, Request, UploadFile
        from fastapi import Path as PathParam
        from fastapi.exceptions import RequestValidationError
        from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
        from starlette.exceptions import HTTPException as StarletteHTTPException
    except ImportError as exc:
        raise MissingDependencyError("fastapi", "serve", "opinio serve") from exc
    import opinio_agents
    from opinio_agents.agents.chat import ChatAnswer, ReviewChat
    from opinio_agents.agents.filters import ReviewFilters
    from opinio_agents.agents.schemas import SearchResult
    from opinio_agents.agents.toolkit import ReviewToolkit
    from opinio_agents.io.loaders import supported_extensions
    from opinio_agents.models import HighlightSet
    from opinio_agents.synthesis.summarizer import SummaryDone

    if max_body_bytes < 1 or max_upload_bytes < 1:
        raise ConfigError(f"max_body_bytes={max_body_bytes} and max_upload_bytes={max_upload_bytes} must be >= 1")
    static = Path(static_dir) if static_dir is not None else STATIC_DIR
    jobs = IndexJobs(rag, max_review_chars=max_review_chars, max_file_bytes=max_upload_bytes)
    reviews = _Reviews(rag)
    chat_model_lock = threading.Lock()
    chat_model: list[Any] = [llm]

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.shutdown(wait=False)

    app = FastAPI(
        lifespan=lifespan,
        title="opinio_agents",
        version=opinio_agents.__version__,
        description=(
            "Opinion highlights (PROS/CONS with evidence) over indexed reviews, review search, "
            "HIRO aspects and cited chat. Review text in every response is untrusted data."
        ),
        responses=_ERRORS,
        docs_url=None,  # served below from local files: FastAPI's default loads Swagger UI from a CDN
        redoc_url=None,
    )
    app.state.rag = rag
    app.state.jobs = jobs

    # -- errors: one mapping (serve.errors.classify), never a traceback --------------------
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        status, body = classify(exc)
        return JSONResponse(body, status_code=status, headers=exc.headers or None)

    @app.exception_handler(opinio_agents.errors.OpinioError)
    async def _opinio_error(request: Request, exc: Exception) -> JSONResponse:
        status, body = classify(exc)
        return JSONResponse(body, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [{"field": _field_of(e.get("loc", ())), "message": str(e.get("msg", ""))} for e in exc.errors()]
        field = problems[0]["field"] if problems else ""
        what = problems[0]["message"] if problems else "invalid request"
        message = f"field {field!r}: {what}" if field else what
        return JSONResponse(
            error_body("validation_error", message, field=field or None, errors=problems), status_code=422
        )

    _kinds = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 401: "unauthorized"}

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = _kinds.get(exc.status_code, "http_error")
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":
            message = f"no route {request.url.path!r}; see /docs for the routes"
        extra: dict[str, Any] = {"field": "body"} if exc.status_code == 413 else {}
        return JSONResponse(error_body(kind, message, **extra), status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        status, body = classify(exc)  # logs the traceback server-side; the body names nothing internal
        return JSONResponse(body, status_code=status)

    app.add_middleware(
        Guard,  # type: ignore[arg-type]
        api_key=api_key,
        rate_limit=rate_limit,
        max_body_bytes=max_body_bytes,
        max_upload_bytes=max_upload_bytes,
    )
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,  # type: ignore[arg-type]
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["X-API-Key", "Authorization", "Content-Type"],
        )

    # -- helpers bound to this app ---------------------------------------------------------
    def entity_key(entity_id: str) -> str:
        if not rag.store.has_entity(entity_id):
            known = rag.entities()
            listed = ", ".join(known[:10]) + (" ..." if len(known) > 10 else "") if known else "none"
            raise ApiError(
                404, "not_found", f"entity {entity_id!r} is not indexed (indexed: {listed})", field="entity_id"
            )
        if not rag.store.is_complete(entity_id):
            raise ApiError(
                409, "store_busy",
                f"entity {entity_id!r} is being indexed (or its last indexing run did not finish); "
                "retry when its job is done",
                field="entity_id",
            )
        return str(entity_id)

    def complete_entities() -> list[str]:
        return [key for key in rag.entities() if rag.store.is_complete(key)]  # not those a writer is mid-way on

    def summary(key: str) -> dict[str, Any]:
        record = rag.store.entity_record(key)
        return {
            "entity_id": key,
            "name": record.entity_name,
            "reviews": record.n_reviews,
            "sentences": rag.store.count_sentences(key),
            "queries": record.queries,
        }

    def current_chat_model() -> "BaseChatModel | None":
        with chat_model_lock:
            if chat_model[0] is None:
                chat_model[0] = rag.llm
            return chat_model[0]

    def highlight_args(
        key: str, query: list[str], retriever: RetrieverKind | None, top_k: int | None, expert: bool
    ) -> tuple[list[str] | None, dict[str, Any]]:
        queries = _clean_queries(query)
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

    EntityId = Annotated[str, PathParam(description="Entity id, as listed by GET /entities.")]
    Queries = Annotated[
        list[str],
        Query(description="A user-centric query (aspect); repeat for several. None: HIRO query-free highlights."),
    ]
    TopK = Annotated[
        int | None, Query(ge=1, le=100, description="Evidence sentences per query (aspects in query-free mode).")
    ]
    Expert = Annotated[bool, Query(description="Answer the entity's expert-review aspects (needs no query).")]

    # -- routes ----------------------------------------------------------------------------
    @app.get("/healthz", response_model=Health, tags=["service"])
    def healthz() -> Any:
        """Liveness: the version, how many entities are indexed, whether an LLM is configured."""
        return _json(
            Health(
                version=opinio_agents.__version__,
                entities=len(complete_entities()),
                llm=rag.llm_spec is not None or llm is not None,
                hiro_fitted=rag.hiro_fitted,
            )
        )

    @app.get("/entities", response_model=list[EntitySummary], tags=["entities"])
    def list_entities() -> Any:
        """The indexed entities with their names, review and sentence counts and expert aspects."""
        return JSONResponse([summary(key) for key in complete_entities()])

    @app.get("/entities/{entity_id:path}/highlights", response_model=HighlightSet, tags=["highlights"])
    def highlights(
        entity_id: EntityId,
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
        key = entity_key(entity_id)
        queries, settings = highlight_args(key, query, retriever, top_k, expert)
        return _json(rag.highlights(key, queries, **settings))

    @app.get(
        "/entities/{entity_id:path}/highlights/stream",
        tags=["highlights"],
        response_class=_event_stream_class(),
        responses={200: {"content": {"text/event-stream": {}}, "description": "Server-sent events"}},
    )
    def highlights_stream(
        entity_id: EntityId,
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
        key = entity_key(entity_id)
        queries, settings = highlight_args(key, query, retriever, top_k, expert)
        query_free = settings.pop("query_free", False)
        stream = rag.stream_highlights(key, queries, query_free=query_free, **settings)

        def events() -> Iterator[bytes]:
            for event in stream:
                if isinstance(event, SummaryDone):
                    yield _sse("done", event.result)
                else:
                    yield _sse(
                        "highlight",
                        {
                            "query": event.item.query,
                            "highlights": [h.model_dump(mode="json") for h in event.highlights],
                            "failure": None if event.failure is None else event.failure.model_dump(mode="json"),
                        },
                    )

        return _stream(_primed(events()))  # errors before the first event keep their status (400, 404 ...)

    @app.get("/entities/{entity_id:path}/aspects", response_model=AspectsOut, tags=["entities"])
    def aspects(entity_id: EntityId, top_k: Annotated[int, Query(ge=1, le=50)] = 10) -> Any:
        """The aspects reviewers talk about, most discussed first, with positive/negative counts.

        From the store's HIRO hierarchy when it has one, else the expert review's aspects.
        """
        key = entity_key(entity_id)
        record = rag.store.entity_record(key)
        items: list[AspectOut] = []
        source: AspectSource = "hiro"
        if rag.hiro_fitted:
            for a in rag.aspects(key, top_k=top_k):
                items.append(
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
                )
        else:
            source = "expert-queries"
            if not record.queries:
                raise ApiError(
                    409, "store_error",
                    f"entity {key!r} has no expert review and the store has no HIRO hierarchy yet "
                    "(index more reviews); search with /entities/{id}/search instead",
                )
            for name in record.queries:
                s = rag.support(key, name)
                items.append(
                    AspectOut(aspect=name, mentions=s.reviews, positive=s.positive, negative=s.negative,
                              neutral=s.neutral, total_reviews=s.total_reviews)
                )
        items.sort(key=lambda a: a.mentions, reverse=True)
        return _json(AspectsOut(entity_id=key, entity_name=record.entity_name, source=source, aspects=items[:top_k]))

    @app.get("/entities/{entity_id:path}/search", response_model=SearchResult, tags=["reviews"])
    def search(
        entity_id: EntityId,
        q: Annotated[str, Query(min_length=1, max_length=500, description="What to look for.")],
        k: Annotated[int, Query(ge=1, le=50)] = 5,
        min_rating: Annotated[float | None, Query(ge=0)] = None,
        max_rating: Annotated[float | None, Query(ge=0)] = None,
        since: dt.date | None = None,
        until: dt.date | None = None,
        retriever: RetrieverKind | None = None,
    ) -> Any:
        """The ``k`` review sentences most relevant to ``q`` (optionally filtered), with support counts."""
        key = entity_key(entity_id)
        if not q.strip():
            raise ApiError(400, "bad_request", "q is blank; pass an aspect such as q=wi-fi", field="q")
        try:
            filters = ReviewFilters(min_rating=min_rating, max_rating=max_rating, since=since, until=until)
        except ValidationError as exc:
            message = str(exc.errors()[0].get("msg", "invalid filters")).removeprefix("Value error, ")
            field = "min_rating" if "rating" in message else "since"
            raise ApiError(400, "bad_request", message, field=field) from exc
        toolkit = ReviewToolkit(rag, retriever=retriever)
        return _json(toolkit.search_reviews(key, q, k=k, filters=None if filters.is_empty else filters))

    @app.get("/entities/{entity_id:path}/reviews/{review_id:path}", response_model=ReviewOut, tags=["reviews"])
    def review(entity_id: EntityId, review_id: str) -> Any:
        """The full review, with each stored sentence's id and offsets (to mark the quoted one)."""
        key = entity_key(entity_id)
        item, sentences = reviews.get(key, review_id)
        return _json(
            ReviewOut(
                entity_id=key,
                review_id=str(item.review_id),
                text=item.text,
                rating=item.rating,
                helpful_votes=item.helpful_votes,
                publication_date=item.publication_date,
                user_reviews_posted=item.user_reviews_posted,
                user_cities_visited=item.user_cities_visited,
                user_helpful_votes=item.user_helpful_votes,
                sentences=[
                    SentenceSpan(
                        sentence_id=s.sentence.sentence_id,
                        index=s.sentence.index,
                        start=s.sentence.start,
                        end=s.sentence.end,
                        text=s.sentence.text,
                        sentiment=round(s.sentiment, 4),
                    )
                    for s in sentences
                ],
            )
        )

    @app.post(
        "/entities/{entity_id:path}/chat",
        tags=["chat"],
        response_class=_event_stream_class(),
        responses={200: {"content": {"text/event-stream": {}}, "description": "Server-sent events"}},
    )
    def chat(entity_id: EntityId, body: ChatRequest) -> Any:
        """Answer the last user message from the reviews, streamed as server-sent events.

        Events: ``token`` (``{"text": piece}``) as the answer is written, then ``done`` (the
        ``ChatAnswer``: ``citations`` map each ``[S1]`` marker to its ``sentence_id`` and text,
        ``evidence`` lists every excerpt shown, ``support`` counts the reviews); an error after
        the stream started is an ``error`` event. Without an LLM the route answers ``503``
        unless ``extractive`` is true.
        """
        key = entity_key(entity_id)
        if body.messages[-1].role != "user":
            raise ApiError(400, "bad_request", "the last message must be the user's question", field="messages")
        if not body.messages[-1].content.strip():
            raise ApiError(400, "bad_request", "the question is empty", field="messages")
        model = None if body.extractive else current_chat_model()
        if model is None and not body.extractive:
            raise ApiError(
                503, "llm_unavailable",
                "no LLM is configured for chat: start the server with --llm SPEC (and --base-url for an "
                "OpenAI-compatible server), or send \"extractive\": true for an answer quoting the reviews",
            )
        session = ReviewChat(rag, key, llm=model, k=body.k, retriever=body.retriever)
        if body.extractive:
            session.llm = None
        history = [(m.role, m.content) for m in body.messages]
        pieces = session.stream_answer({"messages": history})

        def events() -> Iterator[bytes]:
            for piece in pieces:
                if isinstance(piece, ChatAnswer):
                    yield _sse("done", piece)
                else:
                    yield _sse("token", {"text": piece})

        return _stream(_primed(events()))  # retrieval and the first token here: an unreachable LLM is a 503

    # Registered after every /entities/{id}/... route: an id may contain "/" (the path converter), so
    # this catch-all must not shadow them.
    @app.get("/entities/{entity_id:path}", response_model=EntityDetail, tags=["entities"])
    def get_entity(entity_id: EntityId) -> Any:
        """One entity: counts, expert review, last update, whether HIRO aspects are available."""
        key = entity_key(entity_id)
        record = rag.store.entity_record(key)
        return _json(
            EntityDetail(
                **summary(key),
                expert_review=None if record.expert_review is None else record.expert_review.model_dump(mode="json"),
                updated_at=record.updated_at,
                generation=record.generation,
                hiro_fitted=rag.hiro_fitted,
            )
        )

    @app.post("/index", response_model=JobStatus, status_code=202, tags=["indexing"])
    def index(
        file: Annotated[UploadFile, File(description="OpinioBank JSON / JSONL or a reviews CSV.")],
        skip_invalid: Annotated[bool, Form(description="Skip bad records instead of refusing the file.")] = False,
    ) -> Any:
        """Index an uploaded dataset in the background; poll ``GET /jobs/{job_id}``.

        The file is validated completely before anything is written (a bad record fails the job
        with its file, line, entity, review and field, and the store is unchanged), exactly as
        ``opinio index`` does.
        """
        name = _safe_name(file.filename)
        suffix = Path(name).suffix.lower()
        accepted = supported_extensions()
        if suffix not in accepted:
            raise ApiError(
                400, "bad_request",
                f"file {file.filename!r}: unsupported extension {suffix or '(none)'!r}; "
                f"use one of {', '.join(accepted)}",
                field="file",
            )
        folder = Path(tempfile.mkdtemp(prefix="opinio-upload-"))
        target = folder / name
        written = 0
        try:
            with open(target, "wb") as out:
                while chunk := file.file.read(1 << 20):
                    written += len(chunk)
                    if written > max_upload_bytes:
                        raise ApiError(413, "too_large", f"the upload is larger than {max_upload_bytes:,} bytes",
                                       field="file", limit=max_upload_bytes)
                    out.write(chunk)
        except BaseException:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            raise
        job = jobs.submit(target, file.filename or name, skip_invalid=skip_invalid)
        return _json(job, status=202, headers={"Location": f"jobs/{job.job_id}"})

    @app.get("/jobs/{job_id}", response_model=JobStatus, tags=["indexing"])
    def get_job(job_id: str) -> Any:
        """The state and progress of an indexing job (``failed`` jobs carry the error body)."""
        job = jobs.get(job_id)
        if job is None:
            raise ApiError(404, "not_found", f"no job {job_id!r} (finished jobs are kept for a while)", field="job_id")
        return _json(job)

    # -- the web page ----------------------------------------------------------------------
    index_html = static / "index.html"

    @app.get("/", include_in_schema=False)
    def page() -> Any:
        if index_html.is_file():
            return FileResponse(index_html, media_type="text/html")
        return HTMLResponse(_NO_UI)

    if static.is_dir():
        from fastapi.staticfiles import StaticFiles

        app.mount("/static", StaticFiles(directory=static), name="static")

    _add_docs(app)
    return app


def _add_docs(app: "FastAPI") -> None:
    """``/docs``: Swagger UI from the ``swagger-ui-bundle`` wheel's files, so it works offline.

    Without that package (it comes with the ``serve`` extra) the route answers a short page
    that points at ``/openapi.json`` and says what to install.
    """
    from fastapi import Request
    from fastapi.responses import HTMLResponse

    try:
        import swagger_ui_bundle
    except ImportError:
        assets = None
    else:
        assets = Path(swagger_ui_bundle.swagger_ui_path)
        if not (assets / "swagger-ui-bundle.js").is_file():
            assets = None
    if assets is not None:
        from fastapi.staticfiles import StaticFiles

        app.mount("/docs-assets", StaticFiles(directory=assets), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> Any:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        if assets is None:
            return HTMLResponse(_NO_DOCS.format(schema=f"{root}{app.openapi_url}"))
        from fastapi.openapi.docs import get_swagger_ui_html

        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - API",
            swagger_js_url=f"{root}/docs-assets/swagger-ui-bundle.js",
            swagger_css_url=f"{root}/docs-assets/swagger-ui.css",
            swagger_favicon_url=f"{root}/docs-assets/favicon-32x32.png",
        )


def _event_stream_class() -> Any:
    from fastapi.responses import StreamingResponse

    return StreamingResponse

