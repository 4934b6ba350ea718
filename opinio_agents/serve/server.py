"""How ``opinio serve`` runs the app under uvicorn: whose ``X-Forwarded-For`` to trust, JSON for malformed requests.

* **Client address**: uvicorn's default trusts ``X-Forwarded-For`` from 127.0.0.1, so any
  local client could claim any address per request and escape the per-client rate limit
  and the key-guess throttle. :func:`uvicorn_config` turns proxy headers off unless
  ``forwarded_allow_ips`` names the proxies in front of the server; the guard then keys
  on the socket's address.
* **Malformed requests** (an over-long request line, a broken header) are refused by
  uvicorn before the app runs; :func:`json_protocol` answers them with the service's JSON
  error body instead of uvicorn's plain text.

Example:
    >>> config = uvicorn_config(app, host="127.0.0.1", port=8000)      # doctest: +SKIP
    >>> uvicorn.Server(config).run()                                    # doctest: +SKIP
"""

from __future__ import annotations

import json
from typing import Any

from opinio_agents.serve.errors import error_body
from opinio_agents.serve.guard import SECURITY_HEADERS

__all__ = ["uvicorn_config", "json_protocol", "BAD_REQUEST_BODY"]

#: The body of uvicorn's own ``400`` (a request it could not parse).
BAD_REQUEST_BODY = json.dumps(
    error_body("bad_request", "malformed HTTP request (request line or headers too long or invalid)")
).encode("ascii")


def json_protocol() -> type[Any]:
    """uvicorn's HTTP protocol class, answering its own ``400`` as the service's JSON error."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class JsonErrorProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
        """The same protocol; a request it cannot parse gets a JSON body (and the security headers)."""

        def send_400_response(self, msg: str) -> None:
            head = [b"HTTP/1.1 400 Bad Request", b"content-type: application/json",
                    b"content-length: " + str(len(BAD_REQUEST_BODY)).encode("ascii"), b"connection: close"]
            head += [name + b": " + value for name, value in SECURITY_HEADERS]
            self.transport.write(b"\r\n".join(head) + b"\r\n\r\n" + BAD_REQUEST_BODY)
            self.transport.close()

    return JsonErrorProtocol


def uvicorn_config(
    app: Any,
    *,
    host: str,
    port: int,
    forwarded_allow_ips: list[str] | None = None,
    log_level: str = "info",
    **options: Any,
) -> Any:
    """The ``uvicorn.Config`` of ``opinio serve``.

    Args:
        app: The ASGI app (:func:`~opinio_agents.serve.app.create_app`).
        host: Address to bind.
        port: TCP port.
        forwarded_allow_ips: Addresses of trusted reverse proxies whose ``X-Forwarded-For`` /
            ``X-Forwarded-Proto`` give the client's address and scheme; None or empty: the
            socket's address is the client (proxy headers ignored).
        log_level: uvicorn's log level.
        **options: Passed to ``uvicorn.Config``.
    """
    import uvicorn

    trusted = [ip.strip() for ip in forwarded_allow_ips or [] if ip.strip()]
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=",".join(trusted) if trusted else None,
        server_header=False,
        http=json_protocol(),
        **options,
    )
