"""Seconds the aspect namer (``PhraseNamer.name``) takes per entity, in one fresh process.

Run (after ``benchmarks/aspect_labels.py --store DIR`` has built the stores):
    python benchmarks/namer_speed.py --store DIR/synth-1500 --entities 1,2
    python benchmarks/namer_speed.py --store DIR/space-dev --entities 182519,100585,1722910
    git show fe3c9f2:opinio_agents/hiro/labels.py > /tmp/old_labels.py
    python benchmarks/namer_speed.py --store DIR/synth-1500 --entities 1,2 --labels-module /tmp/old_labels.py

The clusters are those aspect discovery names (``retrieve_clusters`` with ``top_k=20``, as
``discover_aspects(top_k=10)`` asks). The first entity's time is a cold namer in a cold process
(the triplet extractor's model is loaded inside it; the sentence encoder is loaded before, as a
store's query path does); each later entity runs with the models loaded. ``--labels-module``
times another version of ``opinio_agents/hiro/labels.py`` (e.g. an earlier commit's) on the
same clusters.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path


def _namer_class(path: Path | None):  # noqa: ANN202 - either version's PhraseNamer
    if path is None:
        from opinio_agents.hiro.labels import PhraseNamer

        return PhraseNamer
    spec = importlib.util.spec_from_file_location("labels_under_test", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["labels_under_test"] = module
    spec.loader.exec_module(module)
    return module.PhraseNamer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--entities", required=True, help="comma-separated entity ids, first is timed cold")
    parser.add_argument("--top-k", type=int, default=20, help="clusters per entity")
    parser.add_argument("--labels-module", type=Path, default=None, help="another labels.py to time")
    args = parser.parse_args()

    from opinio_agents.embeddings import get_encoder
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.hiro.retriever import retrieve_clusters
    from opinio_agents.stores.sentence_store import SentenceStore

    store = SentenceStore(args.store)
    hiro = HiroIndex(store, depth=3)
    hiro.fit()
    work = []
    for key in args.entities.split(","):
        stored = store.sentences(key)
        clusters = retrieve_clusters(hiro, key, top_k=args.top_k)
        work.append((key, [c.indices for c in clusters], [s.tokens for s in stored], [s.sentence.text for s in stored]))
    get_encoder().encode(["warm up"])
    namer = _namer_class(args.labels_module)()
    print(f"namer: {args.labels_module or 'opinio_agents.hiro.labels'}")
    print("| entity | sentences | clusters | naming s | |")
    print("|---|---|---|---|---|")
    for n, (key, clusters, tokens, texts) in enumerate(work):
        t0 = time.perf_counter()
        labels = namer.name(clusters, tokens, texts)
        spent = time.perf_counter() - t0
        named = sum(label is not None for label in labels)
        state = "cold process" if n == 0 else "models loaded"
        print(f"| {key} | {len(texts)} | {len(clusters)} ({named} named) | {spent:.2f} | {state} |")


if __name__ == "__main__":
    main()
