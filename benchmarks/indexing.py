"""Indexing benchmark: the full ``opinio index`` against raw torch MiniLM and the naive LlamaIndex path, in one run.

For each synthetic entity (``opinio synth``; by default ~10.5K and ~50K sentences)
it measures, side by side, every contender in its own child process (so each one's
peak RSS is its own, and nothing is shared or warmed up across them):

* **raw torch**: sentence-transformers all-MiniLM-L6-v2 (fp32, batch 64) encoding every
  sentence of the entity, model loaded and warmed up first: the baseline rate;
* **raw onnx-int8**: the default encoder alone on the same sentences (informative);
* **opinio index**: the CLI, a fresh process on an empty store, wall clock from start
  to exit (imports, model session, segmentation, App. D tokens, catalog, encoding,
  Chroma, sentiment, BM25, HIRO fit and paths); the ONNX export is cached beforehand
  (its one-off cost is printed separately);
* **re-index**: the same file again, unchanged: ``OpinioRAG.index`` in a fresh process
  (timed around the call) and the CLI wall;
* **naive LlamaIndex**: ``VectorStoreIndex`` over a ``ChromaVectorStore`` with
  ``HuggingFaceEmbedding`` (the same local weights, LlamaIndex's defaults), one
  ``TextNode`` per sentence of the same segmentation;
* **sparse**: our BM25 (build + query) against ``bm25s`` and ``rank_bm25`` on the
  store's App. D tokens.

Rates are sentences per second of wall clock; ratios are against raw torch in the
same run (the machine is shared: only same-run ratios mean anything). No timing is
asserted anywhere. Prints markdown tables.

With ``--real FILE`` it measures real reviews instead (``--entities`` of them, default
30: the Zomato restaurants of ``../shared/data/real-reviews/zomato.json`` are 13,385
sentences, 97% distinct): the raw torch process (sentence-transformers MiniLM fp32, batch
64, every sentence) against ``opinio index`` on a fresh store for each ``--backends``
entry, all whole processes, ``--pairs`` rounds alternating the order; rates are ratios
of median walls. ``--profile`` adds where the time of ``opinio index`` goes.
``--baseline-code DIR`` adds each backend run from another checkout (its code on
``PYTHONPATH``, e.g. ``git archive`` of the previous default), in the same alternation.

Usage:
    nice -n 10 python benchmarks/indexing.py --real ../shared/data/real-reviews/zomato.json --entities 30 --profile
    nice -n 10 python benchmarks/indexing.py --real ../shared/data/real-reviews/zomato.json --backends onnx \
        --baseline-code /tmp/opinio-previous   # git archive <commit> | tar -x -C /tmp/opinio-previous
    nice -n 10 python benchmarks/indexing.py                        # ~10.5K and ~50K sentences
    nice -n 10 python benchmarks/indexing.py --reviews 1450         # one size
    nice -n 10 python benchmarks/indexing.py --reviews 6900 --baseline-sample 12000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

QUERIES = [
    "wi-fi", "breakfast buffet", "shuttle service", "pool", "parking", "room decor", "noise level",
    "air conditioning", "front desk staff", "location", "bed comfort", "bathroom", "gym", "restaurant",
    "price", "view", "elevators", "housekeeping", "spa", "bar", "check-in", "cleanliness", "towels",
    "coffee", "balcony",
]
HERE = Path(__file__).resolve()


# --------------------------------------------------------------------------- child processes
def _sentences(data: Path) -> list[Any]:
    from opinio_agents.io.loaders import load_entities
    from opinio_agents.text.segment import segment_entity

    entity = load_entities(data)[0]
    return segment_entity(entity)


def _sample(items: list[Any], limit: int | None, seed: int = 0) -> list[Any]:
    if not limit or limit >= len(items):
        return items
    rows = np.random.default_rng(seed).choice(len(items), size=limit, replace=False)
    return [items[i] for i in sorted(rows)]


def child_raw(data: Path, backend: str, sample: int | None) -> dict[str, Any]:
    from opinio_agents.embeddings import get_encoder

    sentences = _sentences(data)
    texts = [s.text for s in _sample(sentences, sample)]
    encoder = get_encoder(backend=backend)
    encoder.encode(texts[:64])  # load and warm up
    started = time.perf_counter()
    encoder.encode(texts)
    seconds = time.perf_counter() - started
    return {"sentences": len(sentences), "encoded": len(texts), "seconds": seconds, "sps": len(texts) / seconds}


def child_prepare() -> dict[str, Any]:
    from opinio_agents.embeddings import get_encoder

    encoder = get_encoder(backend="onnx-int8")
    started = time.perf_counter()
    path = encoder.model_file  # type: ignore[attr-defined]
    return {"seconds": time.perf_counter() - started, "file": str(path)}


def child_reindex(data: Path, store: Path) -> dict[str, Any]:
    """``OpinioRAG.index`` on the unchanged file twice in one process: cold (lazy imports included), then warm."""
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(store)
    started = time.perf_counter()
    stats = rag.index(data)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    stats += rag.index(data)
    warm = time.perf_counter() - started
    return {"seconds": warm, "cold_s": cold, "embedded": sum(s.sentences_embedded for s in stats)}


def child_naive(data: Path, store: Path, sample: int | None) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.vector_stores.chroma import ChromaVectorStore

    from opinio_agents.embeddings import default_model_path

    started = time.perf_counter()
    sentences = _sample(_sentences(data), sample)
    nodes = []
    for s in sentences:
        meta = s.metadata()
        nodes.append(TextNode(text=s.text, id_=s.sentence_id, metadata=meta, excluded_embed_metadata_keys=list(meta)))
    client = chromadb.PersistentClient(path=str(store), settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection("naive", embedding_function=None)
    embed = HuggingFaceEmbedding(model_name=str(default_model_path()), device="cpu")
    embed.get_text_embedding("warm up")
    loaded = time.perf_counter()
    VectorStoreIndex(
        nodes,
        storage_context=StorageContext.from_defaults(vector_store=ChromaVectorStore(chroma_collection=collection)),
        embed_model=embed,
    )
    seconds = time.perf_counter() - loaded
    return {"sentences": len(sentences), "seconds": seconds, "sps": len(sentences) / seconds,
            "setup_s": loaded - started}


def child_sparse(store: Path, rounds: int) -> dict[str, Any]:
    from opinio_agents.retrieval.bm25.scoring import BM25Index
    from opinio_agents.stores import SentenceStore
    from opinio_agents.text.preprocess import tokenize_for_bm25

    sentence_store = SentenceStore(store)
    key = sentence_store.entity_keys()[0]
    corpus = [list(s.tokens) for s in sentence_store.sentences(key)]
    queries = [tokenize_for_bm25(q) for q in QUERIES] * rounds
    out: dict[str, Any] = {}
    result = {"libraries": out}

    def measure(name: str, build: Any, query: Any) -> None:
        started = time.perf_counter()
        index = build()
        built = time.perf_counter() - started
        latencies = []
        for q in queries:
            t0 = time.perf_counter()
            query(index, q)
            latencies.append((time.perf_counter() - t0) * 1000)
        out[name] = {"build_s": built, "p50_ms": float(np.percentile(latencies, 50)),
                     "p95_ms": float(np.percentile(latencies, 95))}

    measure("opinio BM25", lambda: BM25Index.build(corpus), lambda ix, q: np.argsort(-ix.scores(q))[:10])
    try:
        import bm25s

        def build_bm25s() -> Any:
            retriever = bm25s.BM25()
            retriever.index([c for c in corpus], show_progress=False)
            return retriever

        measure("bm25s", build_bm25s, lambda ix, q: ix.get_scores(q).argsort()[::-1][:10])
    except ImportError:
        out["bm25s"] = None
    try:
        from rank_bm25 import BM25Okapi

        measure("rank_bm25", lambda: BM25Okapi(corpus), lambda ix, q: np.argsort(-ix.get_scores(q))[:10])
    except ImportError:
        out["rank_bm25"] = None
    return result


def child_query(store: Path, rounds: int) -> dict[str, Any]:
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(store)
    key = rag.store.entity_keys()[0]
    factory = rag.retrievers
    vectors = rag.encoder.encode(QUERIES)
    out: dict[str, Any] = {}
    for kind in ("hybrid", "bm25", "dense"):
        factory.retrieve(key, QUERIES[0], retriever=kind)  # warm the caches
        latencies = []
        for _ in range(rounds):
            for query, vector in zip(QUERIES, vectors):
                t0 = time.perf_counter()
                factory.retrieve(key, query, retriever=kind, top_k=10, query_embedding=vector)
                latencies.append((time.perf_counter() - t0) * 1000)
        out[kind] = {"p50_ms": float(np.percentile(latencies, 50)), "p95_ms": float(np.percentile(latencies, 95))}
    return out


def child_raw_real(data: Path) -> dict[str, Any]:
    """The raw baseline on real text: sentence-transformers MiniLM (torch fp32) at batch 64, every sentence."""
    from sentence_transformers import SentenceTransformer

    from opinio_agents.embeddings import default_model_path
    from opinio_agents.io.loaders import load_entities
    from opinio_agents.text.segment import segment_entity

    texts = [s.text for entity in load_entities(data) for s in segment_entity(entity)]
    model = SentenceTransformer(str(default_model_path()), device="cpu")
    started = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)
    return {"sentences": len(texts), "distinct": len(set(texts)), "encode_s": time.perf_counter() - started}


def child_profile(data: Path, store: Path) -> dict[str, Any]:
    """``OpinioRAG.index`` in one process, its stages summed over the entities (where the time goes)."""
    started = time.perf_counter()
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(store)
    imported = time.perf_counter() - started
    t0 = time.perf_counter()
    rag.encoder.encode(["load the model"])
    loaded = time.perf_counter() - t0
    t0 = time.perf_counter()
    stats = rag.index(data, fit_hiro=False)
    indexed = time.perf_counter() - t0
    t0 = time.perf_counter()
    rag.fit_hiro()
    hiro = time.perf_counter() - t0
    stages: dict[str, float] = {}
    for item in stats:
        for name, seconds in item.timings.items():
            stages[name] = stages.get(name, 0.0) + seconds
    return {"imports_s": imported, "model_load_s": loaded, "index_s": indexed, "hiro_s": hiro, "stages": stages,
            "embedded": sum(item.sentences_embedded for item in stats)}


def real_bench(args: argparse.Namespace, work: Path) -> None:
    """``opinio index`` against the raw torch process on real reviews: pairs alternating, ratios of medians."""
    env = dict(os.environ)
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("ANONYMIZED_TELEMETRY", "False"),
                        ("TOKENIZERS_PARALLELISM", "false"), ("OMP_WAIT_POLICY", "PASSIVE")):
        env.setdefault(name, value)  # the same OpenMP policy on both sides (opinio sets PASSIVE by default)
    work = work.resolve()
    rows = json.loads(args.real.read_text(encoding="utf-8"))[: args.entities]
    data = work / "real.json"
    data.write_text(json.dumps(rows), encoding="utf-8")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for backend in backends:  # the ONNX export is a one-off per machine, not part of indexing
        if backend.startswith("onnx"):
            _run([sys.executable, "-c", "from opinio_agents.embeddings import get_encoder; "
                  f"get_encoder(backend={backend!r}).model_file"], env)
    cli = [sys.executable, "-m", "opinio_agents"]
    arms: dict[str, tuple[str, str | None]] = {f"opinio index ({b})": (b, None) for b in backends}
    if args.baseline_code is not None:  # the same backends run by another checkout (e.g. the previous default)
        for b in backends:
            arms[f"opinio index ({b}, {args.baseline_code.name})"] = (b, str(args.baseline_code.resolve()))
    walls: dict[str, list[float]] = {"raw torch": [], **{name: [] for name in arms}}
    cpus: dict[str, list[float]] = {name: [] for name in walls}
    raw: dict[str, Any] = {}
    for pair in range(args.pairs):
        order = list(walls) if pair % 2 == 0 else list(reversed(walls))
        for name in order:
            if name == "raw torch":
                measured = _measured([sys.executable, str(HERE), "--child", "raw_real", "--child-args",
                                      json.dumps({"data": str(data)})], env)
                raw = json.loads(measured["stdout"].strip().splitlines()[-1])
            else:
                backend, code = arms[name]
                store = work / f"store-{backend}-{'base' if code else 'this'}-{pair}"
                arm_env = dict(env, OPINIO_ENCODER=backend, PYTHONPATH=code or str(HERE.parents[1]))
                # run in the code's own folder: ``python -m`` puts the working directory before PYTHONPATH
                measured = _measured([*cli, "index", str(data), "--store", str(store), "--quiet"], arm_env,
                                     cwd=code or str(HERE.parents[1]))
            walls[name].append(measured["wall"])
            cpus[name].append(measured["cpu"])
            print(f"  pair {pair + 1}: {name} {measured['wall']:.1f} s wall, {measured['cpu']:.1f} s CPU",
                  file=sys.stderr, flush=True)
    base = float(np.median(walls["raw torch"]))
    base_cpu = float(np.median(cpus["raw torch"]))
    load = os.getloadavg()
    print(f"\n{len(rows)} entities of {args.real.name}: {raw.get('sentences', 0):,} sentences "
          f"({raw.get('distinct', 0) / max(1, raw.get('sentences', 1)):.0%} distinct); {args.pairs} pairs alternating; "
          f"{os.cpu_count()} CPUs, load {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) at the end; "
          f"OMP_WAIT_POLICY={env['OMP_WAIT_POLICY']} for every process\n")
    print("| process (whole, start to exit) | wall s (median) | walls | CPU s (median) | rate vs raw torch "
          "(ratio of medians) | CPU vs raw |")
    print("|---|---:|---|---:|---:|---:|")
    for name, values in walls.items():
        median = float(np.median(values))
        cpu = float(np.median(cpus[name]))
        print(f"| {name} | {median:.1f} | {', '.join(f'{v:.1f}' for v in values)} | {cpu:.1f} | "
              f"{base / median:.2f}x | {cpu / base_cpu:.2f} |")
    if args.profile:
        print("\nWhere the time of `opinio index` goes (one in-process run per backend, fresh store):\n")
        print("| backend | imports | model load | prepare (segment, tokens) | catalog+vectors+sentiment (embed) "
              "| finish | BM25 | HIRO fit | total |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for backend in backends:
            prof = _child("profile", dict(env, OPINIO_ENCODER=backend), data=str(data),
                          store=str(work / f"profile-{backend}"))
            st = prof["stages"]
            total = prof["imports_s"] + prof["model_load_s"] + prof["index_s"] + prof["hiro_s"]
            print(f"| {backend} | {prof['imports_s']:.1f} | {prof['model_load_s']:.1f} | {st.get('prepare', 0):.1f} | "
                  f"{st.get('embed', 0):.1f} | {st.get('finish', 0):.1f} | {st.get('bm25', 0):.1f} | "
                  f"{prof['hiro_s']:.1f} | {total:.1f} |")


# --------------------------------------------------------------------------- the parent
def _run(argv: list[str], env: dict[str, str], cwd: str | None = None) -> str:
    """Run ``argv`` and return its stdout (raising with its stderr when it fails)."""
    proc = subprocess.run(argv, capture_output=True, env=env, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:6])} ... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def _measured(argv: list[str], env: dict[str, str], cwd: str | None = None) -> dict[str, Any]:
    """Run ``argv`` (in ``cwd``) under a tiny wrapper that reports its wall time and peak RSS (that child only)."""
    wrapper = (
        "import json,os,subprocess,sys,time,resource\n"
        "t=time.perf_counter(); p=subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "w=time.perf_counter()-t; u=resource.getrusage(resource.RUSAGE_CHILDREN); r=u.ru_maxrss/1024\n"
        "sys.stderr.write(p.stderr[-3000:]) if p.returncode else None\n"
        "print(json.dumps({'wall': w, 'rss_mb': r, 'cpu': u.ru_utime + u.ru_stime, 'rc': p.returncode,"
        " 'stdout': p.stdout[-20000:]}))\n"
    )
    stdout = _run([sys.executable, "-c", wrapper, *argv], env, cwd)
    result = json.loads(stdout.strip().splitlines()[-1])
    if result["rc"] != 0:
        raise RuntimeError(f"{' '.join(argv[:6])} ... failed ({result['rc']})")
    return result


def _child(kind: str, env: dict[str, str], **kwargs: Any) -> dict[str, Any]:
    measured = _measured([sys.executable, str(HERE), "--child", kind, "--child-args", json.dumps(kwargs)], env)
    payload = json.loads(measured["stdout"].strip().splitlines()[-1])
    payload["wall"] = measured["wall"]
    payload["rss_mb"] = measured["rss_mb"]
    return payload


def bench(reviews: int, seed: int, rounds: int, work: Path, sample: int | None, naive: bool) -> dict[str, Any]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.setdefault("ANONYMIZED_TELEMETRY", "False")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    data = work / f"synth-{reviews}.json"
    store = work / f"store-{reviews}"
    cli = [sys.executable, "-m", "opinio_agents"]
    _run([*cli, "synth", str(data), "--entities", "1", "--reviews-per-entity", str(reviews), "--seed", str(seed)], env)

    row: dict[str, Any] = {"reviews": reviews}
    print(f"[{reviews} reviews] raw torch ...", file=sys.stderr)
    row["torch"] = _child("raw", env, data=str(data), backend="torch", sample=sample)
    row["sentences"] = row["torch"]["sentences"]
    print(f"[{reviews} reviews] raw onnx-int8 ...", file=sys.stderr)
    row["int8"] = _child("raw", env, data=str(data), backend="onnx-int8", sample=sample)
    print(f"[{reviews} reviews] opinio index ...", file=sys.stderr)
    first = _measured([*cli, "index", str(data), "--store", str(store), "--quiet"], env)
    row["index"] = {"wall": first["wall"], "rss_mb": first["rss_mb"], "table": first["stdout"]}
    print(f"[{reviews} reviews] re-index ...", file=sys.stderr)
    row["reindex"] = _child("reindex", env, data=str(data), store=str(store))
    again = _measured([*cli, "index", str(data), "--store", str(store), "--quiet"], env)
    row["reindex_cli"] = {"wall": again["wall"]}
    from opinio_agents.stores import SentenceStore

    catalog = SentenceStore(store).catalog
    row["distinct_texts"] = catalog.count_text_vectors()
    catalog.close()
    if naive:
        print(f"[{reviews} reviews] naive LlamaIndex ...", file=sys.stderr)
        row["naive"] = _child("naive", env, data=str(data), store=str(work / f"naive-{reviews}"), sample=sample)
    print(f"[{reviews} reviews] sparse and queries ...", file=sys.stderr)
    row["sparse"] = _child("sparse", env, store=str(store), rounds=rounds)
    row["query"] = _child("query", env, store=str(store), rounds=rounds)
    return row


def _table(rows: list[dict[str, Any]], export_s: float | None) -> str:
    lines = [
        "| sentences | distinct texts | raw torch (sent/s) | raw onnx-int8 (sent/s) | `opinio index` (sent/s) "
        "| index / raw torch | naive LlamaIndex (sent/s) | naive / raw torch | first index (s) "
        "| re-index unchanged (s) | re-index / first | `opinio index` peak RSS (MB) | naive peak RSS (MB) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n = r["sentences"]
        torch_sps = r["torch"]["sps"]
        index_sps = n / r["index"]["wall"]
        naive = r.get("naive")
        naive_sps = f"{naive['sps']:.0f}" if naive else "n/a"
        naive_ratio = f"{naive['sps'] / torch_sps:.2f}" if naive else "n/a"
        naive_rss = f"{naive['rss_mb']:.0f}" if naive else "n/a"
        lines.append(
            f"| {n:,} | {r['distinct_texts']:,} ({100 * r['distinct_texts'] / n:.0f}%) | {torch_sps:.0f} "
            f"| {r['int8']['sps']:.0f} | {index_sps:.0f} | **{index_sps / torch_sps:.2f}** | {naive_sps} "
            f"| {naive_ratio} | {r['index']['wall']:.1f} | {r['reindex']['seconds']:.2f} "
            f"(cold {r['reindex']['cold_s']:.1f}, CLI {r['reindex_cli']['wall']:.1f}) "
            f"| {100 * r['reindex']['seconds'] / r['index']['wall']:.1f}% "
            f"| {r['index']['rss_mb']:.0f} | {naive_rss} |"
        )
    notes = [
        "",
        "`opinio index`: wall clock of a fresh CLI process on an empty store (imports, ONNX session, segmentation, "
        "App. D tokens, catalog, encoding of each distinct text once, Chroma, sentiment, BM25, HIRO fit and paths). "
        "Raw rates: the encoder alone on every sentence (no dedupe), model loaded and warmed up. "
        "Re-index: `OpinioRAG.index` on the unchanged file, timed around the call in a process that has run it "
        "once (cold: that first call, lazy imports included; CLI: a whole `opinio index` process).",
    ]
    if any(r["torch"]["encoded"] != r["sentences"] for r in rows):
        notes.append("Raw and naive rates measured on a random sample of the sentences (--baseline-sample).")
    if export_s is not None:
        notes.append(f"One-off ONNX export + int8 quantisation before the run (cached afterwards): {export_s:.1f} s.")
    return "\n".join(lines + notes)


def _sparse_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| sentences | library | build (s) | query p50 / p95 (ms) |",
        "|---:|---|---:|---:|",
    ]
    for r in rows:
        for name, m in r["sparse"]["libraries"].items():
            if m is None:
                lines.append(f"| {r['sentences']:,} | {name} | n/a (not installed) | |")
            else:
                lines.append(
                    f"| {r['sentences']:,} | {name} | {m['build_s']:.2f} | {m['p50_ms']:.2f} / {m['p95_ms']:.2f} |"
                )
    lines.append("")
    lines.append("| sentences | hybrid p50 / p95 (ms) | BM25 p50 / p95 (ms) | dense p50 / p95 (ms) |")
    lines.append("|---:|---:|---:|---:|")
    for r in rows:
        q = r["query"]
        lines.append(
            f"| {r['sentences']:,} | {q['hybrid']['p50_ms']:.1f} / {q['hybrid']['p95_ms']:.1f} "
            f"| {q['bm25']['p50_ms']:.1f} / {q['bm25']['p95_ms']:.1f} "
            f"| {q['dense']['p50_ms']:.1f} / {q['dense']['p95_ms']:.1f} |"
        )
    lines.append("\n(App. D tokens from the store for every library; query embeddings precomputed for the latencies.)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, nargs="*", default=[1450, 6900], help="reviews per synthetic entity")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the 25 queries for latencies")
    parser.add_argument("--work", type=Path, default=None, help="working folder (default: a temporary one)")
    parser.add_argument(
        "--baseline-sample", type=int, default=None,
        help="encode only a random sample of this many sentences for the raw and naive rates (they are rates)",
    )
    parser.add_argument("--no-naive", action="store_true", help="skip the naive LlamaIndex path")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw figures here")
    parser.add_argument("--real", type=Path, default=None,
                        help="a real-review file (OpinioBank JSON array): opinio index vs raw torch on its entities")
    parser.add_argument("--entities", type=int, default=30, help="with --real: the first N entities")
    parser.add_argument("--pairs", type=int, default=3, help="with --real: alternating pairs")
    parser.add_argument("--backends", default="onnx,onnx-int8", help="with --real: encoder backends of opinio index")
    parser.add_argument("--profile", action="store_true", help="with --real: also the stage profile")
    parser.add_argument("--baseline-code", type=Path, default=None,
                        help="with --real: also run each backend from this checkout (PYTHONPATH), e.g. a worktree "
                             "of the previous commit, alternating with this one")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-args", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        kwargs = json.loads(args.child_args)
        for name in ("data", "store"):
            if name in kwargs:
                kwargs[name] = Path(kwargs[name])
        result = globals()[f"child_{args.child}"](**kwargs)
        print(json.dumps(result))
        return

    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    if args.real is not None:
        with tempfile.TemporaryDirectory(prefix="opinio-indexing-real-") as tmp:
            real_bench(args, args.work or Path(tmp))
        return

    env = dict(os.environ)
    prepared = _child("prepare", env)
    export_s = prepared["seconds"] if prepared["seconds"] > 0.5 else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="opinio-indexing-bench-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for reviews in args.reviews:
            rows.append(bench(reviews, args.seed, args.rounds, work, args.baseline_sample, not args.no_naive))
            print(_table(rows, export_s), file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    print(f"\n{os.cpu_count()} CPUs, load average at the end {os.getloadavg()[0]:.1f}\n")
    print(_table(rows, export_s))
    print()
    print(_sparse_table(rows))


if __name__ == "__main__":
    main()
