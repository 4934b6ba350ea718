"""The service's settings in one typed place (:class:`ServeSettings`), each default with its reason.

:func:`~opinio_agents.serve.app.create_app` builds one from its arguments and keeps it on
``app.state.settings``; the routes reach it through
:func:`~opinio_agents.serve.deps.get_settings`.

Example:
    >>> ServeSettings().max_queries
    20
    >>> ServeSettings(allowed_hosts=("example.org",)).host_allowed("example.org:443")
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from opinio_agents.errors import ConfigError
from opinio_agents.io.base import DEFAULT_MAX_REVIEW_CHARS

__all__ = [
    "ServeSettings",
    "RateLimit",
    "STATIC_DIR",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_UPLOAD_BYTES",
    "DEFAULT_RATE_LIMIT",
    "LOOPBACK_HOSTS",
]


@dataclass(frozen=True)
class RateLimit:
    """Requests each client may make: ``per_second`` on average, bursts of up to ``burst``.

    Example:
        >>> RateLimit(per_second=5).burst
        10
    """

    per_second: float = 20.0
    burst: int = 0  # 0: twice per_second (at least 1)
    max_clients: int = 10_000

    def __post_init__(self) -> None:
        if not self.per_second > 0:
            raise ConfigError(f"rate limit per_second={self.per_second} must be > 0 (or pass rate_limit=None)")
        if self.burst < 0 or self.max_clients < 1:
            raise ConfigError(f"rate limit burst={self.burst} must be >= 0 and max_clients={self.max_clients} >= 1")
        if self.burst == 0:
            object.__setattr__(self, "burst", max(1, int(round(2 * self.per_second))))


#: The web page (owned by the page's own module): ``index.html`` is served at ``/``, the rest at ``/static/``.
STATIC_DIR = Path(__file__).resolve().parent / "static"
#: JSON bodies (chat) are small; 1 MiB leaves room for a long conversation and nothing more.
DEFAULT_MAX_BODY_BYTES = 1 << 20
#: The largest dataset upload: the sample and SPACE-sized files fit, a runaway upload does not.
DEFAULT_MAX_UPLOAD_BYTES = 64 << 20
#: 20 requests/s per client (bursts of 60) serves the page (a dozen calls per entity) with room to spare.
DEFAULT_RATE_LIMIT = RateLimit(per_second=20.0, burst=60)
#: Host names a server bound to loopback answers to (rebinding a foreign name onto 127.0.0.1 is refused).
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")


def host_name(host: str) -> str:
    """The name part of a ``Host`` header or ``host[:port]`` (IPv6 brackets removed), lower-cased.

    Example:
        >>> host_name("[::1]:8000"), host_name("Example.org:80"), host_name("localhost")
        ('::1', 'example.org', 'localhost')
    """
    text = host.strip().lower()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    if text.count(":") == 1:
        return text.split(":", 1)[0]
    return text




@dataclass(frozen=True)
class ServeSettings:
    """Every limit and switch of the service (see :func:`~opinio_agents.serve.app.create_app`).

    Attributes:
        api_key: The key every route needs, or None for none.
        max_body_bytes: Largest request body but the upload's.
        max_upload_bytes: Largest upload (and largest file indexed).
        rate_limit: Per-client token bucket, or None.
        cors_origins: Origins allowed to call from a browser (CORS off when empty).
        allowed_hosts: ``Host`` names answered (port ignored); ``("*",)`` answers any.
        max_review_chars: Longest review text an upload may carry.
        max_queries: Queries per highlight request (each is a retrieval and a synthesis).
        max_query_chars: Longest query (a 10 KB query took 2.5 s of encoder and BM25 time).
        max_upload_entities: Entities per upload (2,000 empty entities held the worker for 26 s).
        max_upload_reviews: Reviews per upload (SPACE's largest split is ~ 50k reviews).
        job_queue_depth: Index jobs waiting behind the running one before ``503``.
        entities_page: Default page size of ``GET /entities``.
        max_entities_page: Largest page size of ``GET /entities``.
        session_max_age: Seconds the browser session cookie lives (one working day).
        chat_verify: Check each chat answer sentence against the excerpts it cites (the chat guard,
            :mod:`opinio_agents.agents.answer_guard`; loads the triplet model once per server).
        jobs_dir: Where index jobs keep their durable record and upload (None: a temporary folder,
            no recovery across restarts).
    """

    api_key: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    rate_limit: RateLimit | None = DEFAULT_RATE_LIMIT
    cors_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS
    max_queries: int = 20
    max_query_chars: int = 200
    max_upload_entities: int = 1_000
    max_upload_reviews: int = 200_000
    job_queue_depth: int = 4
    entities_page: int = 100
    max_entities_page: int = 1_000
    session_max_age: int = 8 * 3600
    chat_verify: bool = True
    jobs_dir: Path | None = None
    _hosts: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_body_bytes < 1 or self.max_upload_bytes < 1:
            raise ConfigError(
                f"max_body_bytes={self.max_body_bytes} and max_upload_bytes={self.max_upload_bytes} must be >= 1"
            )
        for name in ("max_queries", "max_query_chars", "max_upload_entities", "max_upload_reviews",
                     "job_queue_depth", "entities_page", "max_entities_page", "session_max_age"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}={getattr(self, name)} must be >= 1")
        if not self.allowed_hosts:
            raise ConfigError("allowed_hosts is empty; pass the names clients use (or '*' for any)")
        object.__setattr__(self, "_hosts", frozenset(host_name(h) for h in self.allowed_hosts))

    @property
    def any_host(self) -> bool:
        """Whether every ``Host`` is answered (``allowed_hosts`` has ``*``)."""
        return "*" in self._hosts

    def host_allowed(self, host: str) -> bool:
        """Whether a ``Host`` header (or an origin's host) names this server."""
        return self.any_host or host_name(host) in self._hosts
