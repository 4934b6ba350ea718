"""The query path: the array scoring core equals the LlamaIndex retrievers, and the query-vector cache.

Fast tier: a hashing encoder, no model. The cache is tested for what it promises: a text
is encoded once (per process, and across processes through the store's file), an encoder
with another identity never reads the first one's vectors, and a broken or missing cache
directory only turns persistence off.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.indexing import Indexer, LexiconSentiment
from opinio_agents.retrieval import RetrieverFactory
from opinio_agents.retrieval.query_cache import QUERY_CACHE_FILE, CachedQueryEncoder, encoder_identity
from opinio_agents.retrieval.search import dense_top_k, rrf_fuse
from opinio_agents.stores import SentenceStore
from tests.fake_encoder import HashEncoder

DIM = 256
QUERIES = ["pool", "wi-fi", "breakfast buffet", "parking", "friendly staff", "noise at night", "room decor", "zzzz"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Two synthetic entities indexed with the hashing encoder: ``(store, factory, keys)``."""
    from opinio_agents.datasets import generate_dataset

    entities = generate_dataset(2, 20, seed=11, sentences_per_review=(1, 6), mean_sentences=3.0).entities
    store = SentenceStore(tmp_path_factory.mktemp("query-path"))
    encoder = JitterEncoder(dimension=DIM)
    Indexer(store, encoder, sentiment=LexiconSentiment()).index_entities(entities)
    return store, RetrieverFactory(store, encoder), [e.key for e in entities]


class JitterEncoder(HashEncoder):
    """The hashing encoder plus a small random component per row, so that no two sentences tie on
    cosine, not even repeated texts (exact search and Chroma's HNSW order exact ties differently)."""

    encode_once = False  # repeated texts must get their own (jittered) vectors: the indexer encodes each

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.rng = np.random.default_rng(0)

    def encode(self, texts, **kwargs):  # type: ignore[override]
        base = super().encode(texts, **kwargs)
        base += 0.05 * self.rng.random(base.shape, dtype=np.float32)
        return base / np.linalg.norm(base, axis=1, keepdims=True)


def strict(encoder: HashEncoder) -> HashEncoder:
    """``encoder`` (same class, same identity) failing whenever it is asked to encode: 'no model may load'."""

    def refuse(texts, **kwargs):
        raise AssertionError(f"the encoder was asked to encode {list(texts)!r}")

    encoder.encode = refuse  # type: ignore[method-assign]
    return encoder


# -- the scoring core equals the LlamaIndex retrievers ------------------------------------------
@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
@pytest.mark.parametrize("top_k", [3, 10])
def test_array_path_returns_what_the_llamaindex_retrievers_return(corpus, kind, top_k) -> None:
    store, factory, keys = corpus
    for key in keys:
        for query in QUERIES:
            fast = factory.retrieve(key, query, retriever=kind, top_k=top_k)
            vector = factory.encoder.encode([query])[0]
            slow = factory._retrieve_nodes(key, query, kind, top_k, None, vector)
            assert [h.sentence.sentence_id for h in fast] == [h.sentence.sentence_id for h in slow], (key, query)
            assert [h.score for h in fast] == pytest.approx([h.score for h in slow], rel=1e-5, abs=1e-6)


def test_rrf_matches_llamaindex_query_fusion() -> None:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    from opinio_agents.retrieval.hybrid import make_hybrid_retriever

    nodes = [TextNode(id_=str(i), text=f"sentence {i}") for i in range(40)]

    class Fixed(BaseRetriever):
        def __init__(self, hits):
            self.hits = hits
            super().__init__()

        def _retrieve(self, query_bundle):
            return [NodeWithScore(node=nodes[i], score=s) for i, s in self.hits]

    rng = np.random.default_rng(3)
    for _ in range(25):
        a = [(int(i), float(s)) for i, s in zip(rng.choice(40, 10, replace=False), rng.random(10))]
        b = [(int(i), float(s)) for i, s in zip(rng.choice(40, 10, replace=False), rng.random(10))]
        a.sort(key=lambda h: -h[1])
        b.sort(key=lambda h: -h[1])
        fused = make_hybrid_retriever(Fixed(a), Fixed(b), top_k=10).retrieve("q")
        ours = rrf_fuse([a, b], top_k=10)
        assert [int(h.node.node_id) for h in fused] == [row for row, _ in ours]
        assert [h.score for h in fused] == pytest.approx([s for _, s in ours])


def test_dense_top_k_is_exact_and_positive_only() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(500, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[17]
    hits = dense_top_k(vectors, query, 12)
    brute = np.argsort(-(vectors @ query), kind="stable")[:12]
    assert [row for row, _ in hits] == [int(i) for i in brute if vectors[i] @ query > 0]
    assert hits[0][0] == 17 and all(score > 0 for _, score in hits)
    with pytest.raises(ConfigError, match="dimension"):
        dense_top_k(vectors, np.ones(8, dtype=np.float32), 3)


def test_filtered_queries_still_go_through_llamaindex(corpus) -> None:
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    store, factory, keys = corpus
    review_id = store.sentences(keys[0])[0].sentence.review_id
    filters = MetadataFilters(filters=[MetadataFilter(key="review_id", value=str(review_id))])
    hits = factory.retrieve(keys[0], "pool", retriever="bm25", top_k=50, filters=filters)
    assert all(h.sentence.review_id == review_id for h in hits)


# -- the query-vector cache -----------------------------------------------------------------------
def test_each_text_is_encoded_once_in_a_process(tmp_path) -> None:
    inner = HashEncoder(dimension=DIM)
    cached = CachedQueryEncoder(inner, cache_dir=tmp_path)
    first = cached.encode(["wi-fi", "pool"])
    second = cached.encode(["pool", "wi-fi", "pool"])
    assert inner.encoded == 2 and inner.calls == 1
    assert np.array_equal(second, first[[1, 0, 1]])
    assert np.array_equal(first, inner.encode(["wi-fi", "pool"]))  # the vectors are the encoder's own
    assert (cached.stats.hits, cached.stats.misses) == (3, 2)


def test_a_new_process_reads_the_vectors_back_without_the_encoder(tmp_path) -> None:
    expected = CachedQueryEncoder(HashEncoder(dimension=DIM), cache_dir=tmp_path).encode(["breakfast buffet"])
    assert (tmp_path / QUERY_CACHE_FILE).is_file()
    fresh = CachedQueryEncoder(strict(HashEncoder(dimension=DIM)), cache_dir=tmp_path)  # same identity, new instance
    assert np.array_equal(fresh.encode(["breakfast buffet"]), expected)
    assert fresh.stats.disk_hits == 1 and fresh.stats.encoder_calls == 0


def test_another_encoder_identity_never_reads_the_first_ones_vectors(tmp_path) -> None:
    CachedQueryEncoder(HashEncoder(dimension=DIM), cache_dir=tmp_path).encode(["pool"])
    other_dim = HashEncoder(dimension=DIM // 2)
    other_name = HashEncoder(name="another-model", dimension=DIM)
    assert len({encoder_identity(HashEncoder(dimension=DIM)), encoder_identity(other_dim),
                encoder_identity(other_name)}) == 3
    for inner in (other_dim, other_name):
        vector = CachedQueryEncoder(inner, cache_dir=tmp_path).encode(["pool"])
        assert inner.encoded == 1 and np.array_equal(vector, inner.encode(["pool"]))
    with sqlite3.connect(tmp_path / QUERY_CACHE_FILE) as conn:  # opening with a new identity dropped stale rows
        identities = {row[0] for row in conn.execute("SELECT identity FROM vectors")}
    assert identities == {encoder_identity(other_name)}


def test_the_encoder_backend_is_part_of_the_identity() -> None:
    fp32 = HashEncoder(dimension=DIM)
    int8 = HashEncoder(dimension=DIM)
    int8.backend = "onnx-int8"  # type: ignore[attr-defined]
    assert encoder_identity(fp32) != encoder_identity(int8)


def test_persistence_is_skipped_without_a_usable_directory(tmp_path) -> None:
    missing = tmp_path / "not-a-store-yet"
    cached = CachedQueryEncoder(HashEncoder(dimension=DIM), cache_dir=missing)
    assert cached.encode(["pool"]).shape == (1, DIM)
    assert not missing.exists()  # a cache never creates a store directory
    if os.geteuid() != 0:  # root ignores directory permissions
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            assert CachedQueryEncoder(HashEncoder(dimension=DIM), cache_dir=readonly).encode(["pool"]).shape == (1, DIM)
        finally:
            readonly.chmod(stat.S_IRWXU)
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / QUERY_CACHE_FILE).write_bytes(b"this is not a database" * 100)
    inner = HashEncoder(dimension=DIM)
    cached = CachedQueryEncoder(inner, cache_dir=corrupt)
    assert cached.encode(["pool"]).shape == (1, DIM) and cached.encode(["pool"]).shape == (1, DIM)
    assert inner.encoded == 1  # the in-memory part still works


def test_the_cache_is_bounded(tmp_path) -> None:
    inner = HashEncoder(dimension=DIM)
    cached = CachedQueryEncoder(inner, cache_dir=tmp_path, memory_items=3, max_rows=5)
    for i in range(8):
        cached.encode([f"query {i}"])
    with sqlite3.connect(tmp_path / QUERY_CACHE_FILE) as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()
    assert rows == 5 and len(cached._tiers.memory) == 3
    cached.clear()
    cached.encode(["query 7"])  # newest row: still on disk
    assert inner.encoded == 8


def test_dimension_comes_from_the_cache_without_the_model(tmp_path) -> None:
    class LoadsOnDimension(HashEncoder):
        @property  # type: ignore[override]
        def dimension(self) -> int:
            raise AssertionError("reading the dimension would load the model")

        @dimension.setter
        def dimension(self, value: int) -> None:
            self._dim = value

        def encode(self, texts, **kwargs):  # type: ignore[override]
            out = np.zeros((len(texts), 8), dtype=np.float32)
            out[:, 0] = 1.0
            return out

    CachedQueryEncoder(LoadsOnDimension(), cache_dir=tmp_path).encode(["pool"])
    assert CachedQueryEncoder(LoadsOnDimension(), cache_dir=tmp_path).dimension == 8


def test_one_query_for_many_entities_is_embedded_once(corpus, tmp_path) -> None:
    store, _, keys = corpus
    inner = JitterEncoder(dimension=DIM)
    factory = RetrieverFactory(SentenceStore(store.store_dir), CachedQueryEncoder(inner))
    for key in keys:
        for kind in ("dense", "hybrid"):
            factory.retrieve(key, "late checkout", retriever=kind)
    assert inner.encoded == 1


def test_a_query_seen_before_needs_no_encoder_in_a_new_facade(corpus, tmp_path) -> None:
    """A cold process (a new façade) answers a known query from the store's cache: no model load."""
    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset

    entity = generate_dataset(1, 30, seed=4, sentences_per_review=(1, 5), mean_sentences=3.0).entities[0]
    warm = OpinioRAG(tmp_path, encoder=HashEncoder(dimension=DIM), hiro_options={"n_codes": 4})
    warm.index(entity, fit_hiro=False)
    expected = warm.highlights(entity.key, ["pool", "wi-fi"])
    cold = OpinioRAG(tmp_path, encoder=strict(HashEncoder(dimension=DIM)))
    again = cold.highlights(entity.key, ["pool", "wi-fi"])
    assert again.model_dump(exclude={"meta"}) == expected.model_dump(exclude={"meta"})
    assert [h.sentence.sentence_id for h in cold.retrieve(entity.key, "wi-fi", retriever="dense")] == [
        h.sentence.sentence_id for h in warm.retrieve(entity.key, "wi-fi", retriever="dense")
    ]
    assert cold.support(entity.key, "pool") == warm.support(entity.key, "pool")


# -- lazy imports ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_help_imports_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "from opinio_agents.cli.main import main\n"
        "status = main(['--help'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'torch', 'chromadb', 'llama_index', 'sentence_transformers', 'transformers', 'langchain_openai', "
        "'ragas', 'sklearn'})\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY=\n" in done.stdout, done.stdout


def test_top_k_positive_partial_selection_keeps_full_sort_semantics() -> None:
    from opinio_agents.retrieval.bm25.selection import top_k_positive

    rng = np.random.default_rng(5)
    for _ in range(50):
        scores = np.round(rng.normal(size=400), 1)  # many exact ties
        k = int(rng.integers(1, 30))
        positive = np.flatnonzero(scores > 0)
        full = positive[np.lexsort((positive, -scores[positive]))][:k]
        assert top_k_positive(scores, k) == [(int(i), float(scores[i])) for i in full]
