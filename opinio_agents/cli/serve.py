"""``opinio serve``: the HTTP API and the web page (extra ``serve``: FastAPI + uvicorn).

``register(app)`` adds the command to the main Typer app.

Example:
    $ opinio serve --dataset sample.json                       # index the sample if needed, then serve
    $ opinio serve --store .opinio --port 8080 --api-key "$KEY"
    $ opinio serve --llm openai:qwen2.5-7b --base-url http://localhost:8001/v1
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from opinio_agents.cli.llm_limits import LLMTimeoutOpt, llm_limits
from opinio_agents.errors import ConfigError, MissingDependencyError

__all__ = ["register", "serve_command"]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def _allowed_hosts(host: str, extra: list[str] | None) -> tuple[str, ...]:
    """The Host names answered: the bound address (unless a wildcard), the loopback names, and ``extra``."""
    from opinio_agents.serve.settings import LOOPBACK_HOSTS

    names = [] if _is_wildcard(host) else [host]
    return tuple(dict.fromkeys([*names, *LOOPBACK_HOSTS, *(extra or [])]))


def serve_command(
    store: Annotated[Path, typer.Option("--store", help="Index directory to serve.")] = Path(".opinio"),
    dataset: Annotated[
        Path | None, typer.Option("--dataset", help="Index this dataset into the store first (no-op when up to date).")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8000,
    llm: Annotated[
        str | None, typer.Option("--llm", help="Chat / synthesis model, e.g. openai:gpt-4o-mini. Default: none.")
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Base URL of an OpenAI-compatible server.")] = None,
    synthesizer: Annotated[
        str | None,
        typer.Option(
            "--synthesizer",
            help="Highlights: extractive (default without --llm) or llm (default with it); chat uses --llm either way.",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key", envvar="OPINIO_API_KEY", show_envvar=True,
            help="Require this key on every route (X-API-Key header, Bearer token, or ?api_key= once in a browser).",
        ),
    ] = None,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option("--cors-origin", help="Allow browser calls from this origin (repeat). Default: CORS off."),
    ] = None,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A Host name clients use to reach the server (repeat; '*': any). Default: the bound address "
            "and localhost, which refuses DNS-rebinding pages.",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        list[str] | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="Address of a reverse proxy whose X-Forwarded-For names the client (repeat). Default: none, "
            "the socket's address is the client (rate limit and key throttle key on it).",
        ),
    ] = None,
    rate_limit: Annotated[
        float, typer.Option("--rate-limit", min=0, help="Requests per second per client (bursts of 3x); 0: no limit.")
    ] = 20.0,
    max_body_kb: Annotated[int, typer.Option("--max-body-kb", min=1, help="Largest request body, in KiB.")] = 1024,
    max_upload_mb: Annotated[int, typer.Option("--max-upload-mb", min=1, help="Largest upload to POST /index.")] = 64,
    llm_timeout: LLMTimeoutOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars; log warnings only.")] = False,
) -> None:
    """Serve the review API (OpenAPI at /docs) and the web page at / over HTTP.

    Binds to 127.0.0.1 unless --host says otherwise; CORS is off unless --cors-origin is
    given; with --api-key (or OPINIO_API_KEY) every route needs the key.

    Examples:
      opinio sample sample.json && opinio serve --dataset sample.json
      opinio serve --store .opinio --host 0.0.0.0 --port 8080 --api-key "$KEY"
    """
    try:
        import fastapi  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("fastapi", "serve", "opinio serve") from exc
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingDependencyError("uvicorn", "serve", "opinio serve") from exc
    from opinio_agents.api import OpinioRAG
    from opinio_agents.cli.console import check_store_path, err, plain
    from opinio_agents.serve.app import create_app
    from opinio_agents.serve.guard import RateLimit
    from opinio_agents.serve.jobs import JOBS_FOLDER
    from opinio_agents.serve.server import uvicorn_config
    from opinio_agents.serve.settings import ServeSettings

    check_store_path(store)
    if api_key is not None and not api_key.strip():
        raise ConfigError("--api-key is empty; pass a non-empty key (or leave it out for no key)")
    if dataset is not None and not dataset.is_file():
        raise ConfigError(f"--dataset {str(dataset)!r} is not a file")
    if synthesizer not in (None, "extractive", "llm"):
        raise ConfigError(f"--synthesizer {synthesizer!r} must be extractive or llm")
    rag = OpinioRAG(
        store, llm=llm, base_url=base_url, synthesizer=synthesizer,  # type: ignore[arg-type]
        llm_options=llm_limits(llm_timeout),
    )
    if dataset is not None:
        stats = rag.index(dataset, show_progress=not quiet, wait=True)
        changed = sum(s.reviews_added + s.reviews_updated + s.reviews_removed for s in stats)
        err.print(plain(f"indexed {dataset}: {len(stats)} entities, {changed} new or changed reviews"), highlight=False)
    if not rag.entities():
        err.print(plain(f"note: {store} holds no entity yet; POST /index uploads a dataset"), highlight=False)
    if not _is_loopback(host) and api_key is None:
        err.print(plain(f"warning: serving on {host} without --api-key: anyone who can reach it can use it"),
                  highlight=False)
    hosts = _allowed_hosts(host, allowed_host)
    if _is_wildcard(host) and not allowed_host:
        err.print(plain(f"note: bound to {host}, answering only to localhost names; add --allowed-host NAME "
                        "for the name remote clients use"), highlight=False)
    settings = ServeSettings(
        api_key=api_key,
        max_body_bytes=max_body_kb << 10,
        max_upload_bytes=max_upload_mb << 20,
        rate_limit=RateLimit(per_second=rate_limit, burst=max(1, int(3 * rate_limit))) if rate_limit > 0 else None,
        cors_origins=tuple(cors_origin or ()),
        allowed_hosts=hosts,
        jobs_dir=store / JOBS_FOLDER,
    )
    app = create_app(rag, settings=settings)
    config = uvicorn_config(
        app, host=host, port=port, forwarded_allow_ips=forwarded_allow_ips,
        log_level="warning" if quiet else "info", timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    err.print(plain(f"serving http://{shown}:{port}/ (API docs at /docs; Ctrl-C stops)"), highlight=False)
    server.run()


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command("serve")(serve_command)
