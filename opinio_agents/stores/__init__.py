"""Persistent stores: the SQLite catalog, Chroma collections and the per-entity sentence index."""

from opinio_agents.stores.catalog import Catalog, StoredSentence
from opinio_agents.stores.sentence_index import (
    DEFAULT_STORE,
    IndexStats,
    RetrieverKind,
    ScoredSentence,
    SentenceIndex,
)

__all__ = [
    "Catalog",
    "StoredSentence",
    "SentenceIndex",
    "IndexStats",
    "ScoredSentence",
    "RetrieverKind",
    "DEFAULT_STORE",
]
