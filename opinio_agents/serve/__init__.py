"""``opinio serve``: the HTTP service (FastAPI, extra ``serve``) and its web page.

Build the app with :func:`create_app` over one :class:`~opinio_agents.api.OpinioRAG`
(shared by every request thread), or run ``opinio serve --store DIR [--dataset PATH]``.
Nothing here imports FastAPI until :func:`create_app` is called.

Routes (JSON bodies are the pydantic models' ``model_dump(mode="json")``; OpenAPI at ``/docs``,
schema at ``/openapi.json``):

* ``GET /healthz``: ``{"status": "ok", "version", "entities", "llm", "hiro_fitted"}``.
* ``GET /entities``: ``[{"entity_id", "name", "reviews", "sentences", "queries"}]``, a page at a
  time (``limit``, default 100; the next page's URL in the ``Link`` header, ``rel="next"``, and
  its ``cursor`` in ``X-Next-Cursor``).
* ``GET /entities/{id}``: the same plus ``expert_review``, ``updated_at``, ``generation``,
  ``hiro_fitted``.
* ``GET /entities/{id}/highlights``: a ``HighlightSet``; ``?query=wi-fi&query=pool`` (repeat),
  ``retriever=bm25|dense|hybrid``, ``top_k=``; ``expert=true`` answers the expert-review
  aspects; no query at all: HIRO's query-free highlights (``meta.mode`` says which ran).
* ``GET /entities/{id}/highlights/stream``: the same as server-sent events, ``highlight`` per
  query as it completes (``{"query", "highlights", "failure"}``), then ``done`` (the whole
  ``HighlightSet``: alerts, failures, meta).
* ``GET /entities/{id}/aspects``: ``{"source": "hiro"|"expert-queries", "aspects": [{"aspect",
  "mentions", "positive", "negative", "neutral", "total_reviews", "score",
  "example_sentence_ids"}]}``, most mentioned first; ``top_k=``.
* ``GET /entities/{id}/search``: ``q=`` (required), ``k=``, ``min_rating=``, ``max_rating=``,
  ``since=``, ``until=`` (ISO dates), ``retriever=``; a ``SearchResult`` (``hits`` with
  ``sentence_id``, ``review_id``, ``text``, ``score``, ``rating`` ...; ``support``).
* ``GET /entities/{id}/reviews/{review_id}``: the full review (``text``, rating, date ...) and
  ``sentences``: ``[{"sentence_id", "index", "start", "end", "text", "sentiment"}]``, where
  ``text[start:end]`` is the sentence (mark the cited one).
* ``POST /entities/{id}/chat``: body ``{"messages": [{"role": "user"|"assistant", "content"}],
  "k": 6, "extractive": false}``; server-sent events ``token`` (``{"text"}``), then ``done``
  (a ``ChatAnswer``: ``answer``, ``citations`` = ``[{"marker": "S1", "sentence_id", "text",
  "rating"}]``, ``evidence``, ``support``). ``503`` when no LLM is configured, unless
  ``extractive`` is true.
* ``POST /index``: multipart ``file`` (``.json``, ``.jsonl``, ``.ndjson``, ``.csv``) and
  ``skip_invalid``; ``202`` with the job and ``Location: jobs/{job_id}``; ``503`` when the job
  queue is full. At most 1,000 entities and 200,000 reviews per upload (the job fails naming the
  limit). Jobs survive a crash: ``opinio serve`` keeps each job's record and upload under
  ``STORE/serve-jobs`` until it ends and resumes unfinished ones on restart.
* ``GET /jobs/{job_id}``: ``{"state": "queued"|"validating"|"indexing"|"done"|"failed",
  "progress", "entities_done", "entities_total", "stats", "error"}``.
* ``GET /``: the web page (``serve/static/index.html``; the folder is served at ``/static/``).

A stream's last event is ``done``; an error after a stream started arrives as an ``error``
event whose data is the error body (errors before it keep their HTTP status).

Errors: every error is JSON ``{"error": {"type", "message", "field", ...}}`` with a status
that fits: ``400`` bad input (``field`` names it; a ``Host`` the server does not answer to),
``401`` missing or wrong API key, ``403`` a state-changing request from a foreign ``Origin``, ``404``
unknown entity, review, job or route, ``409`` store busy or not ready (no HIRO hierarchy
yet), ``413`` body too large, ``422`` request validation (``errors`` lists each field),
``429`` rate limited (``Retry-After``), ``503`` LLM unavailable or job queue full; never a traceback (an
unexpected error is logged and answered with a generic ``500``). See
:mod:`opinio_agents.serve.errors`.

Security defaults (:mod:`opinio_agents.serve.guard`): bound to ``127.0.0.1`` and answering
only to the loopback host names (``--allowed-host`` adds the names of a real deployment), so a
DNS-rebinding page gets nothing; state-changing requests from a foreign ``Origin`` refused; CORS
off unless origins are given; a per-client rate limit keyed on the socket's address (proxy
headers trusted only from ``--forwarded-allow-ips``) and body-size limits; highlight and chat
work stops when the client leaves; an optional API key (``--api-key`` or ``OPINIO_API_KEY``)
required on **every** route, the page and ``/docs`` included. A client sends it as the
``X-API-Key`` header or ``Authorization: Bearer KEY``. A browser opens ``/?api_key=KEY``
once: the server then sets a session cookie derived from the key (not the key;
``HttpOnly; SameSite=Strict; Max-Age``, ``Secure`` over TLS), so the page's own ``fetch``
calls (same origin) are authenticated without handling the key; ``api_key`` never reaches the
access log; a page may also read ``api_key`` from its URL and send the header itself. The page must use relative URLs
(``entities``, ``static/app.js``), so it also works when the app is mounted under a prefix.

Reuse in your own FastAPI app (one call)::

    from fastapi import FastAPI
    from opinio_agents import OpinioRAG
    from opinio_agents.serve import create_app

    app = FastAPI()
    app.mount("/reviews", create_app(OpinioRAG(".opinio"), rate_limit=None))   # /reviews/entities ...

Example:
    >>> from opinio_agents.serve import RateLimit
    >>> RateLimit(per_second=10).burst
    20
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opinio_agents.serve.app import create_app
    from opinio_agents.serve.guard import RateLimit

__all__ = ["create_app", "RateLimit"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from opinio_agents.serve.app import create_app

        return create_app
    if name == "RateLimit":
        from opinio_agents.serve.guard import RateLimit

        return RateLimit
    raise AttributeError(f"module 'opinio_agents.serve' has no attribute {name!r}")
