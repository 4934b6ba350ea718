"""A LangChain ``BaseRetriever`` over the opinio sentence index (BM25, dense or hybrid).

Each document is one review sentence: ``page_content`` is its text, ``id`` its
``sentence_id`` and ``metadata`` the review's metadata plus ``score`` and
``sentiment``. It drops into any LangChain RAG chain.

Example:
    >>> from opinio_agents.agents import ReviewFilters
    >>> retriever = OpinioReviewRetriever(rag=rag, entity_id="101", k=5,             # doctest: +SKIP
    ...                                   filters=ReviewFilters(min_rating=4))
    >>> [d.page_content for d in retriever.invoke("breakfast")]                      # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from opinio_agents.agents.filters import ReviewFilters
from opinio_agents.errors import ConfigError
from opinio_agents.kinds import RetrieverKind
from opinio_agents.retrieval.factory import ScoredSentence

__all__ = ["OpinioReviewRetriever", "to_document"]


def to_document(scored: ScoredSentence) -> Document:
    """A retrieved sentence as a LangChain ``Document``."""
    metadata = scored.sentence.metadata()
    metadata.update(score=scored.score, sentiment=scored.sentiment)
    return Document(id=scored.sentence.sentence_id, page_content=scored.sentence.text, metadata=metadata)


class OpinioReviewRetriever(BaseRetriever):
    """Retrieve review sentences of one entity.

    Attributes:
        rag: An :class:`~opinio_agents.api.OpinioRAG` whose store holds the entity.
        entity_id: The entity to search.
        k: Sentences per query (overridable per call: ``invoke(q, k=3)``).
        kind: ``bm25``, ``dense`` or ``hybrid``.
        filters: Metadata filters (overridable per call: ``invoke(q, filters=...)``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rag: Any = Field(description="The OpinioRAG facade holding the index.")
    entity_id: str | int = Field(description="The entity to search (its id as in the dataset).")
    k: int = Field(default=10, ge=1)
    kind: RetrieverKind = "hybrid"
    filters: ReviewFilters | None = None

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        filters: ReviewFilters | dict[str, Any] | None = None,
    ) -> list[Document]:
        top_k = self.k if k is None else k
        if top_k < 1:
            raise ConfigError(f"k={top_k} must be >= 1")
        flt = ReviewFilters.model_validate(filters) if isinstance(filters, dict) else (filters or self.filters)
        hits = self.rag.retrieve(
            self.entity_id,
            query,
            top_k=top_k,
            retriever=self.kind,
            filters=flt.to_metadata_filters() if flt else None,
        )
        return [to_document(h) for h in hits]
