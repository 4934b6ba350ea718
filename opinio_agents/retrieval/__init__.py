"""Retrievers over review sentences, written as LlamaIndex ``BaseRetriever`` subclasses."""

from opinio_agents.retrieval.bm25.retriever import OpinioBM25Retriever
from opinio_agents.retrieval.bm25.scoring import BM25Index, BM25Params
from opinio_agents.retrieval.dense import DenseSentenceRetriever
from opinio_agents.retrieval.embedding import OfflineSentenceEmbedding
from opinio_agents.retrieval.hybrid import make_hybrid_retriever
from opinio_agents.retrieval.nodes import sentence_to_node

__all__ = [
    "OpinioBM25Retriever",
    "BM25Index",
    "BM25Params",
    "DenseSentenceRetriever",
    "OfflineSentenceEmbedding",
    "make_hybrid_retriever",
    "sentence_to_node",
]
