"""Build BM25, dense and hybrid LlamaIndex retrievers over a sentence store, cached per entity.

:class:`RetrieverFactory` reads a :class:`~opinio_agents.stores.SentenceStore`
and keeps, per entity, the BM25 index, the BM25 filter masks, the LlamaIndex
nodes and the retrievers built so far. Each entry remembers the entity's
generation; when the entity is re-indexed (by this process or another one) the
entry is dropped and rebuilt on the next request. The factory is thread-safe,
so one instance can serve every thread of a server.

:meth:`RetrieverFactory.retrieve` (the façade's and the pipeline's query path) scores
unfiltered queries with :mod:`opinio_agents.retrieval.search` directly: BM25 on the
cached matrix, exact cosine on the entity's stored vectors (the ones Chroma holds,
read once) and the same reciprocal-rank fusion as LlamaIndex's
``QueryFusionRetriever``, so no LlamaIndex node, bundle or Chroma query is built per
call; filtered queries and :meth:`RetrieverFactory.retriever` go through the
LlamaIndex retrievers. Query vectors come from a
:class:`~opinio_agents.retrieval.query_cache.CachedQueryEncoder` (in-process LRU plus
``<store>/query_vectors.sqlite``), so a query text is embedded once, across entities
and across processes.

Example:
    >>> from opinio_agents.retrieval import RetrieverFactory
    >>> from opinio_agents.stores import SentenceStore
    >>> factory = RetrieverFactory(SentenceStore("/tmp/opinio-doc"))      # doctest: +SKIP
    >>> hits = factory.retrieve("7", "wi-fi", retriever="hybrid", top_k=5)  # doctest: +SKIP
    >>> factory.retriever("7", "bm25", top_k=3).retrieve("pool")[0].score    # doctest: +SKIP
    1.37
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from opinio_agents.embeddings import EmbeddingModelInfo, Encoder, describe_encoder, get_encoder
from opinio_agents.errors import ConfigError
from opinio_agents.indexing.stages import AppendixDTokenizer, Bm25Tokenizer
from opinio_agents.kinds import RETRIEVERS, RetrieverKind
from opinio_agents.models import Sentence
from opinio_agents.retrieval.bm25.selection import top_k_positive
from opinio_agents.retrieval.query_cache import CachedQueryEncoder
from opinio_agents.stores.sentence_store import SentenceStore

if TYPE_CHECKING:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever
    from opinio_agents.retrieval.bm25.scoring import BM25Index
    from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding

__all__ = ["RetrieverFactory", "RetrieverKind", "RETRIEVERS", "ScoredSentence"]

_MAX_CACHED = 64  # retrievers (and filter masks) kept per entity


@dataclass(frozen=True)
class ScoredSentence:
    """A retrieved sentence with its retrieval score and stored sentiment."""

    sentence: Sentence
    score: float
    sentiment: float


@dataclass
class _Entry:
    key: str
    generation: int
    nodes: dict[str, TextNode] | None = None  # built for LlamaIndex retrievers only
    index: BM25Index | None = None
    bm25: OpinioBM25Retriever | None = None
    dense_checked: bool = False
    masks: OrderedDict[str, np.ndarray | None] = field(default_factory=OrderedDict)
    retrievers: OrderedDict[tuple[str, int, str], BaseRetriever] = field(default_factory=OrderedDict)


class RetrieverFactory:
    """LlamaIndex retrievers (``bm25``, ``dense``, ``hybrid``) over the entities of one store.

    Args:
        store: The sentence store.
        encoder: Query encoder; must be the model that built the store (checked).
            The shipped MiniLM by default (loaded only when a query vector is not cached).
            It is wrapped in a :class:`CachedQueryEncoder` whose persistent part lives in
            the store directory (pass a ``CachedQueryEncoder`` to choose its settings).
        tokenizer: BM25 query tokenizer; must be the one that built the store (checked).

    Example:
        >>> factory = RetrieverFactory(SentenceStore("/tmp/opinio-doc-empty-store"))
        >>> factory.retriever("7", "tfidf")
        Traceback (most recent call last):
        ...
        opinio_agents.errors.ConfigError: retriever='tfidf' is not one of bm25, dense, hybrid
    """

    def __init__(
        self,
        store: SentenceStore,
        encoder: Encoder | None = None,
        *,
        tokenizer: Bm25Tokenizer | None = None,
    ) -> None:
        self.store = store
        base = encoder if encoder is not None else get_encoder()
        self.encoder: CachedQueryEncoder = (
            base if isinstance(base, CachedQueryEncoder) else CachedQueryEncoder(base, cache_dir=store.store_dir)
        )
        self.tokenizer: Bm25Tokenizer = tokenizer or AppendixDTokenizer()
        self._lock = threading.RLock()
        self._entries: dict[str, _Entry] = {}
        self._model: EmbeddingModelInfo | None = None
        self._embed_model: OfflineSentenceEmbedding | None = None

    # -- public API ----------------------------------------------------------------
    def retriever(
        self,
        entity_id: str | int,
        retriever: RetrieverKind = "hybrid",
        *,
        top_k: int = 10,
        filters: MetadataFilters | None = None,
    ) -> BaseRetriever:
        """The entity's LlamaIndex retriever of kind ``retriever`` (cached; do not mutate it).

        Raises:
            ConfigError: For an unknown ``retriever`` or ``top_k < 1``.
            StoreError: For an entity that is not indexed, or a store built with another model.
        """
        if retriever not in RETRIEVERS:
            raise ConfigError(f"retriever={retriever!r} is not one of {', '.join(RETRIEVERS)}")
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        key = self.store.require_entity(entity_id)
        filter_key = _filters_key(filters)
        cache_key = (retriever, top_k, filter_key)
        with self._lock:
            entry = self._entry(key)
            cached = entry.retrievers.get(cache_key)
            if cached is not None:
                entry.retrievers.move_to_end(cache_key)
                return cached
            if retriever == "bm25":
                built: BaseRetriever = self._bm25(key, entry, top_k, filters, filter_key)
            elif retriever == "dense":
                built = self._dense(key, entry, top_k, filters)
            else:
                from opinio_agents.retrieval.hybrid import make_hybrid_retriever

                built = make_hybrid_retriever(
                    self.retriever(key, "bm25", top_k=top_k, filters=filters),
                    self.retriever(key, "dense", top_k=top_k, filters=filters),
                    top_k=top_k,
                )
            entry.retrievers[cache_key] = built
            while len(entry.retrievers) > _MAX_CACHED:
                entry.retrievers.popitem(last=False)
            return built

    def retrieve(
        self,
        entity_id: str | int,
        query: str,
        *,
        retriever: RetrieverKind = "hybrid",
        top_k: int = 10,
        filters: MetadataFilters | None = None,
        query_embedding: np.ndarray | Sequence[float] | None = None,
    ) -> list[ScoredSentence]:
        """Top-K sentences for ``query`` (score > 0), best first.

        Pass ``query_embedding`` when it is already computed to skip encoding the query
        (otherwise it comes from the query cache, or the encoder on a miss). Without
        ``filters`` the scores are computed on the cached arrays (see the module
        docstring); the sentences and their order are the LlamaIndex retrievers'.

        Raises:
            ConfigError: For an empty query, an unknown ``retriever`` or ``top_k < 1``.
            StoreError: For an entity that is not indexed, or a store built with another model.
        """
        if not query or not query.strip():
            raise ConfigError("query is empty; pass a user-centric query such as 'wi-fi' or 'breakfast'")
        if filters is not None and filters.filters:
            return self._retrieve_nodes(entity_id, query, retriever, top_k, filters, query_embedding)
        if retriever not in RETRIEVERS:
            raise ConfigError(f"retriever={retriever!r} is not one of {', '.join(RETRIEVERS)}")
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        from opinio_agents.retrieval.search import dense_top_k, rrf_fuse

        key = self.store.require_entity(entity_id)
        sparse: list[tuple[int, float]] = []
        dense: list[tuple[int, float]] = []
        if retriever in ("bm25", "hybrid"):
            with self._lock:
                index = self._bm25_index(key, self._entry(key))
            sparse = top_k_positive(index.scores(self.tokenizer.tokenize(query)), top_k)
        if retriever in ("dense", "hybrid"):
            vectors = self._dense_vectors(key)
            vector = self._query_vector(query, query_embedding)
            dense = dense_top_k(vectors, vector, top_k)
        rows = rrf_fuse([sparse, dense], top_k=top_k) if retriever == "hybrid" else (sparse or dense)
        stored_all = self.store.sentences(key)
        return [
            ScoredSentence(stored_all[i].sentence, float(score), stored_all[i].sentiment)
            for i, score in rows
            if score > 0
        ]

    def _retrieve_nodes(
        self,
        entity_id: str | int,
        query: str,
        retriever: RetrieverKind,
        top_k: int,
        filters: MetadataFilters | None,
        query_embedding: np.ndarray | Sequence[float] | None,
    ) -> list[ScoredSentence]:
        """:meth:`retrieve` through the LlamaIndex retriever objects (filtered queries)."""
        from llama_index.core.schema import QueryBundle

        if query_embedding is None and retriever in ("dense", "hybrid"):
            query_embedding = self.encoder.encode([query])[0]
        bundle = QueryBundle(
            query_str=query, embedding=None if query_embedding is None else [float(x) for x in query_embedding]
        )
        hits = self.retriever(entity_id, retriever, top_k=top_k, filters=filters).retrieve(bundle)
        key = str(entity_id)
        position = self.store.positions(key)
        stored_all = self.store.sentences(key)
        out: list[ScoredSentence] = []
        for hit in hits:
            i = position.get(hit.node.node_id)
            if i is not None and (hit.score or 0.0) > 0:
                stored = stored_all[i]
                out.append(ScoredSentence(stored.sentence, float(hit.score or 0.0), stored.sentiment))
        return out

    def _query_vector(self, query: str, query_embedding: np.ndarray | Sequence[float] | None) -> np.ndarray:
        if query_embedding is not None:
            return np.asarray(query_embedding, dtype=np.float32)
        return np.asarray(self.encoder.encode([query])[0], dtype=np.float32)

    def _dense_vectors(self, key: str) -> np.ndarray:
        """The entity's stored vectors (read once per generation), after the store's model check."""
        with self._lock:
            entry = self._entry(key)
            if not entry.dense_checked:
                self.store.check_models(self.embedding_model)
                entry.dense_checked = True
        return self.store.embeddings(key, persist=True)

    def nodes(self, entity_id: str | int) -> dict[str, TextNode]:
        """``sentence_id -> TextNode`` of an entity (shared by its retrievers; do not mutate)."""
        key = self.store.require_entity(entity_id)
        with self._lock:
            return self._nodes(self._entry(key))

    def prepare(self, entity_id: str | int) -> None:
        """Build (or load) and persist the entity's BM25 index now, so the first query does not pay it."""
        key = self.store.require_entity(entity_id)
        with self._lock:
            self._bm25_index(key, self._entry(key))

    def invalidate(self, entity_id: str | int | None = None) -> None:
        """Drop the cached retrievers of one entity (or all); re-indexing does this by itself."""
        with self._lock:
            if entity_id is None:
                self._entries.clear()
            else:
                self._entries.pop(str(entity_id), None)

    @property
    def embedding_model(self) -> EmbeddingModelInfo:
        """The query encoder's identity (probed once)."""
        with self._lock:
            if self._model is None:
                self._model = describe_encoder(self.encoder)
            return self._model

    # -- internals -----------------------------------------------------------------------
    def _entry(self, key: str) -> _Entry:
        """The entity's cache entry, rebuilt when its generation moved (caller holds the lock)."""
        generation = self.store.generation(key)
        if generation is None:
            self._entries.pop(key, None)
            self.store.require_entity(key)  # raises with the list of indexed ids
        entry = self._entries.get(key)
        if entry is None or entry.generation != generation:
            entry = _Entry(key, int(generation or 0))
            self._entries[key] = entry
        return entry

    def _nodes(self, entry: _Entry) -> dict[str, TextNode]:
        """The entry's LlamaIndex nodes, built on first use (caller holds the lock)."""
        if entry.nodes is None:
            from opinio_agents.stores.nodes import sentence_to_node

            stored = self.store.sentences(entry.key)
            entry.nodes = {s.sentence.sentence_id: sentence_to_node(s.sentence) for s in stored}
        return entry.nodes

    def _bm25_index(self, key: str, entry: _Entry) -> BM25Index:
        """The entity's BM25 index: loaded from the store, or built and saved (caller holds the lock)."""
        from opinio_agents.retrieval.bm25.scoring import BM25Index

        if entry.index is not None:
            return entry.index
        self.store.check_models(bm25_tokenizer=self.tokenizer.name)
        stored = self.store.sentences(key)
        index = self.store.load_bm25(key, BM25Index.load)
        if index is None or index.num_docs != len(stored):
            index = BM25Index.build([s.tokens for s in stored])
            try:
                self.store.save_bm25(key, index.save)
            except OSError:  # a read-only store, or another process saving at the same time: keep it in memory
                pass
        entry.index = index
        return index

    def _bm25_base(self, key: str, entry: _Entry) -> OpinioBM25Retriever:
        from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever

        if entry.bm25 is not None:
            return entry.bm25
        index = self._bm25_index(key, entry)
        nodes = self._nodes(entry)
        node_list = [nodes[s.sentence.sentence_id] for s in self.store.sentences(key)]
        entry.bm25 = OpinioBM25Retriever(index, node_list, tokenizer=self.tokenizer.tokenize)
        return entry.bm25

    def _bm25(
        self, key: str, entry: _Entry, top_k: int, filters: MetadataFilters | None, filter_key: str
    ) -> OpinioBM25Retriever:
        base = self._bm25_base(key, entry)
        if filter_key not in entry.masks:
            entry.masks[filter_key] = base.filter_mask(filters)
            while len(entry.masks) > _MAX_CACHED:
                entry.masks.popitem(last=False)
        return base.with_options(top_k=top_k, filters=filters, mask=entry.masks[filter_key])

    def _dense(self, key: str, entry: _Entry, top_k: int, filters: MetadataFilters | None) -> BaseRetriever:
        from opinio_agents.retrieval.dense import DenseSentenceRetriever
        from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding

        self.store.check_models(self.embedding_model)
        if self._embed_model is None:
            self._embed_model = OfflineSentenceEmbedding(self.encoder)
        return DenseSentenceRetriever(
            self.store.vector_store(key),
            self._nodes(entry),
            similarity_top_k=top_k,
            embed_model=self._embed_model,
            filters=filters,
        )


def _filters_key(filters: MetadataFilters | None) -> str:
    if filters is None or not filters.filters:
        return ""
    return filters.model_dump_json()
