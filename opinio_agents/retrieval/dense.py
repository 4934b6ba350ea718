"""Dense retrieval over a Chroma collection through LlamaIndex's ``ChromaVectorStore``.

Embeddings come from the shared offline encoder. LlamaIndex's Chroma adapter
reports ``exp(-distance)``; with the collection's cosine space the distance is
``1 - cos``, so the retriever turns it back into the cosine similarity and, as
the paper's App. B.1 asks, returns only sentences with a score > 0.

Example:
    >>> retriever = DenseSentenceRetriever(vector_store, nodes, similarity_top_k=5)  # doctest: +SKIP
    >>> retriever.retrieve("free parking")[0].score                                 # doctest: +SKIP
    0.71
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import MetadataFilters, VectorStoreQuery
from llama_index.vector_stores.chroma import ChromaVectorStore

from opinio_agents.errors import ConfigError
from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding

__all__ = ["DenseSentenceRetriever"]


class DenseSentenceRetriever(BaseRetriever):
    """Cosine top-K over an entity's Chroma collection.

    Args:
        vector_store: LlamaIndex Chroma vector store of the entity's sentences.
        nodes: ``sentence_id -> TextNode`` so hits share node objects with the BM25 retriever.
        similarity_top_k: K.
        embed_model: Query embedding model (the shared MiniLM by default).
        filters: Metadata filters, translated to a Chroma ``where`` clause.
    """

    def __init__(
        self,
        vector_store: ChromaVectorStore,
        nodes: Mapping[str, TextNode],
        *,
        similarity_top_k: int = 10,
        embed_model: BaseEmbedding | None = None,
        filters: MetadataFilters | None = None,
        **kwargs: Any,
    ) -> None:
        if similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k={similarity_top_k} must be >= 1")
        self._vector_store = vector_store
        self._nodes = nodes
        self._embed_model = embed_model or OfflineSentenceEmbedding()
        self.similarity_top_k = similarity_top_k
        self.filters = filters
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        embedding = query_bundle.embedding or self._embed_model.get_query_embedding(query_bundle.query_str)
        query = VectorStoreQuery(
            query_embedding=embedding,
            similarity_top_k=self.similarity_top_k,
            filters=self.filters if self.filters is not None and self.filters.filters else None,
        )
        result = self._vector_store.query(query)
        hits: list[NodeWithScore] = []
        for node_id, similarity in zip(result.ids or [], result.similarities or []):
            cosine = 1.0 + math.log(similarity) if similarity > 0 else -1.0
            node = self._nodes.get(node_id)
            if cosine > 0 and node is not None:
                hits.append(NodeWithScore(node=node, score=cosine))
        # HNSW returns exact ties (duplicate sentences) in an order that depends on how its graph
        # was built: break them by sentence id, so two builds of one store rank alike.
        hits.sort(key=lambda hit: (-float(hit.score or 0.0), hit.node.node_id))
        return hits
