"""Probe section ``kills``: ``kill -9`` an indexing run at named points, rerun it, compare with a clean build.

Each case runs a real indexing subprocess with ``OPINIO_KILL_AT=<checkpoint>[@n]``
(see :mod:`opinio_agents.stores.checkpoints`), so the process SIGKILLs itself at an
exact, repeatable point: after the catalog transaction, between Chroma batches,
when each BM25 file has appeared, around the BM25 swap, mid-HIRO, before and after
the completion marker. The same command is then run again without the variable;
the case is ``ok`` when the rerun succeeds, the store is identical to a clean build
of the same data (:func:`opinio_agents.stores.snapshot.compare_stores`) and every
entity's BM25 retriever loads and answers the probe's queries as the clean build's does.

Two scenarios: a fresh build of a small synthetic dataset (two entities), and an
update of that store to a changed version of the dataset (reviews removed, edited
and added), killed part-way.

Full mode runs ``opinio index`` with the default MiniLM encoder; ``quick=True`` runs
``OpinioRAG.index`` with a hash encoder and a subset of the points, in a few seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripts.probe.common import ProbeRow

SECTION = "kills"
REPO = Path(__file__).resolve().parents[2]
QUERIES = ("clean room", "breakfast buffet", "noisy street", "friendly staff", "pool")
_KILLED = -9

#: (scenario, OPINIO_KILL_AT) of the full probe; each is one killed run plus one rerun.
FULL_POINTS: tuple[tuple[str, str], ...] = (
    ("fresh", "after-catalog"),
    ("fresh", "chroma-chunk@1"),
    ("fresh", "after-catalog@2"),
    ("fresh", "bm25-files-written"),
    ("fresh", "bm25-stamped"),
    ("fresh", "bm25-files-written@2"),
    ("fresh", "hiro-fit-saved"),
    ("fresh", "hiro-paths-tmp"),
    ("fresh", "before-marker"),
    ("fresh", "after-marker"),
    ("update", "after-catalog"),
    ("update", "after-stale-vectors"),
    ("update", "bm25-old-moved"),
)
#: The fast subset: the point of the issue's report (the BM25 files appearing).
QUICK_POINTS: tuple[tuple[str, str], ...] = (("fresh", "bm25-files-written"),)


def probe_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a probe subprocess: this checkout first on the path, offline, no kill point."""
    env = {k: v for k, v in os.environ.items() if k != "OPINIO_KILL_AT"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"})
    env.update(extra or {})
    return env


def index_command(store: Path, data: Path, *, encoder: str, wait: bool = False) -> list[str]:
    """The command line of one indexing run (see ``scripts/probe/_index_run.py``)."""
    cmd = [sys.executable, "-m", "scripts.probe._index_run", "--store", str(store), "--data", str(data)]
    return [*cmd, "--encoder", encoder, *(["--wait"] if wait else [])]


def run_index(
    store: Path, data: Path, *, encoder: str, kill_at: str | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run one indexing subprocess (killing itself at ``kill_at`` when given)."""
    env = probe_env({"OPINIO_KILL_AT": kill_at} if kill_at else None)
    return subprocess.run(
        index_command(store, data, encoder=encoder), cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def write_datasets(workdir: Path, *, reviews: int) -> tuple[Path, Path]:
    """A small synthetic dataset and a changed version of it (removed, edited and new reviews)."""
    from opinio_agents.datasets import write_synthetic

    first, _ = write_synthetic(workdir / "data-v1.json", n_entities=2, reviews_per_entity=reviews, seed=3)
    records: list[dict[str, Any]] = json.loads(Path(first).read_text("utf-8"))
    changed = json.loads(json.dumps(records))
    for n, entity in enumerate(changed):
        entity["user_reviews"] = entity["user_reviews"][3:]  # three removed
        entity["user_reviews"][0]["text"] += " The lift was broken on our last day."  # one edited
        entity["user_reviews"].append(  # one added
            {"review_id": 10_000 + n, "text": "Spotless room and a quiet street. The pool was cold.", "rating": 4}
        )
    second = workdir / "data-v2.json"
    second.write_text(json.dumps(changed), "utf-8")
    return Path(first), second


def bm25_answers(store: Path) -> dict[str, list[tuple[str, float]]]:
    """Top-5 BM25 sentence ids and scores of every entity for the probe's queries (loads each retriever)."""
    from opinio_agents.indexing.stages import AppendixDTokenizer
    from opinio_agents.retrieval.factory import RetrieverFactory
    from opinio_agents.stores import SentenceStore
    from scripts.probe._index_run import ProbeHashEncoder

    sentence_store = SentenceStore(store)
    factory = RetrieverFactory(sentence_store, ProbeHashEncoder(), tokenizer=AppendixDTokenizer())
    answers: dict[str, list[tuple[str, float]]] = {}
    try:
        for key in sentence_store.entity_keys():
            retriever = factory.retriever(key, "bm25", top_k=5)
            for query in QUERIES:
                hits = retriever.retrieve(query)
                answers[f"{key}/{query}"] = [(h.node.node_id, round(float(h.score or 0.0), 6)) for h in hits]
    finally:
        sentence_store.close()
    return answers


def compare_to_clean(clean: Path, store: Path) -> list[str]:
    """Differences between ``store`` and the clean build (files, catalog, Chroma, BM25 answers)."""
    from opinio_agents.errors import OpinioError
    from opinio_agents.stores.snapshot import compare_stores

    diffs = compare_stores(clean, store)
    try:
        if bm25_answers(clean) != bm25_answers(store):
            diffs.append("BM25 answers differ")
    except OpinioError as exc:
        diffs.append(f"BM25 retriever fails to load: {str(exc)[:160]}")
    return diffs


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run(workdir: Path, *, quick: bool = False) -> list[ProbeRow]:
    """Kill an indexing run at each point, rerun it, and compare with a clean build (one row per point)."""
    encoder = "hash" if quick else "minilm"
    points = QUICK_POINTS if quick else FULL_POINTS
    workdir.mkdir(parents=True, exist_ok=True)
    v1, v2 = write_datasets(workdir, reviews=30)

    clean = {"fresh": workdir / "clean-v1", "update": workdir / "clean-v2"}
    scenarios = {scenario for scenario, _ in points} | {"fresh"}
    for scenario in sorted(scenarios):
        for step in ([v1, v2] if scenario == "update" else [v1]):
            done = run_index(clean[scenario], step, encoder=encoder)
            if done.returncode != 0:
                return [ProbeRow(SECTION, f"clean build ({scenario})", "crash", _last_line(done.stderr))]

    rows: list[ProbeRow] = []
    for n, (scenario, point) in enumerate(points):
        case = f"kill -9 at {point} ({scenario})"
        store = workdir / f"killed-{n}"
        if scenario == "update":  # start from the clean v1 store, then update it to v2 and kill that run
            shutil.copytree(clean["fresh"], store)
        data = v1 if scenario == "fresh" else v2
        killed = run_index(store, data, encoder=encoder, kill_at=point)
        if killed.returncode != _KILLED:
            rows.append(
                ProbeRow(SECTION, case, "crash", f"the run did not reach {point} (rc={killed.returncode}) "
                         f"{_last_line(killed.stderr)}")
            )
            continue
        rerun = run_index(store, data, encoder=encoder)
        if rerun.returncode != 0:
            rows.append(ProbeRow(SECTION, case, "crash", f"rerun rc={rerun.returncode}: {_last_line(rerun.stderr)}"))
            continue
        diffs = compare_to_clean(clean[scenario], store)
        if diffs:
            rows.append(ProbeRow(SECTION, case, "not-identical", "; ".join(diffs)[:300]))
        else:
            rows.append(ProbeRow(SECTION, case, "ok", "rerun rc=0, identical to a clean build"))
        shutil.rmtree(store, ignore_errors=True)
        print(f"kills {n + 1}/{len(points)}: {rows[-1].outcome}: {case}", file=sys.stderr, flush=True)
    return rows
