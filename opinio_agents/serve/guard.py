"""The service's front door: host, rate limit, API key, origin and request size (one ASGI middleware).

Checks run before any route, in this order, and each refusal is a JSON error
(:func:`opinio_agents.serve.errors.error_body`) with the security headers below:

1. **Host**: the ``Host`` header must name this server (``allowed_hosts``, the port
   ignored; by default the loopback names): a page under a foreign DNS name rebound onto
   127.0.0.1 gets ``400`` (``field: "Host"``), never the data.
2. **Rate limit**: a token bucket per client address (``rate`` requests per second,
   bursts up to ``burst``); an empty bucket is ``429`` with ``Retry-After``. At most
   ``max_clients`` buckets are kept (least recently seen dropped first), so memory is bounded.
   Requests with a wrong key count too, so guessing keys is throttled. The address is the
   socket's (``scope["client"]``); the server trusts ``X-Forwarded-For`` only from the proxies
   it is told about (:mod:`opinio_agents.serve.server`).
3. **API key** (only when the app has one): taken from the ``X-API-Key`` header,
   ``Authorization: Bearer KEY``, the ``api_key`` query parameter or the session cookie;
   missing or wrong is ``401``. Keys are compared as UTF-8 bytes in constant time. A GET that
   authenticates through ``?api_key=`` gets the session cookie ``opinio_session``: a value
   derived from the key (HMAC-SHA256, never the key itself), ``HttpOnly; SameSite=Strict``,
   ``Max-Age`` (``session_max_age``) and ``Secure`` over TLS. ``api_key`` is removed from the
   query string before the app (and the access log) sees it.
4. **Origin** on state-changing methods (anything but GET, HEAD, OPTIONS): an ``Origin``
   must name an allowed host (or a CORS origin), and a request authenticated by the cookie must
   carry its own origin (``scheme://host``): otherwise ``403``.
5. **Request size**: a ``Content-Length`` above the limit is ``413`` before the body is
   read; a body without one is counted as it arrives and cut off at the limit (``413``).
   Uploads (``POST /index``) have their own, larger limit.

Every response gets ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``,
``Referrer-Policy: no-referrer`` and a ``Content-Security-Policy`` (scripts, styles and
connections from this server only, no framing).

Example:
    >>> bucket = TokenBucket(RateLimit(per_second=1, burst=2), clock=lambda: 0.0)
    >>> [bucket.take("1.2.3.4") for _ in range(3)]
    [0.0, 0.0, 1.0]
    >>> session_value("k3y") == session_value("k3y") != session_value("other")
    True
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

from starlette.exceptions import HTTPException

from opinio_agents.serve.errors import error_body
from opinio_agents.serve.settings import RateLimit, ServeSettings

__all__ = [
    "RateLimit",
    "TokenBucket",
    "Guard",
    "SESSION_COOKIE",
    "API_KEY_HEADER",
    "API_KEY_PARAM",
    "CONTENT_SECURITY_POLICY",
    "SECURITY_HEADERS",
    "session_value",
]

API_KEY_HEADER = "x-api-key"
API_KEY_PARAM = "api_key"
#: The browser session cookie (its value is :func:`session_value`, not the key).
SESSION_COOKIE = "opinio_session"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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


#: The page's policy (everything from this server, no inline script or style, no framing); ``/docs`` fits it too.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

#: Sent with every response, the guard's own refusals included: no MIME sniffing, no framing, no referrer.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
)

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def session_value(api_key: str) -> str:
    """The session cookie's value for ``api_key``: derived from it (HMAC-SHA256), never the key itself."""
    return hmac.new(api_key.encode("utf-8"), b"opinio_agents browser session v1", hashlib.sha256).hexdigest()


class _BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a body passes the limit (the app's handler answers 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, _too_large(limit))
        self.limit = limit


@dataclass(frozen=True)
class _Refusal:
    status: int
    type: str
    message: str
    field: str | None = None
    headers: dict[str, str] | None = None
    extra: dict[str, Any] | None = None


@dataclass
class _Request:
    """What the guard reads of one request."""

    scope: Scope
    headers: dict[str, bytes]
    query: list[tuple[str, str]]

    @classmethod
    def of(cls, scope: Scope) -> _Request:
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        raw = scope.get("query_string", b"").decode("utf-8", "replace")
        return cls(scope, headers, parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace"))

    def header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return None if value is None else value.decode("latin-1")

    @property
    def own_origin(self) -> str:
        scheme = str(self.scope.get("scheme", "http"))
        host = (self.header("host") or "").lower()
        name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if name and port == _DEFAULT_PORTS.get(scheme):
            host = name
        return f"{scheme}://{host}"


class Guard:
    """ASGI middleware: host, rate limit, API key, origin, request size (see the module docstring).

    Args:
        app: The wrapped ASGI app.
        settings: The service's settings (key, limits, allowed hosts, CORS origins).
        upload_paths: Paths (below the app's root) that take uploads.
    """

    def __init__(
        self, app: ASGIApp, *, settings: ServeSettings, upload_paths: frozenset[str] = frozenset({"/index"})
    ) -> None:
        self.app = app
        self.settings = settings
        self.api_key = settings.api_key
        self.bucket = TokenBucket(settings.rate_limit) if settings.rate_limit is not None else None
        self.upload_paths = upload_paths
        self.session = None if settings.api_key is None else session_value(settings.api_key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = _Request.of(scope)
        if any(name == API_KEY_PARAM for name, _ in request.query):  # never in the app's view nor the access log
            scope["query_string"] = urlencode([(k, v) for k, v in request.query if k != API_KEY_PARAM]).encode()
        via = ""
        refusal = self._check_host(request) or self._check_rate(scope)
        if refusal is None:
            refusal, via = self._check_key(request)
        refusal = refusal or self._check_origin(request, via) or self._check_length(request)
        if refusal is not None:
            await _reply(scope, receive, send, refusal)
            return
        set_cookie = via == "query" and scope.get("method") == "GET"
        await self._forward(scope, receive, send, set_cookie=set_cookie)

    # -- the checks: each returns a refusal, or None -----------------------------------------
    def _check_host(self, request: _Request) -> _Refusal | None:
        host = request.header("host")
        if host is None or self.settings.host_allowed(host):
            return None
        return _Refusal(400, "bad_host",
                        f"this server does not answer to the host {host[:100]!r}; start it with --allowed-host "
                        "for the names clients use", field="Host")

    def _check_rate(self, scope: Scope) -> _Refusal | None:
        if self.bucket is None:
            return None
        client = scope.get("client")
        wait = self.bucket.take(str(client[0]) if client else "unknown")
        if wait <= 0:
            return None
        seconds = max(1, int(wait + 0.999))
        return _Refusal(429, "rate_limited", f"too many requests from this client; retry in {seconds} s",
                        headers={"Retry-After": str(seconds)}, extra={"retry_after": seconds})

    def _check_key(self, request: _Request) -> tuple[_Refusal | None, str]:
        if self.api_key is None:
            return None, ""
        presented, via = _presented_key(request)
        unauthorized = {"WWW-Authenticate": "Bearer"}
        if presented is None:
            return _Refusal(401, "unauthorized",
                            "this server needs an API key: send the X-API-Key header "
                            "(or Authorization: Bearer KEY), or open the page once as /?api_key=KEY",
                            headers=unauthorized), ""
        expected = (self.session or "").encode("ascii") if via == "cookie" else self.api_key.encode("utf-8")
        if not hmac.compare_digest(presented, expected):
            return _Refusal(401, "unauthorized", "wrong API key" if via != "cookie" else "stale session cookie",
                            field="api_key" if via == "query" else None, headers=unauthorized), ""
        return None, via

    def _check_origin(self, request: _Request, via: str) -> _Refusal | None:
        if str(request.scope.get("method", "GET")).upper() in _SAFE_METHODS:
            return None
        origin = request.header("origin")
        if origin is None:
            if via != "cookie":
                return None  # not a browser (browsers send Origin on every POST)
            return _Refusal(403, "forbidden", "a request authenticated by the session cookie needs an Origin header",
                            field="Origin")
        origin = origin.strip().rstrip("/").lower()
        if via == "cookie" and origin != request.own_origin:
            return _Refusal(403, "forbidden",
                            f"Origin {origin[:100]!r} is not this page's; the session cookie only works same-origin",
                            field="Origin")
        if origin in self.settings.cors_origins or self._origin_host_allowed(origin):
            return None
        return _Refusal(403, "forbidden", f"Origin {origin[:100]!r} may not change this server's data",
                        field="Origin")

    def _origin_host_allowed(self, origin: str) -> bool:
        scheme, sep, host = origin.partition("://")
        return bool(sep) and scheme in ("http", "https") and self.settings.host_allowed(host)

    def _check_length(self, request: _Request) -> _Refusal | None:
        limit = self._limit(request.scope)
        length = request.header("content-length")
        if length is None:
            return None
        try:
            declared = int(length)
        except ValueError:
            return _Refusal(400, "bad_request", "Content-Length is not a number", field="Content-Length")
        if declared > limit:
            return _Refusal(413, "too_large", _too_large(limit), field="body", extra={"limit": limit})
        return None

    def _limit(self, scope: Scope) -> int:
        if _route_path(scope) in self.upload_paths:
            return self.settings.max_upload_bytes
        return self.settings.max_body_bytes

    # -- forwarding ------------------------------------------------------------------------
    def _cookie(self, scope: Scope) -> bytes:
        parts = [f"{SESSION_COOKIE}={self.session}", "Path=/", "HttpOnly", "SameSite=Strict",
                 f"Max-Age={self.settings.session_max_age}"]
        if scope.get("scheme") == "https":
            parts.append("Secure")
        return "; ".join(parts).encode("latin-1")

    async def _forward(self, scope: Scope, receive: Receive, send: Send, *, set_cookie: bool) -> None:
        limit = self._limit(scope)
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
                message["headers"] = _with_security_headers(message.get("headers", []))
                if set_cookie and self.session is not None:
                    message["headers"].append((b"set-cookie", self._cookie(scope)))
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except _BodyTooLarge:
            if not started:
                refusal = _Refusal(413, "too_large", _too_large(limit), field="body", extra={"limit": limit})
                await _reply(scope, receive, send, refusal)


def _with_security_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    present = {bytes(k).lower() for k, _ in headers}
    return [*headers, *((k, v) for k, v in SECURITY_HEADERS if k not in present)]


def _too_large(limit: int) -> str:
    return f"the request body is larger than the server's limit of {limit:,} bytes"


def _route_path(scope: Scope) -> str:
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    if root and path.startswith(root):
        path = path[len(root):]
    return path.rstrip("/") or "/"


def _presented_key(request: _Request) -> tuple[bytes | None, str]:
    """The key (as UTF-8 bytes) and where it came from: ``header``, ``query`` or ``cookie``."""
    if API_KEY_HEADER in request.headers:
        return request.headers[API_KEY_HEADER].strip(), "header"
    auth = request.headers.get("authorization", b"")
    if auth[:7].lower() == b"bearer ":
        return auth[7:].strip(), "header"
    for name, value in request.query:
        if name == API_KEY_PARAM:
            return value.encode("utf-8"), "query"
    for part in (request.header("cookie") or "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == SESSION_COOKIE:
            return unquote(value).encode("utf-8"), "cookie"
    return None, ""


async def _reply(scope: Scope, receive: Receive, send: Send, refusal: _Refusal) -> None:
    from starlette.responses import JSONResponse

    body = error_body(refusal.type, refusal.message, field=refusal.field, **(refusal.extra or {}))
    response = JSONResponse(body, status_code=refusal.status, headers=refusal.headers)
    raw = response.raw_headers
    response.raw_headers = _with_security_headers(raw)
    await response(scope, receive, send)
