"""The per-entity sentence index on disk: catalog + Chroma vectors + BM25.

Layout of a store directory (default ``./.opinio``)::

    catalog.sqlite        entities, review content hashes, sentences, BM25 tokens, sentiment
    chroma/               embedded Chroma database, one collection per entity
    bm25/<collection>/    persisted BM25 retriever of each entity

Indexing is idempotent and incremental. Each review is hashed (text plus
metadata); unchanged reviews are never segmented or embedded again, changed
ones are replaced, removed ones deleted, new ones added without a rebuild.
Vectors carry their review's hash, so a run interrupted mid-way is completed
by the next one without re-embedding what already reached Chroma.

Example:
    >>> from opinio_agents.stores import SentenceIndex
    >>> index = SentenceIndex("/tmp/opinio-doc")                   # doctest: +SKIP
    >>> stats = index.index_entity(entity)                          # doctest: +SKIP
    >>> hits = index.retrieve(entity.key, "wi-fi", kind="hybrid")   # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from opinio_agents.embeddings import SentenceEncoder, get_encoder
from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.models import REVIEW_METADATA_FIELDS, Entity, Review, Sentence
from opinio_agents.stores.catalog import Catalog, StoredSentence
from opinio_agents.stores.chroma import collection_name, get_collection, make_chroma_client

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever
    from opinio_agents.retrieval.dense import DenseSentenceRetriever

__all__ = ["SentenceIndex", "IndexStats", "ScoredSentence", "RetrieverKind", "DEFAULT_STORE"]

DEFAULT_STORE = Path(".opinio")
RetrieverKind = Literal["bm25", "dense", "hybrid"]
RETRIEVER_KINDS: tuple[str, ...] = ("bm25", "dense", "hybrid")
_EMBED_CHUNK = 1024
_HASH_KEY = "review_hash"


@dataclass
class IndexStats:
    """What one indexing run of one entity did."""

    entity_id: str
    reviews_total: int = 0
    reviews_unchanged: int = 0
    reviews_added: int = 0
    reviews_updated: int = 0
    reviews_removed: int = 0
    sentences_total: int = 0
    sentences_embedded: int = 0
    sentences_resumed: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoredSentence:
    """A retrieved sentence with its retrieval score and stored sentiment."""

    sentence: Sentence
    score: float
    sentiment: float


def review_hash(review: Review) -> str:
    """Content hash of a review: its text and metadata (any change re-indexes it)."""
    payload = {"text": review.text, **{k: getattr(review, k) for k in REVIEW_METADATA_FIELDS}}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:32]


class SentenceIndex:
    """Persistent sentence index of many entities.

    Args:
        store_dir: Directory of the store (created on first write).
        chroma_host: Use a Chroma server instead of the embedded database.
        chroma_port: Port of that server.
        encoder: Sentence encoder (the shipped MiniLM by default).
    """

    def __init__(
        self,
        store_dir: str | Path = DEFAULT_STORE,
        *,
        chroma_host: str | None = None,
        chroma_port: int | None = None,
        encoder: SentenceEncoder | None = None,
    ) -> None:
        self.store_dir = Path(store_dir)
        self.encoder = encoder or get_encoder()
        self._chroma_host = chroma_host
        self._chroma_port = chroma_port
        self._catalog: Catalog | None = None
        self._client: ClientAPI | None = None
        self._lock = threading.RLock()
        self._sentences: dict[str, list[StoredSentence]] = {}
        self._nodes: dict[str, dict[str, TextNode]] = {}
        self._bm25: dict[str, OpinioBM25Retriever] = {}
        self._embeddings: dict[str, np.ndarray] = {}
        self._positions: dict[str, dict[str, int]] = {}

    # -- lazily opened resources ---------------------------------------------
    @property
    def catalog(self) -> Catalog:
        """The SQLite catalog (opened on first use)."""
        with self._lock:
            if self._catalog is None:
                self._catalog = Catalog(self.store_dir / "catalog.sqlite")
                model = self._catalog.get_meta("embedding_model")
                if model is None:
                    self._catalog.set_meta("embedding_model", self.encoder.name)
                elif model != self.encoder.name:
                    raise StoreError(
                        f"{self.store_dir}: built with embedding model {model!r} but {self.encoder.name!r} "
                        "was requested; use the same model or index into a new --store directory"
                    )
            return self._catalog

    @property
    def chroma(self):  # noqa: ANN201 - chromadb's ClientAPI, imported lazily
        """The Chroma client (embedded at ``<store>/chroma`` unless a host was given)."""
        with self._lock:
            if self._client is None:
                self._client = make_chroma_client(
                    self.store_dir / "chroma", host=self._chroma_host, port=self._chroma_port
                )
            return self._client

    def _vector_store(self, entity_key: str, *, create: bool = False):  # noqa: ANN202
        from llama_index.vector_stores.chroma import ChromaVectorStore

        collection = get_collection(self.chroma, entity_key, create=create)
        return ChromaVectorStore(chroma_collection=collection)

    # -- indexing -------------------------------------------------------------
    def index_entities(self, entities: Iterable[Entity], *, show_progress: bool = False) -> list[IndexStats]:
        """Index many entities; see :meth:`index_entity`."""
        return [self.index_entity(entity, show_progress=show_progress) for entity in entities]

    def index_entity(self, entity: Entity, *, show_progress: bool = False) -> IndexStats:
        """Add or update one entity; only new or changed reviews are segmented and embedded."""
        from opinio_agents.text.preprocess import tokenize_for_bm25
        from opinio_agents.text.segment import segment_review
        started = time.perf_counter()
        key = entity.key
        stats = IndexStats(entity_id=key, reviews_total=len(entity.user_reviews))
        self.chroma  # noqa: B018 - connect first: an unreachable server must fail before anything is written
        catalog = self.catalog
        known = catalog.review_hashes(key)
        hashes = {str(r.review_id): review_hash(r) for r in entity.user_reviews}
        positions = {str(r.review_id): i for i, r in enumerate(entity.user_reviews)}

        removed = [rid for rid in known if rid not in hashes]
        changed = [rid for rid, h in hashes.items() if rid in known and known[rid][0] != h]
        pending_old = [rid for rid, h in hashes.items() if rid in known and known[rid] == (h, False)]
        new = [rid for rid in hashes if rid not in known]
        stats.reviews_removed, stats.reviews_updated, stats.reviews_added = len(removed), len(changed), len(new)
        stats.reviews_unchanged = len(hashes) - len(changed) - len(new) - len(pending_old)

        # 1. Segment and tokenize the new and changed reviews.
        t0 = time.perf_counter()
        by_id = {str(r.review_id): r for r in entity.user_reviews}
        to_insert = [*changed, *new]
        prepared: list[tuple[str, list[Sentence]]] = [
            (rid, segment_review(entity.entity_id, by_id[rid])) for rid in to_insert
        ]
        flat = [s for _, sents in prepared for s in sents]
        tokens = [tokenize_for_bm25(s.text) for s in flat]
        sentiments = [0.0] * len(flat)  # final (blended) scores are set once the vectors exist
        stats.timings["prepare"] = time.perf_counter() - t0

        # 2. Record them in the catalog (one transaction), drop stale sentences.
        stale_ids: list[str] = []
        with catalog.transaction() as conn:
            catalog.upsert_entity(
                conn, key, entity.entity_id, entity.entity_name, entity.expert_review, len(entity.user_reviews)
            )
            stale_ids += catalog.delete_reviews(conn, key, [*removed, *changed])
            offset = 0
            for rid, sents in prepared:
                n = len(sents)
                catalog.insert_review(
                    conn,
                    key,
                    by_id[rid],
                    positions[rid],
                    hashes[rid],
                    sents,
                    tokens[offset : offset + n],
                    sentiments[offset : offset + n],
                )
                offset += n
            catalog.set_positions(conn, key, positions)

        # 3. Embed every sentence of a review not yet marked embedded.
        t0 = time.perf_counter()
        pending_reviews = [*to_insert, *pending_old]
        vector_store = self._vector_store(key, create=True)
        collection = vector_store._collection  # noqa: SLF001 - the raw Chroma collection
        if stale_ids:
            new_ids = {s.sentence_id for s in flat}
            for chunk in _chunks([i for i in stale_ids if i not in new_ids], 5000):
                collection.delete(ids=chunk)
        pending = catalog.sentences(key, review_ids=pending_reviews) if pending_reviews else []
        todo, resumed = self._split_done(collection, pending, hashes)
        stats.sentences_resumed = resumed
        vectors = self._embed_and_add(
            vector_store, todo, hashes, show_progress=show_progress, label=entity.entity_name or key
        )
        stats.sentences_embedded = len(todo)
        self._finalize_sentiment(collection, pending, vectors)
        with catalog.transaction() as conn:
            catalog.mark_embedded(conn, key, pending_reviews)
        stats.timings["embed"] = time.perf_counter() - t0

        # 4. Rebuild the entity's BM25 index from the stored tokens when anything changed.
        t0 = time.perf_counter()
        changed_any = bool(removed or changed or new or pending_old) or not self._bm25_dir(key).exists()
        with self._lock:
            self._sentences.pop(key, None)
            self._nodes.pop(key, None)
            self._bm25.pop(key, None)
            self._embeddings.pop(key, None)
            self._positions.pop(key, None)
        if changed_any:
            self._build_bm25(key).persist(self._bm25_dir(key))
        stats.timings["bm25"] = time.perf_counter() - t0
        stats.sentences_total = catalog.count_sentences(key)
        stats.seconds = time.perf_counter() - started
        return stats

    def _split_done(
        self, collection, pending: Sequence[StoredSentence], hashes: dict[str, str]
    ) -> tuple[list[StoredSentence], int]:
        """Separate sentences already in Chroma with the right review hash (a resumed run)."""
        if not pending:
            return [], 0
        review_of = {p.sentence.sentence_id: p.sentence.review_id for p in pending}
        done: set[str] = set()
        stale: list[str] = []
        for chunk in _chunks(list(review_of), 5000):
            found = collection.get(ids=chunk, include=["metadatas"])
            for sid, meta in zip(found["ids"], found["metadatas"] or []):
                if meta and meta.get(_HASH_KEY) == hashes.get(review_of[sid]):
                    done.add(sid)
                else:
                    stale.append(sid)
        for chunk in _chunks(stale, 5000):
            collection.delete(ids=chunk)
        todo = [p for p in pending if p.sentence.sentence_id not in done]
        return todo, len(done)

    def _embed_and_add(
        self,
        vector_store,
        todo: Sequence[StoredSentence],
        hashes: dict[str, str],
        *,
        show_progress: bool,
        label: str,
    ) -> dict[str, np.ndarray]:
        """Embed ``todo`` in chunks, adding each chunk to Chroma; return the new vectors.

        Sentences are ordered by length so each encoder batch pads little, and
        writing a chunk to Chroma overlaps with encoding the next one.
        """
        from concurrent.futures import Future, ThreadPoolExecutor

        from tqdm.auto import tqdm

        from opinio_agents.retrieval.nodes import sentence_to_node

        out: dict[str, np.ndarray] = {}
        if not todo:
            return out

        def write(chunk: list[StoredSentence], vectors: np.ndarray) -> None:
            nodes = []
            for stored, vector in zip(chunk, vectors):
                node = sentence_to_node(stored.sentence)
                node.metadata[_HASH_KEY] = hashes[stored.sentence.review_id]
                node.embedding = vector.tolist()
                nodes.append(node)
            vector_store.add(nodes)

        ordered = sorted(todo, key=lambda s: len(s.sentence.text))
        pending_write: Future[None] | None = None
        with (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="opinio-chroma") as writer,
            tqdm(total=len(todo), desc=f"embedding {label}"[:60], unit="sent", disable=not show_progress) as bar,
        ):
            for chunk in _chunks(ordered, _EMBED_CHUNK):
                vectors = self.encoder.encode([s.sentence.text for s in chunk])
                if pending_write is not None:
                    pending_write.result()  # surface errors; keep at most one write in flight
                pending_write = writer.submit(write, chunk, vectors)
                out.update((s.sentence.sentence_id, v) for s, v in zip(chunk, vectors))
                bar.update(len(chunk))
            if pending_write is not None:
                pending_write.result()
        return out

    def _finalize_sentiment(
        self, collection, pending: Sequence[StoredSentence], vectors: dict[str, np.ndarray]
    ) -> None:
        """Replace the lexicon-only sentiment of new sentences by the blended score.

        Sentences embedded by an interrupted earlier run get their vectors back from Chroma.
        """
        from opinio_agents.text.sentiment_head import EmbeddingSentimentHead, blend

        if not pending:
            return
        missing = [p.sentence.sentence_id for p in pending if p.sentence.sentence_id not in vectors]
        for chunk in _chunks(missing, 5000):
            got = collection.get(ids=chunk, include=["embeddings"])
            vectors.update((sid, np.asarray(v, dtype=np.float32)) for sid, v in zip(got["ids"], got["embeddings"]))
        from opinio_agents.text.sentiment import default_sentiment_scorer

        lexicon = default_sentiment_scorer().score([p.sentence.text for p in pending])
        matrix = np.vstack([vectors[p.sentence.sentence_id] for p in pending])
        scores = blend(EmbeddingSentimentHead.default().score_embeddings(matrix), lexicon)
        with self.catalog.transaction() as conn:
            self.catalog.set_sentiments(conn, [(p.sentence.sentence_id, s) for p, s in zip(pending, scores)])

    # -- reading ---------------------------------------------------------------
    def entity_keys(self) -> list[str]:
        """Ids (as strings) of the indexed entities."""
        return self.catalog.entity_keys() if (self.store_dir / "catalog.sqlite").exists() else []

    def has_entity(self, entity_id: str | int) -> bool:
        """Whether the entity has been indexed into this store."""
        return str(entity_id) in self.entity_keys()

    def require_entity(self, entity_id: str | int) -> str:
        """The entity key, or a StoreError listing the indexed ids."""
        key = str(entity_id)
        keys = self.entity_keys()
        if key not in keys:
            listed = ", ".join(keys[:10]) + (" ..." if len(keys) > 10 else "") if keys else "none"
            raise StoreError(
                f"entity {key!r} is not indexed in {str(self.store_dir)!r} (indexed: {listed}); "
                "run `opinio index DATASET` first"
            )
        return key

    def entity(self, entity_id: str | int) -> Entity:
        """The stored entity with its reviews and expert review."""
        return self.catalog.entity(self.require_entity(entity_id))

    def sentences(self, entity_id: str | int) -> list[StoredSentence]:
        """All stored sentences of an entity in review order (cached)."""
        key = str(entity_id)
        with self._lock:
            if key not in self._sentences:
                self._sentences[key] = self.catalog.sentences(key)
            return self._sentences[key]

    def nodes(self, entity_id: str | int) -> dict[str, TextNode]:
        """``sentence_id -> TextNode`` of an entity (shared by every retriever)."""
        from opinio_agents.retrieval.nodes import sentence_to_node

        key = str(entity_id)
        with self._lock:
            if key not in self._nodes:
                self._nodes[key] = {s.sentence.sentence_id: sentence_to_node(s.sentence) for s in self.sentences(key)}
            return self._nodes[key]

    def embeddings(self, entity_id: str | int) -> np.ndarray:
        """Stored embeddings of the entity's sentences, aligned with :meth:`sentences` (cached)."""
        key = self.require_entity(entity_id)
        with self._lock:
            cached = self._embeddings.get(key)
            if cached is not None:
                return cached
        ids = [s.sentence.sentence_id for s in self.sentences(key)]
        collection = get_collection(self.chroma, key, create=False)
        found: dict[str, np.ndarray] = {}
        for chunk in _chunks(ids, 5000):
            got = collection.get(ids=chunk, include=["embeddings"])
            vectors = got["embeddings"]
            for sid, vector in zip(got["ids"], vectors if vectors is not None else []):
                found[sid] = np.asarray(vector, dtype=np.float32)
        missing = [sid for sid in ids if sid not in found]
        if missing:
            raise StoreError(
                f"entity {key!r}: {len(missing)} sentences have no vector (e.g. {missing[0]!r}); "
                "re-run `opinio index` to complete the store"
            )
        matrix = np.vstack([found[sid] for sid in ids]) if ids else np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            self._embeddings[key] = matrix
        return matrix

    def _bm25_dir(self, key: str) -> Path:
        return self.store_dir / "bm25" / collection_name(key)

    def _build_bm25(self, key: str) -> OpinioBM25Retriever:
        from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever

        stored = self.sentences(key)
        nodes = self.nodes(key)
        return OpinioBM25Retriever.from_defaults(
            [nodes[s.sentence.sentence_id] for s in stored], tokens=[s.tokens for s in stored]
        )

    def bm25_retriever(
        self, entity_id: str | int, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> OpinioBM25Retriever:
        """The entity's BM25 retriever (loaded from disk once, then cached)."""
        from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever

        key = self.require_entity(entity_id)
        with self._lock:
            base = self._bm25.get(key)
            if base is None:
                directory = self._bm25_dir(key)
                if directory.exists():
                    base = OpinioBM25Retriever.from_persist_dir(directory)
                    if base.nodes and len(base.nodes) != len(self.sentences(key)):
                        base = None
                if base is None:
                    base = self._build_bm25(key)
                    base.persist(self._bm25_dir(key))
                self._bm25[key] = base
        retriever = OpinioBM25Retriever(base._index, base.nodes, similarity_top_k=top_k)  # noqa: SLF001
        retriever.filters = filters
        return retriever

    def dense_retriever(
        self, entity_id: str | int, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> DenseSentenceRetriever:
        """The entity's dense (Chroma) retriever."""
        from opinio_agents.retrieval.dense import DenseSentenceRetriever
        from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding

        key = self.require_entity(entity_id)
        return DenseSentenceRetriever(
            self._vector_store(key),
            self.nodes(key),
            similarity_top_k=top_k,
            embed_model=OfflineSentenceEmbedding(self.encoder),
            filters=filters,
        )

    def retriever(
        self,
        entity_id: str | int,
        kind: RetrieverKind = "hybrid",
        *,
        top_k: int = 10,
        filters: MetadataFilters | None = None,
    ) -> BaseRetriever:
        """A LlamaIndex retriever of the given kind: ``bm25``, ``dense`` or ``hybrid``."""
        if kind not in RETRIEVER_KINDS:
            raise ConfigError(f"retriever={kind!r} is not one of {', '.join(RETRIEVER_KINDS)}")
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        if kind == "bm25":
            return self.bm25_retriever(entity_id, top_k=top_k, filters=filters)
        if kind == "dense":
            return self.dense_retriever(entity_id, top_k=top_k, filters=filters)
        from opinio_agents.retrieval.hybrid import make_hybrid_retriever

        return make_hybrid_retriever(
            self.bm25_retriever(entity_id, top_k=top_k, filters=filters),
            self.dense_retriever(entity_id, top_k=top_k, filters=filters),
            similarity_top_k=top_k,
        )

    def retrieve(
        self,
        entity_id: str | int,
        query: str,
        *,
        kind: RetrieverKind = "hybrid",
        top_k: int = 10,
        filters: MetadataFilters | None = None,
        query_embedding: np.ndarray | None = None,
    ) -> list[ScoredSentence]:
        """Top-K sentences for ``query`` (score > 0), best first.

        Pass ``query_embedding`` when it is already computed to skip encoding the query.
        """
        from llama_index.core.schema import QueryBundle

        if not query or not query.strip():
            raise ConfigError("query is empty; pass a user-centric query such as 'wi-fi' or 'breakfast'")
        bundle = QueryBundle(
            query_str=query, embedding=None if query_embedding is None else [float(x) for x in query_embedding]
        )
        hits = self.retriever(entity_id, kind, top_k=top_k, filters=filters).retrieve(bundle)
        position = self.positions(entity_id)
        stored_all = self.sentences(entity_id)
        out: list[ScoredSentence] = []
        for hit in hits:
            i = position.get(hit.node.node_id)
            if i is not None and (hit.score or 0.0) > 0:
                stored = stored_all[i]
                out.append(ScoredSentence(stored.sentence, float(hit.score or 0.0), stored.sentiment))
        return out

    def positions(self, entity_id: str | int) -> dict[str, int]:
        """``sentence_id -> row`` in :meth:`sentences` and :meth:`embeddings` (cached)."""
        key = str(entity_id)
        with self._lock:
            if key not in self._positions:
                self._positions[key] = {s.sentence.sentence_id: i for i, s in enumerate(self.sentences(key))}
            return self._positions[key]

    def close(self) -> None:
        """Release the catalog connection."""
        with self._lock:
            if self._catalog is not None:
                self._catalog.close()
                self._catalog = None


def _chunks(items: list, size: int) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
