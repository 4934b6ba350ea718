"""Cold-process cost of ``opinio highlight`` on an already indexed entity, beside ``opinio --help``.

Each case is a fresh ``python -m opinio_agents ...`` process (imports, model load if
any, answer, exit); wall time and peak RSS come from the operating system's
accounting of the finished child (``os.wait4``). The cases run in turn, round after
round (help, bm25, hybrid cached, hybrid uncached, [baseline]), so a drift of the
machine's speed hits them alike; medians over ``--runs`` rounds are reported, with
min and max.

* ``opinio --help``: the floor (Python, typer, rich and the CLI module).
* ``highlight --retriever bm25``, query vector cached: BM25 retrieval; the pipeline's
  support count still needs the query vector, which the store's query cache holds.
* ``highlight --retriever hybrid``, query vector cached: no model load at all.
* ``highlight --retriever hybrid``, uncached: the store's query cache is deleted before
  each run, so the encoder is loaded and run (what every query cost before). (The entity's
  vector copy under ``<store>/vectors`` stays: only the query vector is missing.)
* ``aspects`` and ``highlight --query-free`` once their results are stored with the HIRO
  hierarchy (the warm-up round computes and stores them): no naming, no model.
* baseline (``--baseline-src DIR``): the same hybrid command, query vector cached and
  uncached, run from another checkout of the package (e.g. ``git archive fe3c9f2 | tar -x -C
  /tmp/old``), side by side.

Usage:
    python benchmarks/cold_start.py --store /tmp/cold/store --dataset /tmp/cold/sample.json
    python benchmarks/cold_start.py --runs 7 --baseline-src /tmp/opinio-old
    farm-bench -n 5 -- python -m opinio_agents highlight sample.json -e 101 -q wi-fi --store STORE --quiet \\
        --vs 'python -m opinio_agents --help'                    # an independent check of one case
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY_CACHE = "query_vectors.sqlite"


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """``(wall seconds, peak RSS MiB, exit status)`` of one child process.

    It runs in a neutral directory: ``python -m`` puts the working directory first on
    ``sys.path``, which would shadow the ``PYTHONPATH`` of a baseline checkout.
    """
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tempfile.gettempdir()
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 and proc.stderr is not None:
        sys.stderr.write(proc.stderr.read().decode(errors="replace")[-2000:])
    if proc.stderr is not None:
        proc.stderr.close()
    return wall, usage.ru_maxrss / 1024.0, proc.returncode  # Linux: ru_maxrss in KiB


def prepare(store: Path, dataset: Path, env: dict[str, str]) -> None:
    """Write the sample and index it into ``store`` when that is not done yet (MiniLM, a few minutes)."""
    if not dataset.exists():
        subprocess.run([sys.executable, "-m", "opinio_agents", "sample", str(dataset)], env=env, check=True)
    if not (store / "catalog.sqlite").exists():
        subprocess.run(
            [sys.executable, "-m", "opinio_agents", "index", str(dataset), "--store", str(store), "--quiet"],
            env=env, check=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path("/tmp/opinio-cold-start/store"))
    parser.add_argument("--dataset", type=Path, default=Path("/tmp/opinio-cold-start/sample.json"))
    parser.add_argument("--entity", default="101")
    parser.add_argument("--query", default="wi-fi")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-src", type=Path, default=None, help="another checkout to run the same query from")
    args = parser.parse_args()
    args.store, args.dataset = args.store.resolve(), args.dataset.resolve()

    args.store.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}
    prepare(args.store, args.dataset, env)
    python = [sys.executable, "-m", "opinio_agents"]
    highlight = ["highlight", str(args.dataset), "-e", args.entity, "-q", args.query, "--store", str(args.store),
                 "--quiet", "--format", "json"]
    cases: list[tuple[str, list[str], dict[str, str], bool]] = [
        ("opinio --help (floor)", [*python, "--help"], env, False),
        ("highlight bm25, query vector cached", [*python, *highlight, "--retriever", "bm25"], env, False),
        ("highlight hybrid, query vector cached", [*python, *highlight, "--retriever", "hybrid"], env, False),
        ("highlight hybrid, uncached (model load)", [*python, *highlight, "--retriever", "hybrid"], env, True),
        ("aspects, stored with the hierarchy", [*python, "aspects", str(args.dataset), "-e", args.entity,
                                                "--store", str(args.store), "--format", "json"], env, False),
        ("highlight --query-free, stored", [*python, "highlight", str(args.dataset), "-e", args.entity,
                                            "--query-free", "--store", str(args.store), "--quiet",
                                            "--format", "json"], env, False),
    ]
    if args.baseline_src is not None:
        old_env = {**env, "PYTHONPATH": str(args.baseline_src.resolve())}
        cases.append((f"baseline {args.baseline_src.name}: hybrid, query vector cached",
                      [*python, *highlight, "--retriever", "hybrid"], old_env, False))
        cases.append((f"baseline {args.baseline_src.name}: hybrid, uncached",
                      [*python, *highlight, "--retriever", "hybrid"], old_env, True))
    # Warm-up: the OS file cache, and the query cache for the "cached" cases.
    for _, argv, case_env, _ in cases:
        run_once(argv, case_env)

    results: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in cases}
    for _ in range(args.runs):
        for name, argv, case_env, uncached in cases:
            if uncached:
                for suffix in ("", "-wal", "-shm"):
                    (args.store / f"{QUERY_CACHE}{suffix}").unlink(missing_ok=True)
            wall, rss, code = run_once(argv, case_env)
            if code != 0:
                raise SystemExit(f"{name}: exit status {code}")
            results[name].append((wall, rss))
        # Leave the cache warm for the next round's cached cases.
        run_once(cases[2][1], env)

    floor = statistics.median(w for w, _ in results[cases[0][0]])
    print(f"\n| case ({args.runs} runs each, interleaved) | wall median s (min-max) | x --help | peak RSS median MiB |")
    print("|---|---:|---:|---:|")
    for name, rows in results.items():
        walls = [w for w, _ in rows]
        rss = statistics.median(r for _, r in rows)
        wall = statistics.median(walls)
        print(f"| {name} | {wall:.2f} ({min(walls):.2f}-{max(walls):.2f}) | {wall / floor:.1f} | {rss:.0f} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)


if __name__ == "__main__":
    main()
