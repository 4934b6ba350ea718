"""Query embeddings computed once: an in-process LRU plus a small persistent cache in the store.

:class:`CachedQueryEncoder` wraps any :class:`~opinio_agents.embeddings.Encoder` and
answers ``encode`` from a cache keyed by the encoder's *identity* and the exact text.
The same query asked for many entities is therefore embedded once per process, and a
query seen by an earlier process is read back from ``<store>/query_vectors.sqlite``
without loading the model at all (a cold ``opinio highlight`` then costs imports and
arithmetic only). The identity is everything that changes the vectors: the encoder's
class, ``name``, ``path``, ``fingerprint``, a plain ``dimension`` attribute and, where an
encoder has them, ``backend`` / ``quantization`` / ``precision`` / ``identity``
attributes. An encoder with another identity never sees the vectors of the first one,
and opening the persistent cache with it drops the stale rows.

The persistent cache is bounded (:data:`DEFAULT_MAX_ROWS` rows, oldest dropped first),
written only into an existing store directory, and silently skipped when the
directory is read-only or the file cannot be used: it is a cache, never a source of
truth.

Example:
    >>> import numpy as np
    >>> class Ones:
    ...     name = "ones"
    ...     calls = 0
    ...     def encode(self, texts, **_):
    ...         Ones.calls += 1
    ...         return np.ones((len(texts), 4), dtype=np.float32) / 2
    >>> cached = CachedQueryEncoder(Ones())
    >>> _ = cached.encode(["wi-fi"]); _ = cached.encode(["wi-fi", "pool"])
    >>> Ones.calls, cached.stats.hits, cached.stats.misses
    (2, 1, 2)
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from opinio_agents.embeddings import Encoder
from opinio_agents.stores.kv_cache import SqliteCache, TieredCache

__all__ = [
    "CachedQueryEncoder",
    "QueryCacheStats",
    "PersistentQueryCache",
    "encoder_identity",
    "QUERY_CACHE_FILE",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_MEMORY_ITEMS",
]

#: File name of the persistent cache inside a store directory.
QUERY_CACHE_FILE = "query_vectors.sqlite"
#: Rows kept on disk (about 1.5 KiB each for a 384-d model: ~15 MiB at most).
DEFAULT_MAX_ROWS = 10_000
#: Vectors kept in memory per encoder wrapper.
DEFAULT_MEMORY_ITEMS = 4096
_IDENTITY_ATTRS = ("backend", "quantization", "precision", "identity")


def _plain_attr(obj: object, name: str) -> Any:
    """``obj.name`` unless it is a property (a property may load a model to answer)."""
    static = inspect.getattr_static(type(obj), name, None)
    if isinstance(static, property) or (static is not None and hasattr(static, "__get__") and not callable(static)):
        return None
    value = getattr(obj, name, None)
    return None if callable(value) else value


def encoder_identity(encoder: Encoder) -> str:
    """A short digest of what determines ``encoder``'s vectors (no model is loaded to compute it).

    Example:
        >>> class A:
        ...     name = "m"
        ...     dimension = 4
        ...     def encode(self, texts): ...
        >>> class B(A):
        ...     dimension = 8
        >>> encoder_identity(A()) == encoder_identity(A()), encoder_identity(A()) == encoder_identity(B())
        (True, False)
    """
    kind = type(encoder)
    parts = [f"{kind.__module__}.{kind.__qualname__}", f"name={getattr(encoder, 'name', '')}"]
    path = getattr(encoder, "path", None)
    if path is not None and not callable(path):
        parts.append(f"path={Path(str(path)).name}")  # the directory name: stores move between machines
    fingerprint = getattr(encoder, "fingerprint", None)  # SentenceEncoder: a digest of the files, no model load
    if isinstance(fingerprint, str):
        parts.append(f"fingerprint={fingerprint}")
    dimension = _plain_attr(encoder, "dimension")
    if isinstance(dimension, int):
        parts.append(f"dimension={dimension}")
    for attr in _IDENTITY_ATTRS:
        value = getattr(encoder, attr, None)
        if value is not None and not callable(value):
            parts.append(f"{attr}={value}")
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:20]


@dataclass
class QueryCacheStats:
    """Counters of one :class:`CachedQueryEncoder` (texts, not calls)."""

    hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    encoder_calls: int = 0


def _vector_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, np.float32).tobytes()


def _vector(blob: bytes) -> np.ndarray | None:
    return np.frombuffer(blob, dtype=np.float32) if blob and len(blob) % 4 == 0 else None


class PersistentQueryCache(SqliteCache[np.ndarray]):
    """``text -> vector`` rows of one encoder identity in a small SQLite file (table ``vectors``).

    Args:
        path: The SQLite file (its directory must exist; nothing is created otherwise).
        identity: :func:`encoder_identity` of the encoder; rows of other identities are dropped on open.
        max_rows: Rows kept; the oldest are deleted past it.

    Every failure (read-only directory, a locked or corrupt file) turns the cache off
    for the rest of the process instead of failing the query (see
    :class:`~opinio_agents.stores.kv_cache.SqliteCache`).
    """

    def __init__(self, path: str | Path, identity: str, *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        super().__init__(path, identity, table="vectors", encode=_vector_bytes, decode=_vector, max_rows=max_rows)

    def dimension(self) -> int | None:
        """The dimension of the stored vectors (None when there are none)."""
        vector = self.first()
        return None if vector is None else int(vector.shape[0])


class CachedQueryEncoder:
    """An :class:`~opinio_agents.embeddings.Encoder` that embeds each distinct text once.

    Args:
        encoder: The encoder whose vectors are cached (its model loads only on a miss).
        cache_dir: Directory holding :data:`QUERY_CACHE_FILE` (a store directory); None keeps
            the cache in memory only.
        memory_items: Size of the in-process LRU.
        max_rows: Rows of the persistent cache.

    ``name``, ``path``, ``fingerprint`` and ``batch_size`` are the wrapped encoder's;
    ``dimension`` is read from the persistent cache when it holds vectors of this encoder,
    so describing the encoder (as the store's model check does) needs no model either.

    Example:
        >>> from opinio_agents.embeddings import get_encoder
        >>> cached = CachedQueryEncoder(get_encoder(), cache_dir=".opinio")   # doctest: +SKIP
        >>> cached.encode(["wi-fi"]).shape                                    # doctest: +SKIP
        (1, 384)
    """

    def __init__(
        self,
        encoder: Encoder,
        *,
        cache_dir: str | Path | None = None,
        memory_items: int = DEFAULT_MEMORY_ITEMS,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        self.inner = encoder
        self.name = str(encoder.name)
        self.identity = encoder_identity(encoder)
        self.memory_items = max(1, int(memory_items))
        self.stats = QueryCacheStats()
        self._dimension: int | None = None
        self.persistent = (
            PersistentQueryCache(Path(cache_dir) / QUERY_CACHE_FILE, self.identity, max_rows=max_rows)
            if cache_dir is not None
            else None
        )
        self._tiers = TieredCache[np.ndarray](self.memory_items, lambda: self.persistent)

    def __getattr__(self, attr: str) -> Any:
        # path, fingerprint, batch_size, device ... of the wrapped encoder (only called for missing attributes).
        if attr in ("inner", "_tiers", "persistent"):
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    @property
    def dimension(self) -> int:
        """Vector dimension: from vectors already cached when there are any, else from the encoder."""
        if self._dimension is None:
            for vector in self._tiers.memory.values():
                self._dimension = int(vector.shape[0])
                break
            if self._dimension is None and self.persistent is not None:
                self._dimension = self.persistent.dimension()
            if self._dimension is None:
                inner = getattr(self.inner, "dimension", None)
                if isinstance(inner, int) and inner > 0:
                    self._dimension = inner
                else:
                    self._dimension = int(np.asarray(self.inner.encode(["dimension probe"])).shape[1])
        return self._dimension

    def encode(self, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
        """One L2-normalised float32 row per text; only texts never seen before reach the encoder."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        seen = self._tiers.lookup(texts)
        found, missing = seen.found, seen.missing
        self.stats.hits += seen.hits
        self.stats.disk_hits += seen.disk_hits
        if missing:
            self.stats.misses += sum(1 for t in texts if t in set(missing))
            self.stats.encoder_calls += 1
            vectors = np.asarray(self.inner.encode(missing, **kwargs), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(missing):
                return vectors  # a malformed encoder: let the caller's own shape check report it
            fresh = {text: np.array(row, dtype=np.float32) for text, row in zip(missing, vectors)}
            for row in fresh.values():
                row.setflags(write=False)
            found.update(fresh)
            self._tiers.store(fresh)
        return np.vstack([found[t] for t in texts])

    def clear(self) -> None:
        """Forget the in-memory vectors (the persistent cache stays)."""
        self._tiers.memory.clear()

    def __repr__(self) -> str:
        return f"CachedQueryEncoder({self.inner!r})"
