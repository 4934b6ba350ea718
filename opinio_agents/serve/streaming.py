"""Responses whose work stops when the client leaves: server-sent events and deferred JSON.

A route builds its work lazily (a generator of events, or a function of a cancel flag) and
returns one of these responses; the response runs the work on a worker thread while it
listens for the client's ``http.disconnect``. Cancellation is cooperative: once the client
is gone, no further event is pulled from the generator (so no further query is answered and
no further model token is asked for), and deferred work sees its :class:`threading.Event`
set and raises :class:`ClientGone` between queries. What was running when the client left
(one query, one model call) finishes; nothing after it starts.

An error before the first event keeps its HTTP status (the one mapping of
:func:`~opinio_agents.serve.errors.classify`); after it, it is an ``error`` event.

Example:
    >>> sse("done", {"ok": True})
    b'event: done\\ndata: {"ok": true}\\n\\n'
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Generator
from typing import Any

import anyio
from pydantic import BaseModel
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from opinio_agents.serve.errors import ApiError, classify

__all__ = ["sse", "json_response", "EventStream", "Deferred", "ClientGone", "check_cancel"]


class ClientGone(ApiError):
    """The client disconnected: the work stops (the answer would reach nobody)."""

    def __init__(self) -> None:
        super().__init__(499, "client_closed", "the client closed the connection; the work was stopped")


def check_cancel(cancel: threading.Event) -> None:
    """Raise :class:`ClientGone` when ``cancel`` is set (call it between queries and model calls)."""
    if cancel.is_set():
        raise ClientGone()


def sse(event: str, data: Any) -> bytes:
    """One server-sent event whose data is ``data`` as JSON (a pydantic model or plain data)."""
    payload = data.model_dump_json() if isinstance(data, BaseModel) else json.dumps(data, ensure_ascii=False)
    return f"event: {event}\ndata: {payload}\n\n".encode()


def json_response(model: BaseModel, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A pydantic model as a JSON response (serialised by pydantic, once)."""
    return Response(model.model_dump_json(), status_code=status, media_type="application/json", headers=headers)


def _error_response(exc: BaseException) -> Response:
    status, body = classify(exc)
    headers = exc.headers if isinstance(exc, ApiError) and exc.headers else None
    return JSONResponse(body, status_code=status, headers=headers)


async def _listen(receive: Receive, cancel: threading.Event) -> None:
    """Set ``cancel`` when the client disconnects (the request body was read before the route ran)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            cancel.set()
            return


_END = object()


def _next(events: Generator[bytes, None, None]) -> Any:
    return next(events, _END)


class EventStream(Response):
    """``text/event-stream`` from a blocking generator of events, pulled only while the client listens.

    Args:
        events: The events (each from :func:`sse`); built lazily, so its errors happen here.
        cancel: Set when the client disconnects (shared with work the generator delegates to).
    """

    media_type = "text/event-stream"

    def __init__(
        self, events: Generator[bytes, None, None], cancel: threading.Event | None = None, status_code: int = 200
    ) -> None:
        super().__init__(
            content=None, status_code=status_code, media_type=self.media_type,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]  # a stream: no length
        self.events = events
        self.cancel = cancel or threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_listen, receive, self.cancel)
                await self._stream(scope, receive, send)
                group.cancel_scope.cancel()
        finally:
            if self.cancel.is_set():  # the client left: run the generator's cleanup, start nothing new
                await anyio.to_thread.run_sync(self.events.close)

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            first = await anyio.to_thread.run_sync(_next, self.events)
        except Exception as exc:  # noqa: BLE001 - before the status line: answer with the mapped status
            await _error_response(exc)(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        chunk = first
        while chunk is not _END and not self.cancel.is_set():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            try:
                chunk = await anyio.to_thread.run_sync(_next, self.events)
            except Exception as exc:  # noqa: BLE001 - the status line is gone: report in-band, never a traceback
                _, body = classify(exc)
                chunk = sse("error", body)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                break
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class Deferred(Response):
    """A JSON answer computed by ``work(cancel)`` on a worker thread while the client is listened to.

    ``work`` must call :func:`check_cancel` between its steps (queries, model calls); once the
    client is gone it raises :class:`ClientGone` and nothing more is computed.

    Args:
        work: Computes the answer (a pydantic model, serialised as JSON).
    """

    def __init__(self, work: Callable[[threading.Event], BaseModel]) -> None:
        super().__init__(content=None, media_type="application/json")
        self.work = work
        self.cancel = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(_listen, receive, self.cancel)
            try:
                result = await anyio.to_thread.run_sync(self.work, self.cancel)
            except Exception as exc:  # noqa: BLE001 - mapped to its status, never a traceback
                response = _error_response(exc)
            else:
                response = Response(result.model_dump_json(), media_type="application/json")
            group.cancel_scope.cancel()
        if not self.cancel.is_set():
            await response(scope, receive, send)
