"""Soak test of ``opinio serve`` (bounded): mixed traffic, streams cut at random, uploads, one kill -9 and restart.

It starts the real ``opinio serve --dataset sample.json`` (MiniLM, the shipped sample; rate limit
off) in a subprocess on 127.0.0.1 and, for ``--seconds``, runs:

* ``--readers`` clients looping over ``GET /entities``, ``/entities/{id}``, ``/search``,
  ``/aspects`` and ``/highlights`` (one to three expert aspects);
* ``--cutters`` clients opening ``/highlights/stream`` with three aspects and closing the socket
  after a random 0-0.4 s (a client that leaves), about one a second each;
* one uploader posting a small generated entity every ``--upload-every`` seconds;
* at ``--kill-at`` (a fraction of the run) one ``kill -9`` of the server right after an upload is accepted,
  then a restart on the same store: the cut job must be finished by the new server (from its
  durable record) and the store's job folder left without uploads.

Reported (markdown): requests and errors by status per route (``conn`` = refused while the
server was down, expected only around the kill; ``timeout`` = no answer within 60 s), p50 / p95
per route, the server's RSS and threads over time, the CPU the server used in the 3 s after the
last client left (work that outlived its clients would show here), and the crash-recovery outcome.
Nothing is asserted on timings; the script exits 1 on a 5xx or a failed recovery.

Usage:
    python benchmarks/serve_soak.py                      # 120 s
    python benchmarks/serve_soak.py --seconds 45         # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``opinio serve`` in a subprocess; ``kill9`` and ``start`` again on the same store."""

    def __init__(self, store: Path, dataset: Path, port: int) -> None:
        self.cmd = [sys.executable, "-m", "opinio_agents", "serve", "--store", str(store), "--dataset", str(dataset),
                    "--port", str(port), "--rate-limit", "0", "--quiet"]
        self.base = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 600) -> float:
        started = time.monotonic()
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(self.cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while time.monotonic() - started < timeout:
            if self.proc.poll() is not None:
                raise SystemExit(f"opinio serve exited: {self.proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                time.sleep(0.2)
        raise SystemExit("opinio serve did not answer")

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def proc_stats(self) -> tuple[float, int, float] | None:
        """(RSS MiB, threads, CPU seconds) of the server process."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss = int(values["VmRSS"].split()[0]) / 1024
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return rss, int(values["Threads"]), cpu


class Soak:
    def __init__(self, server: Server, entities: list[dict[str, Any]], seconds: float) -> None:
        self.server = server
        self.entities = entities
        self.deadline = time.monotonic() + seconds
        self.samples: list[tuple[str, str, float]] = []  # route, status, seconds
        self.lock = threading.Lock()
        self.jobs: list[str] = []

    def record(self, route: str, status: str, seconds: float) -> None:
        with self.lock:
            self.samples.append((route, status, seconds))

    def reader(self, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=self.server.base, timeout=60) as client:
            while time.monotonic() < self.deadline:
                entity = rng.choice(self.entities)
                key, queries = entity["entity_id"], entity["queries"] or ["room"]
                route, url, params = rng.choice([
                    ("entities", "/entities", {}),
                    ("entity", f"/entities/{key}", {}),
                    ("search", f"/entities/{key}/search", {"q": rng.choice(queries), "k": 5}),
                    ("aspects", f"/entities/{key}/aspects", {}),
                    ("highlights", f"/entities/{key}/highlights",
                     {"query": rng.sample(queries, min(len(queries), rng.randint(1, 3)))}),
                ])
                self.timed(client, route, "GET", url, params=params)

    def timed(self, client: httpx.Client, route: str, method: str, url: str, **kw: Any) -> httpx.Response | None:
        t0 = time.perf_counter()
        try:
            r = client.request(method, url, **kw)
        except httpx.TimeoutException:
            self.record(route, "timeout", time.perf_counter() - t0)
            return None
        except httpx.TransportError:
            self.record(route, "conn", time.perf_counter() - t0)
            time.sleep(0.2)
            return None
        self.record(route, str(r.status_code), time.perf_counter() - t0)
        return r

    def cutter(self, seed: int) -> None:
        rng = random.Random(seed)
        port = int(self.server.base.rsplit(":", 1)[1])
        while time.monotonic() < self.deadline:
            entity = rng.choice(self.entities)
            query = "&".join(f"query={q.replace(' ', '%20')}" for q in (entity["queries"] or ["room"])[:3])
            t0 = time.perf_counter()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                    sock.sendall(f"GET /entities/{entity['entity_id']}/highlights/stream?{query} HTTP/1.1\r\n"
                                 f"Host: 127.0.0.1\r\n\r\n".encode())
                    sock.settimeout(rng.uniform(0.0, 0.4))
                    try:
                        head = sock.recv(64)
                    except TimeoutError:
                        head = b""
                status = head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "cut"
            except OSError:
                status = "conn"
                time.sleep(0.2)
            self.record("stream-cut", status, time.perf_counter() - t0)
            time.sleep(rng.uniform(0.5, 1.5))  # a client every second or so, not a flood

    def upload(self, client: httpx.Client, n: int) -> str | None:
        entity = {"entity_id": f"soak-{n}", "entity_name": f"Soak Hotel {n}", "user_reviews": [
            {"review_id": f"r{i}", "text": f"The room {i} was clean and the breakfast was good. Wi-fi was slow.",
             "rating": 3 + i % 3} for i in range(6)]}
        r = self.timed(client, "upload", "POST", "/index", files={"file": (f"soak-{n}.json", json.dumps([entity]))})
        if r is not None and r.status_code == 202:
            job_id = str(r.json()["job_id"])
            self.jobs.append(job_id)
            return job_id
        return None


def _table(rows: list[list[str]], head: list[str]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--cutters", type=int, default=2)
    parser.add_argument("--upload-every", type=float, default=8.0)
    parser.add_argument("--kill-at", type=float, default=0.5)
    args = parser.parse_args()

    from opinio_agents.datasets import load_sample

    work = Path(tempfile.mkdtemp(prefix="opinio-soak-"))
    dataset = work / "sample.json"
    dataset.write_text(json.dumps([e.model_dump(mode="json") for e in load_sample()]), encoding="utf-8")
    server = Server(work / "store", dataset, _free_port())
    first_start = server.start()
    entities = httpx.get(f"{server.base}/entities", timeout=10).json()
    soak = Soak(server, entities, args.seconds)
    memory: list[tuple[float, float, int]] = []
    t_start = time.monotonic()

    def monitor() -> None:
        while time.monotonic() < soak.deadline:
            stats = server.proc_stats()
            if stats is not None:
                memory.append((time.monotonic() - t_start, stats[0], stats[1]))
            time.sleep(2.0)

    threads = [threading.Thread(target=soak.reader, args=(i,), daemon=True) for i in range(args.readers)]
    threads += [threading.Thread(target=soak.cutter, args=(100 + i,), daemon=True) for i in range(args.cutters)]
    threads.append(threading.Thread(target=monitor, daemon=True))
    for t in threads:
        t.start()
    kill_time = t_start + args.kill_at * args.seconds
    killed: dict[str, Any] = {}
    n = 0
    with httpx.Client(base_url=server.base, timeout=60) as uploads:
        next_upload = time.monotonic()
        while time.monotonic() < soak.deadline:
            now = time.monotonic()
            if now >= next_upload:
                n += 1
                job = soak.upload(uploads, n)
                next_upload = time.monotonic() + args.upload_every
                if not killed and now >= kill_time:
                    killed = {"job": job, "at_s": round(now - t_start)}
                    server.kill9()  # right after the 202: the job is queued, validating or indexing
                    killed["restart_s"] = round(server.start(), 1)
                    if job is not None:
                        killed["after"] = httpx.get(f"{server.base}/jobs/{job}", timeout=30).json()
            time.sleep(0.5)
    for t in threads:
        t.join(120)
    time.sleep(2.0)  # requests in flight when the run ended finish
    quiet0 = server.proc_stats()
    time.sleep(3.0)
    quiet1 = server.proc_stats()
    idle_cpu = (quiet1[2] - quiet0[2]) if quiet0 and quiet1 else float("nan")
    recovery_ok = True
    if killed.get("after"):
        deadline = time.monotonic() + 120
        job = killed["after"]
        while job["state"] not in ("done", "failed") and time.monotonic() < deadline:
            time.sleep(0.5)
            job = httpx.get(f"{server.base}/jobs/{killed['job']}", timeout=10).json()
        entity = httpx.get(f"{server.base}/entities/{job['filename'].removesuffix('.json')}", timeout=10)
        leftovers = [p for p in (work / "store" / "serve-jobs").rglob("*") if p.is_file() and p.name != "job.json"]
        recovery_ok = job["state"] == "done" and entity.status_code == 200 and not leftovers
        killed.update(final=job["state"], resumed=job.get("resumed"), entity=entity.status_code,
                      leftover_uploads=len(leftovers))
    server.stop()

    by_route: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for route, status, seconds in soak.samples:
        by_route[route].append((status, seconds))
    rows = []
    for route, got in sorted(by_route.items()):
        counts: dict[str, int] = defaultdict(int)
        for status, _ in got:
            counts[status] += 1
        ok = [s for status, s in got if status.startswith("2")]
        p50, p95 = (np.percentile(ok, [50, 95]) * 1000) if ok else (float("nan"), float("nan"))
        rows.append([route, str(len(got)), ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())),
                     f"{p50:.0f}", f"{p95:.0f}"])
    print(f"## opinio serve soak: {args.seconds:.0f} s, {args.readers} readers, {args.cutters} stream cutters, "
          f"an upload every {args.upload_every:.0f} s, kill -9 at {args.kill_at:.0%}\n")
    print(f"first start (indexing the sample): {first_start:.1f} s\n")
    print(_table(rows, ["route", "requests", "by status", "p50 ms", "p95 ms"]))
    step = max(1, len(memory) // 10)
    print("\n" + _table([[f"{t:.0f}", f"{rss:.0f}", str(th)] for t, rss, th in memory[::step]],
                        ["t (s)", "RSS MiB", "threads"]))
    print(f"\nserver CPU in the 3 s after the last client left: {idle_cpu:.2f} s")
    print(f"\ncrash recovery: {json.dumps({k: v for k, v in killed.items() if k != 'after'})}")
    errors = sum(1 for _, status, _ in soak.samples if status.startswith("5"))
    print(f"\n5xx responses: {errors}; recovery {'ok' if recovery_ok else 'FAILED'}")
    return 1 if errors or not recovery_ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
