"""The models that built a store, recorded in the catalog's ``meta`` table, and the check that refuses others.

A store records its embedding model (name, dimension, path, fingerprint, backend), its
sentence sentiment scorer, its BM25 tokenizer and, when its vectors went to a Chroma
server, that server's ``host:port``. Queries and later writes must use the same models:
:meth:`ModelRecords.check` names the recorded and the requested one and how to fix it.

Example:
    >>> StoreModels(None, None, None).embedding is None
    True
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from opinio_agents.embeddings import DEFAULT_MODEL_NAME, EmbeddingModelInfo
from opinio_agents.errors import StoreError
from opinio_agents.stores.catalog import Catalog

__all__ = ["ModelRecords", "StoreModels"]

_EMBEDDING = "embedding_model"
_DIMENSION = "embedding_dimension"
_PATH = "embedding_path"
_FINGERPRINT = "embedding_fingerprint"
_BACKEND = "embedding_backend"
_SENTIMENT = "sentiment_scorer"
_TOKENIZER = "bm25_tokenizer"
_SERVER = "chroma_server"  # host:port of the Chroma server holding the vectors (absent: embedded)


@dataclass(frozen=True)
class StoreModels:
    """The models recorded by a store (``None`` where nothing was recorded yet).

    Example:
        >>> StoreModels(None, None, None).embedding is None
        True
    """

    embedding: EmbeddingModelInfo | None
    sentiment: str | None
    bm25_tokenizer: str | None


class ModelRecords:
    """Read, check and record the models of one store.

    Args:
        catalog: Returns the store's catalog (opened on first use).
        where: The store directory, as error messages name it.
    """

    def __init__(self, catalog: Callable[[], Catalog], where: str) -> None:
        self._catalog = catalog
        self.where = where
        self._lock = threading.Lock()

    def read(self) -> StoreModels:
        """The embedding model, sentiment scorer and BM25 tokenizer recorded."""
        catalog = self._catalog()
        name = catalog.get_meta(_EMBEDDING)
        embedding = None
        if name is not None:
            dimension = catalog.get_meta(_DIMENSION)
            embedding = EmbeddingModelInfo(
                name=name,
                dimension=int(dimension) if dimension else 0,  # 0: a store written before dimensions were kept
                path=catalog.get_meta(_PATH),
                fingerprint=catalog.get_meta(_FINGERPRINT),
                backend=catalog.get_meta(_BACKEND),
            )
        return StoreModels(embedding, catalog.get_meta(_SENTIMENT), catalog.get_meta(_TOKENIZER))

    def server(self) -> tuple[str, int] | None:
        """``(host, port)`` of the Chroma server the store's vectors went to (None: embedded)."""
        recorded = self._catalog().get_meta(_SERVER)
        if not recorded:
            return None
        host, _, port = recorded.rpartition(":")
        return host, int(port)

    def check(
        self,
        recorded: StoreModels,
        embedding: EmbeddingModelInfo | None = None,
        *,
        sentiment: str | None = None,
        bm25_tokenizer: str | None = None,
        writing: bool = False,
    ) -> None:
        """Refuse models other than the ``recorded`` ones (see :meth:`SentenceStore.check_models`).

        Raises:
            StoreError: Naming the recorded and the requested model and how to fix it.
        """
        where = self.where
        if embedding is not None and recorded.embedding is not None:
            old = recorded.embedding
            asked = embedding if old.dimension else _with_dimension(embedding, 0)
            why = old.backend_conflict(asked) if writing else old.conflict(asked)
            if why is not None:
                if old.conflict(asked) is None and old.backend:
                    hint = f"--encoder {old.backend}, OpinioRAG(encoder={old.backend!r})"
                elif old.name == DEFAULT_MODEL_NAME:
                    hint = "OpinioRAG(embedding_model=None), the default"
                elif old.path:
                    hint = f"OpinioRAG(embedding_model={old.path!r})"
                else:
                    hint = f"the encoder {old.name!r}"
                raise StoreError(
                    f"{where}: built with embedding model {old.describe()} but {embedding.describe()} was "
                    f"requested ({why}); use the original model ({hint}) or index into a new --store directory"
                )
        if sentiment is not None and recorded.sentiment is not None and sentiment != recorded.sentiment:
            raise StoreError(
                f"{where}: sentence sentiment was scored by {recorded.sentiment!r} but {sentiment!r} was "
                "requested; sentiments of one store must come from one scorer: use the original scorer "
                "or index into a new --store directory"
            )
        if bm25_tokenizer is not None and recorded.bm25_tokenizer not in (None, bm25_tokenizer):
            raise StoreError(
                f"{where}: BM25 tokens were made by tokenizer {recorded.bm25_tokenizer!r} but "
                f"{bm25_tokenizer!r} was requested; queries must be tokenized like the sentences: use "
                "the original tokenizer or index into a new --store directory"
            )

    def record(
        self,
        embedding: EmbeddingModelInfo,
        *,
        sentiment: str | None,
        bm25_tokenizer: str | None,
        server: str | None,
    ) -> None:
        """Record whatever the store does not know yet (``server``: ``host:port``, kept only by a new store).

        The backend is recorded only together with the model: a store written before
        backends were kept stays of unknown backend (and accepts any).
        """
        catalog = self._catalog()
        with self._lock:
            fresh = catalog.get_meta(_EMBEDDING) is None
            if fresh and embedding.backend:
                catalog.set_meta(_BACKEND, embedding.backend)
            values = {
                _EMBEDDING: embedding.name,
                _DIMENSION: str(embedding.dimension),
                _PATH: embedding.path,
                _FINGERPRINT: embedding.fingerprint,
                _SENTIMENT: sentiment,
                _TOKENIZER: bm25_tokenizer,
                # Only a new store records its server: one that began embedded keeps its vectors there.
                _SERVER: server if fresh else None,
            }
            for key, value in values.items():
                if value is not None and catalog.get_meta(key) is None:
                    catalog.set_meta(key, value)


def _with_dimension(info: EmbeddingModelInfo, dimension: int) -> EmbeddingModelInfo:
    return EmbeddingModelInfo(info.name, dimension, info.path, info.fingerprint, info.backend)
