"""Distributed indexing on Ray: 1 vs 2 workers against one machine, and the identity check, in one run.

Starts a real ``chroma run`` server and a local Ray cluster on loopback, generates a
synthetic corpus, and indexes it three ways with the shipped encoder:

* one machine: ``OpinioRAG.index`` into an embedded store (the reference);
* ``index_with_ray`` with 1 worker and with 2 workers (vectors in the Chroma server).

For each Ray build it reports wall time, sentences/s, which worker indexed how many
entities, and whether the store equals the reference: sentence ids, BM25 tokens,
sentiments, vectors (largest absolute difference), BM25 scores of every sentence and
the top-10 of BM25, dense and hybrid for a set of queries (dense up to the order of
exact ties, see :func:`opinio_agents.scale.distributed.same_top_k`). No timing is
asserted anywhere.

With ``--real FILE`` the corpus is the first ``--entities`` entities of a real-review
file (``../shared/data/real-reviews/zomato.json``: reviews that do not repeat) instead
of synthetic text. With ``--cluster`` the Ray builds are not in-process: the benchmark
starts a real multi-process cluster on loopback (``ray start --head`` and a second
``ray start --address`` node, one CPU each, its own ``--temp-dir``) and runs the CLI,
``opinio index FILE --ray 127.0.0.1:PORT --ray-workers N --chroma-host 127.0.0.1``, as a
separate process for 1 and 2 workers (wall time of the whole process), then compares
each store with the single-machine build. Everything it starts is stopped at the end.

Usage:
    python benchmarks/distributed.py --entities 6 --reviews-per-entity 60
    nice -n 10 python benchmarks/distributed.py --real ../shared/data/real-reviews/zomato.json --entities 6 --cluster
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

QUERIES = [
    "wi-fi", "breakfast buffet", "pool", "parking", "noise level", "air conditioning", "front desk staff",
    "location", "bed comfort", "bathroom", "price", "housekeeping", "cleanliness", "view",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_chroma(path: Path) -> tuple[subprocess.Popen[bytes], int]:
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, port
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("chroma run did not start within 60 s")


def _ray_exe() -> str:
    return shutil.which("ray") or str(Path(sys.executable).with_name("ray"))


def start_cluster(temp_dir: Path) -> tuple[str, list[int]]:
    """``ray start --head`` and a second node on loopback, one CPU each; returns the address and their pids."""
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    port = _free_port()
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    subprocess.run(
        [_ray_exe(), "start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp_dir}",
         *common], check=True, env=env, capture_output=True,
    )
    address = f"127.0.0.1:{port}"
    subprocess.run([_ray_exe(), "start", f"--address={address}", *common], check=True, env=env, capture_output=True)
    return address, _pids_under(temp_dir)


def _pids_under(temp_dir: Path) -> list[int]:
    """Pids of the processes whose command line names ``temp_dir`` (this cluster's, and nothing else)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\x00", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(temp_dir) in cmdline:
            pids.append(int(proc.name))
    return pids


def stop_cluster(temp_dir: Path) -> None:
    """Stop this benchmark's cluster by pid (``ray stop`` would stop every Ray cluster of the user)."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = _pids_under(temp_dir)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        if pids:
            time.sleep(3)


def cluster_builds(dataset: Path, work: Path, port: int, entities, encoder, single) -> list[dict[str, object]]:
    """``opinio index --ray`` against a real multi-process cluster, 1 then 2 workers."""
    from opinio_agents.api import OpinioRAG
    from opinio_agents.stores.chroma import delete_collection, make_chroma_client

    temp_dir = Path(tempfile.mkdtemp(prefix="oray-", dir="/tmp"))  # short: Ray's socket paths are limited
    rows = []
    try:
        t0 = time.perf_counter()
        address, pids = start_cluster(temp_dir)
        started = time.perf_counter() - t0
        client = make_chroma_client(host="127.0.0.1", port=port)
        for workers in (1, 2):
            for entity in entities:
                delete_collection(client, entity.key)
            store = work / f"cli-{workers}"
            t0 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "opinio_agents", "index", str(dataset), "--store", str(store), "--quiet",
                 "--ray", address, "--ray-workers", str(workers), "--chroma-host", "127.0.0.1",
                 "--chroma-port", str(port)],
                capture_output=True, text=True,
            )
            wall = time.perf_counter() - t0
            if done.returncode != 0:
                raise SystemExit(f"opinio index --ray failed ({done.returncode}):\n{done.stderr[-3000:]}")
            summary = [line for line in done.stderr.splitlines() if "Ray worker" in line]
            dist = OpinioRAG(store, encoder=encoder, chroma_host="127.0.0.1", chroma_port=port)
            rows.append({"workers": workers, "seconds": wall, "summary": summary[-1] if summary else "",
                         "cluster_start_s": started, "cluster_processes": len(pids),
                         "identity": identity(single, dist)})
    finally:
        stop_cluster(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
    return rows


def identity(single, dist) -> dict[str, object]:
    """Compare a Ray-built store with the single-machine one."""
    from opinio_agents.scale.distributed import same_top_k

    out: dict[str, object] = {"entities_same_order": dist.store.entity_keys() == single.store.entity_keys()}
    ids = tokens = sentiments = bm25 = True
    top = {"bm25": 0, "dense": 0, "hybrid": 0}
    checked = 0
    max_diff = 0.0
    for key in single.store.entity_keys():
        a, b = single.store.sentences(key), dist.store.sentences(key)
        ids &= [s.sentence for s in a] == [s.sentence for s in b]
        tokens &= [s.tokens for s in a] == [s.tokens for s in b]
        sentiments &= [s.sentiment for s in a] == [s.sentiment for s in b]
        max_diff = max(max_diff, float(np.max(np.abs(single.store.embeddings(key) - dist.store.embeddings(key)))))
        ra, rb = single.retrievers.retriever(key, "bm25"), dist.retrievers.retriever(key, "bm25")
        for query in QUERIES:
            bm25 &= bool(np.array_equal(ra.scores(query), rb.scores(query)))
            checked += 1
            for kind in top:
                ha = [(h.sentence.sentence_id, h.score) for h in single.retrieve(key, query, retriever=kind)]
                hb = [(h.sentence.sentence_id, h.score) for h in dist.retrieve(key, query, retriever=kind)]
                top[kind] += int(ha == hb if kind == "bm25" else same_top_k(ha, hb, k=10))
    out.update(
        sentence_ids=ids, tokens=tokens, sentiments=sentiments, max_abs_vector_diff=max_diff,
        bm25_scores_identical=bm25, **{f"top10_{k}": f"{v}/{checked}" for k, v in top.items()},
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=6)
    parser.add_argument("--reviews-per-entity", type=int, default=60)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--real", type=Path, default=None, help="a real-review file (OpinioBank JSON array)")
    parser.add_argument("--cluster", action="store_true", help="ray start --head + a worker node, and the CLI")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

    import ray

    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.embeddings import get_encoder
    from opinio_agents.scale.distributed import index_with_ray
    from opinio_agents.stores.chroma import delete_collection, make_chroma_client

    work = Path(tempfile.mkdtemp(prefix="opinio-distributed-"))
    if args.real is not None:
        from opinio_agents.io.loaders import load_entities

        rows_in = json.loads(args.real.read_text(encoding="utf-8"))[: args.entities]
        dataset = work / "corpus.json"
        dataset.write_text(json.dumps(rows_in), encoding="utf-8")
        entities = load_entities(dataset)
    else:
        entities = generate_dataset(n_entities=args.entities, reviews_per_entity=args.reviews_per_entity,
                                    seed=args.seed).entities
        dataset = work / "corpus.json"
        dataset.write_text(json.dumps([e.model_dump(mode="json") for e in entities]), encoding="utf-8")
    encoder = get_encoder()
    encoder.encode(["warm up"])
    t0 = time.perf_counter()
    single = OpinioRAG(work / "single", encoder=encoder)
    single.index(entities)
    single_s = time.perf_counter() - t0
    total = single.store.count_sentences()

    chroma, port = start_chroma(work / "chroma-server")
    rows = []
    if args.cluster:
        try:
            rows = cluster_builds(dataset, work, port, entities, encoder, single)
        finally:
            chroma.terminate()
            chroma.wait(timeout=30)
        print(f"corpus: {len(entities)} entities, {total:,} sentences "
              f"({args.real.name if args.real else 'synthetic'}); Ray cluster: `ray start --head` + one "
              f"`ray start --address` node, 1 CPU each, loopback; {os.cpu_count()}-core machine, "
              f"load {os.getloadavg()[0]:.1f}\n")
        print("| build | wall s (whole process) | sentences/s | vs one machine |")
        print("|---|---|---|---|")
        print(f"| one machine (`OpinioRAG.index`, embedded Chroma) | {single_s:.1f} | {total / single_s:.1f} | 1.00x |")
        for r in rows:
            print(f"| `opinio index --ray` {r['workers']} worker(s), Chroma server | {r['seconds']:.1f} | "
                  f"{total / r['seconds']:.1f} | {single_s / r['seconds']:.2f}x |")
        for r in rows:
            print(f"  {r['workers']} worker(s): {r['summary']}")
        print(f"  cluster start {rows[0]['cluster_start_s']:.1f} s, {rows[0]['cluster_processes']} Ray processes")
        print("\n| identity vs one machine | " + " | ".join(f"{r['workers']} worker(s)" for r in rows) + " |")
        print("|---|" + "---|" * len(rows))
        for name in rows[0]["identity"]:
            print(f"| {name} | " + " | ".join(str(r["identity"][name]) for r in rows) + " |")
        shutil.rmtree(work, ignore_errors=True)
        return
    try:
        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False,
                 logging_level="error")
        ray_start = time.perf_counter() - t0
        client = make_chroma_client(host="127.0.0.1", port=port)
        for workers in (1, 2):
            for entity in entities:  # a clean server for each build
                delete_collection(client, entity.key)
            stats = index_with_ray(entities, work / f"dist-{workers}", chroma_host="127.0.0.1", chroma_port=port,
                                   workers=workers)
            dist = OpinioRAG(work / f"dist-{workers}", encoder=encoder, chroma_host="127.0.0.1", chroma_port=port)
            per_worker: dict[str, int] = {}
            for worker in stats.worker_of.values():
                per_worker[worker] = per_worker.get(worker, 0) + 1
            rows.append({
                "workers": workers, "seconds": stats.seconds, "rate": stats.sentences_encoded / stats.seconds,
                "encoded": stats.sentences_encoded, "entities_per_worker": sorted(per_worker.values()),
                "timings": stats.timings, "identity": identity(single, dist),
            })
    finally:
        ray.shutdown()
        chroma.terminate()
        chroma.wait(timeout=30)
    print(f"corpus: {args.entities} entities x {args.reviews_per_entity} reviews = {total:,} sentences; "
          f"local Ray cluster of {args.num_cpus} CPUs on a {os.cpu_count()}-core machine "
          f"(started in {ray_start:.1f} s)\n")
    print("| build | wall s | sentences/s | vs one machine | entities per worker | Ray Data part s | "
          "merge+BM25 s | HIRO s |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| one machine (`OpinioRAG.index`, embedded Chroma) | {single_s:.1f} | {total / single_s:.1f} | 1.00x "
          "| - | - | - | - |")
    for r in rows:
        t = r["timings"]
        print(f"| Ray, {r['workers']} worker(s), Chroma server | {r['seconds']:.1f} | {r['rate']:.1f} | "
              f"{single_s / r['seconds']:.2f}x | {r['entities_per_worker']} | {t.get('workers', 0):.1f} | "
              f"{t.get('merge', 0) + t.get('bm25', 0):.1f} | {t.get('hiro', 0):.1f} |")
    print("\n| identity vs one machine | " + " | ".join(f"{r['workers']} worker(s)" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for name in rows[0]["identity"]:
        print(f"| {name} | " + " | ".join(str(r["identity"][name]) for r in rows) + " |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
