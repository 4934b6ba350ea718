"""The sentence store on disk: the catalog, the Chroma vectors and the BM25 data of many entities.

:class:`SentenceStore` owns persistence and nothing else: it neither segments,
embeds nor scores (that is :class:`opinio_agents.indexing.Indexer`) and builds
no retriever (that is :class:`opinio_agents.retrieval.RetrieverFactory`). It
returns typed records (:class:`EntityRecord`, :class:`StoredSentence`,
:class:`StoreModels`) and records which embedding model, sentiment scorer and
BM25 tokenizer built it, so that a different model is refused before anything
is written.

Layout of a store directory (default ``./.opinio``)::

    catalog.sqlite        entities (with a generation counter), review hashes, sentences,
                          BM25 tokens, sentiment, the models that built the store, and one
                          vector per distinct sentence text (``text_vectors``: what lets the
                          indexer encode "Great location." once for the whole store)
    chroma/               embedded Chroma database, one collection per entity
    bm25/<collection>/    persisted BM25 index of each entity (derived from the tokens)
    vectors/<collection>.npz  a copy of an entity's Chroma vectors as one matrix, written by the
                          query path (``embeddings(..., persist=True)``) and stamped with the
                          entity's generation, so a new process answers without opening Chroma
    writer.lock           held (flock) by the one process writing; see :mod:`opinio_agents.stores.lock`

The store is a façade over its parts, each in its own module: the catalog
(:mod:`~opinio_agents.stores.catalog`), the completion markers
(:mod:`~opinio_agents.stores.markers`), the model records
(:mod:`~opinio_agents.stores.model_records`), the Chroma vectors
(:mod:`~opinio_agents.stores.vectors`), the derived files (BM25 indexes and vector
copies, :mod:`~opinio_agents.stores.derived`) and the writer lock
(:mod:`~opinio_agents.stores.lock`). Every public method takes the entity as
``entity_key`` (a string, or an int such as ``7``), turns it into the string key once,
and hands only that key to the parts.

Surviving a kill: every write is atomic (sqlite transactions, Chroma's own
journal, files written to a temporary name and renamed) and an entity counts as
indexed only once its *completion marker* (the catalog's ``complete:<key>``,
set to the entity's generation) is written, last of all. A reader refuses an
entity whose marker is missing or stale unless a live writer is working on it,
and the next writer completes it (see :meth:`SentenceStore.reconcile_vectors`).

Example:
    >>> from opinio_agents.stores import SentenceStore
    >>> store = SentenceStore("/tmp/opinio-doc")               # doctest: +SKIP
    >>> store.entity_record("7").entity_name                    # doctest: +SKIP
    'Harbor Inn'
    >>> len(store.sentences("7")), store.embeddings("7").shape  # doctest: +SKIP
    (14, (14, 384))
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from opinio_agents.embeddings import EmbeddingModelInfo
from opinio_agents.errors import StoreError
from opinio_agents.kinds import DEFAULT_STORE
from opinio_agents.models import Entity, Review, Sentence
from opinio_agents.stores.catalog import Catalog, EntityRecord, StoredSentence
from opinio_agents.stores.checkpoints import checkpoint
from opinio_agents.stores.derived import Bm25Files, VectorCopies
from opinio_agents.stores.lock import StoreLock, writer_pid
from opinio_agents.stores.markers import CompletionMarkers
from opinio_agents.stores.model_records import ModelRecords, StoreModels
from opinio_agents.stores.vectors import REVIEW_HASH_KEY, VECTOR_BATCH, ChromaVectors

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from llama_index.vector_stores.chroma import ChromaVectorStore

__all__ = [
    "SentenceStore",
    "StoreModels",
    "ReviewState",
    "PreparedReview",
    "DEFAULT_STORE",
    "REVIEW_HASH_KEY",
    "VECTOR_BATCH",
]

T = TypeVar("T")


@dataclass(frozen=True)
class ReviewState:
    """What the catalog holds about one review of an entity."""

    content_hash: str
    embedded: bool
    position: int


@dataclass(frozen=True)
class PreparedReview:
    """A review ready to be written: its sentences and their BM25 tokens (one list per sentence)."""

    review: Review
    position: int
    content_hash: str
    sentences: Sequence[Sentence]
    tokens: Sequence[Sequence[str]]


@dataclass
class _Cached:
    generation: int
    sentences: list[StoredSentence]
    positions: dict[str, int] | None = None
    embeddings: np.ndarray | None = None
    digest: str | None = None


class SentenceStore:
    """Persistent sentences, vectors and BM25 data of many entities (thread-safe).

    Args:
        store_dir: Directory of the store (created on first write).
        chroma_host: Use a Chroma server instead of the embedded database.
        chroma_port: Port of that server.

    Example:
        >>> store = SentenceStore("/tmp/opinio-doc-empty-store")
        >>> store.entity_keys()
        []
    """

    def __init__(
        self,
        store_dir: str | Path = DEFAULT_STORE,
        *,
        chroma_host: str | None = None,
        chroma_port: int | None = None,
    ) -> None:
        self.store_dir = Path(store_dir)
        self.chroma_host = chroma_host
        self.chroma_port = chroma_port
        self._catalog: Catalog | None = None
        self._vectors: ChromaVectors | None = None
        self._lock = threading.RLock()
        self._cache: dict[str, _Cached] = {}
        self._markers = CompletionMarkers(lambda: self.catalog)
        self._model_records = ModelRecords(lambda: self.catalog, str(self.store_dir))
        self._bm25 = Bm25Files(self.store_dir)
        self._vector_copies = VectorCopies(self.store_dir)

    # -- resources ---------------------------------------------------------------
    @property
    def catalog_path(self) -> Path:
        """Path of the SQLite catalog."""
        return self.store_dir / "catalog.sqlite"

    @property
    def catalog(self) -> Catalog:
        """The SQLite catalog (opened, and created, on first use)."""
        with self._lock:
            if self._catalog is None:
                self._catalog = Catalog(self.catalog_path)
            return self._catalog

    @property
    def _chroma_vectors(self) -> ChromaVectors:
        with self._lock:
            if self._vectors is None:
                self._use_recorded_server()
                self._vectors = ChromaVectors(self.store_dir / "chroma", host=self.chroma_host, port=self.chroma_port)
            return self._vectors

    @property
    def chroma(self) -> ClientAPI:
        """The Chroma client: the server given, else the one the store records, else embedded at ``<store>/chroma``."""
        return self._chroma_vectors.client

    @property
    def vector_client_open(self) -> bool:
        """Whether a Chroma client is open now (see :meth:`release_vector_client`)."""
        return self._vectors is not None and self._vectors.client_open

    @property
    def is_remote(self) -> bool:
        """Whether vectors live in a Chroma server (given, or recorded by the store)."""
        self._use_recorded_server()
        return bool(self.chroma_host)

    def _use_recorded_server(self) -> None:
        """Take the Chroma server a store built against one records, when none was given.

        A store whose vectors went to a server (``opinio index --ray``, ``--chroma-host``) keeps
        ``host:port`` in its catalog, so later commands on it find its vectors without the options.
        """
        if self.chroma_host or not self.catalog_path.exists():
            return
        recorded = self._model_records.server()
        if recorded:
            self.chroma_host, self.chroma_port = recorded

    def connect(self) -> None:
        """Open the Chroma client now: an unreachable server fails here, before anything is written."""
        self.chroma  # noqa: B018

    def collection(self, entity_key: str | int, *, create: bool = False) -> Collection:
        """The entity's raw Chroma collection."""
        return self._chroma_vectors.collection(str(entity_key), create=create)

    def vector_store(self, entity_key: str | int) -> ChromaVectorStore:
        """The entity's collection as a LlamaIndex ``ChromaVectorStore`` (for dense retrievers)."""
        from llama_index.vector_stores.chroma import ChromaVectorStore

        key = self.require_entity(entity_key)
        return ChromaVectorStore(chroma_collection=self._chroma_vectors.collection(key))

    # -- derived files: BM25 indexes ----------------------------------------------------
    def bm25_dir(self, entity_key: str | int) -> Path:
        """Directory of the entity's persisted BM25 data."""
        return self._bm25.directory(str(entity_key))

    def _digest(self, key: str) -> str:
        """Digest of the entity's sentence ids and BM25 tokens, in order (cached until the entity changes)."""
        entry = self._entry(key)
        with self._lock:
            if entry.digest is None:
                digest = hashlib.sha1()
                for stored in entry.sentences:
                    digest.update(stored.sentence.sentence_id.encode("utf-8") + b"\x00")
                    digest.update(" ".join(stored.tokens).encode("utf-8") + b"\x01")
                entry.digest = digest.hexdigest()
            return entry.digest

    def load_bm25(self, entity_key: str | int, reader: Callable[[Path], T]) -> T | None:
        """``reader(directory)`` when the persisted BM25 data is current, else None (stale, absent, unreadable)."""
        key = self.require_entity(entity_key)
        return self._bm25.load(key, lambda: self._digest(key), reader)

    def save_bm25(self, entity_key: str | int, writer: Callable[[Path], None]) -> None:
        """Persist BM25 data: ``writer(directory)`` fills a fresh directory that then replaces the old one.

        The data is stamped with a digest of the entity's sentence ids and tokens, so :meth:`load_bm25`
        ignores it once the entity changes.
        """
        key = self.require_entity(entity_key)
        self._bm25.save(key, lambda: self._digest(key), writer)

    # -- one writer at a time, completion markers ---------------------------------------
    def writer_lock(
        self, *, wait: bool = False, timeout: float | None = None, on_wait: Callable[[str], None] | None = None
    ) -> StoreLock:
        """The store's writer lock (a context manager; re-entrant within one process).

        Example:
            >>> store = SentenceStore("/tmp/opinio-doc-lock")
            >>> with store.writer_lock():
            ...     store.writer_active()
            True
        """
        return StoreLock(self.store_dir, wait=wait, timeout=timeout, on_wait=on_wait)

    def writer_active(self) -> bool:
        """Whether a live process (this one included) holds the store's writer lock (never blocks)."""
        return writer_pid(self.store_dir) is not None

    def is_complete(self, entity_key: str | int) -> bool:
        """Whether every artefact of the entity's current generation was written (its marker is current).

        Stores written before markers existed count every entity as complete.
        """
        return self._is_complete(str(entity_key))

    def _is_complete(self, key: str) -> bool:
        generation = self._generation(key)
        return generation is not None and self._markers.is_complete(key, generation)

    def incomplete_entities(self) -> list[str]:
        """Keys of the entities whose last write did not finish (a killed or running writer)."""
        if not self.catalog_path.exists():
            return []
        return [key for key in self.catalog.entity_keys() if not self._is_complete(key)]

    def mark_complete(self, entity_key: str | int) -> None:
        """Write the entity's completion marker (its current generation); the last write of an indexing run."""
        key = str(entity_key)
        generation = self._generation(key)
        if generation is None:
            raise StoreError(f"entity {key!r} is not in {str(self.store_dir)!r}; nothing to mark complete")
        self._bm25.sweep(key)
        checkpoint("before-marker")
        self._markers.mark(key, generation)
        checkpoint("after-marker")

    def reconcile_vectors(self, entity_key: str | int) -> int:
        """Delete the entity's Chroma vectors whose sentence the catalog no longer holds; return how many.

        A run killed between the catalog transaction and the Chroma deletes leaves such
        vectors behind; the next writer calls this for every incomplete entity.
        """
        key = str(entity_key)
        known = {s.sentence.sentence_id for s in self.catalog.sentences(key)}
        extra = [sid for sid in self._chroma_vectors.ids(key) if sid not in known]
        self._chroma_vectors.delete(key, extra)
        return len(extra)

    def release_vector_client(self) -> bool:
        """Close the embedded Chroma client, so that the next use opens a fresh one.

        Chroma's embedded engine keeps about 4 MiB of native memory for every collection
        a client has opened, for as long as the client lives; a corpus run opens one
        collection per entity, so :func:`~opinio_agents.scale.corpus.index_corpus` calls
        this after each entity to keep its memory flat. Collections obtained from the old
        client stop working: drop whatever holds them (the retriever factory) first. A
        Chroma server's client is left alone (the server holds that memory, not us).

        Returns:
            True when an embedded client was closed.

        Example:
            >>> store = SentenceStore("/tmp/opinio-doc-store")     # doctest: +SKIP
            >>> store.release_vector_client()                       # doctest: +SKIP
            False
        """
        with self._lock:
            vectors = self._vectors
        return vectors is not None and vectors.release()

    def close(self) -> None:
        """Release the catalog connection and the caches."""
        with self._lock:
            if self._catalog is not None:
                self._catalog.close()
                self._catalog = None
            self._cache.clear()

    # -- the models that built the store ---------------------------------------------
    def models(self) -> StoreModels:
        """The embedding model, sentiment scorer and BM25 tokenizer recorded by the store."""
        if not self.catalog_path.exists():
            return StoreModels(None, None, None)
        return self._model_records.read()

    def check_models(
        self,
        embedding: EmbeddingModelInfo | None = None,
        *,
        sentiment: str | None = None,
        bm25_tokenizer: str | None = None,
        writing: bool = False,
    ) -> None:
        """Refuse models other than the ones that built the store (reads only; writes nothing).

        Queries may use any backend of the store's model (``torch``, ``onnx``,
        ``onnx-int8``: one model, vectors that agree to a cosine of about 0.99); with
        ``writing`` the backend must also be the store's, so that all of its vectors
        come from one runtime.

        Raises:
            StoreError: Naming the recorded and the requested model and how to fix it.
        """
        self._model_records.check(
            self.models(), embedding, sentiment=sentiment, bm25_tokenizer=bm25_tokenizer, writing=writing
        )

    def record_models(
        self,
        embedding: EmbeddingModelInfo,
        *,
        sentiment: str | None = None,
        bm25_tokenizer: str | None = None,
    ) -> None:
        """Check the models for writing (see :meth:`check_models`), then record whatever the store does not know yet.

        The backend is recorded only together with the model: a store written before
        backends were kept stays of unknown backend (and accepts any).
        """
        self.check_models(embedding, sentiment=sentiment, bm25_tokenizer=bm25_tokenizer, writing=True)
        server = f"{self.chroma_host}:{self.chroma_port or 8000}" if self.chroma_host else None
        self._model_records.record(embedding, sentiment=sentiment, bm25_tokenizer=bm25_tokenizer, server=server)

    # -- entities -------------------------------------------------------------------
    def entity_keys(self) -> list[str]:
        """Keys of the indexed entities, in insertion order.

        An entity left half-written by a killed run is not listed (unless a writer is
        at work on the store right now); :meth:`incomplete_entities` lists those.
        """
        if not self.catalog_path.exists():
            return []
        keys = self.catalog.entity_keys()
        if not self._markers.kept() or self.writer_active():
            return keys
        return [key for key in keys if self._is_complete(key)]

    def has_entity(self, entity_key: str | int) -> bool:
        """Whether the entity has been indexed into this store."""
        return self._generation(str(entity_key)) is not None

    def generation(self, entity_key: str | int) -> int | None:
        """The entity's generation, incremented by every write to it (None when it is not indexed)."""
        return self._generation(str(entity_key))

    def _generation(self, key: str) -> int | None:
        if not self.catalog_path.exists():
            return None
        return self.catalog.generation(key)

    def require_entity(self, entity_key: str | int) -> str:
        """The entity key (as a string), or a StoreError listing the indexed ones."""
        key = str(entity_key)
        if self._generation(key) is None:
            keys = self.entity_keys()
            listed = ", ".join(keys[:10]) + (" ..." if len(keys) > 10 else "") if keys else "none"
            raise StoreError(
                f"entity {key!r} is not indexed in {str(self.store_dir)!r} (indexed: {listed}); "
                "run `opinio index DATASET` first"
            )
        return key

    def entity_record(self, entity_key: str | int) -> EntityRecord:
        """Name, original id, expert review, review count and generation of an indexed entity."""
        key = self.require_entity(entity_key)
        record = self.catalog.entity_record(key)
        if record is None:  # removed between the two reads
            raise StoreError(f"entity {key!r} was removed from {str(self.store_dir)!r} meanwhile")
        return record

    def entity(self, entity_key: str | int) -> Entity:
        """The stored entity with its reviews (in dataset order) and expert review."""
        return self.catalog.entity(self.require_entity(entity_key))

    def review_states(self, entity_key: str | int) -> dict[str, ReviewState]:
        """``{review_id: ReviewState}`` of an entity (empty when it is not indexed)."""
        if not self.catalog_path.exists():
            return {}
        return {
            rid: ReviewState(content_hash, embedded, position)
            for rid, (content_hash, embedded, position) in self.catalog.review_states(str(entity_key)).items()
        }

    # -- writing (used by the indexer) -----------------------------------------------------
    def write_reviews(
        self,
        entity: Entity,
        prepared: Sequence[PreparedReview],
        *,
        removed: Iterable[str],
        positions: Mapping[str, int],
        changed: bool,
    ) -> list[str]:
        """Record the entity and replace reviews in one transaction; return the ids of deleted sentences.

        ``removed`` lists reviews to delete (removed or changed ones); ``changed``
        says whether the entity's sentences change, which bumps its generation.
        """
        catalog = self.catalog
        key = entity.key
        with catalog.transaction() as conn:
            self._markers.adopt(conn)
            catalog.upsert_entity(
                conn, key, entity.entity_id, entity.entity_name, entity.expert_review, len(entity.user_reviews)
            )
            stale = catalog.delete_reviews(conn, key, list(removed))
            for item in prepared:
                catalog.insert_review(
                    conn,
                    key,
                    item.review,
                    item.position,
                    item.content_hash,
                    item.sentences,
                    item.tokens,
                    [0.0] * len(item.sentences),  # final scores are written by finish_reviews
                )
            catalog.set_positions(conn, key, dict(positions))
            if changed:
                catalog.bump_generation(conn, key)
        self._forget(key)
        return stale

    def pending_sentences(self, entity_key: str | int, review_ids: Iterable[str]) -> list[StoredSentence]:
        """Stored sentences of some reviews of an entity (in review order), bypassing the cache."""
        wanted = list(review_ids)
        return self.catalog.sentences(str(entity_key), review_ids=wanted) if wanted else []

    def split_embedded(
        self, entity_key: str | int, pending: Sequence[StoredSentence], hashes: Mapping[str, str]
    ) -> tuple[list[StoredSentence], int]:
        """Separate the sentences whose vector is already stored with the right review hash (a resumed run).

        Vectors of a stale hash are deleted. Returns the sentences still to embed and the number found.
        """
        return self._chroma_vectors.split_embedded(str(entity_key), pending, hashes)

    def add_vectors(
        self,
        entity_key: str | int,
        sentences: Sequence[Sentence],
        vectors: np.ndarray,
        review_hashes: Mapping[str, str],
    ) -> None:
        """Write the vectors of ``sentences`` (with their review metadata and review hash).

        Each record is the sentence id, its vector and its flat review metadata (what
        metadata filters read), straight into the collection: no document text and no
        LlamaIndex node JSON, since the catalog holds both (the dense retriever maps ids
        to the catalog's nodes). Records written by older versions, with node JSON,
        read the same.

        Raises:
            StoreError: When the vectors' dimension is not the one the store records.
        """
        if len(sentences) != len(vectors):
            raise StoreError(f"{len(sentences)} sentences but {len(vectors)} vectors; pass one vector per sentence")
        if not len(sentences):
            return
        recorded = self.models().embedding
        if recorded is not None and recorded.dimension and vectors.shape[1] != recorded.dimension:
            raise StoreError(
                f"{self.store_dir}: vectors of dimension {vectors.shape[1]} cannot join a store of "
                f"{recorded.dimension}-d vectors ({recorded.describe()}); use that model or a new --store directory"
            )
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self._chroma_vectors.add(str(entity_key), sentences, matrix, review_hashes)

    def stored_text_vectors(self, text_keys: Sequence[str], dimension: int) -> dict[str, np.ndarray]:
        """Vectors already computed for these text keys (see :meth:`save_text_vectors`), by key.

        Rows of another dimension (never written by one store's encoder) are ignored.
        """
        if not text_keys or not self.catalog_path.exists():
            return {}
        found: dict[str, np.ndarray] = {}
        for key, blob in self.catalog.text_vectors(text_keys).items():
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape == (dimension,):
                found[key] = vector
        return found

    def save_text_vectors(self, text_keys: Sequence[str], vectors: np.ndarray) -> None:
        """Keep one vector per distinct text key, for reuse by any entity of the store (one transaction)."""
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(text_keys) != len(matrix):
            raise StoreError(f"{len(text_keys)} text keys but {len(matrix)} vectors; pass one vector per key")
        self.catalog.put_text_vectors([(key, matrix[i].tobytes()) for i, key in enumerate(text_keys)])

    def delete_vectors(self, entity_key: str | int, sentence_ids: Sequence[str]) -> None:
        """Delete vectors by sentence id (absent ids are ignored)."""
        self._chroma_vectors.delete(str(entity_key), sentence_ids)

    def vectors(self, entity_key: str | int, sentence_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by sentence id (ids without a vector are absent from the result)."""
        return self._chroma_vectors.get(str(entity_key), sentence_ids)

    def finish_reviews(
        self, entity_key: str | int, sentiments: Sequence[tuple[str, float]], embedded_reviews: Iterable[str]
    ) -> None:
        """Write final sentiments and mark reviews embedded, in one transaction (bumps the generation)."""
        catalog = self.catalog
        key = str(entity_key)
        reviews = list(embedded_reviews)
        with catalog.transaction() as conn:
            catalog.set_sentiments(conn, sentiments)
            catalog.mark_embedded(conn, key, reviews)
            if sentiments or reviews:
                catalog.bump_generation(conn, key)
        self._forget(key)

    # -- reading -----------------------------------------------------------------------------
    def _entry(self, key: str) -> _Cached:
        generation = self._generation(key)
        if generation is None:
            self.require_entity(key)  # raises with the list of indexed ones
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached.generation == generation:
                return cached
        if not self._is_complete(key) and not self.writer_active():
            raise StoreError(
                f"entity {key!r} in {str(self.store_dir)!r} was left half-written by an indexing run that "
                "did not finish (killed?); rerun `opinio index` on its dataset to complete it"
            )
        sentences = self.catalog.sentences(key)
        entry = _Cached(int(generation or 0), sentences)
        with self._lock:
            self._cache[key] = entry
        return entry

    def sentences(self, entity_key: str | int) -> list[StoredSentence]:
        """All stored sentences of an entity in review order (cached until the entity changes)."""
        return self._entry(str(entity_key)).sentences

    def positions(self, entity_key: str | int) -> dict[str, int]:
        """``sentence_id -> row`` in :meth:`sentences` and :meth:`embeddings` (cached)."""
        entry = self._entry(str(entity_key))
        with self._lock:
            if entry.positions is None:
                entry.positions = {s.sentence.sentence_id: i for i, s in enumerate(entry.sentences)}
            return entry.positions

    def embeddings(self, entity_key: str | int, *, persist: bool = False) -> np.ndarray:
        """Stored vectors of the entity's sentences, aligned with :meth:`sentences` (cached).

        A current matrix copy under ``vectors/`` (see the module docstring) is read instead of
        Chroma when there is one; ``persist=True`` (the query path) writes that copy after a
        read from Chroma. The copy is stamped with the entity's generation and the digest of
        its sentence ids, so it is never used once the entity changes.

        Raises:
            StoreError: When some sentence has no vector (an interrupted run: index again).
        """
        key = str(entity_key)
        entry = self._entry(key)
        with self._lock:
            if entry.embeddings is not None:
                return entry.embeddings
        ids = [s.sentence.sentence_id for s in entry.sentences]
        stamp = f"{entry.generation}:{self._digest(key)}"
        copy = self._vector_copies.load(key, stamp, len(ids))
        if copy is not None:
            with self._lock:
                entry.embeddings = copy
            return copy
        found = self._chroma_vectors.get(key, ids)
        missing = [sid for sid in ids if sid not in found]
        if missing:
            raise StoreError(
                f"entity {key!r}: {len(missing)} sentences have no vector (e.g. {missing[0]!r}); "
                "re-run `opinio index` to complete the store"
            )
        if ids:
            matrix = np.vstack([found[sid] for sid in ids])
        else:
            recorded = self.models().embedding
            matrix = np.zeros((0, recorded.dimension if recorded else 0), dtype=np.float32)
        if persist and ids:
            self._vector_copies.save(key, stamp, matrix)
        with self._lock:
            entry.embeddings = matrix
        return matrix

    def count_sentences(self, entity_key: str | int | None = None) -> int:
        """Number of stored sentences (of one entity, or all)."""
        if not self.catalog_path.exists():
            return 0
        return self.catalog.count_sentences(None if entity_key is None else str(entity_key))

    def _forget(self, key: str) -> None:
        with self._lock:
            self._cache.pop(key, None)
