"""Hybrid retrieval: BM25 and dense results fused by reciprocal rank (no LLM call).

Built on LlamaIndex's ``QueryFusionRetriever`` in ``reciprocal_rerank`` mode
with a single query (``num_queries=1``), so no query rewriting and no language
model is involved.

Example:
    >>> hybrid = make_hybrid_retriever(bm25, dense, top_k=10)  # doctest: +SKIP
"""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.llms.mock import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

__all__ = ["make_hybrid_retriever"]


def make_hybrid_retriever(
    bm25: BaseRetriever,
    dense: BaseRetriever,
    *,
    top_k: int = 10,
    weights: tuple[float, float] | None = None,
) -> QueryFusionRetriever:
    """Fuse a BM25 and a dense retriever with reciprocal rank fusion (k = 60), keeping the ``top_k`` best."""
    return QueryFusionRetriever(
        [bm25, dense],
        llm=MockLLM(),
        mode=FUSION_MODES.RECIPROCAL_RANK,
        similarity_top_k=top_k,  # LlamaIndex's name
        num_queries=1,
        use_async=False,
        retriever_weights=list(weights) if weights else None,
    )
