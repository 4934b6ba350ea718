"""Store, indexer and retriever factory with a hashing encoder (fast tier: no model is loaded).

Idempotent, incremental and resumable indexing; retrieval of each kind; typed records;
the models a store records and refuses to mix; per-entity caching and its invalidation;
replaceable indexing stages; the import direction stores/ -> nothing above it.
"""

from __future__ import annotations

import ast
import dataclasses
import threading
from pathlib import Path

import pytest
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

import opinio_agents
from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.indexing import AppendixDTokenizer, Indexer, LexiconSentiment, RuleSegmenter
from opinio_agents.models import Entity, Review, Sentence
from opinio_agents.retrieval import RetrieverFactory
from opinio_agents.stores import EntityRecord, SentenceStore
from tests.conftest import tiny_entity_dict
from tests.fake_encoder import HashEncoder

DIM = 512  # no hash collision among the test vocabulary at 512 buckets


def _stack(path: Path, encoder: HashEncoder | None = None, **stages) -> tuple[SentenceStore, Indexer, RetrieverFactory]:
    encoder = encoder or HashEncoder(dimension=DIM)
    store = SentenceStore(path)
    stages.setdefault("sentiment", LexiconSentiment())
    return store, Indexer(store, encoder, **stages), RetrieverFactory(store, encoder)


@pytest.fixture
def indexed(tmp_path, tiny_entity):
    store, indexer, factory = _stack(tmp_path)
    indexer.index_entity(tiny_entity)
    return store, indexer, factory


def _snapshot(store: SentenceStore, key: str) -> tuple:
    """Everything a failed run must leave untouched."""
    return (
        store.generation(key),
        [(s.sentence.sentence_id, s.sentence.text, s.sentiment) for s in store.catalog.sentences(key)],
        store.collection(key).count(),
        dict(store.review_states(key)),
        store.models(),
    )


# -- indexing ---------------------------------------------------------------------------------
def test_second_run_reembeds_nothing(tmp_path, tiny_entity) -> None:
    encoder = HashEncoder(dimension=DIM)
    store, indexer, _ = _stack(tmp_path, encoder)
    first = indexer.index_entity(tiny_entity)
    assert first.reviews_added == 5 and first.sentences_embedded == first.sentences_total == 10
    embedded = encoder.encoded
    generation = store.generation("7")
    second = Indexer(SentenceStore(tmp_path), encoder, sentiment=LexiconSentiment()).index_entity(tiny_entity)
    assert second.reviews_unchanged == 5 and second.sentences_embedded == 0
    assert encoder.encoded == embedded
    assert store.generation("7") == generation  # nothing changed, so no cache is invalidated


def test_incremental_add_change_remove(tmp_path) -> None:
    encoder = HashEncoder(dimension=DIM)
    store, indexer, factory = _stack(tmp_path, encoder)
    data = tiny_entity_dict()
    indexer.index_entity(Entity.model_validate(data))
    before = encoder.encoded

    data["user_reviews"][0]["text"] = "Slow wifi. Pool closed for repairs."  # changed: 2 sentences
    del data["user_reviews"][1]  # removed
    data["user_reviews"].append({"review_id": 9, "text": "The spa was heavenly."})  # added: 1 sentence
    stats = indexer.index_entity(Entity.model_validate(data))
    assert (stats.reviews_updated, stats.reviews_removed, stats.reviews_added) == (1, 1, 1)
    assert encoder.encoded - before == 3  # only the changed and the new review were embedded

    ids = {s.sentence.sentence_id for s in store.sentences(7)}
    assert "7:9:0" in ids and not any(i.startswith("7:2:") for i in ids)
    assert store.collection("7").count() == len(ids)  # stale vectors are gone from Chroma too
    hits = factory.retrieve(7, "spa", retriever="dense", top_k=1)
    assert hits[0].sentence.sentence_id == "7:9:0"
    for kind in ("bm25", "dense", "hybrid"):  # the changed review's old sentence survives in no retriever
        assert all(h.sentence.text != "The pool was great!" for h in factory.retrieve(7, "pool", retriever=kind))
    assert len(store.embeddings(7)) == len(store.sentences(7))


def test_interrupted_run_is_completed_without_reembedding(tmp_path) -> None:
    from opinio_agents.datasets import generate_dataset

    entity = generate_dataset(n_entities=1, reviews_per_entity=12, seed=1).entities[0]
    failing = HashEncoder(dimension=DIM, fail_after_calls=2)  # killed while embedding the third chunk
    store = SentenceStore(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        Indexer(store, failing, sentiment=LexiconSentiment(), embed_chunk=16).index_entity(entity)
    assert failing.encoded == 32  # two chunks of 16 distinct texts reached the store

    resumed = HashEncoder(dimension=DIM)
    indexer = Indexer(SentenceStore(tmp_path), resumed, sentiment=LexiconSentiment(), embed_chunk=16)
    distinct = len(set(indexer.text_keys([s.sentence.text for s in store.catalog.sentences(entity.key)])))
    stats = indexer.index_entity(entity)
    assert stats.sentences_resumed >= 32  # every sentence of those 32 texts kept its vector
    assert resumed.encoded == distinct - 32  # and none of those texts is encoded again
    fresh = SentenceStore(tmp_path)
    assert len(fresh.embeddings(entity.key)) == stats.sentences_total
    again = Indexer(fresh, resumed, sentiment=LexiconSentiment()).index_entity(entity)
    assert again.sentences_embedded == 0


def test_sentiment_is_scored_for_every_sentence(indexed) -> None:
    store, _, _ = indexed
    stored = store.sentences(7)
    expected = LexiconSentiment().score([s.sentence.text for s in stored], None)
    assert [s.sentiment for s in stored] == pytest.approx(expected)
    assert min(s.sentiment for s in stored) < 0 < max(s.sentiment for s in stored)


# -- records ------------------------------------------------------------------------------------
def test_entity_record_is_typed_and_frozen(indexed, tiny_entity) -> None:
    store, _, _ = indexed
    record = store.entity_record(7)
    assert isinstance(record, EntityRecord)
    assert (record.key, record.entity_id, record.entity_name, record.n_reviews) == ("7", 7, "Harbor Inn", 5)
    assert record.expert_review == tiny_entity.expert_review and record.queries == ["pool", "wi-fi"]
    assert record.generation >= 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.entity_name = "other"  # type: ignore[misc]


def test_sentence_offsets_point_into_the_review(indexed, tiny_entity) -> None:
    store, _, _ = indexed
    reviews = {str(r.review_id): r.text for r in tiny_entity.user_reviews}
    for stored in store.sentences(7):
        s = stored.sentence
        assert reviews[s.review_id][s.start : s.end] == s.text


def test_entity_round_trip(indexed, tiny_entity) -> None:
    assert indexed[0].entity(7) == tiny_entity


def test_unknown_entity_lists_indexed_ids(indexed) -> None:
    store, _, factory = indexed
    with pytest.raises(StoreError, match=r"entity '99' is not indexed .*indexed: 7"):
        factory.retrieve(99, "pool")
    with pytest.raises(StoreError, match=r"entity '99' is not indexed"):
        store.entity_record(99)


# -- retrieval -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_retrievers_return_positive_scores_and_real_ids(indexed, kind) -> None:
    store, _, factory = indexed
    hits = factory.retrieve(7, "wi-fi", retriever=kind, top_k=3)
    assert 0 < len(hits) <= 3 and all(h.score > 0 for h in hits)
    known = {s.sentence.sentence_id: (s.sentence.text, s.sentiment) for s in store.sentences(7)}
    for hit in hits:
        assert known[hit.sentence.sentence_id] == (hit.sentence.text, hit.sentiment)
    assert "wi" in hits[0].sentence.text.lower()


def test_bm25_returns_nothing_for_unrelated_query(indexed) -> None:
    assert indexed[2].retrieve(7, "golf course", retriever="bm25") == []


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_metadata_filters(indexed, kind) -> None:
    filters = MetadataFilters(filters=[MetadataFilter(key="rating", value=4, operator=FilterOperator.GTE)])
    hits = indexed[2].retrieve(7, "pool", retriever=kind, top_k=10, filters=filters)
    assert hits and all((h.sentence.rating or 0) >= 4 for h in hits)
    unfiltered = indexed[2].retrieve(7, "pool", retriever=kind, top_k=10)
    assert any((h.sentence.rating or 0) < 4 for h in unfiltered)  # the filter did remove something


def test_bad_arguments(indexed) -> None:
    factory = indexed[2]
    with pytest.raises(ConfigError, match="retriever='tfidf'"):
        factory.retriever(7, "tfidf")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="top_k=0"):
        factory.retriever(7, "bm25", top_k=0)
    with pytest.raises(ConfigError, match="query is empty"):
        factory.retrieve(7, "  ")
    with pytest.raises(ConfigError, match="embed_chunk=0"):
        Indexer(indexed[0], HashEncoder(), embed_chunk=0)


# -- caching and invalidation ----------------------------------------------------------------
def test_retrievers_and_filter_masks_are_cached_per_entity(indexed) -> None:
    _, _, factory = indexed
    filters = MetadataFilters(filters=[MetadataFilter(key="rating", value=4, operator=FilterOperator.GTE)])
    same_filters = MetadataFilters(filters=[MetadataFilter(key="rating", value=4, operator=FilterOperator.GTE)])
    for kind in ("bm25", "dense", "hybrid"):
        assert factory.retriever(7, kind, top_k=3) is factory.retriever(7, kind, top_k=3)
        assert factory.retriever(7, kind, top_k=3, filters=filters) is factory.retriever(
            7, kind, top_k=3, filters=same_filters
        )
        assert factory.retriever(7, kind, top_k=3) is not factory.retriever(7, kind, top_k=4)
    bm25_a = factory.retriever(7, "bm25", top_k=3, filters=filters)
    bm25_b = factory.retriever(7, "bm25", top_k=8, filters=filters)
    assert bm25_a._mask is bm25_b._mask  # noqa: SLF001 - one mask per filter, shared across K
    assert factory.nodes(7)["7:1:0"] is bm25_a.nodes[0]  # BM25 and dense share node objects


def test_reindexing_invalidates_cached_retrievers(tmp_path) -> None:
    store, indexer, factory = _stack(tmp_path)
    data = tiny_entity_dict()
    indexer.index_entity(Entity.model_validate(data))
    old = factory.retriever(7, "bm25", top_k=5)
    assert factory.retrieve(7, "jacuzzi", retriever="bm25") == []

    data["user_reviews"].append({"review_id": 6, "text": "The jacuzzi was lovely."})
    # Another process (another store object on the same directory) re-indexes the entity.
    other_store, other_indexer, _ = _stack(tmp_path)
    other_indexer.index_entity(Entity.model_validate(data))
    assert factory.retriever(7, "bm25", top_k=5) is not old
    assert [h.sentence.sentence_id for h in factory.retrieve(7, "jacuzzi", retriever="bm25")] == ["7:6:0"]
    assert [h.sentence.sentence_id for h in factory.retrieve(7, "jacuzzi", retriever="dense", top_k=1)] == ["7:6:0"]
    assert len(store.sentences(7)) == len(other_store.sentences(7)) == 11


def test_bm25_index_is_persisted_and_reused(indexed, monkeypatch) -> None:
    from opinio_agents.retrieval.bm25.scoring import BM25Index

    store, _, factory = indexed
    expected = [(h.sentence.sentence_id, h.score) for h in factory.retrieve(7, "pool", retriever="bm25")]
    assert (store.bm25_dir(7) / "opinio_stamp.txt").is_file()

    def no_build(*_args, **_kwargs):
        raise AssertionError("the persisted BM25 index should have been loaded")

    monkeypatch.setattr(BM25Index, "build", no_build)
    fresh = RetrieverFactory(SentenceStore(store.store_dir), HashEncoder(dimension=DIM))
    assert [(h.sentence.sentence_id, h.score) for h in fresh.retrieve(7, "pool", retriever="bm25")] == expected


def test_stale_bm25_data_is_not_loaded(tmp_path) -> None:
    store, indexer, factory = _stack(tmp_path)
    data = tiny_entity_dict()
    indexer.index_entity(Entity.model_validate(data))
    factory.prepare(7)
    data["user_reviews"][4]["text"] = "The sauna was hot."
    indexer.index_entity(Entity.model_validate(data))
    fresh = RetrieverFactory(SentenceStore(tmp_path), HashEncoder(dimension=DIM))
    assert [h.sentence.text for h in fresh.retrieve(7, "sauna", retriever="bm25")] == ["The sauna was hot."]


def test_factory_is_safe_to_share_across_threads(indexed) -> None:
    _, _, factory = indexed
    factory.invalidate()
    queries = ["pool", "wi-fi", "breakfast", "parking", "staff"] * 4
    expected = {q: [h.sentence.sentence_id for h in RetrieverFactory(indexed[0], HashEncoder(dimension=DIM)).retrieve(
        7, q, retriever="hybrid", top_k=3)] for q in set(queries)}
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def worker(i: int, query: str) -> None:
        try:
            results[i] = [h.sentence.sentence_id for h in factory.retrieve(7, query, retriever="hybrid", top_k=3)]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i, q)) for i, q in enumerate(queries)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(results[i] == expected[q] for i, q in enumerate(queries))


# -- the models a store records -------------------------------------------------------------------
def test_store_records_its_models(indexed) -> None:
    models = indexed[0].models()
    assert models.embedding is not None
    assert (models.embedding.name, models.embedding.dimension) == ("test-hash-bow", DIM)
    assert models.sentiment == "vader-review-v1" and models.bm25_tokenizer == "appendix-d-v1"


@pytest.mark.parametrize(
    ("encoder", "match"),
    [
        (HashEncoder(name="some-other-model", dimension=DIM), "name 'test-hash-bow' vs 'some-other-model'"),
        (HashEncoder(dimension=DIM * 2), f"dimension {DIM} vs {DIM * 2}"),
    ],
)
def test_other_embedding_model_is_refused_before_writing(indexed, tiny_entity, encoder, match) -> None:
    store = indexed[0]
    before = _snapshot(store, "7")
    tiny_entity.user_reviews[0].text = "Changed text that would be re-embedded."
    with pytest.raises(StoreError, match=rf"built with embedding model 'test-hash-bow' \({DIM}-d\).*{match}") as err:
        Indexer(SentenceStore(store.store_dir), encoder, sentiment=LexiconSentiment()).index_entity(tiny_entity)
    assert "new --store directory" in str(err.value)
    assert _snapshot(SentenceStore(store.store_dir), "7") == before
    assert encoder.encoded <= 1  # at most the dimension probe; nothing was embedded


def test_querying_with_another_model_is_refused(indexed) -> None:
    store = indexed[0]
    other = RetrieverFactory(store, HashEncoder(name="some-other-model", dimension=DIM))
    with pytest.raises(StoreError, match="built with embedding model 'test-hash-bow'"):
        other.retrieve(7, "pool", retriever="dense")
    with pytest.raises(StoreError, match="built with embedding model 'test-hash-bow'"):
        other.retrieve(7, "pool", retriever="hybrid")
    assert other.retrieve(7, "pool", retriever="bm25")  # BM25 does not use the encoder


def test_other_sentiment_scorer_or_tokenizer_is_refused(indexed, tiny_entity) -> None:
    store = indexed[0]
    before = _snapshot(store, "7")
    tiny_entity.user_reviews[0].text = "Changed text."
    other_scorer = LexiconSentiment(name="vader-custom")
    with pytest.raises(StoreError, match="scored by 'vader-review-v1' but 'vader-custom'"):
        Indexer(store, HashEncoder(dimension=DIM), sentiment=other_scorer).index_entity(tiny_entity)

    class Stemmed(AppendixDTokenizer):
        name = "stemmed-v1"

    with pytest.raises(StoreError, match="tokenizer 'appendix-d-v1' but 'stemmed-v1'"):
        Indexer(store, HashEncoder(dimension=DIM), tokenizer=Stemmed(), sentiment=LexiconSentiment()).index_entity(
            tiny_entity
        )
    with pytest.raises(StoreError, match="tokenizer 'appendix-d-v1' but 'stemmed-v1'"):
        RetrieverFactory(store, HashEncoder(dimension=DIM), tokenizer=Stemmed()).retrieve(7, "pool", retriever="bm25")
    assert _snapshot(store, "7") == before


def test_default_sentiment_head_refuses_other_vectors(tmp_path, tiny_entity) -> None:
    from opinio_agents.indexing import HeadBlendSentiment

    store = SentenceStore(tmp_path / "store")
    indexer = Indexer(store, HashEncoder(dimension=384), sentiment=HeadBlendSentiment())
    with pytest.raises(ConfigError, match="trained on all-MiniLM-L6-v2 vectors.*LexiconSentiment"):
        indexer.index_entity(tiny_entity)
    assert not (tmp_path / "store").exists()  # refused before anything was written


def test_default_sentiment_for_another_model_is_the_lexicon(tmp_path, tiny_entity, caplog) -> None:
    store = SentenceStore(tmp_path)
    indexer = Indexer(store, HashEncoder(dimension=384))  # 384-d like MiniLM, but another model
    with caplog.at_level("WARNING"):
        indexer.index_entity(tiny_entity)
    assert "VADER only" in caplog.text
    stored = store.sentences(7)
    expected = LexiconSentiment().score([s.sentence.text for s in stored], None)
    assert [s.sentiment for s in stored] == pytest.approx(expected)
    assert store.models().sentiment == "vader-review-v1"


# -- replaceable stages --------------------------------------------------------------------------
class CommaSegmenter:
    """Splits on commas as well as on full stops (a stand-in for another segmenter)."""

    name = "comma-v1"

    def segment(self, entity_id, review: Review) -> list[Sentence]:
        out, start = [], 0
        text = review.text
        for i, ch in enumerate(text + ","):
            if ch in ",." or i == len(text):
                piece = text[start:i].strip()
                if piece:
                    begin = text.index(piece, start)
                    out.append(
                        Sentence(
                            sentence_id=Sentence.make_id(entity_id, review.review_id, len(out)),
                            entity_id=str(entity_id), review_id=str(review.review_id), index=len(out),
                            text=piece, start=begin, end=begin + len(piece),
                        )
                    )
                start = i + 1
        return out


class ConstantSentiment:
    name = "constant-0.5"

    def check_encoder(self, model) -> None:
        return None

    def score(self, texts, embeddings) -> list[float]:
        assert embeddings is not None and len(embeddings) == len(texts)
        return [0.5] * len(texts)


def test_each_stage_is_replaceable_alone(tmp_path, tiny_entity) -> None:
    base = Indexer(SentenceStore(tmp_path / "a"), HashEncoder(dimension=DIM), sentiment=LexiconSentiment())
    assert [name for name, _ in base.stages] == ["segment", "tokenize", "encode", "sentiment"]
    assert isinstance(base.segmenter, RuleSegmenter)

    segmented = base.replace(segmenter=CommaSegmenter())
    assert segmented.tokenizer is base.tokenizer and segmented.sentiment is base.sentiment
    segmented.store = SentenceStore(tmp_path / "b")
    segmented.index_entity(tiny_entity)
    texts = [s.sentence.text for s in segmented.store.sentences(7)]
    assert "Great pool" in texts and "friendly staff" in texts

    scored = base.replace(sentiment=ConstantSentiment())
    assert scored.segmenter is base.segmenter
    scored.store = SentenceStore(tmp_path / "c")
    scored.index_entity(tiny_entity)
    assert {s.sentiment for s in scored.store.sentences(7)} == {0.5}
    assert scored.store.models().sentiment == "constant-0.5"


def test_custom_tokenizer_is_used_for_sentences_and_queries(tmp_path, tiny_entity) -> None:
    class Letters:
        name = "first-letters-v1"

        def tokenize(self, text: str) -> list[str]:
            return [w[:3].lower() for w in text.split() if w.isalpha()]

    store = SentenceStore(tmp_path)
    Indexer(store, HashEncoder(dimension=DIM), tokenizer=Letters(), sentiment=LexiconSentiment()).index_entity(
        tiny_entity
    )
    assert store.sentences(7)[0].tokens[:2] == ("the", "wif")
    factory = RetrieverFactory(store, HashEncoder(dimension=DIM), tokenizer=Letters())
    assert factory.retrieve(7, "poolside", retriever="bm25")  # 'poolside' -> 'poo' matches 'pool'


# -- layering -------------------------------------------------------------------------------------
def test_stores_import_nothing_above_them() -> None:
    """stores/ must not import retrieval/ or indexing/ (nor anything that imports them)."""
    forbidden = ("opinio_agents.retrieval", "opinio_agents.indexing", "opinio_agents.pipeline", "opinio_agents.api")
    root = Path(opinio_agents.__file__).parent / "stores"
    offenders = []
    for file in root.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offenders += [f"{file.name}: {n}" for n in names if n.startswith(forbidden)]
    assert offenders == []


def test_indexing_imports_no_retrieval() -> None:
    root = Path(opinio_agents.__file__).parent / "indexing"
    text = "\n".join(f.read_text("utf-8") for f in root.rglob("*.py"))
    assert "opinio_agents.retrieval" not in text


def test_empty_store_has_no_vectors(tmp_path) -> None:
    store = SentenceStore(tmp_path / "none")
    assert store.entity_keys() == [] and store.models().embedding is None
    assert not (tmp_path / "none").exists()  # reading an absent store creates nothing


def test_facade_persists_bm25_at_index_time_and_only_when_changed(tmp_path, tiny_entity) -> None:
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(tmp_path, encoder=HashEncoder(dimension=DIM))
    first = rag.index(tiny_entity, fit_hiro=False)[0]
    assert first.changed and "bm25" in first.timings
    assert (rag.store.bm25_dir(7) / "opinio_stamp.txt").is_file()
    again = rag.index(tiny_entity, fit_hiro=False)[0]
    assert not again.changed and "bm25" not in again.timings
    assert rag.retrieve(7, "pool", retriever="bm25")
