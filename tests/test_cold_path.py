"""The cold query path: a new process answers from stored copies, without Chroma or a model.

* ``SentenceStore.embeddings(..., persist=True)`` keeps a matrix copy of an entity's Chroma
  vectors; a new store object reads it instead of Chroma, it equals what Chroma holds, and
  it is ignored once the entity changes.
* (slow) A cold ``opinio highlight`` on an indexed entity whose query vector is cached imports
  neither torch, onnxruntime, transformers, LlamaIndex, LangChain nor chromadb, and answers
  what the first (warm-up) process answered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from opinio_agents.indexing import Indexer
from opinio_agents.stores import SentenceStore
from tests.fake_encoder import HashEncoder

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def data():
    from opinio_agents.datasets import generate_dataset

    return generate_dataset(1, 12, seed=3, sentences_per_review=(1, 4), mean_sentences=2.5)


def test_vector_copy_is_read_instead_of_chroma_and_dropped_when_the_entity_changes(tmp_path, data, monkeypatch):
    store = SentenceStore(tmp_path / "store")
    Indexer(store, HashEncoder()).index_entities(data.entities)
    key = data.entities[0].key
    from_chroma = store.embeddings(key)
    assert not (store.store_dir / "vectors").exists()  # only the query path writes the copy
    SentenceStore(store.store_dir).embeddings(key, persist=True)
    assert len(list((store.store_dir / "vectors").glob("*.npz"))) == 1

    def no_chroma(self, entity_id, sentence_ids):
        raise AssertionError("Chroma was read although a current vector copy exists")

    with monkeypatch.context() as patch:
        patch.setattr(SentenceStore, "vectors", no_chroma)
        copy = SentenceStore(store.store_dir).embeddings(key)
    assert copy.dtype == np.float32 and np.array_equal(copy, from_chroma)

    entity = data.entities[0]
    changed = entity.model_copy(update={"user_reviews": entity.user_reviews[:-2]})
    Indexer(store, HashEncoder()).index_entities([changed])
    fresh = SentenceStore(store.store_dir)
    after = fresh.embeddings(key)  # the stale copy is ignored: this read comes from Chroma
    assert after.shape[0] == len(fresh.sentences(key)) < from_chroma.shape[0]
    assert np.array_equal(after, from_chroma[: after.shape[0]])


@pytest.mark.slow
def test_cold_highlight_with_a_cached_query_vector_imports_no_model_library(tmp_path, data) -> None:
    from opinio_agents.io.writers import write_opiniobank

    dataset = tmp_path / "data.json"
    write_opiniobank(data.entities, dataset)
    store = tmp_path / "store"
    key = data.entities[0].key
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cli = [sys.executable, "-m", "opinio_agents"]
    args = ["highlight", str(dataset), "-e", key, "-q", "wi-fi", "--store", str(store), "--quiet", "--format", "json"]
    for argv in (["index", str(dataset), "--store", str(store), "--quiet"], args):  # index; embed the query once
        done = subprocess.run([*cli, *argv], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
    warm = json.loads(done.stdout)

    code = (
        "import contextlib, io, json, sys\n"
        "from opinio_agents.cli.main import main\n"
        "buffer = io.StringIO()\n"
        "with contextlib.redirect_stdout(buffer):\n"
        f"    status = main({args!r})\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'onnxruntime', 'transformers', "
        "'sentence_transformers', 'llama_index', 'langchain_core', 'chromadb'})\n"
        "print(json.dumps({'status': status, 'heavy': heavy, 'out': json.loads(buffer.getvalue())}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] in (0, None) and report["heavy"] == []
    for result in (warm, report["out"]):
        for item in result if isinstance(result, list) else [result]:
            item.get("meta", {}).pop("timings", None)
    assert report["out"] == warm
