"""One place that turns errors into HTTP statuses and JSON bodies.

Every error response of the service has the body ``{"error": {"type": ..., "message": ...,
"field": ..., ...}}`` (plus ``source``/``line``/``entity_id``/``review_id`` for bad data), and
no response ever carries a traceback. :func:`classify` maps the project's
:mod:`opinio_agents.errors` hierarchy to a status:

==================================  ======  ======================
error                               status  ``type``
==================================  ======  ======================
:class:`ApiError` (this module)     its own its own
``DataError``                       400     ``data_error``
``ConfigError``                     400     ``bad_request``
``StoreLockedError``                409     ``store_busy``
``StoreError``                      409     ``store_error``
``LLMOutputError``                  502     ``llm_output_error``
``LLMDeadlineError``                503     ``llm_timeout``
``LLMError``                        503     ``llm_unavailable``
``MissingDependencyError``          503     ``missing_dependency``
any other ``OpinioError``           400     ``bad_request``
anything else                       500     ``internal_error`` (logged, message generic)
==================================  ======  ======================

Example:
    >>> from opinio_agents.errors import ConfigError
    >>> status, body = classify(ConfigError("k=0 must be >= 1"))
    >>> status, body["error"]["type"]
    (400, 'bad_request')
    >>> classify(ApiError(404, "not_found", "entity '9' is not indexed", field="entity_id"))[0]
    404
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import (
    ConfigError,
    DataError,
    LLMDeadlineError,
    LLMError,
    LLMOutputError,
    MissingDependencyError,
    OpinioError,
    StoreError,
)

__all__ = ["ApiError", "classify", "error_body", "install_handlers", "GENERIC_500"]

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger("opinio_agents.serve")

GENERIC_500 = "internal server error; the server log has the details"


class ApiError(OpinioError):
    """An error the service raises itself, with the status and ``type`` to answer with.

    Args:
        status: HTTP status (400, 401, 404, 413, 429, 503 ...).
        type: Short machine-readable kind (``not_found``, ``too_large`` ...).
        message: What is wrong and how to fix it.
        field: The request field at fault, when there is one.
        headers: Extra response headers (``Retry-After``, ``WWW-Authenticate``).
        extra: More keys for the error body.
    """

    def __init__(
        self,
        status: int,
        type: str,  # noqa: A002 - the JSON key it becomes
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.field = field
        self.headers = dict(headers or {})
        self.extra = extra


def error_body(type: str, message: str, *, field: str | None = None, **extra: Any) -> dict[str, Any]:  # noqa: A002
    """The JSON body of an error response.

    Example:
        >>> error_body("not_found", "no such job", field="job_id")
        {'error': {'type': 'not_found', 'message': 'no such job', 'field': 'job_id'}}
    """
    inner: dict[str, Any] = {"type": type, "message": message, "field": field}
    inner.update({k: v for k, v in extra.items() if v is not None})
    return {"error": inner}


def _data_fields(exc: DataError) -> dict[str, Any]:
    return {
        "source": exc.source,
        "line": exc.line,
        "entity_id": None if exc.entity_id is None else str(exc.entity_id),
        "review_id": None if exc.review_id is None else str(exc.review_id),
    }


def classify(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """``(status, body)`` for an exception (the one mapping of the service).

    Unexpected exceptions are logged with their traceback and answered with a generic 500
    whose body names nothing internal.
    """
    from opinio_agents.stores.lock import StoreLockedError

    if isinstance(exc, ApiError):
        return exc.status, error_body(exc.type, exc.message, field=exc.field, **exc.extra)
    if isinstance(exc, DataError):
        return 400, error_body("data_error", str(exc), field=exc.field, **_data_fields(exc))
    if isinstance(exc, ConfigError):
        return 400, error_body("bad_request", str(exc))
    if isinstance(exc, StoreLockedError):
        return 409, error_body("store_busy", str(exc))
    if isinstance(exc, StoreError):
        return 409, error_body("store_error", str(exc))
    if isinstance(exc, LLMOutputError):
        return 502, error_body("llm_output_error", str(exc))
    if isinstance(exc, LLMDeadlineError):
        return 503, error_body("llm_timeout", str(exc))
    if isinstance(exc, LLMError):
        return 503, error_body("llm_unavailable", str(exc))
    if isinstance(exc, MissingDependencyError):
        return 503, error_body("missing_dependency", str(exc))
    if isinstance(exc, OpinioError):
        return 400, error_body("bad_request", str(exc))
    log.error("unhandled error while serving a request", exc_info=(type(exc), exc, exc.__traceback__))
    return 500, error_body("internal_error", GENERIC_500)


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("query", "path", "body", "header", "cookie", "form"):
        parts = parts[1:]
    return ".".join(parts)


_HTTP_KINDS = {404: "not_found", 405: "method_not_allowed", 413: "too_large", 401: "unauthorized"}


def install_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` through :func:`classify` (and FastAPI's own errors in the same shape)."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    async def mapped(request: Request, exc: Exception) -> JSONResponse:
        status, body = classify(exc)  # unexpected errors: traceback logged, the body names nothing internal
        headers = exc.headers if isinstance(exc, ApiError) and exc.headers else None
        return JSONResponse(body, status_code=status, headers=headers)

    async def validation(request: Request, exc: Exception) -> JSONResponse:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        problems = [{"field": _field_of(e.get("loc", ())), "message": str(e.get("msg", ""))} for e in errors]
        field = problems[0]["field"] if problems else ""
        what = problems[0]["message"] if problems else "invalid request"
        message = f"field {field!r}: {what}" if field else what
        return JSONResponse(error_body("validation_error", message, field=field or None, errors=problems),
                            status_code=422)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        kind = _HTTP_KINDS.get(exc.status_code, "http_error")
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":
            message = f"no route {request.url.path!r}; see /docs for the routes"
        extra: dict[str, Any] = {"field": "body"} if exc.status_code == 413 else {}
        return JSONResponse(error_body(kind, message, **extra), status_code=exc.status_code, headers=exc.headers)

    app.add_exception_handler(OpinioError, mapped)
    app.add_exception_handler(RequestValidationError, validation)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, mapped)
