"""Persistence: the SQLite catalog, Chroma collections and BM25 data, behind :class:`SentenceStore`.

Nothing here segments, embeds or retrieves: ingestion is :mod:`opinio_agents.indexing`,
retrievers are built by :mod:`opinio_agents.retrieval` (this package imports neither).

Example:
    >>> from opinio_agents.stores import SentenceStore
    >>> SentenceStore("/tmp/opinio-doc-empty-store").has_entity("7")
    False
"""

from opinio_agents.stores.catalog import Catalog, EntityRecord, StoredSentence
from opinio_agents.stores.sentence_store import (
    DEFAULT_STORE,
    PreparedReview,
    ReviewState,
    SentenceStore,
    StoreModels,
)

__all__ = [
    "Catalog",
    "EntityRecord",
    "StoredSentence",
    "SentenceStore",
    "StoreModels",
    "ReviewState",
    "PreparedReview",
    "DEFAULT_STORE",
]
