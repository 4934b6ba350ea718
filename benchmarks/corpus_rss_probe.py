"""Where memory grows in a corpus run: opinio's process with embedded Chroma vs with a Chroma server.

Indexes N synthetic entities with :func:`opinio_agents.scale.corpus.index_corpus` and the
model-free HashEncoder (so torch's allocator is out of the picture), once with the embedded
Chroma and once against ``chroma run`` on loopback, and prints the RSS after every entity:
of this process in both cases, and of the Chroma server in the second. Run from the
repository root (it imports ``tests.fake_encoder``). No timing is asserted anywhere.

Usage:
    python benchmarks/corpus_rss_probe.py --entities 16 --reviews-per-entity 100
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil


def _run(entities: int, reviews: int, host: str | None, port: int | None, server_pid: int | None) -> list[tuple]:
    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import iter_synthetic
    from opinio_agents.indexing import Indexer, LexiconSentiment
    from opinio_agents.models import Entity
    from opinio_agents.scale.corpus import CorpusProgress, index_corpus
    from tests.fake_encoder import HashEncoder

    encoder = HashEncoder(dimension=384)
    rag = OpinioRAG(tempfile.mkdtemp(prefix="rss-probe-"), encoder=encoder, chroma_host=host, chroma_port=port)
    rag.indexer = Indexer(rag.store, encoder, sentiment=LexiconSentiment(), embed_chunk=256)
    server = psutil.Process(server_pid) if server_pid else None
    rows: list[tuple] = []

    def step(p: CorpusProgress) -> None:
        rows.append((p.position, p.rss_mib, server.memory_info().rss / 2**20 if server else None))

    stream = (Entity.model_validate(r) for r, _ in iter_synthetic(entities, reviews, seed=1))
    index_corpus(rag, stream, fit_hiro=False, on_entity=step)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=16)
    parser.add_argument("--reviews-per-entity", type=int, default=100)
    args = parser.parse_args()
    embedded = _run(args.entities, args.reviews_per_entity, None, None, None)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    data = tempfile.mkdtemp(prefix="rss-probe-chroma-")
    proc = subprocess.Popen([exe, "run", "--path", data, "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.3)
        served = _run(args.entities, args.reviews_per_entity, "127.0.0.1", port, proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print("| entity | embedded Chroma: opinio RSS MiB | Chroma server: opinio RSS MiB | the server's RSS MiB |")
    print("|---|---|---|---|")
    for (n, a, _), (_, b, s) in zip(embedded, served):
        print(f"| {n} | {a:.0f} | {b:.0f} | {s:.0f} |")
    per = [(rows[-1][1] - rows[1][1]) / max(1, len(rows) - 2) for rows in (embedded, served)]
    server_per = (served[-1][2] - served[1][2]) / max(1, len(served) - 2)
    print(f"\ngrowth from entity 2 to the last: embedded {per[0]:+.1f} MiB/entity; with a server, opinio "
          f"{per[1]:+.1f} MiB/entity and the server {server_per:+.1f} MiB/entity")
    half = len(embedded) // 2
    late = [(rows[-1][1] - rows[half][1]) / max(1, len(rows) - 1 - half) for rows in (embedded, served)]
    print(f"growth over the second half (entity {half + 1} to the last): embedded {late[0]:+.1f} MiB/entity; "
          f"with a server, opinio {late[1]:+.1f} MiB/entity")


if __name__ == "__main__":
    main()
