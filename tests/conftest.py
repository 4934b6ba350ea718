"""Shared fixtures: the embedding model and small indexed stores are built once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


@pytest.fixture(scope="session")
def encoder():
    """The shipped MiniLM encoder, loaded once."""
    from opinio_agents.embeddings import get_encoder

    enc = get_encoder()
    enc.encode(["warm up"])
    return enc


def tiny_entity_dict() -> dict:
    """A hand-written entity whose opinions are unambiguous."""
    return {
        "entity_id": 7,
        "entity_name": "Harbor Inn",
        "expert_review": {
            "pros": {"pool": "Large, clean outdoor pool."},
            "cons": {"wi-fi": "Wi-fi is slow and costs extra."},
        },
        "user_reviews": [
            {"review_id": 1, "text": "The wifi was slow and cost 10 dollars a day. The pool was great!",
             "rating": 3, "publication_date": "2021-03-02", "helpful_votes": 4},
            {"review_id": 2, "text": "Great pool, friendly staff. The internet kept dropping, terrible wi-fi.",
             "rating": 4, "publication_date": "2022-05-10", "helpful_votes": 0},
            {"review_id": 3, "text": "Terrible wi-fi, we could not even check email. Breakfast was fine.",
             "rating": 2, "publication_date": "2023-01-15", "helpful_votes": 2},
            {"review_id": 4, "text": "We loved the pool. The pool area was clean and never crowded.",
             "rating": 5, "publication_date": "2023-07-01", "helpful_votes": 9},
            {"review_id": 5, "text": "Awful wifi, slow and overpriced. Parking was easy.",
             "rating": 2, "publication_date": "2024-02-11"},
        ],
    }


@pytest.fixture
def tiny_entity():
    """A fresh Entity built from :func:`tiny_entity_dict`."""
    from opinio_agents.models import Entity

    return Entity.model_validate(tiny_entity_dict())


@pytest.fixture(scope="session")
def tiny_store(tmp_path_factory, encoder):
    """A RetrieverFactory over a MiniLM store holding the tiny entity (read-only for tests; ``.store`` is the store)."""
    from opinio_agents.indexing import Indexer
    from opinio_agents.models import Entity
    from opinio_agents.retrieval import RetrieverFactory
    from opinio_agents.stores import SentenceStore

    store = SentenceStore(tmp_path_factory.mktemp("tiny-store"))
    Indexer(store, encoder).index_entity(Entity.model_validate(tiny_entity_dict()))
    return RetrieverFactory(store, encoder)


@pytest.fixture(scope="session")
def synthetic_dataset():
    """Three synthetic entities with planted opinions (small enough to embed quickly)."""
    from opinio_agents.datasets import generate_dataset

    return generate_dataset(n_entities=3, reviews_per_entity=120, seed=3)


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory, encoder, synthetic_dataset) -> tuple[Path, object]:
    """A MiniLM store with the synthetic dataset indexed: ``(path, SentenceStore)`` (read-only for tests)."""
    from opinio_agents.indexing import Indexer
    from opinio_agents.stores import SentenceStore

    path = tmp_path_factory.mktemp("synthetic-store")
    store = SentenceStore(path)
    Indexer(store, encoder).index_entities(synthetic_dataset.entities)
    return path, store
