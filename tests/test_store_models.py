"""Real sentence-transformers models other than MiniLM: tiny, randomly initialised, built and saved under tmp_path.

Before the store split, ``embedding_model=`` with a 768-d model wrote the catalog and Chroma and then
failed in sentiment finalisation (a half-indexed store); another 384-d model silently got the MiniLM
sentiment head's scores; and a store only knew its model by a directory name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opinio_agents.api import OpinioRAG
from opinio_agents.errors import StoreError
from opinio_agents.indexing import LexiconSentiment
from opinio_agents.models import Entity
from tests.conftest import tiny_entity_dict

pytestmark = pytest.mark.slow  # builds and loads (tiny) transformer models


def _build_model(directory: Path, dimension: int, seed: int) -> Path:
    """A 1-layer, 16-wide random BERT + mean pooling + a Dense layer to ``dimension``, saved at ``directory``."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    base = directory.parent / f"{directory.name}-bert"
    base.mkdir(parents=True)
    words = "the a was and pool wifi wi fi great slow staff room breakfast parking internet terrible awful".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *"abcdefghijklmnopqrstuvwxyz.,!-"]
    (base / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(base / "vocab.txt")).save_pretrained(base)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(base)
    modules = [models.Transformer(str(base), max_seq_length=64), models.Pooling(16, pooling_mode="mean")]
    modules.append(models.Dense(16, dimension))
    SentenceTransformer(modules=modules, device="cpu").save(str(directory))
    return directory


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {
        "768": _build_model(root / "wide" / "tiny-768", 768, seed=0),
        "384-a": _build_model(root / "a" / "model", 384, seed=1),  # same directory name and dimension ...
        "384-b": _build_model(root / "b" / "model", 384, seed=2),  # ... different weights
    }


def _lexicon(rag: OpinioRAG) -> tuple[list[float], list[float]]:
    stored = rag.store.sentences(7)
    return [s.sentiment for s in stored], LexiconSentiment().score([s.sentence.text for s in stored], None)


def test_768_dimension_model_indexes_completely(tmp_path, tiny_models, tiny_entity) -> None:
    rag = OpinioRAG(tmp_path / "store", embedding_model=tiny_models["768"])
    stats = rag.index(tiny_entity)
    assert stats[0].sentences_embedded == stats[0].sentences_total == 10
    recorded = rag.store.models()
    assert recorded.embedding is not None and recorded.embedding.dimension == 768
    assert recorded.embedding.name == "tiny-768" and recorded.embedding.fingerprint
    assert recorded.sentiment == "vader-review-v1"  # the MiniLM head cannot read 768-d vectors
    got, expected = _lexicon(rag)
    assert got == pytest.approx(expected)
    assert rag.store.embeddings(7).shape == (10, 768)
    assert rag.retrieve(7, "pool", retriever="dense", top_k=3)
    result = rag.highlights(7)
    assert {h.query for h in result.highlights} <= {"pool", "wi-fi"}


def test_another_384_dimension_model_does_not_get_the_minilm_head(tmp_path, tiny_models, tiny_entity) -> None:
    rag = OpinioRAG(tmp_path / "store", embedding_model=tiny_models["384-a"])
    rag.index(tiny_entity)
    got, expected = _lexicon(rag)
    assert got == pytest.approx(expected)  # VADER alone, not the head's scores of meaningless vectors
    assert rag.store.models().sentiment == "vader-review-v1"


def test_same_name_other_weights_is_refused_before_writing(tmp_path, tiny_models) -> None:
    store = tmp_path / "store"
    OpinioRAG(store, embedding_model=tiny_models["384-a"]).index(Entity.model_validate(tiny_entity_dict()))
    before = OpinioRAG(store).store.catalog.sentences("7")

    changed = tiny_entity_dict()
    changed["user_reviews"][0]["text"] = "Changed: the breakfast was awful."
    other = OpinioRAG(store, embedding_model=tiny_models["384-b"])
    with pytest.raises(StoreError, match=r"built with embedding model 'model' \(384-d.*model files differ") as err:
        other.index(Entity.model_validate(changed))
    assert "new --store directory" in str(err.value) and str(tiny_models["384-a"]) in str(err.value)
    with pytest.raises(StoreError, match="model files differ"):
        other.retrieve(7, "pool", retriever="dense")
    with pytest.raises(StoreError, match=r"built with embedding model 'model' \(384-d.*dimension 384 vs 768"):
        wide = tiny_models["768"].parent / "model"
        if not wide.exists():
            wide.symlink_to(tiny_models["768"], target_is_directory=True)
        OpinioRAG(store, embedding_model=wide).index(Entity.model_validate(changed))
    assert OpinioRAG(store).store.catalog.sentences("7") == before  # nothing was written


def test_minilm_store_records_the_blended_scorer_and_fingerprint(tmp_path, encoder, tiny_entity) -> None:
    from opinio_agents.embeddings import default_model_path, model_fingerprint

    rag = OpinioRAG(tmp_path / "store")
    rag.index(tiny_entity)
    recorded = rag.store.models()
    assert recorded.embedding is not None
    assert (recorded.embedding.name, recorded.embedding.dimension) == ("all-MiniLM-L6-v2", 384)
    assert recorded.embedding.fingerprint == model_fingerprint(default_model_path())
    assert recorded.sentiment == "vader+head:all-MiniLM-L6-v2"
    got, lexicon = _lexicon(rag)
    assert got != pytest.approx(lexicon)  # the head contributes
