"""HIRO results kept with the hierarchy: aspects and query-free highlights are computed once.

What is promised (:meth:`HiroIndex.load_result`, :func:`discover_aspects`, :func:`query_free_result`):
a stored result equals the freshly computed one, a new index or façade over the same store reads it
without computing anything, and it is recomputed after anything it depends on changes: the
entity (re-indexed), the baseline (another entity indexed), the hierarchy (refit). A custom
namer is never cached; a broken result file is ignored.

Fast tier: the hashing encoder, so the default namer is the noun-phrase one (no model).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from opinio_agents.indexing import Indexer
from opinio_agents.stores import SentenceStore
from tests.fake_encoder import HashEncoder


@pytest.fixture(scope="module")
def data():
    from opinio_agents.datasets import generate_dataset

    return generate_dataset(4, 30, seed=23)


@pytest.fixture(scope="module")
def base_store(tmp_path_factory, data) -> Path:
    """Three entities indexed once (each test works on its own copy)."""
    from opinio_agents.api import OpinioRAG

    root = tmp_path_factory.mktemp("hiro-results") / "store"
    rag = OpinioRAG(root, encoder=HashEncoder(), verify=False)
    rag.index(data.entities[:3], fit_hiro=False)
    rag.close()
    return root


def _store(tmp_path, base_store) -> SentenceStore:
    shutil.copytree(base_store, tmp_path / "store")
    return SentenceStore(tmp_path / "store")


def _no_compute(monkeypatch) -> None:
    """Make computing aspects impossible: any call that needs clusters fails the test."""
    import opinio_agents.hiro.aspects as aspects_module

    def refuse(*args, **kwargs):
        raise AssertionError("aspects were computed although a current stored result exists")

    monkeypatch.setattr(aspects_module, "retrieve_clusters", refuse)


def _plain(result) -> dict:
    dumped = result.model_dump(mode="json")
    dumped["meta"].pop("timings")
    return dumped


def test_stored_aspects_equal_fresh_ones_and_a_new_index_reads_them(tmp_path, data, base_store, monkeypatch):
    from opinio_agents.hiro import HiroIndex, discover_aspects

    store = _store(tmp_path, base_store)
    hiro = HiroIndex(store)
    hiro.fit()
    fresh = discover_aspects(hiro, "2", top_k=6, cache=False)
    assert not (hiro.directory / "results").exists()  # cache=False writes nothing
    first = discover_aspects(hiro, "2", top_k=6)
    assert first == fresh and fresh
    files = list((hiro.directory / "results").rglob("aspects-*.json"))
    assert len(files) == 1

    _no_compute(monkeypatch)
    again = discover_aspects(HiroIndex(SentenceStore(store.store_dir)), "2", top_k=6)
    assert again == fresh
    assert [a.clusters for a in again] == [a.clusters for a in fresh]
    assert all(isinstance(p, tuple) for a in again for c in a.clusters for p in c.subpaths)
    with pytest.raises(AssertionError):  # other arguments are another result
        discover_aspects(HiroIndex(SentenceStore(store.store_dir)), "2", top_k=5)


def test_aspects_are_recomputed_after_reindex_another_entity_or_refit(tmp_path, data, base_store):
    from opinio_agents.hiro import HiroIndex, discover_aspects

    store = _store(tmp_path, base_store)
    hiro = HiroIndex(store)
    hiro.fit()
    state = hiro.result_state("1")
    discover_aspects(hiro, "1", top_k=6)

    # The entity changes: its last review is dropped.
    entity = data.entities[0]
    Indexer(store, HashEncoder()).index_entities([entity.model_copy(update={"user_reviews": entity.user_reviews[:-3]})])
    assert hiro.result_state("1") != state
    assert discover_aspects(hiro, "1", top_k=6) == discover_aspects(hiro, "1", top_k=6, cache=False)
    assert discover_aspects(hiro, "1", top_k=6)[0].total_reviews == len(entity.user_reviews) - 3

    # Another entity joins the baseline.
    state = hiro.result_state("1")
    Indexer(store, HashEncoder()).index_entities([data.entities[3]])
    assert hiro.result_state("1") != state
    assert discover_aspects(hiro, "1", top_k=6) == discover_aspects(hiro, "1", top_k=6, cache=False)

    # The hierarchy is refitted (another seed: other codebooks).
    state = hiro.result_state("1")
    HiroIndex(store, seed=5).fit()
    refitted = HiroIndex(store)
    assert refitted.result_state("1") != state
    assert discover_aspects(refitted, "1", top_k=6) == discover_aspects(refitted, "1", top_k=6, cache=False)


def test_a_custom_namer_is_never_cached_and_a_broken_file_is_ignored(tmp_path, data, base_store):
    from opinio_agents.hiro import HiroIndex, discover_aspects
    from opinio_agents.hiro.labels import AspectLabel, ClusterNamer

    class FirstWord(ClusterNamer):  # a custom namer: each cluster named by its first sentence's first word
        def name(self, clusters, tokens, texts):  # type: ignore[no-untyped-def]
            return [AspectLabel((texts[c[0]].split()[0].lower(),), texts[c[0]].split()[0], 1.0, 1.0) if c else None
                    for c in clusters]

    store = _store(tmp_path, base_store)
    hiro = HiroIndex(store)
    hiro.fit()
    discover_aspects(hiro, "3", top_k=4, namer=FirstWord())
    assert not (hiro.directory / "results").exists()

    expected = discover_aspects(hiro, "3", top_k=4)
    (file,) = (hiro.directory / "results").rglob("aspects-*.json")
    record = json.loads(file.read_text("utf-8"))
    assert record["state"] == hiro.result_state("3") and record["kind"] == "aspects"
    file.write_text("{not json", "utf-8")
    assert discover_aspects(HiroIndex(store), "3", top_k=4) == expected  # recomputed, then stored again
    assert json.loads(file.read_text("utf-8"))["state"] == hiro.result_state("3")


@pytest.mark.parametrize("small_entity", [0, 10**6])  # aspect-led summary, entity-wide summary
def test_stored_query_free_highlights_equal_fresh_ones(tmp_path, data, base_store, monkeypatch, small_entity):
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.hiro.highlights import query_free_result

    store = _store(tmp_path, base_store)
    hiro = HiroIndex(store)
    hiro.fit()
    fresh = query_free_result(hiro, "1", top_k=6, small_entity=small_entity, cache=False)
    stored = query_free_result(hiro, "1", top_k=6, small_entity=small_entity)
    assert (fresh.layout.sentences is not None) == bool(small_entity)
    assert fresh.highlights.highlights and fresh.highlights.summary
    assert _plain(stored.highlights) == _plain(fresh.highlights)
    assert "hiro" in stored.highlights.meta.timings

    _no_compute(monkeypatch)
    again = query_free_result(HiroIndex(SentenceStore(store.store_dir)), "1", top_k=6, small_entity=small_entity)
    assert _plain(again.highlights) == _plain(fresh.highlights)
    assert again.layout == fresh.layout


def test_facade_aspects_and_query_free_from_a_new_facade(tmp_path, data, base_store, monkeypatch):
    """``OpinioRAG.precompute_hiro`` stores what ``aspects()`` and query-free highlights return by default."""
    from opinio_agents.api import OpinioRAG

    _store(tmp_path, base_store)
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder(), verify=False)
    rag.fit_hiro()
    assert rag.precompute_hiro() == ["1", "2", "3"]
    aspects = rag.aspects("2")
    result = rag.highlights("2", query_free=True)

    _no_compute(monkeypatch)
    cold = OpinioRAG(tmp_path / "store", encoder=HashEncoder(), verify=False)
    assert cold.aspects("2") == aspects
    assert _plain(cold.highlights("2", query_free=True)) == _plain(result)
    assert _plain(cold.query_free_highlights("2")) == _plain(result)


def test_query_free_summarizer_stream_is_stored_whole(tmp_path, data, base_store, monkeypatch):
    """The stored run yields the same outcomes and result; a verifier or custom check is never stored."""
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.summarizers import QueryFreeSummarizer
    from opinio_agents.synthesis.alerts import CriticalComplaintCheck
    from opinio_agents.synthesis.summarizer import SummaryDone

    store = _store(tmp_path, base_store)
    hiro = HiroIndex(store)
    hiro.fit()

    def events(summarizer):
        out = list(summarizer.stream("2"))
        *outcomes, done = out
        assert isinstance(done, SummaryDone)
        return [(o.item.query, [e.sentence_id for e in o.item.evidence], o.item.support, o.highlights, o.failure)
                for o in outcomes], _plain(done.result)

    class Quiet(CriticalComplaintCheck):
        pass

    unstored = events(QueryFreeSummarizer(hiro, checks=Quiet()))
    assert not list((hiro.directory / "results").rglob("query-free-final-*.json"))
    first = events(QueryFreeSummarizer(hiro))
    assert first == unstored and first[0]
    assert len(list((hiro.directory / "results").rglob("query-free-final-*.json"))) == 1

    def no_draft(self, entity_key, queries):
        raise AssertionError("drafted although the whole run is stored")

    monkeypatch.setattr(QueryFreeSummarizer, "draft", no_draft)
    again = events(QueryFreeSummarizer(HiroIndex(SentenceStore(store.store_dir))))
    assert again == first


def test_code_digest_covers_every_module_whose_results_are_stored():
    """A stored query-free result must not outlive a change to the code that computed it."""
    import inspect
    from pathlib import Path

    from opinio_agents.hiro import highlights
    from opinio_agents.hiro.store import _RESULT_CODE
    from opinio_agents.summarizers import QueryFreeSummarizer
    from opinio_agents.synthesis import selection

    root = Path(highlights.__file__).resolve().parents[1]
    for source in (inspect.getfile(QueryFreeSummarizer), highlights.__file__, selection.__file__):
        relative = Path(source).resolve().relative_to(root)
        assert relative.parts[0] in _RESULT_CODE, relative


def test_query_free_smoothing_follows_the_baseline_an_entity_is_compared_with(tmp_path, data, base_store, monkeypatch):
    """A small entity beside others is clustered with ``alpha``; alone in its store, with ``own_alpha``."""
    import opinio_agents.hiro.highlights as highlights
    from opinio_agents.api import OpinioRAG
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.hiro.highlights import QUERY_FREE_SETTINGS, query_free_result

    assert QUERY_FREE_SETTINGS.own_alpha != QUERY_FREE_SETTINGS.alpha
    used: list[float] = []
    real = highlights.discover_aspects

    def recording(*args, **kwargs):
        used.append(kwargs["alpha"])
        return real(*args, **kwargs)

    monkeypatch.setattr(highlights, "discover_aspects", recording)
    shared = HiroIndex(_store(tmp_path, base_store))
    assert shared.corpus_baseline("2") is not None
    query_free_result(shared, "2", small_entity=0, cache=False)
    rag = OpinioRAG(tmp_path / "alone", encoder=HashEncoder(), verify=False)
    rag.index(data.entities[3:4], fit_hiro=False)
    rag.close()
    alone = HiroIndex(SentenceStore(tmp_path / "alone"))
    key = alone.index.entity_keys()[0]
    assert alone.corpus_baseline(key) is None
    query_free_result(alone, key, small_entity=0, cache=False)
    query_free_result(alone, key, alpha=6.0, small_entity=0, cache=False)  # a caller's value is kept
    assert used == [QUERY_FREE_SETTINGS.alpha, QUERY_FREE_SETTINGS.own_alpha, 6.0]


@pytest.mark.parametrize("own_hierarchy", [True, False])
def test_query_free_clusters_an_entity_with_its_own_hierarchy(tmp_path, base_store, monkeypatch, own_hierarchy):
    """An entity with enough sentences is clustered by a hierarchy of its own sentences, with ``own_alpha``."""
    import dataclasses

    import opinio_agents.hiro.highlights as highlights
    from opinio_agents.hiro import HiroIndex

    settings = dataclasses.replace(
        highlights.QUERY_FREE_SETTINGS, small_entity_sentences=1, own_hierarchy=own_hierarchy
    )
    monkeypatch.setattr(highlights, "QUERY_FREE_SETTINGS", settings)
    seen: list[tuple[HiroIndex, float]] = []
    real = highlights.discover_aspects

    def recording(index, key, **kwargs):
        seen.append((index, kwargs["alpha"]))
        return real(index, key, **kwargs)

    monkeypatch.setattr(highlights, "discover_aspects", recording)
    shared = HiroIndex(_store(tmp_path, base_store))
    result = highlights.query_free_result(shared, "2", small_entity=0, cache=False)
    [(clustered, alpha)] = seen
    if own_hierarchy:
        assert clustered is shared.own("2") and clustered is not shared
        assert clustered.corpus_baseline("2") is None and alpha == settings.own_alpha
    else:
        assert clustered is shared and alpha == settings.alpha
    assert result.highlights.highlights  # the summary is built from those clusters
