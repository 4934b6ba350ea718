"""``benchmarks/real_reviews.py --hiro-seeds``: one refitted copy of a store per HIRO seed, the store untouched."""

from __future__ import annotations

import pytest

from tests.benchmark_support import load_benchmark
from tests.fake_encoder import HashEncoder


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    return load_benchmark("real_reviews")


def test_each_seed_gets_its_own_refitted_copy(bench, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.hiro.store import HiroIndex
    from opinio_agents.stores import SentenceStore

    store = tmp_path / "space_dev"
    rag = OpinioRAG(store, encoder=HashEncoder(), verify=False)
    rag.index(generate_dataset(2, 20, seed=5).entities, fit_hiro=True)
    rag.close()
    fitted = HiroIndex(SentenceStore(store)).indexer.fingerprint

    copies = [bench.seed_copy(store, seed) for seed in (1, 2)]
    assert [c.name for c in copies] == ["space_dev-hiro-seed1", "space_dev-hiro-seed2"]
    prints = [HiroIndex(SentenceStore(c)).indexer.fingerprint for c in copies]
    assert len({fitted, *prints}) == 3  # each copy refitted with its own seed
    assert HiroIndex(SentenceStore(store)).indexer.fingerprint == fitted  # the store itself untouched
    assert bench.seed_copy(store, 1) == copies[0]  # made once, then reused
    assert HiroIndex(SentenceStore(copies[0])).indexer.fingerprint == prints[0]
