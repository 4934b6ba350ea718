"""Encoder backends and encode-once indexing.

Fast tier (hashing encoder, no model): each distinct text is encoded once within and
across entities and its vector reused; sentiment is scored for every sentence; a
writer failure surfaces; a store accepts queries from another backend of its model
but refuses writes from it, and refuses another model outright; the façade follows
the store's backend. Slow tier: the ONNX backends against torch fp32 on real-ish
review sentences (one export, cached).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from opinio_agents.embeddings import (
    DEFAULT_MODEL_NAME,
    ENCODER_ENV,
    EmbeddingModelInfo,
    resolve_backend,
    text_key,
)
from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.indexing import Indexer, LexiconSentiment
from opinio_agents.models import Entity
from opinio_agents.retrieval import RetrieverFactory
from opinio_agents.stores import SentenceStore
from tests.fake_encoder import HashEncoder

DIM = 256


def _entity(entity_id: int, texts: list[str]) -> Entity:
    return Entity.model_validate(
        {
            "entity_id": entity_id,
            "entity_name": f"hotel {entity_id}",
            "user_reviews": [{"review_id": i, "text": t, "rating": 1 + i % 5} for i, t in enumerate(texts)],
        }
    )


def _uncased(**kwargs: object) -> HashEncoder:
    encoder = HashEncoder(dimension=DIM, **kwargs)  # type: ignore[arg-type]
    encoder.lowercase = True  # type: ignore[attr-defined]  # it ignores case (App. D tokens), like MiniLM
    return encoder


REPEATED = [
    "Great location. The breakfast was cold.",
    "great   location. Friendly staff.",
    "GREAT LOCATION. The breakfast was cold.",
    "Great location.",
    "The pool was dirty. Friendly staff.",
]


def test_each_distinct_text_is_encoded_once_within_an_entity(tmp_path: Path) -> None:
    encoder = _uncased()
    store = SentenceStore(tmp_path)
    stats = Indexer(store, encoder, sentiment=LexiconSentiment()).index_entity(_entity(1, REPEATED))
    stored = store.sentences(1)
    distinct = {text_key(s.sentence.text, lowercase=True) for s in stored}
    assert len(stored) == 9 and len(distinct) == 4  # great location / breakfast cold / friendly staff / pool dirty
    assert encoder.encoded == stats.texts_encoded == 4
    assert stats.sentences_embedded == 9 and stats.vectors_reused == 5
    assert store.collection(1).count() == 9  # every sentence still has its own record
    vectors = store.embeddings(1)
    by_key: dict[str, np.ndarray] = {}
    for row, s in enumerate(stored):
        same = by_key.setdefault(text_key(s.sentence.text, lowercase=True), vectors[row])
        np.testing.assert_array_equal(same, vectors[row])
    expected = LexiconSentiment().score([s.sentence.text for s in stored], None)
    assert [s.sentiment for s in stored] == pytest.approx(expected)  # VADER sees the original case
    hits = RetrieverFactory(store, encoder).retrieve(1, "pool dirty", retriever="dense", top_k=1)
    assert hits[0].sentence.text == "The pool was dirty."


def test_vectors_are_reused_across_entities_and_changed_reviews(tmp_path: Path) -> None:
    encoder = _uncased()
    store = SentenceStore(tmp_path)
    indexer = Indexer(store, encoder, sentiment=LexiconSentiment())
    indexer.index_entity(_entity(1, REPEATED))
    before = encoder.encoded
    stats = indexer.index_entity(_entity(2, ["Great location!", "great location. The spa was heavenly."]))
    assert encoder.encoded - before == 2  # "great location!" and the spa: "great location." is stored already
    assert stats.sentences_embedded == 3 and stats.vectors_reused == 1
    np.testing.assert_array_equal(store.embeddings(2)[1], store.embeddings(1)[0])

    before = encoder.encoded
    changed = [*REPEATED[:-1], "The pool was dirty. The spa was heavenly."]  # the last review is edited
    stats = indexer.index_entity(_entity(1, changed))
    assert stats.reviews_updated == 1 and encoder.encoded == before  # both of its sentences are known texts
    assert store.collection(1).count() == len(store.sentences(1)) == 9


def test_a_case_sensitive_encoder_keeps_cases_apart(tmp_path: Path) -> None:
    encoder = HashEncoder(dimension=DIM)  # no ``lowercase``: only spacing is collapsed
    Indexer(SentenceStore(tmp_path), encoder, sentiment=LexiconSentiment()).index_entity(_entity(1, REPEATED))
    assert encoder.encoded == 6  # "Great location." and "GREAT LOCATION." are two texts here


def test_an_encoder_may_opt_out_of_encode_once(tmp_path: Path) -> None:
    encoder = _uncased()
    encoder.encode_once = False  # type: ignore[attr-defined]
    stats = Indexer(SentenceStore(tmp_path), encoder, sentiment=LexiconSentiment()).index_entity(_entity(1, REPEATED))
    assert encoder.encoded == stats.texts_encoded == 9 and stats.vectors_reused == 0
    assert SentenceStore(tmp_path).catalog.count_text_vectors() == 0


def test_a_failing_writer_stops_the_run_with_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SentenceStore(tmp_path)

    def broken(*_: object, **__: object) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(store, "add_vectors", broken)
    with pytest.raises(StoreError, match="disk full"):
        Indexer(store, _uncased(), sentiment=LexiconSentiment(), embed_chunk=1).index_entity(_entity(1, REPEATED))
    assert not store.is_complete(1)


def _backend_encoder(backend: str, name: str = "test-hash-bow") -> HashEncoder:
    encoder = HashEncoder(name=name, dimension=DIM)
    encoder.backend = backend  # type: ignore[attr-defined]
    return encoder


def test_store_accepts_queries_from_another_backend_and_refuses_its_writes(tmp_path: Path) -> None:
    store = SentenceStore(tmp_path)
    Indexer(store, _backend_encoder("onnx-int8"), sentiment=LexiconSentiment()).index_entity(_entity(1, REPEATED))
    assert store.models().embedding is not None and store.models().embedding.backend == "onnx-int8"

    reader = RetrieverFactory(SentenceStore(tmp_path), _backend_encoder("torch"))
    assert reader.retrieve(1, "pool", retriever="dense", top_k=1)  # same model, other runtime: compatible

    with pytest.raises(StoreError, match=r"backend 'onnx-int8' vs 'torch'.*--encoder onnx-int8"):
        Indexer(SentenceStore(tmp_path), _backend_encoder("torch"), sentiment=LexiconSentiment()).index_entity(
            _entity(2, ["New text."])
        )
    assert SentenceStore(tmp_path).entity_keys() == ["1"]  # nothing was written

    other = RetrieverFactory(SentenceStore(tmp_path), _backend_encoder("onnx-int8", name="another-model"))
    with pytest.raises(StoreError, match="name 'test-hash-bow' vs 'another-model'"):
        other.retrieve(1, "pool", retriever="dense")


def test_a_store_without_a_recorded_backend_accepts_any(tmp_path: Path) -> None:
    store = SentenceStore(tmp_path)
    Indexer(store, HashEncoder(dimension=DIM), sentiment=LexiconSentiment()).index_entity(_entity(1, REPEATED))
    assert store.models().embedding is not None and store.models().embedding.backend is None
    Indexer(SentenceStore(tmp_path), _backend_encoder("torch"), sentiment=LexiconSentiment()).index_entity(
        _entity(2, ["New text."])
    )
    assert SentenceStore(tmp_path).models().embedding.backend is None  # type: ignore[union-attr]


def test_facade_follows_the_store_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from opinio_agents.api import OpinioRAG

    monkeypatch.delenv(ENCODER_ENV, raising=False)
    store = SentenceStore(tmp_path)
    store.record_models(EmbeddingModelInfo(DEFAULT_MODEL_NAME, 384, backend="torch"))
    assert OpinioRAG(tmp_path).encoder.backend == "torch"  # type: ignore[attr-defined]  (no model is loaded)
    assert OpinioRAG(tmp_path, encoder="onnx").encoder.backend == "onnx"  # type: ignore[attr-defined]
    monkeypatch.setenv(ENCODER_ENV, "onnx")
    assert OpinioRAG(tmp_path).encoder.backend == "onnx"  # type: ignore[attr-defined]
    assert OpinioRAG(tmp_path / "fresh", encoder="torch").encoder.backend == "torch"  # type: ignore[attr-defined]


def test_backend_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENCODER_ENV, raising=False)
    assert resolve_backend() == "onnx"  # onnxruntime and onnx are installed: fp32 ONNX, the same vectors as torch
    assert resolve_backend(None, "/models/mine") == "torch"  # another model: its own pooling, on torch
    assert resolve_backend("ONNX") == "onnx"
    monkeypatch.setenv(ENCODER_ENV, "torch")
    assert resolve_backend() == "torch"
    monkeypatch.setenv(ENCODER_ENV, "tensorrt")
    with pytest.raises(ConfigError, match=r"\$OPINIO_ENCODER='tensorrt' is not an encoder backend"):
        resolve_backend()
    with pytest.raises(ConfigError, match="encoder='fp16'"):
        resolve_backend("fp16")


def test_onnx_backend_refuses_models_it_cannot_export(tmp_path: Path) -> None:
    from opinio_agents.embeddings.onnx import OnnxEncoder

    with pytest.raises(ConfigError, match="not a directory"):
        OnnxEncoder(tmp_path / "missing")
    with pytest.raises(ConfigError, match="no tokenizer.json"):
        OnnxEncoder(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    pooling = {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}
    (tmp_path / "modules.json").write_text(json.dumps([pooling]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(ConfigError, match="mean pooling"):
        OnnxEncoder(tmp_path)


def test_cli_offers_the_encoder_option() -> None:
    from typer.testing import CliRunner

    from opinio_agents.cli.main import app

    runner = CliRunner()
    for command in ("index", "highlight"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "--encoder" in result.output and "onnx-int8" in result.output
    bad = runner.invoke(app, ["index", "x.json", "--encoder", "fp16"])
    assert bad.exit_code == 2


# -- slow: the real model, each backend ---------------------------------------------------------
SENTENCES = [
    "The room was spotless and the bed was very comfortable.",
    "Wi-fi kept dropping every few minutes, useless for work.",
    "Breakfast buffet had a great selection of fresh fruit.",
    "Staff at the front desk were rude and unhelpful.",
    "Great location, a five minute walk to the beach.",
    "The air conditioning was noisy and barely worked.",
    "Parking cost $25 a night, which is a rip-off.",
    "We loved the rooftop pool and the view of the city!",
    "Thin walls: we heard our neighbours all night.",
    "check-in took forever, 45 minutes in line",
    "Spa was heavenly; the massage was worth every penny.",
    "Bathroom smelled of mould and the towels were stained.",
]


@pytest.mark.slow
def test_onnx_backends_agree_with_torch() -> None:
    from opinio_agents.embeddings import get_encoder

    reference = get_encoder(backend="torch").encode(SENTENCES)
    queries = ["internet", "cleanliness", "breakfast", "noise", "staff"]
    ref_q = get_encoder(backend="torch").encode(queries)
    # int8 quantises activations with one scale per batch, so a text's vector moves slightly with its batch.
    for backend, floor, alone in (("onnx", 0.9999, 0.9999), ("onnx-int8", 0.97, 0.97)):
        encoder = get_encoder(backend=backend)
        vectors = encoder.encode(SENTENCES)
        assert vectors.shape == reference.shape and vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
        cosines = (vectors * reference).sum(axis=1)
        assert cosines.min() >= floor, (backend, cosines)
        ranked = np.argsort(-(encoder.encode(queries) @ vectors.T), axis=1)[:, :3]
        expected = np.argsort(-(ref_q @ reference.T), axis=1)[:, :3]
        assert (ranked[:, 0] == expected[:, 0]).all(), backend  # the nearest sentence of every query agrees
        assert encoder.fingerprint == get_encoder(backend="torch").fingerprint  # type: ignore[attr-defined]
        one_by_one = np.vstack([encoder.encode([s]) for s in SENTENCES[:4]])  # unpadded, batch of one
        assert ((one_by_one * vectors[:4]).sum(axis=1) >= alone).all(), backend


@pytest.mark.slow
def test_the_default_encoder_gives_torch_fp32_vectors_in_input_order(encoder) -> None:  # type: ignore[no-untyped-def]
    """The default (fp32 ONNX, batched in token order and padded per batch) is exact, whatever the batching."""
    from opinio_agents.embeddings import get_encoder

    if getattr(encoder, "backend", "torch") == "torch":
        pytest.skip("ONNX Runtime is not installed: the default is torch itself")
    long = " ".join(SENTENCES)  # many tokens: a batch of its own width
    texts = ["Ok.", long, *SENTENCES[::-1], "Good.", SENTENCES[0], long[:300]]  # lengths out of order, a repeat
    reference = get_encoder(backend="torch").encode(texts)
    for size in (1, 3, 64):  # batches of one (no padding), several widths, one padded batch
        vectors = encoder.encode(texts, batch_size=size)
        assert vectors.shape == reference.shape and vectors.dtype == np.float32
        np.testing.assert_allclose(vectors, reference, atol=2e-5, err_msg=f"batch_size={size}")
