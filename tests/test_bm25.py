"""BM25: parity with rank_bm25, positive top-K selection, the LlamaIndex retriever."""

from __future__ import annotations

import random

import numpy as np
import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever
from opinio_agents.retrieval.bm25.scoring import BM25Index, BM25Params
from opinio_agents.retrieval.bm25.selection import top_k_positive

rank_bm25 = pytest.importorskip("rank_bm25")

VOCAB = "room pool wifi staff breakfast noisy clean dirty slow fast free view bed the a".split()


def _corpus(seed: int, n_docs: int = 60) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(VOCAB) for _ in range(rng.randint(0, 12))] for _ in range(n_docs)]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_scores_match_rank_bm25(seed: int) -> None:
    corpus = _corpus(seed)
    ours = BM25Index.build(corpus)
    reference = rank_bm25.BM25Okapi(corpus)
    rng = random.Random(seed + 100)
    for _ in range(10):
        query = [rng.choice(VOCAB + ["unseen"]) for _ in range(rng.randint(1, 4))]
        np.testing.assert_allclose(ours.scores(query), reference.get_scores(query), rtol=1e-9, atol=1e-12)


def test_parameters_match_rank_bm25() -> None:
    corpus = _corpus(9)
    ours = BM25Index.build(corpus, BM25Params(k1=1.2, b=0.5, epsilon=0.1))
    reference = rank_bm25.BM25Okapi(corpus, k1=1.2, b=0.5, epsilon=0.1)
    np.testing.assert_allclose(ours.scores(["wifi", "slow"]), reference.get_scores(["wifi", "slow"]))


def test_bad_parameters_raise() -> None:
    with pytest.raises(ConfigError, match="b=1.5"):
        BM25Params(b=1.5)


def test_top_k_positive_drops_zero_and_breaks_ties_by_order() -> None:
    scores = np.array([0.0, 2.0, 1.0, 2.0, -1.0])
    assert top_k_positive(scores, 10) == [(1, 2.0), (3, 2.0), (2, 1.0)]
    assert top_k_positive(scores, 1) == [(1, 2.0)]
    assert top_k_positive(np.zeros(3), 2) == []


def test_term_in_half_the_documents_scores_zero_like_rank_bm25() -> None:
    # rank_bm25's IDF is log((N - n + 0.5) / (n + 0.5)): exactly 0 when n = N / 2.
    corpus = [["wifi"], ["wifi"], ["pool"], ["bed"]]
    assert BM25Index.build(corpus).scores(["wifi"]).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert rank_bm25.BM25Okapi(corpus).get_scores(["wifi"]).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_empty_corpus_scores_nothing() -> None:
    index = BM25Index.build([])
    assert index.scores(["wifi"]).shape == (0,)


def _nodes() -> list[TextNode]:
    texts = [
        ("a", "The wi-fi was free and fast.", 5),
        ("b", "Wifi kept dropping; we couldn't work.", 2),
        ("c", "The pool was lovely.", 4),
        ("d", "Breakfast buffet had lots of choice.", 4),
        ("e", "Staff were friendly at check-in.", 5),
        ("f", "Parking was expensive.", 2),
    ]
    return [TextNode(id_=i, text=t, metadata={"rating": r}) for i, t, r in texts]


def test_retriever_uses_app_d_tokens_and_positive_scores() -> None:
    retriever = OpinioBM25Retriever.from_defaults(_nodes(), similarity_top_k=10)
    hits = retriever.retrieve("WI-FI")
    # "a" is shorter, so BM25's length normalisation ranks it first.
    assert [h.node.node_id for h in hits] == ["a", "b"]
    assert all(h.score > 0 for h in hits)
    assert retriever.retrieve("spa") == []


def test_retriever_filters_apply_at_query_time() -> None:
    retriever = OpinioBM25Retriever.from_defaults(_nodes(), similarity_top_k=10)
    retriever.filters = MetadataFilters(filters=[MetadataFilter(key="rating", value=3, operator=FilterOperator.GTE)])
    assert [h.node.node_id for h in retriever.retrieve("wifi")] == ["a"]
    retriever.filters = None
    assert len(retriever.retrieve("wifi")) == 2


def test_retriever_persist_round_trip(tmp_path) -> None:
    retriever = OpinioBM25Retriever.from_defaults(_nodes(), similarity_top_k=3)
    retriever.persist(tmp_path / "bm25")
    loaded = OpinioBM25Retriever.from_persist_dir(tmp_path / "bm25")
    assert loaded.similarity_top_k == 3
    for query in ("wifi", "pool", "breakfast buffet"):
        assert [(h.node.node_id, round(h.score, 9)) for h in loaded.retrieve(query)] == [
            (h.node.node_id, round(h.score, 9)) for h in retriever.retrieve(query)
        ]
    assert loaded.nodes[0].metadata == {"rating": 5}


def test_from_persist_dir_missing_raises_store_error(tmp_path) -> None:
    with pytest.raises(StoreError, match="cannot load the BM25 retriever"):
        OpinioBM25Retriever.from_persist_dir(tmp_path / "nothing")


def test_mismatched_tokens_raise() -> None:
    with pytest.raises(ConfigError, match="one per node"):
        OpinioBM25Retriever.from_defaults(_nodes(), tokens=[["a"]])


def test_with_options_shares_the_index_and_takes_a_precomputed_mask() -> None:
    base = OpinioBM25Retriever.from_defaults(_nodes(), similarity_top_k=10)
    high = MetadataFilters(filters=[MetadataFilter(key="rating", value=3, operator=FilterOperator.GTE)])
    mask = base.filter_mask(high)
    assert mask is not None and mask.tolist() == [True, False, True, True, True, False]
    assert base.filter_mask(None) is None
    one = base.with_options(top_k=1)
    assert one._index is base._index and one.similarity_top_k == 1  # noqa: SLF001
    assert [h.node.node_id for h in one.retrieve("wifi")] == ["a"]
    filtered = base.with_options(filters=high, mask=mask)
    assert filtered.filters is high and [h.node.node_id for h in filtered.retrieve("wifi")] == ["a"]
    assert [h.node.node_id for h in base.retrieve("wifi")] == ["a", "b"]  # the base keeps no filter
    with pytest.raises(ConfigError, match="mask has shape"):
        base.with_options(filters=high, mask=mask[:2])
