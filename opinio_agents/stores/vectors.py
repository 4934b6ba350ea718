"""The sentence vectors of a store in Chroma: the client and one collection per entity.

Each record is a sentence id, its vector and its flat review metadata (what metadata
filters read) plus the content hash of its review (what resuming needs): no document
text and no LlamaIndex node JSON, since the catalog holds both. Records written by
older versions, with node JSON, read the same.

Example:
    >>> from pathlib import Path
    >>> ChromaVectors(Path("/tmp/opinio-doc/chroma")).client_open
    False
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.models import Sentence
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.checkpoints import checkpoint
from opinio_agents.stores.chroma import get_collection, make_chroma_client

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

__all__ = ["ChromaVectors", "REVIEW_HASH_KEY", "VECTOR_BATCH"]

#: Vector metadata key holding the content hash of the sentence's review (resuming needs it).
REVIEW_HASH_KEY = "review_hash"
#: Vectors written to Chroma per call (a kill loses at most one batch, which the next run redoes).
VECTOR_BATCH = 1024
_CHUNK = 5000  # ids per Chroma get/delete call


class ChromaVectors:
    """The Chroma client of a store (opened on first use) and the vectors of its entities.

    Args:
        path: Directory of the embedded database (``<store>/chroma``).
        host: A Chroma server instead of the embedded database.
        port: Port of that server.
    """

    def __init__(self, path: Path, *, host: str | None = None, port: int | None = None) -> None:
        self.path = path
        self.host = host
        self.port = port
        self._client: ClientAPI | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> ClientAPI:
        """The Chroma client."""
        with self._lock:
            if self._client is None:
                self._client = make_chroma_client(self.path, host=self.host, port=self.port)
            return self._client

    @property
    def client_open(self) -> bool:
        """Whether a client is open now."""
        return self._client is not None

    def release(self) -> bool:
        """Close an embedded client (a server's is left alone); True when one was closed."""
        with self._lock:
            client = self._client
            if client is None or self.host:
                return False
            self._client = None
        close = getattr(client, "close", None)  # Client.close (chromadb >= 1.1), not on the ClientAPI type
        if callable(close):
            close()
        return True

    def collection(self, entity_key: str, *, create: bool = False) -> Collection:
        """The entity's raw Chroma collection."""
        return get_collection(self.client, entity_key, create=create)

    def ids(self, entity_key: str) -> list[str]:
        """Ids of every vector of the entity."""
        return list(self.collection(entity_key, create=True).get(include=[])["ids"])

    def split_embedded(
        self, entity_key: str, pending: Sequence[StoredSentence], hashes: Mapping[str, str]
    ) -> tuple[list[StoredSentence], int]:
        """The sentences still to embed and how many already have a vector of the right review hash.

        Vectors of a stale hash are deleted.
        """
        if not pending:
            return [], 0
        collection = self.collection(entity_key, create=True)
        review_of = {p.sentence.sentence_id: p.sentence.review_id for p in pending}
        done: set[str] = set()
        stale: list[str] = []
        for chunk in _chunks(list(review_of), _CHUNK):
            found = collection.get(ids=chunk, include=["metadatas"])
            for sid, meta in zip(found["ids"], found["metadatas"] or []):
                if meta and meta.get(REVIEW_HASH_KEY) == hashes.get(review_of[sid]):
                    done.add(sid)
                else:
                    stale.append(sid)
        self.delete(entity_key, stale)
        return [p for p in pending if p.sentence.sentence_id not in done], len(done)

    def add(
        self, entity_key: str, sentences: Sequence[Sentence], matrix: np.ndarray, review_hashes: Mapping[str, str]
    ) -> None:
        """Write one row of ``matrix`` per sentence, :data:`VECTOR_BATCH` at a time."""
        from opinio_agents.stores.nodes import vector_metadata

        collection = self.collection(entity_key, create=True)
        for start in range(0, len(sentences), VECTOR_BATCH):
            batch = sentences[start : start + VECTOR_BATCH]
            metadatas: list[Any] = []
            for sentence in batch:
                meta = vector_metadata(sentence)
                meta[REVIEW_HASH_KEY] = review_hashes[sentence.review_id]
                metadatas.append(meta)
            collection.add(
                ids=[s.sentence_id for s in batch],
                embeddings=matrix[start : start + len(batch)],
                metadatas=metadatas,
            )
            checkpoint("chroma-chunk")

    def delete(self, entity_key: str, sentence_ids: Sequence[str]) -> None:
        """Delete vectors by sentence id (absent ids are ignored)."""
        if not sentence_ids:
            return
        collection = self.collection(entity_key, create=True)
        for chunk in _chunks(list(sentence_ids), _CHUNK):
            collection.delete(ids=chunk)

    def get(self, entity_key: str, sentence_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by sentence id (ids without a vector are absent from the result)."""
        found: dict[str, np.ndarray] = {}
        if not sentence_ids:
            return found
        collection = self.collection(entity_key, create=False)
        for chunk in _chunks(list(sentence_ids), _CHUNK):
            got = collection.get(ids=chunk, include=["embeddings"])
            vectors = got["embeddings"]
            for sid, vector in zip(got["ids"], vectors if vectors is not None else []):
                found[sid] = np.asarray(vector, dtype=np.float32)
        return found


def _chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
