"""Paper scale on one machine: an OpinioBank-sized corpus indexed in one resumable run with flat memory.

What it does, in one run (no timing is asserted anywhere):

1. generates the corpus with the real CLI, ``opinio synth`` (OpinioBank: 500 entities x
   1,500 reviews; ``--entities``/``--reviews-per-entity`` for a slice);
2. indexes it in a child process with :func:`opinio_agents.scale.corpus.index_corpus`
   (the shipped encoder, the full pipeline: segment, App. D tokens, catalog, vectors,
   sentiment, BM25, HIRO), the child logging its RSS after every entity;
3. SIGKILLs the child in the middle of entity ``--kill-at + 1`` and runs it again: the
   rerun skips the finished entities and completes the interrupted one, encoding only
   what had not reached the store (the count of sentences encoded on the rerun is shown);
4. reports sentences/s (measured: entities indexed whole in one run, the first of each run
   left out since it loads the model), the time for the whole corpus *extrapolated* from that
   rate, RSS per entity, store size on disk (measured, and extrapolated per sentence), and
   HIRO: the fit over the slice, the fit at its sample cap (``max_fit_points`` = 100K points,
   what a paper-scale fit costs whatever the corpus size) and the bounded sample read.

With ``--real DIR`` (the real-review files, e.g. ``../shared/data/real-reviews``) the corpus is
not synthetic: it is recombined from real reviews (:func:`recombine_real`) until it holds
``--sentences`` sentences, and after the run the script measures query latency on entities of
that store (hybrid retrieval, ``aspects()``, the query-free highlights; :func:`store_latency`).

Usage:
    python benchmarks/corpus_scale.py --entities 25 --reviews-per-entity 150 --kill-at 12
    python benchmarks/corpus_scale.py --real ../shared/data/real-reviews --sentences 1000000
    python benchmarks/corpus_scale.py --entities 500 --reviews-per-entity 1500   # the whole corpus (hours)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

PAPER_ENTITIES = 500
PAPER_REVIEWS = 1500
HIRO_CAP = 100_000


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.setdefault("ANONYMIZED_TELEMETRY", "False")
    return env


def worker(dataset: Path, store: Path, log: Path, embed_chunk: int) -> None:
    """The indexing run (a child process): one JSON line per step on ``log``, flushed at once."""
    from opinio_agents.api import OpinioRAG
    from opinio_agents.io.loaders import iter_valid_entities
    from opinio_agents.scale.corpus import CorpusProgress, index_corpus, rss_mib

    with log.open("a", encoding="utf-8") as out:

        def write(record: dict[str, object]) -> None:
            out.write(json.dumps(record) + "\n")
            out.flush()
            os.fsync(out.fileno())

        write({"phase": "start", "rss_mib": rss_mib(), "t": time.time()})

        def on_entity(p: CorpusProgress) -> None:
            record: dict[str, object] = {
                "phase": p.phase, "position": p.position, "entity": p.entity_id,
                "rss_mib": round(p.rss_mib, 1), "elapsed": round(p.elapsed, 3),
            }
            if p.stats is not None:
                record.update(
                    sentences=p.stats.sentences_total, encoded=p.stats.sentences_embedded,
                    resumed=p.stats.sentences_resumed, reused=p.stats.vectors_reused, changed=p.stats.changed,
                    reviews=p.stats.reviews_total,
                    seconds=round(p.stats.seconds + p.stats.timings.get("bm25", 0.0), 3),
                )
            write(record)

        from opinio_agents.indexing import Indexer

        rag = OpinioRAG(store)
        rag.indexer = Indexer(rag.store, rag.encoder, embed_chunk=embed_chunk)
        report = index_corpus(rag, iter_valid_entities(dataset), on_entity=on_entity)
        write({
            "phase": "done", "entities": report.entities, "skipped": report.skipped,
            "encoded": report.sentences_embedded, "resumed": report.sentences_resumed,
            "sentences": report.sentences_total, "hiro_fit_seconds": round(report.hiro_fit_seconds, 3),
            "hiro_fit_info": report.hiro_fit_info, "hiro_paths_seconds": round(report.hiro_paths_seconds, 3),
            "seconds": round(report.seconds, 3), "rss_mib": round(rss_mib(), 1), "t_end": time.time(),
        })


#: Real-review pools: one domain per entity, so a recombined entity reads like one hotel,
#: restaurant or product (file stem, entity kind, reviews per recombined entity).
REAL_POOLS: tuple[tuple[tuple[str, ...], str, int], ...] = (
    (("space_dev",), "hotel", 300),
    (("zomato",), "restaurant", 400),
    (("alexa", "fewsum", "oposum"), "product", 600),
)


def recombine_real(real_dir: Path, target_sentences: int, seed: int, out: Path) -> dict[str, Any]:
    """Write an OpinioBank JSON corpus recombined from real reviews, at least ``target_sentences`` sentences.

    How: the reviews of the real-review files are pooled by domain (hotels: SPACE dev;
    restaurants: Zomato; products: Alexa, FewSum and OpoSum). Entities are made in turn
    from each pool: a recombined entity draws ``n`` reviews of its pool without
    replacement (a review appears at most once in an entity, but in many entities), keeps
    their text, rating and date, and gets new review ids. Sentences are counted with the
    library's own segmenter, so the target is met exactly as the indexer will count.
    The text is real, but a sentence recurs across entities (the pools hold about 75K
    distinct sentences): the indexer's encode-once reuse serves the repeats, and the
    report says how many sentences were encoded.

    Returns:
        Counts: entities, reviews, sentences, distinct review texts per pool.
    """
    from opinio_agents.text.segment import split_sentences

    rng = np.random.default_rng(seed)
    pools: list[tuple[str, int, list[dict[str, Any]], np.ndarray]] = []
    for stems, kind, size in REAL_POOLS:
        reviews: list[dict[str, Any]] = []
        for stem in stems:
            for entity in json.loads((real_dir / f"{stem}.json").read_text(encoding="utf-8")):
                reviews += [r for r in entity["user_reviews"] if r.get("text", "").strip()]
        counts = np.array([len(split_sentences(r["text"])) for r in reviews])
        pools.append((kind, min(size, len(reviews)), reviews, counts))
    total = entities = n_reviews = 0
    with out.open("w", encoding="utf-8") as f:
        f.write("[\n")
        while total < target_sentences:
            kind, size, reviews, counts = pools[entities % len(pools)]
            picked = rng.choice(len(reviews), size=size, replace=False)
            user_reviews = []
            for j, i in enumerate(picked):
                review = {k: v for k, v in reviews[i].items() if k in ("text", "rating", "publication_date")}
                user_reviews.append({"review_id": f"r{entities:04d}-{j:04d}", **review})
            record = {"entity_id": f"real-{entities:04d}", "entity_name": f"Recombined {kind} {entities:04d}",
                      "user_reviews": user_reviews}
            f.write(("," if entities else "") + json.dumps(record, ensure_ascii=False) + "\n")
            total += int(counts[picked].sum())
            n_reviews += size
            entities += 1
        f.write("]\n")
    return {"entities": entities, "reviews": n_reviews, "sentences": total,
            "pool_reviews": {kind: len(reviews) for kind, _, reviews, _ in pools}}


def store_latency(store: Path, n_entities: int, repeat: int, seed: int) -> dict[str, Any]:
    """Latency on entities of the built store: hybrid retrieval, ``aspects()``, query-free highlights.

    ``n_entities`` entities are drawn from the store; each is asked the same queries
    ``repeat`` times (hybrid retrieval through the façade, its query vectors cached after
    the first), then ``aspects()`` and the query-free highlights once cold (nothing stored
    for that entity yet) and once warm. p50/p95 over all calls of a kind.
    """
    from opinio_agents.api import OpinioRAG

    queries = ("staff", "cleanliness", "price", "food", "location", "noise", "battery", "delivery time")
    started = time.perf_counter()
    rag = OpinioRAG(store, verify=False)
    open_s = time.perf_counter() - started
    keys = sorted(rag.entities())
    rng = np.random.default_rng(seed)
    chosen = [keys[i] for i in sorted(rng.choice(len(keys), size=min(n_entities, len(keys)), replace=False))]
    times: dict[str, list[float]] = {"hybrid query, first on the entity": [], "hybrid query, again": [],
                                     "aspects, cold": [], "aspects, warm": [],
                                     "query-free, cold": [], "query-free, warm": []}
    for key in chosen:
        for attempt in range(repeat):
            for q in queries:
                t0 = time.perf_counter()
                rag.retrieve(key, q, retriever="hybrid", top_k=10)
                kind = "hybrid query, first on the entity" if attempt == 0 else "hybrid query, again"
                times[kind].append(time.perf_counter() - t0)
        for name, call in (("aspects", lambda k=key: rag.aspects(k)),
                           ("query-free", lambda k=key: rag.highlights(k, query_free=True))):
            for attempt in ("cold", "warm"):
                t0 = time.perf_counter()
                call()
                times[f"{name}, {attempt}"].append(time.perf_counter() - t0)
    rag.close()

    def pct(values: list[float], q: float) -> float:
        return float(np.percentile(values, q) * 1000) if values else float("nan")

    return {"entities": chosen, "open_seconds": open_s,
            "ms": {k: {"n": len(v), "p50": pct(v, 50), "p95": pct(v, 95)} for k, v in times.items()}}


def _read(log: Path) -> list[dict]:
    if not log.exists():
        return []
    rows = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by the kill
            continue
    return rows


def _child(dataset: Path, store: Path, log: Path, embed_chunk: int) -> subprocess.Popen[bytes]:
    cmd = [
        "nice", "-n", "10", sys.executable, __file__, "--embed-chunk", str(embed_chunk),
        "--worker", str(dataset), str(store), str(log),
    ]
    return subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def run_killed(dataset: Path, store: Path, log: Path, kill_at: int, embed_chunk: int) -> dict:
    """Run the child until ``kill_at`` entities are stored, then SIGKILL it mid-way through the next one."""
    proc = _child(dataset, store, log, embed_chunk)
    while proc.poll() is None:
        done = [r for r in _read(log) if r["phase"] == "index"]
        if len(done) >= kill_at:
            timed = [r["seconds"] for r in done[1:]] or [r["seconds"] for r in done]
            time.sleep(0.6 * float(np.median(timed)))  # past half an entity's time: inside its encoding
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return {"killed_after": len([r for r in _read(log) if r["phase"] == "index"]), "signal": "SIGKILL"}
        time.sleep(0.2)
    stderr = proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    raise SystemExit(f"the indexing child exited ({proc.returncode}) before the kill: {stderr}")


def run_to_end(dataset: Path, store: Path, log: Path, embed_chunk: int) -> None:
    proc = _child(dataset, store, log, embed_chunk)
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the indexing child failed ({proc.returncode}): {err.decode()[-2000:]}")


def hiro_at_cap(store: Path, seed: int) -> dict[str, float]:
    """The HIRO fit at its sample cap and the bounded sample read, measured on the slice's vectors."""
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer
    from opinio_agents.hiro.kmeans import kmeans
    from opinio_agents.hiro.store import HiroIndex
    from opinio_agents.stores import SentenceStore

    sentences = SentenceStore(store)
    keys = sentences.entity_keys()
    total = sentences.count_sentences()
    # The bounded read: a sample of a quarter of the slice, read entity by entity (HiroIndex.fit's path above the cap).
    probe = HiroIndex(sentences, max_fit_points=max(12, total // 4), directory=store / "hiro-probe")
    t0 = time.perf_counter()
    points = probe._fit_points(keys)
    read_seconds = time.perf_counter() - t0
    # The fit at the cap: 100K points drawn with replacement from the slice's vectors.
    rng = np.random.default_rng(seed)
    everything = np.vstack([sentences.embeddings(k) for k in keys])
    cap_points = everything[rng.integers(0, len(everything), HIRO_CAP)]
    t0 = time.perf_counter()
    fitted = ResidualKMeansIndexer(seed=seed).fit(cap_points)
    cap_fit = time.perf_counter() - t0
    # The top level with mini-batch k-means (kmeans.py) instead of the hierarchy's full-batch Lloyd.
    t0 = time.perf_counter()
    mini = kmeans(cap_points, 12, seed=seed, batch_size=4096, max_iter=5)
    mini_s = time.perf_counter() - t0
    lloyd_top = float(fitted.info["mean_sq_residual"][0])
    return {
        "sample_points": int(len(points)), "sample_read_seconds": read_seconds,
        "sample_read_per_entity": read_seconds / max(1, len(keys)),
        "cap_points": HIRO_CAP, "cap_fit_seconds": cap_fit, "cap_fit_inner": float(fitted.info["fit_seconds"]),
        "top_minibatch_seconds": mini_s, "top_minibatch_vs_lloyd_residual": mini.inertia / len(cap_points) / lloyd_top,
    }


def raw_rate(store: Path, n: int) -> float:
    """The shipped encoder alone on ``n`` of the slice's sentences (same machine, same run), sentences/s."""
    from opinio_agents.embeddings import get_encoder
    from opinio_agents.stores import SentenceStore

    sentences = SentenceStore(store)
    texts: list[str] = []
    for key in sentences.entity_keys():
        texts += [s.sentence.text for s in sentences.sentences(key)]
        if len(texts) >= n:
            break
    texts = texts[:n]
    encoder = get_encoder()
    encoder.encode(texts[:32])  # load and warm up
    t0 = time.perf_counter()
    encoder.encode(texts)
    return len(texts) / (time.perf_counter() - t0)


def _with_dt(rows: list[dict]) -> list[dict]:
    """Each entity's wall time: the time since the previous entity was logged (the whole pipeline)."""
    previous = 0.0
    for row in rows:
        row["dt"] = row["elapsed"] - previous
        previous = row["elapsed"]
    return rows


def _slope(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    return float(np.polyfit(np.arange(len(values), dtype=float), np.asarray(values, dtype=float), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=PAPER_ENTITIES)
    parser.add_argument("--reviews-per-entity", type=int, default=PAPER_REVIEWS)
    parser.add_argument("--kill-at", type=int, default=None, help="SIGKILL after this many entities (default: half)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embed-chunk", type=int, default=1024, help="Sentences encoded and stored per step")
    parser.add_argument("--raw-sample", type=int, default=1000, help="Sentences for the raw-encoder rate")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/opinio-corpus-scale"))
    parser.add_argument("--real", type=Path, default=None, help="Recombine the corpus from these real-review files")
    parser.add_argument("--sentences", type=int, default=1_000_000, help="With --real: sentences to reach")
    parser.add_argument("--latency-entities", type=int, default=5, help="With --real: entities to time queries on")
    parser.add_argument("--latency-only", type=Path, default=None, help="Only the latency table, on this built store")
    parser.add_argument("--worker", nargs=3, metavar=("DATASET", "STORE", "LOG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        dataset_arg, store_arg, log_arg = (Path(a) for a in args.worker)
        worker(dataset_arg, store_arg, log_arg, args.embed_chunk)
        return

    if args.latency_only is not None:
        print(_latency_table({"latency": store_latency(args.latency_only, args.latency_entities, 3, args.seed)}))
        return
    work = args.workdir
    if work.exists():
        import shutil

        shutil.rmtree(work)
    work.mkdir(parents=True)
    dataset, store = work / "corpus.json", work / "store"
    t0 = time.perf_counter()
    recombined: dict[str, Any] | None = None
    if args.real is not None:
        recombined = recombine_real(args.real, args.sentences, args.seed, dataset)
        args.entities, args.reviews_per_entity = recombined["entities"], recombined["reviews"] // recombined["entities"]
        print(f"recombined corpus: {json.dumps(recombined)}", flush=True)
    else:
        subprocess.run(
            [sys.executable, "-m", "opinio_agents", "synth", str(dataset), "--entities", str(args.entities),
             "--reviews-per-entity", str(args.reviews_per_entity), "--seed", str(args.seed)],
            check=True, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    synth_seconds = time.perf_counter() - t0
    kill_at = args.kill_at if args.kill_at is not None else max(1, args.entities // 2)

    log1, log2 = work / "run1.jsonl", work / "run2.jsonl"
    killed = run_killed(dataset, store, log1, kill_at, args.embed_chunk)
    run_to_end(dataset, store, log2, args.embed_chunk)
    run1, run2 = _read(log1), _read(log2)
    done = next(r for r in run2 if r["phase"] == "done")
    index1 = _with_dt([r for r in run1 if r["phase"] == "index"])
    index2 = _with_dt([r for r in run2 if r["phase"] == "index"])
    fresh2 = [r for r in index2 if r["changed"] and r["resumed"] == 0]
    whole = [r for r in index1[1:] if r["resumed"] == 0] + fresh2[1:]
    rate = sum(r["sentences"] for r in whole) / sum(r["dt"] for r in whole)
    sentences = sum(r["sentences"] for r in index2)
    reviews = sum(r["reviews"] for r in index2)
    per_review = sentences / reviews
    paper_sentences = PAPER_ENTITIES * PAPER_REVIEWS * per_review
    interrupted = next((r for r in index2 if r["changed"]), None)
    size = {name: _size(store / name) for name in ("catalog.sqlite", "chroma", "bm25", "hiro")}
    size["total"] = _size(store)
    hiro = hiro_at_cap(store, args.seed)
    raw = raw_rate(store, args.raw_sample)

    rss_index = [r["rss_mib"] for r in index2]
    rss_hiro = [r["rss_mib"] for r in run2 if r["phase"] == "hiro"]
    results = {
        "slice": {"entities": args.entities, "reviews_per_entity": args.reviews_per_entity, "sentences": sentences,
                  "sentences_per_review": per_review, "synth_seconds": synth_seconds,
                  "dataset_bytes": dataset.stat().st_size},
        "rate_sentences_per_s": rate, "rate_entities": len(whole), "raw_encoder_sentences_per_s": raw,
        "embed_chunk": args.embed_chunk,
        "extrapolated": {"paper_sentences": paper_sentences, "index_hours": paper_sentences / rate / 3600,
                         "store_gib": size["total"] / sentences * paper_sentences / 2**30},
        "kill": {**killed, "rerun_skipped": done["skipped"], "rerun_encoded": done["encoded"],
                 "rerun_resumed": done["resumed"],
                 "interrupted_entity": interrupted
                 and {k: interrupted[k] for k in ("entity", "sentences", "encoded", "resumed")}},
        "rss": {"run1_index": [r["rss_mib"] for r in index1], "run2_index": rss_index, "run2_hiro": rss_hiro,
                "slope_mib_per_entity_second_half": _slope(rss_index[len(rss_index) // 2 :]),
                "first": rss_index[0], "last": rss_index[-1], "max": max(rss_index + rss_hiro)},
        "disk_bytes": size,
        "hiro": {"fit_seconds": done["hiro_fit_seconds"], "fit_info": done["hiro_fit_info"],
                 "paths_seconds": done["hiro_paths_seconds"], **hiro},
    }
    if recombined is not None:
        first = next(r for r in run1 if r["phase"] == "start")
        results["recombined"] = recombined
        results["encoded_total"] = sum(r["encoded"] - r.get("reused", 0) for r in index1 + index2)
        results["total_seconds"] = done["t_end"] - first["t"] if "t_end" in done else None
        results["latency"] = store_latency(store, args.latency_entities, 3, args.seed)
    (work / "results.json").write_text(json.dumps(results, indent=2))
    print(_table(results))
    if "latency" in results:
        print(_latency_table(results))


def _latency_table(r: dict) -> str:
    lat = r["latency"]
    rows = [f"Latency on {len(lat['entities'])} entities of the store (façade opened in {lat['open_seconds']:.1f} s):",
            "", "| call | n | p50 ms | p95 ms |", "|---|---|---|---|"]
    rows += [f"| {name} | {v['n']} | {v['p50']:.1f} | {v['p95']:.1f} |" for name, v in lat["ms"].items()]
    total = r.get("total_seconds")
    if total:
        s = r["slice"]["sentences"]
        rows += ["", f"Whole run, first start to done (incl. the kill and the rerun): {total / 60:.1f} min, "
                 f"{s / total:.0f} sentences/s over {s:,} sentences; encoded {r['encoded_total']:,} "
                 f"(the rest reused stored vectors of repeated sentences)"]
    return "\n".join(rows) + "\n"


def _size(path: Path) -> int:
    from opinio_agents.scale.corpus import dir_size

    return path.stat().st_size if path.is_file() else dir_size(path)


def _table(r: dict) -> str:
    s, k, h, x = r["slice"], r["kill"], r["hiro"], r["extrapolated"]
    mib = 2**20
    rows = [
        "| measure | value |",
        "|---|---|",
        f"| slice (measured) | {s['entities']} entities x {s['reviews_per_entity']} reviews = "
        f"{s['sentences']:,} sentences "
        f"({s['sentences_per_review']:.2f} per review); `opinio synth` {s['synth_seconds']:.1f} s, "
        f"{s['dataset_bytes'] / mib:.1f} MiB |",
        f"| indexing rate (measured, {r['rate_entities']} whole entities, embed chunk {r['embed_chunk']}) | "
        f"{r['rate_sentences_per_s']:.1f} sentences/s; the raw encoder on the slice's sentences, same run: "
        f"{r['raw_encoder_sentences_per_s']:.1f}/s "
        f"({r['rate_sentences_per_s'] / r['raw_encoder_sentences_per_s']:.2f}x) |",
        f"| whole corpus, 500 x 1,500 (extrapolated from that rate) | {x['paper_sentences'] / 1e6:.2f}M sentences, "
        f"{x['index_hours']:.1f} h |",
        f"| RSS after each entity, run 2 (MiB) | first {r['rss']['first']:.0f}, last {r['rss']['last']:.0f}, "
        f"slope over the second half {r['rss']['slope_mib_per_entity_second_half']:+.2f} MiB/entity, "
        f"max incl. HIRO {r['rss']['max']:.0f} |",
        f"| store on disk (measured) | {r['disk_bytes']['total'] / mib:.1f} MiB (catalog "
        f"{r['disk_bytes']['catalog.sqlite'] / mib:.1f}, chroma {r['disk_bytes']['chroma'] / mib:.1f}, bm25 "
        f"{r['disk_bytes']['bm25'] / mib:.1f}, hiro {r['disk_bytes']['hiro'] / mib:.1f}) |",
        f"| store for the whole corpus (extrapolated per sentence) | {x['store_gib']:.1f} GiB |",
        f"| HIRO fit over the slice (measured) | {h['fit_seconds']:.1f} s on {h['fit_info'].get('fit_points')} points; "
        f"paths of all entities {h['paths_seconds']:.1f} s |",
        f"| HIRO fit at its cap, {h['cap_points']:,} points (measured; a paper-scale fit samples this many) | "
        f"{h['cap_fit_seconds']:.1f} s (Lloyd per node); its top level with mini-batch k-means instead: "
        f"{h['top_minibatch_seconds']:.1f} s, residual {h['top_minibatch_vs_lloyd_residual']:.3f}x Lloyd's |",
        f"| HIRO sample read (measured, bounded path) | {h['sample_read_per_entity'] * 1000:.0f} ms/entity "
        f"(x500 = {h['sample_read_per_entity'] * 500:.0f} s, extrapolated) |",
        f"| SIGKILL + rerun | killed in entity {k['killed_after'] + 1} after {k['killed_after']} stored; rerun skipped "
        f"{k['rerun_skipped']}, encoded {k['rerun_encoded']:,} sentences, kept {k['rerun_resumed']:,} stored vectors; "
        f"interrupted entity: {k['interrupted_entity']} |",
    ]
    rss = ", ".join(f"{v:.0f}" for v in r["rss"]["run2_index"])
    return "\n".join(rows) + f"\n\nRSS (MiB) after each entity of run 2: {rss}\n"


if __name__ == "__main__":
    main()
