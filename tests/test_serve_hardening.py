"""Issue 24: the service left running (rebinding, spoofed addresses, cancellation, bounded uploads, cookies, recovery).

Fast tier: FastAPI's TestClient, raw ASGI calls (to cut a client off at a chosen point) and one
uvicorn server in a thread for what only a real socket shows (X-Forwarded-For, the access log,
an over-long request line).
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import logging
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from conftest import tiny_entity_dict  # noqa: E402
from fake_encoder import HashEncoder  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from opinio_agents.api import OpinioRAG  # noqa: E402
from opinio_agents.models import Entity  # noqa: E402
from opinio_agents.serve import RateLimit, create_app  # noqa: E402
from opinio_agents.serve.guard import SESSION_COOKIE  # noqa: E402
from opinio_agents.serve.settings import ServeSettings  # noqa: E402

LOCAL = "http://127.0.0.1"


def _entity(entity_id: str, n: int = 4) -> dict[str, Any]:
    data = tiny_entity_dict()
    data["entity_id"] = entity_id
    data["user_reviews"] = data["user_reviews"][:n]
    return data


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpinioRAG]:
    rag = OpinioRAG(tmp_path_factory.mktemp("hardening") / "store", encoder=HashEncoder())
    rag.index([Entity.model_validate(tiny_entity_dict())] + [Entity.model_validate(_entity(f"e{i}")) for i in range(5)])
    yield rag
    rag.close()


def _client(app: Any, base_url: str = LOCAL) -> TestClient:
    return TestClient(app, base_url=base_url, raise_server_exceptions=False)


# ----------------------------------------------------------------------------- 1. Host and Origin
def test_a_rebound_host_gets_no_data_and_cannot_upload(rag: OpinioRAG) -> None:
    app = create_app(rag, rate_limit=None)
    with _client(app, "http://evil.example:8792") as c:
        r = c.get("/entities")
        assert r.status_code == 400 and r.json()["error"]["field"] == "Host" and "Harbor" not in r.text
        up = c.post("/index", files={"file": ("a.json", b"[]")}, headers={"Origin": "http://evil.example:8792"})
        assert up.status_code == 400
        assert c.get("/static").status_code == 400  # no redirect to whatever Host was sent
    with _client(app) as c:
        assert c.get("/entities").status_code == 200
        assert c.get("/entities", headers={"Host": "localhost:8000"}).status_code == 200
        cross = c.post("/index", files={"file": ("a.json", b"[]")}, headers={"Origin": "http://evil.example"})
        assert cross.status_code == 403 and cross.json()["error"]["field"] == "Origin"
        assert c.post("/index", files={"file": ("a.json", b"[]")}, headers={"Origin": "null"}).status_code == 403
    with _client(create_app(rag, rate_limit=None, allowed_hosts=["reviews.example.org"]),
                 "https://reviews.example.org") as c:
        assert c.get("/entities").status_code == 200


# ----------------------------------------------------------------------------- 6. keys and cookies
def test_the_cookie_is_a_derived_session_and_needs_a_same_origin_post(rag: OpinioRAG) -> None:
    key = "k3y-s3cret"
    with _client(create_app(rag, api_key=key, rate_limit=None)) as c:
        first = c.get("/", params={"api_key": key})
        cookie = first.headers["set-cookie"]
        assert first.status_code == 200 and key not in cookie and cookie.startswith(f"{SESSION_COOKIE}=")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=" in cookie
        assert "Secure" not in cookie
        assert c.get("/entities").status_code == 200  # the session authenticates the page's own reads
        files = {"file": ("a.json", b"[]")}
        assert c.post("/index", files=files, headers={"Origin": "http://127.0.0.1:9999"}).status_code == 403
        assert c.post("/index", files=files).status_code == 403  # a cookie without any Origin
        assert c.post("/index", files=files, headers={"Origin": LOCAL}).status_code == 202
        c.cookies.set(SESSION_COOKIE, key)  # the raw key is not a session
        c.cookies.clear()
        assert c.get("/entities", cookies={SESSION_COOKIE: key}).status_code == 401
    with _client(create_app(rag, api_key=key, rate_limit=None), "https://127.0.0.1") as c:
        assert "Secure" in c.get("/", params={"api_key": key}).headers["set-cookie"]


def test_a_non_ascii_key_matches(rag: OpinioRAG) -> None:
    key = "clé-🔑"
    with _client(create_app(rag, api_key=key, rate_limit=None)) as c:
        assert c.get("/entities", headers={"X-API-Key": key.encode("utf-8")}).status_code == 200  # type: ignore[dict-item]
        assert c.get("/entities", params={"api_key": key}).status_code == 200
        assert c.get("/entities", headers={"X-API-Key": b"cl\xc3\xa9"}).status_code == 401  # type: ignore[dict-item]


# ----------------------------------------------------------------------------- 8. headers, ids
def test_security_headers_on_every_response_including_refusals(rag: OpinioRAG) -> None:
    with _client(create_app(rag, api_key="k", rate_limit=RateLimit(per_second=0.1, burst=1))) as c:
        refused = [c.get("/entities"), c.get("/entities")]  # 401, then 429
        assert [r.status_code for r in refused] == [401, 429]
        docs = c.get("/docs", headers={"X-API-Key": "k"})
    for r in [*refused, docs]:
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
        assert "script-src 'self'" in r.headers["content-security-policy"]
    assert "<script>" not in docs.text  # no inline script: the policy would block it


def test_entity_id_is_a_string_on_every_route(rag: OpinioRAG) -> None:
    with _client(create_app(rag, rate_limit=None)) as c:
        got = c.get("/entities/7/highlights", params={"query": "wi-fi"}).json()
        assert got["entity_id"] == "7"
        stream = c.get("/entities/7/highlights/stream", params={"query": "wi-fi"}).text
        done = json.loads(stream.strip().split("\n\n")[-1].split("data: ", 1)[1])
        assert done["entity_id"] == "7"
        assert {type(e["entity_id"]) for e in c.get("/entities").json()} == {str}


# ----------------------------------------------------------------------------- 5. bad parameters
@pytest.mark.parametrize(("param", "value"), [("min_rating", "inf"), ("min_rating", "infinity"),
                                              ("max_rating", "inf"), ("min_rating", "nan"), ("max_rating", "-inf")])
def test_non_finite_numbers_are_a_4xx_naming_the_field(rag: OpinioRAG, param: str, value: str) -> None:
    with _client(create_app(rag, rate_limit=None)) as c:
        r = c.get("/entities/7/search", params={"q": "wifi", param: value})
    assert 400 <= r.status_code < 500 and r.json()["error"]["field"] == param


# ----------------------------------------------------------------------------- 4. bounded uploads, pages
def test_entities_are_paginated(rag: OpinioRAG) -> None:
    with _client(create_app(rag, rate_limit=None)) as c:
        everything = [e["entity_id"] for e in c.get("/entities").json()]
        seen: list[str] = []
        url = "/entities?limit=2"
        while url:
            r = c.get(url)
            seen += [e["entity_id"] for e in r.json()]
            link = r.headers.get("link")
            url = "/" + link.split(">")[0].lstrip("<") if link else ""
        assert seen == everything and len(everything) == 6
        assert c.get("/entities", params={"cursor": "!!"}).json()["error"]["field"] == "cursor"
        assert c.get("/entities", params={"limit": 5000}).json()["error"]["field"] == "limit"


def _wait(c: TestClient, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = c.get(f"/jobs/{job_id}").json()
        if job["state"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(job)


def test_upload_limits_are_named_and_the_queue_is_bounded(rag: OpinioRAG, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    settings = ServeSettings(rate_limit=None, max_upload_entities=2, job_queue_depth=1, jobs_dir=tmp_path / "jobs")
    file = json.dumps([_entity(f"u{i}") for i in range(3)]).encode()
    with _client(create_app(rag, settings=settings)) as c:
        job = _wait(c, c.post("/index", files={"file": ("three.json", file)}).json()["job_id"])
        assert job["state"] == "failed" and "max_upload_entities" in job["error"]["message"]
        assert job["error"]["field"] == "entities" and not rag.store.has_entity("u0")
        release = threading.Event()
        real = rag.index

        def slow(*args: Any, **kwargs: Any) -> Any:
            release.wait(30)
            return real(*args, **kwargs)

        monkeypatch.setattr(rag, "index", slow)
        one = json.dumps([_entity("q1")]).encode()
        running = c.post("/index", files={"file": ("one.json", one)}).json()["job_id"]
        deadline = time.monotonic() + 30
        while c.get(f"/jobs/{running}").json()["state"] == "queued" and time.monotonic() < deadline:
            time.sleep(0.02)  # the worker took it: it is running (held in rag.index)
        codes = [c.post("/index", files={"file": ("one.json", one)}).status_code for _ in range(2)]
        full = c.post("/index", files={"file": ("one.json", one)})
        release.set()
        assert codes == [202, 503]  # one running, one waiting, then full
        assert full.status_code == 503 and full.json()["error"]["type"] == "queue_full"
        assert int(full.headers["retry-after"]) > 0


# ----------------------------------------------------------------------------- 7. crash recovery
def test_a_job_cut_by_a_crash_is_finished_on_restart(rag: OpinioRAG, tmp_path: Path) -> None:
    jobs_dir = tmp_path / "jobs"
    folder = jobs_dir / "cutjob"
    folder.mkdir(parents=True)
    (folder / "data.json").write_text(json.dumps([_entity("crash1"), _entity("crash2")]), encoding="utf-8")
    record = {"job_id": "cutjob", "state": "indexing", "filename": "data.json", "upload": "data.json",
              "entities_total": 2, "entities_done": 1, "created_at": time.time()}
    (folder / "job.json").write_text(json.dumps(record), encoding="utf-8")
    (jobs_dir / "halfupload").mkdir()  # an upload cut mid-transfer: no job record
    (jobs_dir / "halfupload" / "x.json").write_text("[{", encoding="utf-8")
    settings = ServeSettings(rate_limit=None, jobs_dir=jobs_dir)
    with _client(create_app(rag, settings=settings)) as c:
        job = _wait(c, "cutjob")
        assert job["state"] == "done" and job["resumed"] == 1 and job["entities_done"] == 2
        assert c.get("/entities/crash1").status_code == 200 and c.get("/entities/crash2").status_code == 200
    assert not (jobs_dir / "halfupload").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["job.json"]  # the upload went with the job


def test_a_temporary_jobs_folder_leaves_nothing_behind(rag: OpinioRAG) -> None:
    """Without ``jobs_dir`` the folder goes at shutdown, and also with an app built and never served."""
    from opinio_agents.serve.jobs import IndexJobs

    jobs = IndexJobs(rag)
    folder = jobs.jobs_dir
    assert folder.is_dir()
    jobs.shutdown()
    assert not folder.exists()

    app = create_app(rag, settings=ServeSettings(rate_limit=None))  # never started: no lifespan, no shutdown
    folder = app.state.jobs.jobs_dir
    assert folder.is_dir()
    del app
    gc.collect()
    assert not folder.exists()


# ----------------------------------------------------------------------------- 3. cancellation
class _Counted:
    """A highlight stream of 20 queries that counts the queries it computed."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.computed = 0
        self.first = threading.Event()

    def __call__(self, request: Any) -> Iterator[Any]:
        outcomes = list(self.real(request))
        for _ in range(20):
            self.computed += 1
            time.sleep(0.05)  # the work of one query
            self.first.set()
            yield outcomes[0]
        yield outcomes[-1]


async def _call_then_leave(app: Any, path: str, query: str, leave: threading.Event) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    state = {"body": False}

    async def receive() -> dict[str, Any]:
        if not state["body"]:
            state["body"] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        while not leave.is_set():
            await asyncio.sleep(0.01)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
             "query_string": query.encode(), "headers": [(b"host", b"127.0.0.1:8000")],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    await app(scope, receive, send)
    return sent


@pytest.mark.parametrize("path", ["/entities/7/highlights/stream", "/entities/7/highlights"])
def test_work_stops_when_the_client_leaves(rag: OpinioRAG, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    counted = _Counted(rag.stream)
    monkeypatch.setattr(rag, "stream", counted)
    app = create_app(rag, rate_limit=None)
    sent = asyncio.run(_call_then_leave(app, path, "query=wi-fi", counted.first))  # leaves after the first query
    assert counted.computed >= 1 and all(m.get("status", 200) == 200 for m in sent)  # the work did start
    at_return = counted.computed
    time.sleep(0.5)  # anything still running would count on
    assert counted.computed == at_return and counted.computed <= 3, counted.computed  # not the 20 queries


def test_query_length_and_count_are_limited(rag: OpinioRAG) -> None:
    with _client(create_app(rag, rate_limit=None)) as c:
        long = c.get("/entities/7/highlights", params={"query": "wifi " * 2000})
        many = c.get("/entities/7/highlights", params={"query": [f"aspect {i}" for i in range(21)]})
    assert long.status_code == 400 and long.json()["error"]["field"] == "query" and "at most" in long.text
    assert many.status_code == 400 and many.json()["error"]["field"] == "query"


# ----------------------------------------------------------------------------- 2. a real socket
class _Server:
    def __init__(self, app: Any, **options: Any) -> None:
        import uvicorn

        from opinio_agents.serve.server import uvicorn_config

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn_config(app, host="127.0.0.1", port=self.port, lifespan="off", **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


def test_spoofed_forwarded_for_does_not_escape_the_throttle_nor_reach_the_log(rag: OpinioRAG) -> None:
    app = create_app(rag, api_key="right", rate_limit=RateLimit(per_second=1, burst=10))
    access = io.StringIO()
    handler = logging.StreamHandler(access)
    with _Server(app, log_level="info") as server:
        logging.getLogger("uvicorn.access").addHandler(handler)  # uvicorn's access log does not propagate
        codes = [server.get(f"/entities?api_key=guess{i}", {"X-Forwarded-For": f"10.0.{i}.1"})[0] for i in range(30)]
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        raw.sendall(b"GET /" + b"a" * 200_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reply = b""
        while chunk := raw.recv(65536):
            reply += chunk
        raw.close()
        logging.getLogger("uvicorn.access").removeHandler(handler)
    assert codes.count(401) <= 10 and codes.count(429) >= 20  # one client, whatever header it sends
    logged = access.getvalue()
    assert "GET /entities" in logged and "429" in logged  # the log was captured ...
    assert "guess" not in logged and "api_key" not in logged and "10.0." not in logged  # ... without key or spoof
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert json.loads(body)["error"]["type"] == "bad_request"


def test_a_named_proxy_is_trusted(rag: OpinioRAG) -> None:
    app = create_app(rag, rate_limit=RateLimit(per_second=1, burst=3))
    with _Server(app, forwarded_allow_ips=["127.0.0.1"]) as server:
        codes = [server.get("/healthz", {"X-Forwarded-For": f"10.0.{i}.1"})[0] for i in range(8)]
        status, stream = server.get("/entities/7/highlights/stream?query=wi-fi", {"X-Forwarded-For": "10.1.1.1"})
    assert codes == [200] * 8  # each forwarded client has its own bucket
    assert status == 200 and stream.rstrip().split("\n\n")[-1].startswith("event: done")  # the whole stream
