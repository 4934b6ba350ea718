"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for transport tests (no network).

Each POST to ``/v1/chat/completions`` consumes the next scripted reply; the last
one repeats when the script runs out. Replies:

* ``ok(content, prompt_tokens=..., completion_tokens=...)`` - a chat completion;
* ``status(code, body=..., headers=...)`` - an error status (429, 500, 400...);
* ``delay(seconds, then=reply)`` - wait (cut short when the server stops), then reply;
* ``hang()`` - never answer while the server runs (a client timeout must fire, however slow
  the machine: no race between a timeout and a delay);
* ``raw(body_bytes)`` - a 200 with an arbitrary (malformed) body.

A request with ``"stream": true`` gets an ``ok(...)`` reply as OpenAI streaming events
(one ``chat.completion.chunk`` per word, then ``[DONE]``), so streaming clients work too.

Example:
    >>> with LoopbackServer([ok('{"a": 1}')]) as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "Reply", "ok", "status", "delay", "hang", "raw", "tool_call"]


@dataclass
class Reply:
    """One scripted reply."""

    code: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    wait: float = 0.0  # seconds; negative: until the server stops


def ok(
    content: str, *, prompt_tokens: int = 50, completion_tokens: int = 20, model: str = "loopback-model"
) -> Reply:
    """A successful chat completion whose message content is ``content``."""
    body = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


def tool_call(name: str, arguments: dict[str, Any]) -> Reply:
    """A chat completion that calls tool ``name`` with ``arguments``."""
    body = json.loads(ok("").body)
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }
    body["choices"][0]["finish_reason"] = "tool_calls"
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


def status(code: int, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> Reply:
    """An error reply with an OpenAI-style error body."""
    payload = body or {"error": {"message": f"scripted {code}", "type": "test", "code": str(code)}}
    return Reply(code, json.dumps(payload).encode(), {"content-type": "application/json", **(headers or {})})


def delay(seconds: float, then: Reply | None = None) -> Reply:
    """Wait ``seconds`` before answering (with ``then`` or a 200 ``{}``)."""
    reply = then or ok("{}")
    return Reply(reply.code, reply.body, reply.headers, wait=seconds)


def hang() -> Reply:
    """Never answer while the server runs (the request is released when the server stops)."""
    return Reply(200, b"{}", {"content-type": "application/json"}, wait=-1.0)


def raw(body: bytes, code: int = 200) -> Reply:
    """A reply with an arbitrary body (e.g. malformed JSON)."""
    return Reply(code, body, {"content-type": "application/json"})


class LoopbackServer:
    """Context manager running the scripted server in a daemon thread (port 0)."""

    def __init__(self, script: list[Reply]) -> None:
        if not script:
            raise ValueError("script must contain at least one reply")
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # silence
                return

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                data = self.rfile.read(length)
                try:
                    parsed = json.loads(data or b"{}")
                except ValueError:
                    parsed = {"_unparsable": data.decode("utf-8", "replace")}
                with outer._lock:
                    outer.requests.append({"path": self.path, "body": parsed})
                    reply = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                if reply.wait:
                    outer._stop.wait(None if reply.wait < 0 else reply.wait)
                if isinstance(parsed, dict) and parsed.get("stream") and reply.code == 200:
                    chunks = _stream_chunks(reply.body)
                    if chunks is not None:
                        self._send_stream(chunks)
                        return
                try:
                    self.send_response(reply.code)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def _send_stream(self, chunks: list[bytes]) -> None:
                try:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for chunk in chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def request_count(self) -> int:
        """Chat-completion requests received so far."""
        with self._lock:
            return len(self.requests)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()


def _stream_chunks(body: bytes) -> list[bytes] | None:
    """A scripted completion as OpenAI streaming events (one per word), or None when it is not one."""
    try:
        message = json.loads(body)["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    content = message.get("content") or ""
    words = content.split(" ")
    base = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": "loopback-model"}
    events = []
    for i, word in enumerate(words):
        piece = word if i == len(words) - 1 else word + " "
        delta = {"role": "assistant", "content": piece}
        events.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
