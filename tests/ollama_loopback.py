"""A scripted server on 127.0.0.1 speaking the part of Ollama's HTTP API that langchain-ollama uses.

* ``POST /api/chat`` -- each request consumes the next scripted reply (the last one
  repeats); ``"stream": true`` (ChatOllama's default) gets NDJSON chunks ending with
  a ``done`` record carrying ``prompt_eval_count`` / ``eval_count``, ``"stream": false``
  one JSON object. An error reply answers ``{"error": ...}`` with its status code.
* ``GET /api/tags`` -- the one served model (what ``ChatOllama(validate_model_on_init=True)``
  asks before the first call).

Every request is recorded (path and JSON body). The server binds port 0 on the
loopback interface only and stops when the ``with`` block ends.

Example:
    >>> with OllamaServer([chat("Hello.")]) as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["OllamaServer", "OllamaReply", "chat", "error"]

_CREATED = "2026-01-01T00:00:00Z"


@dataclass
class OllamaReply:
    """One scripted /api/chat reply."""

    content: str = ""
    code: int = 200
    prompt_eval_count: int = 40
    eval_count: int = 12


def chat(content: str, *, prompt_eval_count: int = 40, eval_count: int = 12) -> OllamaReply:
    """A successful chat answer whose message content is ``content``."""
    return OllamaReply(content, 200, prompt_eval_count, eval_count)


def error(code: int, message: str = "scripted error") -> OllamaReply:
    """An error status with Ollama's ``{"error": message}`` body."""
    return OllamaReply(message, code)


class OllamaServer:
    """Context manager running the scripted Ollama server in a daemon thread."""

    def __init__(self, script: list[OllamaReply], *, model: str = "tiny") -> None:
        if not script:
            raise ValueError("script must contain at least one reply")
        self.script = list(script)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # silence
                return

            def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _record(self) -> dict[str, Any]:
                length = int(self.headers.get("content-length") or 0)
                data = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(data or b"{}")
                except ValueError:
                    body = {"_unparsable": data.decode("utf-8", "replace")}
                with outer._lock:
                    outer.requests.append({"method": self.command, "path": self.path, "body": body})
                return body

            def do_GET(self) -> None:  # noqa: N802
                self._record()
                if self.path.rstrip("/") == "/api/tags":
                    name = f"{outer.model}:latest"
                    self._send(200, json.dumps({"models": [{"name": name, "model": name, "size": 1}]}).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:  # noqa: N802
                body = self._record()
                path = self.path.rstrip("/")
                if path != "/api/chat":
                    self._send(404, b'{"error": "not found"}')
                    return
                with outer._lock:
                    reply = outer.script.pop(0) if len(outer.script) > 1 else outer.script[0]
                if reply.code != 200:
                    self._send(reply.code, json.dumps({"error": reply.content}).encode())
                    return
                model = body.get("model", outer.model)
                final = {
                    "model": model,
                    "created_at": _CREATED,
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "total_duration": 1000,
                    "prompt_eval_count": reply.prompt_eval_count,
                    "eval_count": reply.eval_count,
                }
                if body.get("stream", True) is False:
                    final["message"]["content"] = reply.content  # type: ignore[index]
                    self._send(200, json.dumps(final).encode())
                    return
                half = len(reply.content) // 2
                lines = [
                    {"model": model, "created_at": _CREATED, "message": {"role": "assistant", "content": part},
                     "done": False}
                    for part in (reply.content[:half], reply.content[half:])
                    if part
                ]
                lines.append(final)
                self._send(200, "".join(json.dumps(x) + "\n" for x in lines).encode(), "application/x-ndjson")

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (Ollama's root URL, no ``/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def chat_requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the /api/chat requests so far."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].rstrip("/") == "/api/chat"]

    def __enter__(self) -> OllamaServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
