"""Latency of ``aspects()`` and query-free highlights once the HIRO hierarchy exists, in one run.

For each entity size (the synthetic entities of ``benchmarks/query_latency.py``, indexed once
into ``--work-dir`` and reused) three fresh processes run one after the other:

* ``first call ever``: the store holds no stored result (``<store>/hiro/results`` is removed),
  so the first ``aspects()`` names the clusters (triplet extractor and phrase encoder
  loaded and run) and stores the result; the first query-free ``highlights()`` then drafts and
  stores its highlights (its own aspects, alpha 60, are named too). ``warm`` is the second call
  of each in the same process.
* ``new process``: a second process over the same store, where both results are stored:
  its first call of each reads them back.
* The process's import + façade time is reported apart (``open``), and with ``--cli`` the
  whole ``opinio aspects`` process beside ``opinio --help``.

With ``--index-compare`` the smallest entity is also indexed from scratch into a new store
(``opinio index``) and ``OpinioRAG.precompute_hiro`` (what ``opinio index --aspects`` adds)
is timed right after, in its own process: what naming at index time would cost.

Usage:
    python benchmarks/hiro_latency.py                          # ~10.5K and ~50K sentences
    python benchmarks/hiro_latency.py --reviews 1500 --index-compare --cli
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query_latency import prepare  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def child(store: str, key: str) -> None:
    """Run inside a fresh process: time the façade's first and second call of each."""
    started = time.perf_counter()
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(store, verify=False)
    out: dict[str, float] = {"open": time.perf_counter() - started}
    for name, call in (
        ("aspects", lambda: rag.aspects(key)),
        ("query_free", lambda: rag.highlights(key, query_free=True)),
    ):
        for attempt in ("first", "warm"):
            t0 = time.perf_counter()
            call()
            out[f"{name}_{attempt}"] = time.perf_counter() - t0
    print("RESULT " + json.dumps(out))


def run_child(store: Path, key: str, env: dict[str, str]) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(store), key], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"child failed:\n{done.stderr[-3000:]}")
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    result["process"] = time.perf_counter() - started
    return result


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def index_compare(work_dir: Path, reviews: int, seed: int, env: dict[str, str]) -> dict[str, float]:
    """``opinio index`` of the entity into a new store, then ``precompute_hiro`` in its own process."""
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.io.writers import write_opiniobank

    entity = generate_dataset(1, reviews, seed=seed).entities[0]
    tmp = Path(tempfile.mkdtemp(prefix="hiro-index-", dir=work_dir))
    try:
        dataset = tmp / "entity.json"
        write_opiniobank([entity], dataset)
        index = wall([sys.executable, "-m", "opinio_agents", "index", str(dataset), "--store", str(tmp / "s"),
                      "--quiet"], env)
        code = ("import time; t = time.perf_counter()\nfrom opinio_agents.api import OpinioRAG\n"
                f"OpinioRAG({str(tmp / 's')!r}).precompute_hiro()\nprint(time.perf_counter() - t)")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
        precompute = time.perf_counter() - started
        return {"index": index, "precompute": precompute}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, nargs="*", default=[1500, 6950])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/opinio-query-latency"))
    parser.add_argument("--cli", action="store_true", help="also time whole `opinio aspects` processes vs --help")
    parser.add_argument("--runs", type=int, default=3, help="rounds of the --cli comparison (medians)")
    parser.add_argument("--index-compare", action="store_true", help="time opinio index vs precompute_hiro")
    parser.add_argument("--child", nargs=2, metavar=("STORE", "KEY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}
    args.work_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for reviews in args.reviews:
        store, key, n = prepare(args.work_dir, reviews, args.seed)
        shutil.rmtree(store / "hiro" / "results", ignore_errors=True)
        first = run_child(store, key, env)
        again = run_child(store, key, env)
        row: dict[str, Any] = {"sentences": n, "first": first, "new": again}
        if args.cli:
            dataset = store / "unused.json"  # the entity is indexed: the CLI never reads it
            aspects_cmd = [sys.executable, "-m", "opinio_agents", "aspects", str(dataset), "-e", key,
                           "--store", str(store), "--format", "json"]
            helps, walls = [], []
            for _ in range(args.runs):
                helps.append(wall([sys.executable, "-m", "opinio_agents", "--help"], env))
                walls.append(wall(aspects_cmd, env))
            row["cli"] = {"help": statistics.median(helps), "aspects": statistics.median(walls)}
        rows.append(row)
    compare = index_compare(args.work_dir, min(args.reviews), args.seed, env) if args.index_compare else None

    print("\n| sentences | call | first call ever (computes, stores) | warm (same process) "
          "| new process (stored) |")
    print("|---:|---|---:|---:|---:|")
    for row in rows:
        f, a = row["first"], row["new"]
        for name, label in (("aspects", "aspects()"), ("query_free", "query-free highlights")):
            print(f"| {row['sentences']:,} | {label} | {f[name + '_first']:.2f} s | {f[name + '_warm']:.3f} s "
                  f"| {a[name + '_first']:.3f} s |")
        print(f"| {row['sentences']:,} | import + façade (open) | {f['open']:.2f} s | | {a['open']:.2f} s |")
        print(f"| {row['sentences']:,} | whole child process | {f['process']:.2f} s | | {a['process']:.2f} s |")
    if any("cli" in row for row in rows):
        print("\n| sentences | `opinio --help` (floor) | `opinio aspects` (stored) | x --help |")
        print("|---:|---:|---:|---:|")
        for row in rows:
            c = row["cli"]
            ratio = c["aspects"] / c["help"]
            print(f"| {row['sentences']:,} | {c['help']:.2f} s | {c['aspects']:.2f} s | {ratio:.1f} |")
    if compare:
        print(f"\n| `opinio index` (~{min(args.reviews) * 7.2:,.0f} sentences, new store) | precompute_hiro "
              "(= what --aspects adds) | added share |")
        print("|---:|---:|---:|")
        print(f"| {compare['index']:.1f} s | {compare['precompute']:.1f} s | "
              f"{compare['precompute'] / compare['index']:.0%} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)


if __name__ == "__main__":
    main()
