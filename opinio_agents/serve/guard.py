"""The service's front door: API key, per-client rate limit and request-size limit (one ASGI middleware).

Checks run before any route, in this order, and each refusal is a JSON error
(:func:`opinio_agents.serve.errors.error_body`):

1. **Rate limit**: a token bucket per client address (``rate`` requests per second,
   bursts up to ``burst``); an empty bucket is ``429`` with ``Retry-After``. At most
   ``max_clients`` buckets are kept (least recently seen dropped first), so memory is bounded.
   Requests with a wrong key count too, so guessing keys is throttled.
2. **API key** (only when the app has one): taken from the ``X-API-Key`` header,
   ``Authorization: Bearer KEY``, the ``api_key`` query parameter or the ``opinio_api_key``
   cookie; missing or wrong is ``401``. A GET that authenticates through ``?api_key=``
   gets the cookie (``HttpOnly; SameSite=Strict``), so a browser that opened
   ``/?api_key=KEY`` once can load the page's assets, ``/docs`` and the API without
   repeating it. Keys are compared in constant time.
3. **Request size**: a ``Content-Length`` above the limit is ``413`` before the body is
   read; a body without one is counted as it arrives and cut off at the limit (``413``).
   Uploads (``POST /index``) have their own, larger limit.

Every response that passes gets ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``
and ``Referrer-Policy: no-referrer``.

Example:
    >>> bucket = TokenBucket(RateLimit(per_second=1, burst=2), clock=lambda: 0.0)
    >>> [bucket.take("1.2.3.4") for _ in range(3)]
    [0.0, 0.0, 1.0]
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from starlette.exceptions import HTTPException

from opinio_agents.errors import ConfigError
from opinio_agents.serve.errors import error_body

__all__ = ["RateLimit", "TokenBucket", "Guard", "API_KEY_COOKIE", "API_KEY_HEADER", "API_KEY_PARAM"]

API_KEY_HEADER = "x-api-key"
API_KEY_PARAM = "api_key"
API_KEY_COOKIE = "opinio_api_key"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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


class TokenBucket:
    """Per-client token buckets, bounded to ``limit.max_clients`` clients (thread-safe).

    Args:
        limit: The rate and burst.
        clock: Monotonic seconds (tests pass a fake).
    """

    def __init__(self, limit: RateLimit, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, last time)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str) -> float:
        """Take one token for ``key``: 0.0 when allowed, else the seconds until a token is back."""
        now = self.clock()
        rate, burst = self.limit.per_second, float(self.limit.burst)
        with self._lock:
            tokens, last = self._buckets.pop(key, (burst, now))
            tokens = min(burst, tokens + max(0.0, now - last) * rate)
            wait = 0.0
            if tokens >= 1.0:
                tokens -= 1.0
            else:
                wait = (1.0 - tokens) / rate
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self.limit.max_clients:
                self._buckets.popitem(last=False)
        return wait


#: Sent with every response that passes the guard: no MIME sniffing, no framing, no referrer.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


class _BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a body passes the limit (the app's handler answers 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _too_large(limit))
        self.limit = limit


class Guard:
    """ASGI middleware: API key, rate limit, request-size limit (see the module docstring).

    Args:
        app: The wrapped ASGI app.
        api_key: The key every request must present, or None for no key.
        rate_limit: Per-client limit, or None for none.
        max_body_bytes: Largest request body of every route but the upload.
        max_upload_bytes: Largest body of ``POST /index``.
        upload_paths: Paths (below the app's root) that take uploads.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: str | None,
        rate_limit: RateLimit | None,
        max_body_bytes: int,
        max_upload_bytes: int,
        upload_paths: frozenset[str] = frozenset({"/index"}),
    ) -> None:
        self.app = app
        self.api_key = api_key
        self.bucket = TokenBucket(rate_limit) if rate_limit is not None else None
        self.max_body_bytes = max_body_bytes
        self.max_upload_bytes = max_upload_bytes
        self.upload_paths = upload_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if self.bucket is not None:
            client = scope.get("client")
            wait = self.bucket.take(str(client[0]) if client else "unknown")
            if wait > 0:
                seconds = max(1, int(wait + 0.999))
                await _reply(scope, receive, send, 429, "rate_limited",
                             f"too many requests from this client; retry in {seconds} s",
                             headers={"Retry-After": str(seconds)}, retry_after=seconds)
                return
        set_cookie = False
        if self.api_key is not None:
            presented, via = _presented_key(headers, query)
            if presented is None:
                await _reply(scope, receive, send, 401, "unauthorized",
                             "this server needs an API key: send the X-API-Key header "
                             "(or Authorization: Bearer KEY), or open the page once as /?api_key=KEY",
                             headers={"WWW-Authenticate": "Bearer"})
                return
            if not hmac.compare_digest(presented.encode("utf-8"), self.api_key.encode("utf-8")):
                await _reply(scope, receive, send, 401, "unauthorized", "wrong API key",
                             field="api_key" if via == "query" else None, headers={"WWW-Authenticate": "Bearer"})
                return
            set_cookie = via == "query" and scope.get("method") == "GET"
        limit = self.max_upload_bytes if _route_path(scope) in self.upload_paths else self.max_body_bytes
        length = headers.get("content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _reply(scope, receive, send, 400, "bad_request", "Content-Length is not a number",
                             field="Content-Length")
                return
            if declared > limit:
                await _reply(scope, receive, send, 413, "too_large", _too_large(limit), field="body", limit=limit)
                return
        started = False
        seen = 0

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _BodyTooLarge(limit)
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
                if set_cookie and self.api_key is not None:
                    cookie = f"{API_KEY_COOKIE}={quote(self.api_key, safe='')}; Path=/; HttpOnly; SameSite=Strict"
                    message["headers"].append((b"set-cookie", cookie.encode("latin-1")))
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except _BodyTooLarge:
            if not started:
                await _reply(scope, receive, send, 413, "too_large", _too_large(limit), field="body", limit=limit)


def _too_large(limit: int) -> str:
    return f"the request body is larger than the server's limit of {limit:,} bytes"


def _route_path(scope: Scope) -> str:
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    if root and path.startswith(root):
        path = path[len(root):]
    return path.rstrip("/") or "/"


def _presented_key(headers: dict[str, str], query: dict[str, str]) -> tuple[str | None, str]:
    if API_KEY_HEADER in headers:
        return headers[API_KEY_HEADER], "header"
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip(), "header"
    if API_KEY_PARAM in query:
        return query[API_KEY_PARAM], "query"
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == API_KEY_COOKIE:
            return unquote(value), "cookie"
    return None, ""


async def _reply(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    type: str,  # noqa: A002
    message: str,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> None:
    from starlette.responses import JSONResponse

    response = JSONResponse(error_body(type, message, field=field, **extra), status_code=status, headers=headers)
    await response(scope, receive, send)
