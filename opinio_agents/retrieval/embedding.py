"""LlamaIndex embedding adapter over the shared offline :class:`SentenceEncoder`.

LlamaIndex's own HuggingFace embedding needs an extra package and defaults to a
hub id; this adapter reuses the process-wide MiniLM encoder instead.

Example:
    >>> emb = OfflineSentenceEmbedding()                         # doctest: +SKIP
    >>> len(emb.get_query_embedding("breakfast buffet"))        # doctest: +SKIP
    384
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from opinio_agents.embeddings import Encoder, get_encoder

__all__ = ["OfflineSentenceEmbedding"]


class OfflineSentenceEmbedding(BaseEmbedding):
    """A LlamaIndex ``BaseEmbedding`` backed by a local sentence-transformers model."""

    _encoder: Encoder = PrivateAttr()

    def __init__(self, encoder: Encoder | None = None, **kwargs: Any) -> None:
        encoder = encoder or get_encoder()
        kwargs.setdefault("model_name", encoder.name)
        kwargs.setdefault("embed_batch_size", getattr(encoder, "batch_size", 64))
        super().__init__(**kwargs)
        self._encoder = encoder

    @classmethod
    def class_name(cls) -> str:
        return "OfflineSentenceEmbedding"

    @property
    def encoder(self) -> Encoder:
        """The wrapped encoder."""
        return self._encoder

    def _get_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in self._encoder.encode([query])[0]]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return [float(x) for x in self._encoder.encode([text])[0]]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._encoder.encode(texts)]
