"""Load benchmark of ``opinio serve`` on loopback: prints markdown tables (no timing is asserted anywhere).

It starts ``opinio serve --dataset sample.json`` in a subprocess on 127.0.0.1 (the shipped
sample, indexed with MiniLM on first start; rate limit off), with a loopback OpenAI-compatible
chat model that streams its answer (``tests/loopback_server.py``), and runs two rounds:

1. **quiet**: ``--clients`` concurrent clients x ``--requests`` requests each, mixing
   ``GET /highlights`` (one or two expert aspects), ``GET /search`` (with a rating filter on
   every other call) and ``GET /aspects``, while ``--chats`` clients each stream one
   ``POST /chat`` answer;
2. **while indexing**: the same load while ``POST /index`` ingests another entity
   (``--ingest-reviews`` synthetic reviews); only requests that start before the job ends count.

Reported: p50 / p95 latency per route, requests/s, errors (any non-2xx or transport error;
the script exits 1 if there is one), the chats' time to first token and total time, and the
server's RSS before and after; then the two rounds' p50 / p95 side by side.

Usage:
    python benchmarks/serve_load.py                                # 50 x 20 + 10 chats, 400-review ingest
    python benchmarks/serve_load.py --clients 10 --requests 5 --chats 2 --ingest-reviews 100   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.loopback_server import LoopbackServer, ok  # noqa: E402

CHAT_REPLY = "Guests mostly praise the wifi speed [S1], though a few found it patchy in the rooms [S2]."
ROUTES = ("highlights", "search", "aspects", "chat")


@dataclass
class Sample:
    route: str
    started: float
    seconds: float
    ok: bool
    first_token: float | None = None


@dataclass
class Round:
    name: str
    samples: list[Sample] = field(default_factory=list)
    wall: float = 0.0
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0
    errors: list[str] = field(default_factory=list)


def rss_mb(pid: int) -> float:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(store: Path, dataset: Path, port: int, llm_url: str, log: Path) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable, "-m", "opinio_agents", "serve", "--store", str(store), "--dataset", str(dataset),
        "--port", str(port), "--rate-limit", "0", "--quiet", "--llm", "openai:loopback-model",
        "--base-url", llm_url, "--synthesizer", "extractive",  # the loopback model chats; highlights stay extractive
    ]
    env = {**os.environ, "OPENAI_API_KEY": "loopback", "PYTHONPATH": str(REPO)}
    with open(log, "wb") as handle:  # a file, not a pipe: a full pipe nobody reads would stall the server
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=handle)


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the server did not answer /healthz within {timeout:.0f} s")


async def client_loop(
    http: httpx.AsyncClient, n: int, requests: int, queries: dict[str, list[str]], out: Round, stop_at: list[float]
) -> None:
    rng = random.Random(n)
    entities = sorted(queries)
    for i in range(requests):
        entity = rng.choice(entities)
        route = ROUTES[(n + i) % 3]
        if route == "highlights":
            picked = rng.sample(queries[entity], 2 if i % 2 else 1)
            params: list[tuple[str, str | int | float]] = [("query", q) for q in picked]
            path = f"/entities/{entity}/highlights"
        elif route == "search":
            params = [("q", rng.choice(queries[entity])), ("k", 5)] + ([("min_rating", 3)] if i % 2 else [])
            path = f"/entities/{entity}/search"
        else:
            params = [("top_k", 8)]
            path = f"/entities/{entity}/aspects"
        started = time.perf_counter()
        if started > stop_at[0]:
            return
        try:
            r = await http.get(path, params=params)
            good = r.status_code == 200
            if not good:
                out.errors.append(f"{route} {r.status_code} {r.text[:200]}")
        except httpx.HTTPError as exc:
            good = False
            out.errors.append(f"{route} {type(exc).__name__}: {exc}")
        out.samples.append(Sample(route, started, time.perf_counter() - started, good))
        if len(out.samples) % 100 == 0:
            print(f"  [{out.name}] {len(out.samples)} requests done", file=sys.stderr, flush=True)


async def chat_once(http: httpx.AsyncClient, entity: str, out: Round) -> None:
    body = {"messages": [{"role": "user", "content": "How is the wifi?"}]}
    started = time.perf_counter()
    first: float | None = None
    text = ""
    try:
        async with http.stream("POST", f"/entities/{entity}/chat", json=body) as r:
            async for chunk in r.aiter_text():
                if first is None and "event: token" in chunk:
                    first = time.perf_counter() - started
                text += chunk
            good = r.status_code == 200 and "event: done" in text and '"citations":[{' in text
            if not good:
                out.errors.append(f"chat {r.status_code} {text[-300:]}")
    except httpx.HTTPError as exc:
        good = False
        out.errors.append(f"chat {type(exc).__name__}: {exc}")
    out.samples.append(Sample("chat", started, time.perf_counter() - started, good, first))


async def run_round(
    base: str, name: str, clients: int, requests: int, chats: int, queries: dict[str, list[str]], pid: int,
    upload: Path | None = None,
) -> tuple[Round, dict[str, float] | None]:
    out = Round(name, rss_before_mb=rss_mb(pid))
    limits = httpx.Limits(max_connections=clients + chats + 4, max_keepalive_connections=clients + chats + 4)
    stop_at = [float("inf")]
    job_window: dict[str, float] | None = None
    async with httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as http:
        watcher = None
        if upload is not None:
            files = {"file": (upload.name, upload.read_bytes(), "application/json")}
            r = await http.post("/index", files=files)
            r.raise_for_status()
            job_id = r.json()["job_id"]
            job_window = {"start": time.perf_counter()}

            async def watch() -> None:
                while True:
                    job = (await http.get(f"/jobs/{job_id}")).json()
                    if job["state"] in ("done", "failed"):
                        job_window["end"] = time.perf_counter()
                        job_window["failed"] = float(job["state"] == "failed")
                        if job["state"] == "failed":
                            out.errors.append(f"index job failed: {job['error']}")
                        stop_at[0] = job_window["end"]  # only load that overlaps the ingest counts
                        return
                    await asyncio.sleep(0.25)

            watcher = asyncio.create_task(watch())
        entities = sorted(queries)
        started = time.perf_counter()
        tasks = [client_loop(http, n, requests, queries, out, stop_at) for n in range(clients)]
        tasks += [chat_once(http, entities[n % len(entities)], out) for n in range(chats)]
        await asyncio.gather(*tasks)
        out.wall = time.perf_counter() - started
        if watcher is not None:
            await asyncio.wait_for(watcher, timeout=1800)
    out.rss_after_mb = rss_mb(pid)
    return out, job_window


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def route_stats(rnd: Round) -> dict[str, tuple[int, float, float]]:
    stats = {}
    for route in ROUTES:
        times = [s.seconds * 1000 for s in rnd.samples if s.route == route]
        stats[route] = (len(times), pct(times, 50), pct(times, 95))
    return stats


def print_round(rnd: Round, job: dict[str, float] | None) -> None:
    print(f"\n### {rnd.name}\n")
    print("| route | requests | p50 ms | p95 ms |")
    print("|---|---:|---:|---:|")
    for route, (n, p50, p95) in route_stats(rnd).items():
        print(f"| {route} | {n} | {p50:.0f} | {p95:.0f} |")
    plain = [s for s in rnd.samples if s.route != "chat"]
    firsts = [s.first_token * 1000 for s in rnd.samples if s.route == "chat" and s.first_token is not None]
    print(f"\nrequests/s (highlights + search + aspects): {len(plain) / rnd.wall:.1f} over {rnd.wall:.1f} s; "
          f"errors: {len(rnd.errors)}; chat time to first token p50 {pct(firsts, 50):.0f} ms, "
          f"p95 {pct(firsts, 95):.0f} ms; server RSS {rnd.rss_before_mb:.0f} MB before, "
          f"{rnd.rss_after_mb:.0f} MB after; load average {os.getloadavg()[0]:.1f}")
    if job is not None and "end" in job:
        print(f"index job: {job['end'] - job['start']:.1f} s"
              f"{' (FAILED)' if job.get('failed') else ''}; load requests counted: those started before it ended")
    for line in rnd.errors[:10]:
        print(f"  error: {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--chats", type=int, default=10)
    parser.add_argument("--ingest-reviews", type=int, default=400, help="Reviews of the entity POST /index ingests.")
    parser.add_argument("--store", type=Path, default=None, help="Store to serve (default: a fresh temporary one).")
    parser.add_argument("--startup-timeout", type=float, default=1200.0)
    args = parser.parse_args()

    from opinio_agents.datasets import generate_dataset, load_sample, write_sample

    work = Path(tempfile.mkdtemp(prefix="opinio-serve-load-"))
    store = args.store or work / "store"
    sample = write_sample(work / "sample.json")
    queries = {str(e.entity_id): e.expert_review.queries for e in load_sample() if e.expert_review}
    ingest = generate_dataset(1, args.ingest_reviews, seed=11).entities[0]
    ingest = ingest.model_copy(update={"entity_id": f"ingested-{int(time.time())}", "entity_name": "Ingested Hotel"})
    upload = work / "ingest.json"
    upload.write_text(json.dumps([ingest.model_dump(mode="json")]))

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with LoopbackServer([ok(CHAT_REPLY)]) as llm:
        t0 = time.perf_counter()
        log = work / "server.log"
        proc = start_server(store, sample, port, llm.base_url, log)
        try:
            wait_ready(base, proc, args.startup_timeout, log)
            startup = time.perf_counter() - t0
            # one warm-up request per route and entity (first query of a retriever builds its caches)
            for entity, qs in queries.items():
                for path, params in (("highlights", {"query": qs[0]}), ("search", {"q": qs[0]}), ("aspects", {})):
                    httpx.get(f"{base}/entities/{entity}/{path}", params=params, timeout=300).raise_for_status()
            print(f"## opinio serve under load (loopback; server pid {proc.pid}; start + index {startup:.0f} s; "
                  f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})")
            print(f"\n{args.clients} clients x {args.requests} requests (highlights / search / aspects) "
                  f"+ {args.chats} streaming chats against a loopback OpenAI-compatible model")
            quiet, _ = asyncio.run(run_round(base, "quiet", args.clients, args.requests, args.chats, queries, proc.pid))
            print_round(quiet, None)
            busy, job = asyncio.run(
                run_round(base, f"while POST /index ingests {args.ingest_reviews} reviews", args.clients,
                          args.requests, args.chats, queries, proc.pid, upload=upload)
            )
            print_round(busy, job)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    q, b = route_stats(quiet), route_stats(busy)
    print("\n### side by side (ms)\n")
    print("| route | quiet p50 | quiet p95 | while indexing p50 | while indexing p95 |")
    print("|---|---:|---:|---:|---:|")
    for route in ROUTES:
        print(f"| {route} | {q[route][1]:.0f} | {q[route][2]:.0f} | {b[route][1]:.0f} | {b[route][2]:.0f} |")
    errors = len(quiet.errors) + len(busy.errors)
    print(f"\nerrors: {errors}")
    logged = log.read_text(errors="replace")
    if "Traceback" in logged:
        print(f"\nthe server logged errors ({log}):\n{logged[-3000:]}")
        errors += 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
