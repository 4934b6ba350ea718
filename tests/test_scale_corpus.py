"""Corpus-scale indexing: flat caches per entity, resume after a kill without re-encoding, bounded HIRO fit."""

from __future__ import annotations

import numpy as np
import pytest

from opinio_agents.api import OpinioRAG
from opinio_agents.datasets import generate_dataset
from opinio_agents.hiro.indexer import ResidualKMeansIndexer
from opinio_agents.hiro.store import HiroIndex
from opinio_agents.indexing import Indexer, LexiconSentiment
from opinio_agents.scale.corpus import CorpusProgress, dir_size, index_corpus
from tests.fake_encoder import HashEncoder

N = 3


@pytest.fixture(scope="module")
def corpus():
    return generate_dataset(n_entities=N, reviews_per_entity=10, seed=5).entities


def _rag(path, encoder: HashEncoder) -> OpinioRAG:
    rag = OpinioRAG(path, encoder=encoder, hiro_options={"n_codes": 4, "depth": 2})
    rag.indexer = Indexer(rag.store, encoder, sentiment=LexiconSentiment(), embed_chunk=16)
    return rag


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, corpus):
    """One complete corpus run (read-only for the tests): ``(path, rag, report, steps)``."""
    path = tmp_path_factory.mktemp("corpus")
    rag = _rag(path, HashEncoder())
    steps: list[CorpusProgress] = []
    report = index_corpus(rag, iter(corpus), on_entity=steps.append)
    return path, rag, report, steps


def test_corpus_run_keeps_no_entity_cached_and_fits_hiro(indexed, corpus) -> None:
    tmp_path, rag, report, steps = indexed
    assert [(s.phase, s.position) for s in steps] == [("index", i) for i in range(1, N + 1)] + [
        ("hiro", i) for i in range(1, N + 1)
    ]
    assert report.sentences_embedded == report.sentences_total == rag.store.count_sentences() > 0
    assert report.hiro_fit_info["fit_points"] == report.sentences_total
    assert all(s.rss_mib > 0 for s in steps)
    assert rag.retrievers._entries == {} and rag.store._cache == {}  # nothing kept per entity
    assert not rag.store.vector_client_open  # the embedded Chroma client is released after every entity
    assert rag.store.entity_keys() == [e.key for e in corpus] and not rag.store.incomplete_entities()
    first = rag.store.sentences(corpus[2].key)[0].sentence
    assert rag.retrieve(corpus[2].key, first.text, retriever="bm25", top_k=3)[0].sentence == first
    assert rag.hiro.paths(corpus[-1].key).shape == (rag.store.count_sentences(corpus[-1].key), 2)
    assert dir_size(tmp_path) > dir_size(tmp_path / "bm25") > 0


def test_killed_run_resumes_without_re_encoding(tmp_path, corpus, indexed) -> None:
    killed = HashEncoder(fail_after_calls=5)  # dies inside some entity, chunks of 16 sentences
    with pytest.raises(KeyboardInterrupt):
        index_corpus(_rag(tmp_path, killed), iter(corpus))
    stored = _rag(tmp_path, HashEncoder()).store
    done = stored.entity_keys()
    assert 0 < len(done) < len(corpus)
    before = sum(stored.collection(e.key, create=True).count() for e in corpus)
    again = HashEncoder()
    report = index_corpus(_rag(tmp_path, again), iter(corpus))
    total = report.sentences_total
    assert report.skipped == len(done)
    assert report.sentences_embedded == total - before  # only what had not reached Chroma got a vector
    # ... and each distinct text of those was encoded once (the rest reused stored vectors)
    assert again.encoded == sum(s.texts_encoded for s in report.stats) <= report.sentences_embedded
    assert report.sentences_resumed > 0  # the interrupted entity's stored vectors were kept
    fresh = indexed[1].store  # the same corpus indexed in one go
    resumed = _rag(tmp_path, HashEncoder()).store
    for entity in corpus:
        assert [s.sentence for s in resumed.sentences(entity.key)] == [s.sentence for s in fresh.sentences(entity.key)]
        assert np.array_equal(resumed.embeddings(entity.key), fresh.embeddings(entity.key))


def test_sampled_hiro_fit_is_the_fit_on_all_vectors(tmp_path, indexed) -> None:
    rag = indexed[1]
    keys = rag.store.entity_keys()
    everything = np.vstack([rag.store.embeddings(k) for k in keys])
    cap = len(everything) // 3
    hiro = HiroIndex(rag.store, n_codes=4, depth=2, max_fit_points=cap, directory=tmp_path / "h")
    fitted = hiro.fit()
    reference = ResidualKMeansIndexer(n_codes=4, depth=2, max_fit_points=cap).fit(everything)
    assert fitted.info["fit_points"] == cap
    for mine, theirs in zip(fitted.codebooks, reference.codebooks):
        assert np.array_equal(mine, theirs)


def test_release_vector_client_reopens_on_next_use(tmp_path, corpus) -> None:
    rag = _rag(tmp_path, HashEncoder())
    rag.index(corpus[0], fit_hiro=False)
    key = corpus[0].key
    before = rag.store.collection(key, create=False).count()
    assert rag.store.release_vector_client() is True
    assert rag.store.release_vector_client() is False  # nothing open any more
    rag.retrievers.invalidate()
    assert rag.store.collection(key, create=False).count() == before > 0
    first = rag.store.sentences(key)[0].sentence
    hits = rag.retrieve(key, first.text, retriever="dense", top_k=2)
    assert len(hits) == 2
