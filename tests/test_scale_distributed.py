"""Distributed indexing on a local Ray cluster with a real ``chroma run`` server, checked against one machine.

The Ray workers get the deterministic HashEncoder (same code on both sides), so the
store they build must equal the single-machine store: same entities in the same
order, sentence ids, BM25 tokens, sentiments, vectors, BM25 scores and top-10 lists.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from opinio_agents.api import OpinioRAG
from opinio_agents.datasets import generate_dataset
from opinio_agents.models import Entity
from opinio_agents.scale.distributed import same_top_k
from tests.fake_encoder import HashEncoder

REPO = Path(__file__).resolve().parents[1]
QUERIES = (
    "wifi", "breakfast buffet", "noisy room", "friendly staff", "parking", "pool", "clean bathroom",
    "air conditioning", "location near the metro", "expensive price",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_port(tmp_path_factory):
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    if not Path(exe).exists():
        pytest.skip("the chroma CLI is not installed")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [exe, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.2)
    else:  # pragma: no cover - environment problem
        proc.kill()
        pytest.skip("chroma server did not start within 30 s")
    yield port
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'opinio-agents[scale]')")
    pytest.importorskip("ray.data")
    # The workers unpickle the test's HashEncoder factory, so they must import ``tests``.
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *([old] if old else [])])
    temp = tmp_path_factory.mktemp("ray")
    ray.init(
        address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
        _temp_dir=str(temp), logging_level="error",
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def _entities() -> list[Entity]:
    return generate_dataset(n_entities=4, reviews_per_entity=25, seed=11).entities


def _factory():
    return functools.partial(HashEncoder, dimension=256)


def _top(rag: OpinioRAG, key: str, query: str, kind: str, k: int = 10) -> list[tuple[str, float]]:
    return [(h.sentence.sentence_id, h.score) for h in rag.retrieve(key, query, retriever=kind, top_k=k)]


def _assert_same_store(single: OpinioRAG, dist: OpinioRAG) -> None:
    assert dist.store.entity_keys() == single.store.entity_keys()
    hybrid_checked = 0
    for key in single.store.entity_keys():
        a, b = single.store.sentences(key), dist.store.sentences(key)
        assert [s.sentence for s in b] == [s.sentence for s in a]
        assert [s.tokens for s in b] == [s.tokens for s in a]
        assert [s.sentiment for s in b] == [s.sentiment for s in a]
        assert np.array_equal(dist.store.embeddings(key), single.store.embeddings(key))
        bm25_a = single.retrievers.retriever(key, "bm25")
        bm25_b = dist.retrievers.retriever(key, "bm25")
        for query in QUERIES:
            assert np.array_equal(bm25_b.scores(query), bm25_a.scores(query))
            assert _top(dist, key, query, "bm25") == _top(single, key, query, "bm25"), (key, query)
            dense_a, dense_b = _top(single, key, query, "dense"), _top(dist, key, query, "dense")
            assert same_top_k(dense_a, dense_b, k=10), (key, query, dense_a, dense_b)
            # Hybrid fuses dense ranks, so it is defined only when dense's cut splits no run of ties.
            eleven = _top(single, key, query, "dense", k=11)
            if len(eleven) < 11 or abs(eleven[9][1] - eleven[10][1]) > 1e-5:
                hybrid_a, hybrid_b = _top(single, key, query, "hybrid"), _top(dist, key, query, "hybrid")
                assert [i for i, _ in hybrid_b] == [i for i, _ in hybrid_a], (key, query)
                assert np.allclose([s for _, s in hybrid_b], [s for _, s in hybrid_a], atol=1e-9)
                hybrid_checked += 1
    assert hybrid_checked >= len(QUERIES) // 2  # the exact hybrid check ran (it is not vacuous)


@pytest.mark.slow
def test_ray_build_equals_single_machine_build_and_resumes(tmp_path, ray_cluster, chroma_port) -> None:
    from opinio_agents.scale.distributed import index_with_ray

    entities = _entities()
    single = OpinioRAG(tmp_path / "single", encoder=_factory()())
    single.index(entities)

    stats = index_with_ray(
        entities, tmp_path / "dist", chroma_host="127.0.0.1", chroma_port=chroma_port,
        workers=2, encoder_factory=_factory(),
    )
    total = single.store.count_sentences()
    assert (stats.entities_indexed, stats.entities_skipped, stats.workers) == (4, 0, 2)
    assert stats.sentences_encoded == stats.sentences_total == total > 0
    assert set(stats.worker_of) == {e.key for e in entities}
    assert not (tmp_path / "dist" / "chroma").exists()  # the vectors live in the server
    dist = OpinioRAG(tmp_path / "dist", encoder=_factory()(), chroma_host="127.0.0.1", chroma_port=chroma_port)
    _assert_same_store(single, dist)
    assert dist.hiro_fitted and single.hiro_fitted
    for key in single.store.entity_keys():
        assert np.array_equal(dist.hiro.paths(key), single.hiro.paths(key))

    # The store records its server: opened without --chroma-host it still finds its vectors.
    plain = OpinioRAG(tmp_path / "dist", encoder=_factory()())
    assert plain.store.is_remote and np.array_equal(plain.store.embeddings("1"), single.store.embeddings("1"))

    # Unchanged data: nothing goes to Ray.
    again = index_with_ray(
        entities, tmp_path / "dist", chroma_host="127.0.0.1", chroma_port=chroma_port, encoder_factory=_factory()
    )
    assert (again.entities_skipped, again.entities_indexed, again.sentences_encoded) == (4, 0, 0)

    # One review edited, one removed: only the edited review's sentences are encoded, and the
    # incremental result still equals the single machine's.
    first = entities[0]
    reviews = list(first.user_reviews)
    edited = reviews[0].model_copy(update={"text": "The wifi was painfully slow. Breakfast buffet was superb."})
    changed = first.model_copy(update={"user_reviews": [edited, *reviews[2:]]})
    data = [changed, *entities[1:]]
    single.index(data)
    third = index_with_ray(
        data, tmp_path / "dist", chroma_host="127.0.0.1", chroma_port=chroma_port, encoder_factory=_factory()
    )
    assert (third.entities_indexed, third.entities_skipped) == (1, 3)
    assert third.sentences_encoded == 2 and third.stats[0].reviews_updated == 1
    assert third.stats[0].reviews_removed == 1
    dist = OpinioRAG(tmp_path / "dist", encoder=_factory()(), chroma_host="127.0.0.1", chroma_port=chroma_port)
    _assert_same_store(single, dist)
    collection = dist.store.collection(first.key)
    assert collection.count() == dist.store.count_sentences(first.key)  # vectors of the removed review are gone


def test_without_ray_the_error_names_the_extra(monkeypatch, tmp_path) -> None:
    import builtins

    from opinio_agents.errors import MissingDependencyError
    from opinio_agents.scale.distributed import require_ray

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(MissingDependencyError, match=r"opinio-agents\[scale\]"):
        require_ray()
