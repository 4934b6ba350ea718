"""The on-disk sentence index: idempotent, incremental, resumable; retrieval of each kind."""

from __future__ import annotations

import pytest
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.models import Entity
from opinio_agents.stores import SentenceIndex
from tests.conftest import tiny_entity_dict


class CountingEncoder:
    """Wraps the real encoder; counts encoded sentences and can fail after N calls."""

    def __init__(self, inner, fail_after_calls: int | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.batch_size = inner.batch_size
        self.encoded = 0
        self.calls = 0
        self.fail_after_calls = fail_after_calls

    def encode(self, texts, **kwargs):
        if self.fail_after_calls is not None and self.calls >= self.fail_after_calls:
            raise KeyboardInterrupt("simulated kill")
        self.calls += 1
        self.encoded += len(texts)
        return self.inner.encode(texts, **kwargs)


def test_second_run_reembeds_nothing(tmp_path, encoder, tiny_entity) -> None:
    counting = CountingEncoder(encoder)
    index = SentenceIndex(tmp_path, encoder=counting)
    first = index.index_entity(tiny_entity)
    assert first.reviews_added == 5 and first.sentences_embedded == first.sentences_total > 0
    embedded = counting.encoded
    second = SentenceIndex(tmp_path, encoder=counting).index_entity(tiny_entity)
    assert second.reviews_unchanged == 5
    assert second.sentences_embedded == 0
    assert counting.encoded == embedded


def test_incremental_add_change_remove(tmp_path, encoder) -> None:
    counting = CountingEncoder(encoder)
    index = SentenceIndex(tmp_path, encoder=counting)
    data = tiny_entity_dict()
    index.index_entity(Entity.model_validate(data))
    before = counting.encoded

    data["user_reviews"][0]["text"] = "Slow wifi. Pool closed for repairs."  # changed: 2 sentences
    del data["user_reviews"][1]  # removed
    data["user_reviews"].append({"review_id": 9, "text": "The spa was heavenly."})  # added: 1 sentence
    stats = index.index_entity(Entity.model_validate(data))
    assert (stats.reviews_updated, stats.reviews_removed, stats.reviews_added) == (1, 1, 1)
    assert counting.encoded - before == 3  # only the changed and the new review were embedded

    ids = {s.sentence.sentence_id for s in index.sentences(7)}
    assert "7:9:0" in ids and not any(i.startswith("7:2:") for i in ids)
    hits = index.retrieve(7, "spa", kind="dense", top_k=1)
    assert hits[0].sentence.sentence_id == "7:9:0"
    # The changed review's old third sentence must not survive in any retriever.
    assert all(h.sentence.text != "The pool was great!" for h in index.retrieve(7, "pool", kind="hybrid"))
    assert len(index.embeddings(7)) == len(index.sentences(7))


def test_interrupted_run_is_completed_without_reembedding(tmp_path, encoder, monkeypatch) -> None:
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.stores import sentence_index

    monkeypatch.setattr(sentence_index, "_EMBED_CHUNK", 16)
    entity = generate_dataset(n_entities=1, reviews_per_entity=12, seed=1).entities[0]
    failing = CountingEncoder(encoder, fail_after_calls=2)  # killed while embedding the third chunk
    with pytest.raises(KeyboardInterrupt):
        SentenceIndex(tmp_path, encoder=failing).index_entity(entity)
    done_before_kill = failing.encoded
    assert done_before_kill == 32

    resumed = CountingEncoder(encoder)
    stats = SentenceIndex(tmp_path, encoder=resumed).index_entity(entity)
    assert stats.sentences_resumed == done_before_kill
    assert resumed.encoded == stats.sentences_total - done_before_kill
    index = SentenceIndex(tmp_path, encoder=encoder)
    assert len(index.embeddings(entity.key)) == stats.sentences_total
    again = index.index_entity(entity)
    assert again.sentences_embedded == 0


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_retrieval_kinds_return_positive_scores_and_real_ids(tiny_store, kind) -> None:
    hits = tiny_store.retrieve(7, "wi-fi", kind=kind, top_k=3)
    assert 0 < len(hits) <= 3
    assert all(h.score > 0 for h in hits)
    known = {s.sentence.sentence_id: s.sentence.text for s in tiny_store.sentences(7)}
    for hit in hits:
        assert known[hit.sentence.sentence_id] == hit.sentence.text
    assert any("wi" in h.sentence.text.lower() for h in hits[:2])


def test_bm25_returns_nothing_for_unrelated_query(tiny_store) -> None:
    assert tiny_store.retrieve(7, "golf course", kind="bm25") == []


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_metadata_filters(tiny_store, kind) -> None:
    filters = MetadataFilters(filters=[MetadataFilter(key="rating", value=4, operator=FilterOperator.GTE)])
    hits = tiny_store.retrieve(7, "pool", kind=kind, top_k=10, filters=filters)
    assert hits and all((h.sentence.rating or 0) >= 4 for h in hits)


def test_sentence_offsets_point_into_the_review(tiny_store, tiny_entity) -> None:
    reviews = {str(r.review_id): r.text for r in tiny_entity.user_reviews}
    for stored in tiny_store.sentences(7):
        s = stored.sentence
        assert reviews[s.review_id][s.start : s.end] == s.text


def test_entity_round_trip(tiny_store, tiny_entity) -> None:
    assert tiny_store.entity(7) == tiny_entity


def test_unknown_entity_lists_indexed_ids(tiny_store) -> None:
    with pytest.raises(StoreError, match=r"entity '99' is not indexed .*indexed: 7"):
        tiny_store.retrieve(99, "pool")


def test_bad_arguments(tiny_store) -> None:
    with pytest.raises(ConfigError, match="retriever='tfidf'"):
        tiny_store.retriever(7, "tfidf")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="top_k=0"):
        tiny_store.retriever(7, "bm25", top_k=0)
    with pytest.raises(ConfigError, match="query is empty"):
        tiny_store.retrieve(7, "  ")


def test_other_embedding_model_is_refused(tmp_path, encoder, tiny_entity) -> None:
    SentenceIndex(tmp_path, encoder=encoder).index_entity(tiny_entity)

    class Other(CountingEncoder):
        pass

    other = Other(encoder)
    other.name = "some-other-model"
    with pytest.raises(StoreError, match="built with embedding model 'all-MiniLM-L6-v2'"):
        SentenceIndex(tmp_path, encoder=other).index_entity(tiny_entity)
