"""The HTTP service (`opinio_agents.serve`): every route, every error status, SSE, jobs, key, limits.

Fast tier: FastAPI's TestClient over a small store built with the hashing encoder (no model).
The slow tier starts `opinio serve` in a real subprocess on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from conftest import tiny_entity_dict  # noqa: E402
from fake_encoder import HashEncoder  # noqa: E402
from fastapi.testclient import TestClient as _TestClient  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

from opinio_agents.api import OpinioRAG  # noqa: E402
from opinio_agents.datasets import load_sample  # noqa: E402
from opinio_agents.errors import MissingDependencyError  # noqa: E402
from opinio_agents.models import Entity  # noqa: E402
from opinio_agents.serve import RateLimit, create_app  # noqa: E402
from opinio_agents.serve.guard import TokenBucket  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


class TestClient(_TestClient):
    """FastAPI's test client addressed as a loopback server (the default allowed host), not "testserver"."""

    __test__ = False

    def __init__(self, app: Any, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", "http://127.0.0.1")
        super().__init__(app, **kwargs)
HIRO = {"n_codes": 6, "depth": 2}


def _entities(n_reviews: int = 15) -> list[Entity]:
    sample = [e.model_copy(update={"user_reviews": e.user_reviews[:n_reviews]}) for e in load_sample()]
    return [Entity.model_validate(tiny_entity_dict()), *sample]


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "store"
    rag = OpinioRAG(path, encoder=HashEncoder(), hiro_options=HIRO)
    rag.index(_entities())
    rag.close()
    return path


@pytest.fixture(scope="module")
def rag(store_dir: Path) -> Iterator[OpinioRAG]:
    rag = OpinioRAG(store_dir, encoder=HashEncoder(), hiro_options=HIRO)
    yield rag
    rag.close()


@pytest.fixture(scope="module")
def client(rag: OpinioRAG) -> Iterator[TestClient]:
    model = FakeListChatModel(responses=["Reviewers say the wi-fi is slow and costs extra [S1]."])
    # chat_verify=False: the fast tier loads no model (tests/test_chat_guard.py covers the guard's checks)
    with TestClient(create_app(rag, rate_limit=None, llm=model, chat_verify=False), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def bare(rag: OpinioRAG) -> Iterator[TestClient]:
    """No LLM, an API key, a small body limit."""
    app = create_app(rag, rate_limit=None, api_key="k3y", max_body_bytes=300)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def events(text: str) -> list[tuple[str, Any]]:
    """Parse a server-sent-events body into ``(event, data)`` pairs."""
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        out.append((fields.get("event", "message"), json.loads(fields["data"])))
    return out


def wait_job(client: TestClient, job_id: str, **kw: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}", **kw).json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish: {job}")


# ----------------------------------------------------------------------------- routes
def test_health_entities_and_entity(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
    health = r.json()
    assert health["status"] == "ok" and health["entities"] >= 3 and health["hiro_fitted"] is True
    rows = {row["entity_id"]: row for row in client.get("/entities").json()}
    assert {"7", "101", "202"} <= set(rows)
    assert rows["7"]["name"] == "Harbor Inn" and rows["7"]["reviews"] == 5 and rows["7"]["sentences"] > 5
    assert rows["7"]["queries"] == ["pool", "wi-fi"]
    detail = client.get("/entities/7").json()
    assert detail["expert_review"]["cons"] == {"wi-fi": "Wi-fi is slow and costs extra."}
    assert detail["generation"] >= 1 and detail["hiro_fitted"] is True


def test_highlights_with_queries_expert_and_query_free(client: TestClient, rag: OpinioRAG) -> None:
    r = client.get("/entities/7/highlights", params={"query": ["wi-fi", "pool"], "retriever": "bm25", "top_k": 5})
    assert r.status_code == 200
    body = r.json()
    assert body["meta"]["mode"] == "queries" and body["meta"]["retriever"] == "bm25" and body["meta"]["top_k"] == 5
    direct = rag.highlights("7", ["wi-fi", "pool"], retriever="bm25", top_k=5)
    assert [h["text"] for h in body["cons"]] == [h.text for h in direct.cons]
    assert any(h["query"] == "wi-fi" for h in body["cons"])
    assert all(e["sentence_id"].startswith("7:") for h in body["pros"] + body["cons"] for e in h["evidence"])
    assert client.get("/entities/7/highlights", params={"expert": "true"}).json()["meta"]["mode"] == "expert-queries"
    free = client.get("/entities/101/highlights").json()
    assert free["meta"]["mode"] == "query-free" and free["pros"] + free["cons"]


def test_highlights_stream_one_event_per_query_then_done(client: TestClient, rag: OpinioRAG) -> None:
    r = client.get("/entities/7/highlights/stream", params={"query": ["wi-fi", "pool", "parking"]})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    got = events(r.text)
    assert [e for e, _ in got] == ["highlight"] * 3 + ["done"]
    assert sorted(d["query"] for _, d in got[:3]) == ["parking", "pool", "wi-fi"]
    done = got[-1][1]
    direct = rag.highlights("7", ["wi-fi", "pool", "parking"])
    assert [h["text"] for h in done["cons"]] == [h.text for h in direct.cons]
    assert done["meta"]["mode"] == "queries" and "alerts" in done
    streamed = {h["text"] for _, d in got[:3] for h in d["highlights"]}
    assert streamed == {h["text"] for h in done["pros"] + done["cons"]}


def test_aspects_sorted_by_mentions(client: TestClient) -> None:
    body = client.get("/entities/101/aspects", params={"top_k": 5}).json()
    assert body["source"] == "hiro" and 0 < len(body["aspects"]) <= 5
    mentions = [a["mentions"] for a in body["aspects"]]
    assert mentions == sorted(mentions, reverse=True)
    first = body["aspects"][0]
    assert first["positive"] + first["negative"] + first["neutral"] == first["mentions"] <= first["total_reviews"]


def test_search_with_filters_and_review_with_offsets(client: TestClient) -> None:
    body = client.get("/entities/7/search", params={"q": "wifi", "k": 3, "min_rating": 3}).json()
    assert body["filters"] == "rating >= 3" and body["hits"]
    assert all(h["rating"] >= 3 for h in body["hits"]) and body["support"]["reviews"] >= 3
    dated = client.get("/entities/7/search", params={"q": "pool", "since": "2023-01-01", "until": "2023-12-31"})
    assert {h["review_id"] for h in dated.json()["hits"]} <= {"3", "4"}
    hit = body["hits"][0]
    review = client.get(f"/entities/7/reviews/{hit['review_id']}").json()
    assert review["review_id"] == hit["review_id"] and review["rating"] == hit["rating"]
    spans = {s["sentence_id"]: s for s in review["sentences"]}
    span = spans[hit["sentence_id"]]
    assert review["text"][span["start"] : span["end"]] == span["text"] == hit["text"]


def test_chat_streams_tokens_then_a_cited_answer(client: TestClient) -> None:
    body = {"messages": [{"role": "user", "content": "How is the pool?"}, {"role": "assistant", "content": "Great."},
                         {"role": "user", "content": "And the wifi?"}]}
    r = client.post("/entities/7/chat", json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    got = events(r.text)
    # the chat guard lets text through a checked sentence at a time: one token event per sentence here
    assert got[-1][0] == "done" and {e for e, _ in got[:-1]} == {"token"} and len(got) >= 2
    answer = got[-1][1]
    assert "".join(d["text"] for _, d in got[:-1]).strip() == answer["answer"]
    assert answer["mode"] == "llm" and answer["answer"].endswith("[S1].")
    assert [c["marker"] for c in answer["citations"]] == ["S1"]
    assert answer["citations"][0]["sentence_id"] == answer["evidence"][0]["sentence_id"]
    assert answer["citations"][0]["sentence_id"].startswith("7:")


def test_chat_extractive_without_llm(bare: TestClient) -> None:
    body = {"messages": [{"role": "user", "content": "How is the wifi?"}], "extractive": True}
    got = events(bare.post("/entities/7/chat", json=body, headers={"X-API-Key": "k3y"}).text)
    answer = got[-1][1]
    assert answer["mode"] == "extractive" and answer["answer"].startswith("[extractive answer")


def test_openapi_and_docs(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for route in ("/healthz", "/entities", "/entities/{entity_id}", "/entities/{entity_id}/highlights",
                  "/entities/{entity_id}/highlights/stream", "/entities/{entity_id}/aspects",
                  "/entities/{entity_id}/search", "/entities/{entity_id}/reviews/{review_id}",
                  "/entities/{entity_id}/chat", "/index", "/jobs/{job_id}"):
        assert route in paths, route
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert "cdn" not in docs.text.lower() and "https://" not in docs.text  # Swagger UI works offline
    assert "docs-assets/swagger-ui-bundle.js" in docs.text and "/openapi.json" in docs.text
    script = client.get("/docs-assets/swagger-ui-bundle.js")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.text


def test_page_served_or_not_installed_note(rag: OpinioRAG, tmp_path: Path) -> None:
    empty = TestClient(create_app(rag, static_dir=tmp_path / "missing"))
    r = empty.get("/")
    assert r.status_code == 200 and "not installed" in r.text
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui" / "index.html").write_text("<!doctype html><title>page</title><script src='static/app.js'>")
    (tmp_path / "ui" / "app.js").write_text("console.log(1)")
    page = TestClient(create_app(rag, static_dir=tmp_path / "ui"))
    assert "<title>page</title>" in page.get("/").text
    assert page.get("/static/app.js").text == "console.log(1)"


# ----------------------------------------------------------------------------- index jobs
def test_index_job_indexes_a_new_entity(client: TestClient, tmp_path: Path) -> None:
    entity = tiny_entity_dict() | {"entity_id": "up-1", "entity_name": "Uploaded Inn"}
    data = "\n".join([json.dumps(entity)]) + "\n"
    r = client.post("/index", files={"file": ("more.jsonl", data.encode(), "application/x-ndjson")})
    assert r.status_code == 202 and r.headers["location"] == f"jobs/{r.json()['job_id']}"
    job = wait_job(client, r.json()["job_id"])
    assert job["state"] == "done", job
    assert job["entities_total"] == 1 and job["entities_done"] == 1 and job["progress"] == 1.0
    assert job["stats"][0]["entity_id"] == "up-1" and job["stats"][0]["reviews_added"] == 5
    assert client.get("/entities/up-1").json()["name"] == "Uploaded Inn"
    assert client.get("/entities/up-1/search", params={"q": "pool"}).json()["hits"]


def test_index_job_with_a_bad_record_fails_and_changes_nothing(client: TestClient, rag: OpinioRAG) -> None:
    good = tiny_entity_dict() | {"entity_id": "bad-a"}
    bad = tiny_entity_dict() | {"entity_id": "bad-b"}
    bad["user_reviews"] = [*bad["user_reviews"][:2], {"review_id": 9, "text": ""}]
    before = {key: rag.store.generation(key) for key in rag.entities()}
    data = (json.dumps(good) + "\n" + json.dumps(bad) + "\n").encode()
    job = wait_job(client, client.post("/index", files={"file": ("reviews.jsonl", data)}).json()["job_id"])
    assert job["state"] == "failed"
    error = job["error"]
    assert error["type"] == "data_error" and error["field"] == "text" and error["line"] == 2
    assert error["source"] == "reviews.jsonl" and error["entity_id"] == "bad-b" and error["review_id"] == "9"
    assert "opinio-upload-" not in json.dumps(job)  # the private copy's path never leaks
    assert {key: rag.store.generation(key) for key in rag.entities()} == before
    assert not rag.store.has_entity("bad-a")


def test_index_skip_invalid_reports_skipped(client: TestClient) -> None:
    rows = "entity_id,entity_name,review_id,text,rating\ncsv-1,Csv Hotel,1,Lovely pool.,5\ncsv-1,Csv Hotel,2,,3\n"
    r = client.post("/index", files={"file": ("rows.csv", rows.encode())}, data={"skip_invalid": "true"})
    job = wait_job(client, r.json()["job_id"])
    assert job["state"] == "done" and job["skip_invalid"] is True and len(job["skipped"]) == 1
    assert job["skipped"][0]["where"].startswith("rows.csv")
    assert client.get("/entities/csv-1").json()["reviews"] == 1


# ----------------------------------------------------------------------------- errors
#: (method, path, request kwargs, status, error type, field): the error-status matrix.
MATRIX: list[tuple[str, str, dict[str, Any], int, str, str | None]] = [
    ("GET", "/entities/nope", {}, 404, "not_found", "entity_id"),
    ("GET", "/entities/nope/highlights", {}, 404, "not_found", "entity_id"),
    ("GET", "/entities/nope/highlights/stream", {}, 404, "not_found", "entity_id"),
    ("GET", "/entities/nope/aspects", {}, 404, "not_found", "entity_id"),
    ("GET", "/entities/nope/search?q=x", {}, 404, "not_found", "entity_id"),
    ("GET", "/entities/7/reviews/nope", {}, 404, "not_found", "review_id"),
    ("POST", "/entities/nope/chat", {"json": {"messages": [{"role": "user", "content": "hi"}]}}, 404, "not_found",
     "entity_id"),
    ("GET", "/jobs/nope", {}, 404, "not_found", "job_id"),
    ("GET", "/no/such/route", {}, 404, "not_found", None),
    ("GET", "/entities/7/highlights?query=%20", {}, 400, "bad_request", "query"),
    ("GET", "/entities/7/highlights?retriever=bm25", {}, 400, "bad_request", "retriever"),
    ("GET", "/entities/7/highlights?expert=true&query=pool", {}, 400, "bad_request", "expert"),
    ("GET", "/entities/7/highlights/stream?query=%20", {}, 400, "bad_request", "query"),
    ("GET", "/entities/7/search?q=%20", {}, 400, "bad_request", "q"),
    ("GET", "/entities/7/search?q=x&min_rating=5&max_rating=1", {}, 400, "bad_request", "min_rating"),
    ("GET", "/entities/7/search?q=x&since=2024-01-01&until=2020-01-01", {}, 400, "bad_request", "since"),
    ("POST", "/entities/7/chat", {"json": {"messages": [{"role": "user", "content": " "}]}}, 400, "bad_request",
     "messages"),
    ("POST", "/entities/7/chat", {"json": {"messages": [{"role": "assistant", "content": "x"}]}}, 400,
     "bad_request", "messages"),
    ("POST", "/index", {"files": {"file": ("data.txt", b"x")}}, 400, "bad_request", "file"),
    ("GET", "/entities/7/highlights?top_k=0", {}, 422, "validation_error", "top_k"),
    ("GET", "/entities/7/highlights?retriever=magic&query=x", {}, 422, "validation_error", "retriever"),
    ("GET", "/entities/7/highlights/stream?top_k=x", {}, 422, "validation_error", "top_k"),
    ("GET", "/entities/7/aspects?top_k=99", {}, 422, "validation_error", "top_k"),
    ("GET", "/entities/7/search", {}, 422, "validation_error", "q"),
    ("GET", "/entities/7/search?q=x&k=51", {}, 422, "validation_error", "k"),
    ("GET", "/entities/7/search?q=x&since=yesterday", {}, 422, "validation_error", "since"),
    ("POST", "/entities/7/chat", {"json": {"messages": []}}, 422, "validation_error", "messages"),
    ("POST", "/entities/7/chat", {"json": {"messages": [{"role": "system", "content": "x"}]}}, 422,
     "validation_error", "messages.0.role"),
    ("POST", "/entities/7/chat", {"content": b"{not json", "headers": {"content-type": "application/json"}}, 422,
     "validation_error", None),
    ("POST", "/index", {}, 422, "validation_error", "file"),
    ("DELETE", "/entities", {}, 405, "method_not_allowed", None),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "kind", "field"), MATRIX,
                         ids=[f"{m} {p} {s}" for m, p, _, s, _, _ in MATRIX])
def test_error_matrix(
    client: TestClient, method: str, path: str, kwargs: dict[str, Any], status: int, kind: str, field: str | None
) -> None:
    r = client.request(method, path, **kwargs)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["type"] == kind and error["message"]
    if field is not None:
        assert error["field"] == field
    assert "Traceback" not in r.text


def test_unexpected_error_is_a_generic_500_without_traceback(
    rag: OpinioRAG, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("secret internal detail /srv/x.py")

    monkeypatch.setattr(rag, "stream", boom)  # the route's entry into the façade
    with TestClient(create_app(rag, rate_limit=None), raise_server_exceptions=False) as c:
        r = c.get("/entities/7/highlights", params={"query": "pool"})
    assert r.status_code == 500 and r.json()["error"]["type"] == "internal_error"
    assert "secret" not in r.text and "Traceback" not in r.text
    assert "secret internal detail" in caplog.text  # logged server-side


def test_error_after_a_stream_started_is_an_error_event(rag: OpinioRAG, monkeypatch: pytest.MonkeyPatch) -> None:
    real = rag.stream

    def failing(*args: Any, **kwargs: Any) -> Iterator[Any]:
        stream = real(*args, **kwargs)
        yield next(stream)
        raise ConnectionError("model went away")

    monkeypatch.setattr(rag, "stream", failing)
    with TestClient(create_app(rag, rate_limit=None), raise_server_exceptions=False) as c:
        got = events(c.get("/entities/7/highlights/stream", params={"query": ["pool", "wi-fi"]}).text)
    assert [e for e, _ in got] == ["highlight", "error"]
    assert got[1][1]["error"]["type"] == "internal_error" and "model went away" not in json.dumps(got)


def test_chat_without_llm_is_503(bare: TestClient) -> None:
    r = bare.post("/entities/7/chat", json={"messages": [{"role": "user", "content": "wifi?"}]},
                  headers={"X-API-Key": "k3y"})
    assert r.status_code == 503 and r.json()["error"]["type"] == "llm_unavailable"
    assert "--llm" in r.json()["error"]["message"]


def test_chat_with_the_llm_server_down_is_503(rag: OpinioRAG) -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = ChatOpenAI(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0, timeout=5)
    with TestClient(create_app(rag, rate_limit=None, llm=model, chat_verify=False), raise_server_exceptions=False) as c:
        r = c.post("/entities/7/chat", json={"messages": [{"role": "user", "content": "wifi?"}]})
    assert r.status_code == 503 and r.json()["error"]["type"] == "llm_unavailable"
    assert "Traceback" not in r.text


# ----------------------------------------------------------------------------- key, limits
def test_api_key_is_required_on_every_route(bare: TestClient) -> None:
    for path in ("/healthz", "/entities", "/entities/7/highlights?query=pool", "/", "/docs", "/openapi.json"):
        r = bare.get(path)
        assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized", path
        assert r.headers["www-authenticate"] == "Bearer"
    assert bare.post("/index", files={"file": ("a.json", b"[]")}).status_code == 401
    assert bare.get("/entities", headers={"X-API-Key": "wrong"}).json()["error"]["message"] == "wrong API key"
    assert bare.get("/entities", headers={"X-API-Key": "k3y"}).status_code == 200
    assert bare.get("/entities", headers={"Authorization": "Bearer k3y"}).status_code == 200


def test_api_key_in_the_url_sets_a_cookie_for_the_page(rag: OpinioRAG) -> None:
    with TestClient(create_app(rag, api_key="k e/y", rate_limit=None)) as c:
        assert c.get("/?api_key=nope").status_code == 401
        first = c.get("/", params={"api_key": "k e/y"})
        assert first.status_code == 200
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert c.get("/entities").status_code == 200  # the cookie authenticates the page's own calls
        c.cookies.clear()
        assert c.get("/entities").status_code == 401


def test_rate_limit_answers_429_with_retry_after(rag: OpinioRAG) -> None:
    with TestClient(create_app(rag, rate_limit=RateLimit(per_second=0.5, burst=3), api_key="k")) as c:
        codes = [c.get("/healthz", headers={"X-API-Key": key}).status_code for key in ("k", "guess", "k", "k")]
        assert codes == [200, 401, 200, 429]  # wrong keys use up the bucket too: guessing is throttled
        r = c.get("/healthz", headers={"X-API-Key": "k"})
        assert r.json()["error"]["type"] == "rate_limited" and int(r.headers["retry-after"]) >= 1


def test_token_bucket_refills_and_bounds_its_memory() -> None:
    now = [0.0]
    bucket = TokenBucket(RateLimit(per_second=2, burst=2, max_clients=3), clock=lambda: now[0])
    assert [bucket.take("a") for _ in range(3)] == [0.0, 0.0, 0.5]
    now[0] = 0.5  # one token back
    assert bucket.take("a") == 0.0 and bucket.take("a") > 0
    for i in range(10):
        bucket.take(f"client-{i}")
    assert len(bucket) == 3


def test_body_size_limit_413(bare: TestClient) -> None:
    headers = {"X-API-Key": "k3y"}
    big = {"messages": [{"role": "user", "content": "x" * 400}]}
    r = bare.post("/entities/7/chat", json=big, headers=headers)
    assert r.status_code == 413 and r.json()["error"]["type"] == "too_large" and r.json()["error"]["field"] == "body"

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"y" * 100
        yield b'"}]}'

    r = bare.post("/entities/7/chat", content=chunks(), headers={**headers, "content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["type"] == "too_large"


def test_upload_limit_413(rag: OpinioRAG) -> None:
    with TestClient(create_app(rag, rate_limit=None, max_upload_bytes=1000)) as c:
        r = c.post("/index", files={"file": ("big.json", b"[" + b" " * 2000 + b"]")})
    assert r.status_code == 413 and r.json()["error"]["type"] == "too_large"


def test_cors_is_off_by_default_and_on_for_given_origins(rag: OpinioRAG) -> None:
    origin = {"Origin": "http://example.test"}
    with TestClient(create_app(rag, rate_limit=None)) as c:
        assert "access-control-allow-origin" not in c.get("/healthz", headers=origin).headers
    with TestClient(create_app(rag, rate_limit=None, cors_origins=["http://example.test"], api_key="k")) as c:
        pre = c.options("/entities", headers={**origin, "Access-Control-Request-Method": "GET",
                                              "Access-Control-Request-Headers": "x-api-key"})
        assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "http://example.test"
        r = c.get("/entities", headers={**origin, "X-API-Key": "k"})
        assert r.headers["access-control-allow-origin"] == "http://example.test"


def test_mountable_under_a_prefix(rag: OpinioRAG) -> None:
    from fastapi import FastAPI

    outer = FastAPI()
    outer.mount("/reviews", create_app(rag, rate_limit=None, max_upload_bytes=10))
    with TestClient(outer) as c:
        assert c.get("/reviews/entities/7").json()["entity_id"] == "7"
        assert c.post("/reviews/index", files={"file": ("a.json", b"[" + b" " * 50 + b"]")}).status_code == 413


def test_serve_without_the_extra_names_the_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from opinio_agents.cli.serve import serve_command

    monkeypatch.setitem(sys.modules, "fastapi", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'opinio-agents\[serve\]'"):
        serve_command()


# ----------------------------------------------------------------------------- the façade across threads
def test_one_facade_serves_many_threads_with_the_sequential_answers(store_dir: Path) -> None:
    """A cold façade hit by 6 threads at once gives exactly what one thread gets (no race in caches).

    Before the fix, the process-wide HIRO cluster namer kept the texts of the call in progress
    on itself, so two threads naming aspects of different entities read each other's texts
    (IndexError, or wrong names).
    """
    queries = [["wi-fi"], ["breakfast buffet", "parking"], ["noise level"]]
    reference = OpinioRAG(store_dir, encoder=HashEncoder(), hiro_options=HIRO)
    expected: dict[Any, list[Any]] = {}
    for i, q in enumerate(queries):
        result = reference.highlights("101", q)
        expected[("hl", i)] = [h.text for h in result.cons + result.pros]
    for key in ("7", "101", "202"):
        expected[("aspects", key)] = [a.aspect for a in reference.aspects(key)]
    expected["hits"] = [h.sentence.sentence_id for h in reference.retrieve("7", "pool", retriever="hybrid")]
    reference.close()

    shared = OpinioRAG(store_dir, encoder=HashEncoder(), hiro_options=HIRO)  # cold: every cache fills under load
    barrier = threading.Barrier(6)
    results: dict[Any, list[Any]] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            for q in queries[n % 2 :] + queries[: n % 2]:
                out = shared.highlights("101", q)
                idx = queries.index(q)
                with lock:
                    results.setdefault(("hl", idx), []).append([h.text for h in out.cons + out.pros])
            for key in ("7", "101", "202")[n % 3 :] + ("7", "101", "202")[: n % 3]:  # one namer, many entities
                aspects = [a.aspect for a in shared.aspects(key)]
                with lock:
                    results.setdefault(("aspects", key), []).append(aspects)
            hits = [h.sentence.sentence_id for h in shared.retrieve("7", "pool", retriever="hybrid")]
            with lock:
                results.setdefault("hits", []).append(hits)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    shared.close()
    assert not errors, errors
    for key, answers in results.items():
        assert all(a == expected[key] for a in answers), key


def test_readers_are_not_broken_by_an_entity_half_way_through_indexing(store_dir: Path, tmp_path: Path) -> None:
    """While a writer holds the store with an entity that has rows but no vectors yet, readers still answer.

    Before the fix, HIRO's baseline took every key ``entity_keys`` lists while a writer works,
    so ``aspects`` of a finished entity failed on the other one's missing vectors (409).
    """
    import shutil

    from opinio_agents.indexing import Indexer

    path = tmp_path / "store"
    shutil.copytree(store_dir, path)
    reader = OpinioRAG(path, encoder=HashEncoder(), hiro_options=HIRO)
    before = [a.aspect for a in reader.aspects("101")]
    compared = reader.compare("101").compared_with
    app = TestClient(create_app(reader, rate_limit=None), raise_server_exceptions=False)
    half = Entity.model_validate(tiny_entity_dict() | {"entity_id": "half"})
    with reader.store.writer_lock():  # this process is "the writer at work"
        killer = HashEncoder(fail_after_calls=0)
        killer.encode_once = False  # type: ignore[attr-defined]  # the texts are stored already: encode them anyway
        with pytest.raises(KeyboardInterrupt):  # killed after the catalog rows, before any vector
            Indexer(reader.store, killer).index_entity(half, mark_complete=False)
        assert reader.store.writer_active() and "half" in reader.entities()
        assert [a.aspect for a in reader.aspects("101")] == before
        assert reader.compare("101").compared_with == compared  # complete entities only; not "half"
        assert "half" not in [row["entity_id"] for row in app.get("/entities").json()]
        busy = app.get("/entities/half/highlights", params={"query": "pool"})
        assert busy.status_code == 409 and busy.json()["error"]["type"] == "store_busy"
        assert app.get("/entities/101/aspects").status_code == 200
    reader.close()


# ----------------------------------------------------------------------------- a real server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_opinio_serve_in_a_subprocess(tmp_path: Path) -> None:
    import httpx

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([tiny_entity_dict()]))
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "OPINIO_API_KEY": "sub-key"}
    cmd = [sys.executable, "-m", "tests.fake_cli", "serve", "--store", str(tmp_path / "store"), "--dataset",
           str(data), "--port", str(port), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        health = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                health = httpx.get(f"{base}/healthz", headers={"X-API-Key": "sub-key"}, timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None, proc.stderr.read().decode() if proc.poll() is not None else "no answer"
        assert health.status_code == 200 and health.json()["entities"] == 1
        assert httpx.get(f"{base}/entities", timeout=5).status_code == 401
        rows = httpx.get(f"{base}/entities", headers={"X-API-Key": "sub-key"}, timeout=5).json()
        assert rows[0]["entity_id"] == "7" and rows[0]["reviews"] == 5
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_an_entity_id_with_a_slash_is_addressable_on_every_route(tmp_path: Path) -> None:
    record = tiny_entity_dict() | {"entity_id": "acme/harbor-inn"}
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder(), hiro_options=HIRO)
    try:
        rag.index([Entity.model_validate(record)])
        with TestClient(create_app(rag, rate_limit=None), raise_server_exceptions=False) as c:
            base = "/entities/acme%2Fharbor-inn"  # what the page sends (encodeURIComponent)
            assert c.get(base).json()["entity_id"] == "acme/harbor-inn"
            r = c.get(f"{base}/highlights", params={"query": "wi-fi", "retriever": "bm25"})
            assert r.status_code == 200 and any(h["query"] == "wi-fi" for h in r.json()["cons"])
            hits = c.get(f"{base}/search", params={"q": "pool"}).json()
            assert hits["hits"] and all(h["sentence_id"].startswith("acme/harbor-inn:") for h in hits["hits"])
            assert c.get(f"{base}/reviews/4").json()["review_id"] == "4"
            assert c.get(f"{base}/highlights/stream", params={"query": "pool"}).status_code == 200
            assert c.get("/entities/acme%2Fnowhere/highlights").status_code == 404
    finally:
        rag.close()
