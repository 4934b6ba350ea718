"""Build BM25, dense and hybrid LlamaIndex retrievers over a sentence store, cached per entity.

:class:`RetrieverFactory` reads a :class:`~opinio_agents.stores.SentenceStore`
and keeps, per entity, the LlamaIndex nodes, the BM25 index, the BM25 filter
masks and the retrievers built so far. Each entry remembers the entity's
generation; when the entity is re-indexed (by this process or another one) the
entry is dropped and rebuilt on the next request. The factory is thread-safe,
so one instance can serve every thread of a server.

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
from typing import TYPE_CHECKING, Literal

import numpy as np

from opinio_agents.embeddings import EmbeddingModelInfo, Encoder, describe_encoder, get_encoder
from opinio_agents.errors import ConfigError
from opinio_agents.indexing.stages import AppendixDTokenizer, Bm25Tokenizer
from opinio_agents.models import Sentence
from opinio_agents.stores.sentence_store import SentenceStore

if TYPE_CHECKING:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever
    from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding

__all__ = ["RetrieverFactory", "RetrieverKind", "RETRIEVERS", "ScoredSentence"]

RetrieverKind = Literal["bm25", "dense", "hybrid"]
#: The retriever names accepted by ``retriever=``.
RETRIEVERS: tuple[str, ...] = ("bm25", "dense", "hybrid")
_MAX_CACHED = 64  # retrievers (and filter masks) kept per entity


@dataclass(frozen=True)
class ScoredSentence:
    """A retrieved sentence with its retrieval score and stored sentiment."""

    sentence: Sentence
    score: float
    sentiment: float


@dataclass
class _Entry:
    generation: int
    nodes: dict[str, TextNode]
    bm25: OpinioBM25Retriever | None = None
    masks: OrderedDict[str, np.ndarray | None] = field(default_factory=OrderedDict)
    retrievers: OrderedDict[tuple[str, int, str], BaseRetriever] = field(default_factory=OrderedDict)


class RetrieverFactory:
    """LlamaIndex retrievers (``bm25``, ``dense``, ``hybrid``) over the entities of one store.

    Args:
        store: The sentence store.
        encoder: Query encoder; must be the model that built the store (checked).
            The shipped MiniLM by default (loaded only for dense queries).
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
        self.encoder: Encoder = encoder if encoder is not None else get_encoder()
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

        Pass ``query_embedding`` when it is already computed to skip encoding the query.
        """
        from llama_index.core.schema import QueryBundle

        if not query or not query.strip():
            raise ConfigError("query is empty; pass a user-centric query such as 'wi-fi' or 'breakfast'")
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

    def nodes(self, entity_id: str | int) -> dict[str, TextNode]:
        """``sentence_id -> TextNode`` of an entity (shared by its retrievers; do not mutate)."""
        key = self.store.require_entity(entity_id)
        with self._lock:
            return self._entry(key).nodes

    def prepare(self, entity_id: str | int) -> None:
        """Build (or load) and persist the entity's BM25 index now, so the first query does not pay it."""
        key = self.store.require_entity(entity_id)
        with self._lock:
            self._bm25_base(key, self._entry(key))

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
        from opinio_agents.stores.nodes import sentence_to_node

        generation = self.store.generation(key)
        if generation is None:
            self._entries.pop(key, None)
            self.store.require_entity(key)  # raises with the list of indexed ids
        entry = self._entries.get(key)
        if entry is None or entry.generation != generation:
            nodes = {s.sentence.sentence_id: sentence_to_node(s.sentence) for s in self.store.sentences(key)}
            entry = _Entry(int(generation or 0), nodes)
            self._entries[key] = entry
        return entry

    def _bm25_base(self, key: str, entry: _Entry) -> OpinioBM25Retriever:
        from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever
        from opinio_agents.retrieval.bm25.scoring import BM25Index

        if entry.bm25 is not None:
            return entry.bm25
        self.store.check_models(bm25_tokenizer=self.tokenizer.name)
        stored = self.store.sentences(key)
        node_list = [entry.nodes[s.sentence.sentence_id] for s in stored]
        index = self.store.load_bm25(key, BM25Index.load)
        if index is None or index.num_docs != len(node_list):
            index = BM25Index.build([s.tokens for s in stored])
            try:
                self.store.save_bm25(key, index.save)
            except OSError:  # a read-only store, or another process saving at the same time: keep it in memory
                pass
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
            entry.nodes,
            similarity_top_k=top_k,
            embed_model=self._embed_model,
            filters=filters,
        )


def _filters_key(filters: MetadataFilters | None) -> str:
    if filters is None or not filters.filters:
        return ""
    return filters.model_dump_json()
