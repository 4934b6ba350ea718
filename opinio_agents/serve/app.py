"""The FastAPI app over one shared :class:`~opinio_agents.api.OpinioRAG` (see :mod:`opinio_agents.serve`).

:func:`create_app` puts the façade, the settings and the jobs on ``app.state`` (the routes
reach them through ``Depends``, :mod:`opinio_agents.serve.deps`), includes one router per
resource (:mod:`opinio_agents.serve.routes`), installs the one error mapping
(:func:`opinio_agents.serve.errors.install_handlers`) and the guard
(:mod:`opinio_agents.serve.guard`).

Routes are plain ``def``: FastAPI runs them in its thread pool, so retrieval, embedding and
LLM calls never block the event loop; the long ones return a response that runs their work
on a worker thread and stops it when the client leaves (:mod:`opinio_agents.serve.streaming`).

Example:
    >>> from opinio_agents import OpinioRAG
    >>> app = create_app(OpinioRAG(".opinio"), api_key="s3cret")     # doctest: +SKIP
    >>> import uvicorn; uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
"""

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import MissingDependencyError
from opinio_agents.io.base import DEFAULT_MAX_REVIEW_CHARS
from opinio_agents.serve.guard import RateLimit
from opinio_agents.serve.schemas import ChatMessage, ChatRequest
from opinio_agents.serve.settings import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_UPLOAD_BYTES,
    DEFAULT_RATE_LIMIT,
    LOOPBACK_HOSTS,
    STATIC_DIR,
    ServeSettings,
)

if TYPE_CHECKING:
    from fastapi import FastAPI
    from langchain_core.language_models import BaseChatModel

    from opinio_agents.api import OpinioRAG
    from opinio_agents.serve.jobs import IndexJobs

__all__ = [
    "create_app",
    "STATIC_DIR",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_UPLOAD_BYTES",
    "DEFAULT_RATE_LIMIT",
    "ChatRequest",
    "ChatMessage",
]

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

_DOCS = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="{root}/docs-assets/swagger-ui.css">
<link rel="icon" href="{root}/docs-assets/favicon-32x32.png"></head>
<body><div id="swagger-ui" data-schema="{schema}"></div>
<script src="{root}/docs-assets/swagger-ui-bundle.js"></script>
<script src="{root}/docs-init.js"></script></body></html>
"""

_DOCS_INIT = """window.ui = SwaggerUIBundle({
  url: document.getElementById("swagger-ui").dataset.schema,
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  layout: "BaseLayout",
});
"""


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
    allowed_hosts: list[str] | None = None,
    chat_verify: bool = True,
    settings: ServeSettings | None = None,
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
        allowed_hosts: ``Host`` names the server answers to (port ignored; ``["*"]``: any);
            default: the loopback names (``127.0.0.1``, ``localhost``, ``::1``).
        chat_verify: Check chat answers against their excerpts (the chat guard; loads the triplet model).
        settings: Every setting at once (:class:`~opinio_agents.serve.settings.ServeSettings`; the
            other keywords but ``llm`` and ``static_dir`` are then ignored).

    Raises:
        MissingDependencyError: When FastAPI is not installed (``pip install 'opinio-agents[serve]'``).
        ConfigError: On a bad limit.
    """
    try:
        from fastapi import FastAPI
    except ImportError as exc:
        raise MissingDependencyError("fastapi", "serve", "opinio serve") from exc
    import opinio_agents
    from opinio_agents.serve.deps import AppState, ReviewCache
    from opinio_agents.serve.errors import install_handlers
    from opinio_agents.serve.routes import routers
    from opinio_agents.serve.schemas import ERROR_RESPONSES

    if settings is None:
        settings = ServeSettings(
            api_key=api_key, max_body_bytes=max_body_bytes, max_upload_bytes=max_upload_bytes,
            rate_limit=rate_limit, cors_origins=tuple(cors_origins or ()), max_review_chars=max_review_chars,
            allowed_hosts=tuple(allowed_hosts) if allowed_hosts else LOOPBACK_HOSTS, chat_verify=chat_verify,
        )
    jobs = _jobs(rag, settings)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        jobs.shutdown(wait=False)  # a job cut here is resumed from its record by the next server

    app = FastAPI(
        lifespan=lifespan,
        title="opinio_agents",
        version=opinio_agents.__version__,
        description=(
            "Opinion highlights (PROS/CONS with evidence) over indexed reviews, review search, "
            "HIRO aspects and cited chat. Review text in every response is untrusted data."
        ),
        responses=ERROR_RESPONSES,
        docs_url=None,  # served below from local files: FastAPI's default loads Swagger UI from a CDN
        redoc_url=None,
    )
    app.state.opinio = AppState(rag=rag, settings=settings, jobs=jobs, reviews=ReviewCache(rag), llm=llm)
    app.state.rag, app.state.jobs = rag, jobs
    install_handlers(app)
    _add_middleware(app, settings)
    for router in routers():
        app.include_router(router)
    _add_page(app, Path(static_dir) if static_dir is not None else STATIC_DIR)
    _add_docs(app)
    return app


def _jobs(rag: "OpinioRAG", settings: ServeSettings) -> "IndexJobs":
    """The index job runner with the settings' limits (it resumes the jobs a crash cut)."""
    from opinio_agents.serve.jobs import IndexJobs

    return IndexJobs(
        rag, max_review_chars=settings.max_review_chars, max_file_bytes=settings.max_upload_bytes,
        jobs_dir=settings.jobs_dir, queue_depth=settings.job_queue_depth, max_entities=settings.max_upload_entities,
        max_reviews=settings.max_upload_reviews,
    )


def _add_middleware(app: "FastAPI", settings: ServeSettings) -> None:
    """The guard (key, rate, size) and, when origins are given, CORS."""
    from opinio_agents.serve.guard import Guard

    app.add_middleware(Guard, settings=settings)  # type: ignore[arg-type]
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,  # type: ignore[arg-type]
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["X-API-Key", "Authorization", "Content-Type"],
        )


def _add_page(app: "FastAPI", static: Path) -> None:
    """``GET /``: the web page (or a note that it is not installed); ``/static/``: its files."""
    from fastapi.responses import FileResponse, HTMLResponse

    index_html = static / "index.html"

    @app.get("/", include_in_schema=False)
    def page() -> Any:
        if index_html.is_file():
            return FileResponse(index_html, media_type="text/html")
        return HTMLResponse(_NO_UI)

    if static.is_dir():
        from fastapi.staticfiles import StaticFiles

        app.mount("/static", StaticFiles(directory=static), name="static")


def _add_docs(app: "FastAPI") -> None:
    """``/docs``: Swagger UI from the ``swagger-ui-bundle`` wheel's files, so it works offline.

    Without that package (it comes with the ``serve`` extra) the route answers a short page
    that points at ``/openapi.json`` and says what to install.
    """
    from fastapi import Request
    from fastapi.responses import HTMLResponse, Response

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

    # The route reads these two values, not ``app``: FastAPI caches endpoints process-wide, so a
    # closure over the app would keep every app ever built alive (and its temporary jobs folder).
    openapi_url, title = app.openapi_url, f"{app.title} - API"

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> Any:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        if assets is None:
            return HTMLResponse(_NO_DOCS.format(schema=f"{root}{openapi_url}"))
        return HTMLResponse(_DOCS.format(root=root, schema=f"{root}{openapi_url}", title=title))

    @app.get("/docs-init.js", include_in_schema=False)
    def docs_init() -> Any:  # Swagger UI's start-up as a file: the Content-Security-Policy allows no inline script
        return Response(_DOCS_INIT, media_type="text/javascript")
