"""Retrievers over review sentences (LlamaIndex ``BaseRetriever`` subclasses) and the factory that builds them.

Names are imported lazily, so importing :mod:`opinio_agents.retrieval` loads no
LlamaIndex module until a retriever is needed.

Example:
    >>> from opinio_agents.retrieval import RETRIEVERS
    >>> RETRIEVERS
    ('bm25', 'dense', 'hybrid')
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "RetrieverFactory",
    "RetrieverKind",
    "RETRIEVERS",
    "ScoredSentence",
    "OpinioBM25Retriever",
    "BM25Index",
    "BM25Params",
    "DenseSentenceRetriever",
    "OfflineSentenceEmbedding",
    "make_hybrid_retriever",
    "sentence_to_node",
]

_LAZY = {
    "RetrieverFactory": "opinio_agents.retrieval.factory",
    "RetrieverKind": "opinio_agents.retrieval.factory",
    "RETRIEVERS": "opinio_agents.retrieval.factory",
    "ScoredSentence": "opinio_agents.retrieval.factory",
    "OpinioBM25Retriever": "opinio_agents.retrieval.bm25.retriever",
    "BM25Index": "opinio_agents.retrieval.bm25.scoring",
    "BM25Params": "opinio_agents.retrieval.bm25.scoring",
    "DenseSentenceRetriever": "opinio_agents.retrieval.dense",
    "OfflineSentenceEmbedding": "opinio_agents.retrieval.embedding",
    "make_hybrid_retriever": "opinio_agents.retrieval.hybrid",
    "sentence_to_node": "opinio_agents.stores.nodes",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'opinio_agents.retrieval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
