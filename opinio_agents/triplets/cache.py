"""Triplets extracted once per distinct sentence: an in-process LRU plus a persistent cache in the store.

Verification (:class:`~opinio_agents.synthesis.verification.HighlightVerifier`) reads
the AOS triplets of every highlight and of each sentence it cites. The same
sentences are cited again by other queries, by later runs and by other processes
(the CLI, a server, the benchmark), so :class:`CachedTripletExtractor` wraps any
:class:`~opinio_agents.triplets.base.TripletExtractor` and extracts only the texts
it has never seen: hits come from memory, then from ``<store>/triplets.sqlite``,
and the misses of one call go to the wrapped extractor in **one** batch (whose
model therefore loads only when something is missing).

Rows are addressed by content: the key is a digest of the extractor's identity
(:func:`extractor_identity`: its class, its plain settings and a digest of its
weight files) and the exact text. A sentence's triplets depend on nothing else,
so a re-indexed entity (a new generation) needs no invalidation: its unchanged
sentences keep their rows and a changed text is a new key; rows of another
extractor identity are dropped when the file is opened. The file is bounded
(:data:`TRIPLET_CACHE_MAX_ROWS`, oldest first), written only into an existing store
directory, and silently skipped when it cannot be used: it is a cache, never a
source of truth. This module is plumbing only; what the triplets mean for a
verdict lives in :mod:`opinio_agents.synthesis.verification`.

Example:
    >>> from opinio_agents.triplets.base import Triplet
    >>> class Words(TripletExtractor):
    ...     calls = 0
    ...     def extract(self, sentences):
    ...         Words.calls += 1
    ...         return [[Triplet(aspect=s.split()[0], opinion=s.split()[-1], sentiment=1)] for s in sentences]
    >>> cached = CachedTripletExtractor(Words())
    >>> _ = cached.extract(["pool great", "bed soft"]); _ = cached.extract(["bed soft", "view nice"])
    >>> Words.calls, cached.stats.hits, cached.stats.misses
    (2, 1, 3)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opinio_agents.stores.kv_cache import SqliteCache, TieredCache
from opinio_agents.triplets.base import Triplet, TripletExtractor
from opinio_agents.triplets.headconfig import files_digest

__all__ = [
    "CachedTripletExtractor",
    "PersistentTripletCache",
    "TripletCacheStats",
    "extractor_identity",
    "TRIPLET_CACHE_FILE",
    "TRIPLET_CACHE_MAX_ROWS",
    "TRIPLET_CACHE_MEMORY_ITEMS",
]

#: File name of the persistent cache inside a store directory.
TRIPLET_CACHE_FILE = "triplets.sqlite"
#: Rows kept on disk (a row is ~100-300 bytes: ~60 MiB at most); the cited sentences of
#: a few thousand entities' highlights fit.
TRIPLET_CACHE_MAX_ROWS = 200_000
#: Sentences kept in memory per wrapper.
TRIPLET_CACHE_MEMORY_ITEMS = 50_000


def extractor_identity(extractor: TripletExtractor) -> str:
    """A short digest of what determines ``extractor``'s triplets (no model is loaded to compute it).

    The class, its plain settings (strings, numbers, booleans, ``None``, paths) and,
    for every setting that names a directory (and for the embedded extractor's shipped
    weights when it names none), a digest of the files in it: retrained weights give a
    new identity. An extractor may define an ``identity`` string attribute instead.

    Example:
        >>> class A(TripletExtractor):
        ...     def __init__(self, n): self.n = n
        ...     def extract(self, sentences): return [[] for _ in sentences]
        >>> extractor_identity(A(1)) == extractor_identity(A(1)), extractor_identity(A(1)) == extractor_identity(A(2))
        (True, False)
    """
    own = getattr(extractor, "identity", None)
    if isinstance(own, str):
        return own
    kind = type(extractor)
    parts = [f"{kind.__module__}.{kind.__qualname__}"]
    folders: list[Path] = []
    for name, value in sorted(vars(extractor).items()):
        if name.startswith("_"):
            continue
        if isinstance(value, (str, Path)) and str(value) and Path(str(value)).is_dir():
            folders.append(Path(str(value)))
            parts.append(f"{name}=<dir>")
        elif value is None or isinstance(value, (str, int, float, bool, Path)):
            parts.append(f"{name}={value}")
    if kind.__name__ == "EmbeddedTripletExtractor" and getattr(extractor, "weights_dir", None) is None:
        from opinio_agents.triplets.embedded import DEFAULT_WEIGHTS_DIR

        folders.append(DEFAULT_WEIGHTS_DIR)
    parts.extend(files_digest(folder) for folder in folders)
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:20]


def _dump(triplets: Sequence[Triplet]) -> bytes:
    return json.dumps([[t.aspect, t.opinion, t.sentiment] for t in triplets], ensure_ascii=False).encode("utf-8")


def _load(blob: bytes) -> list[Triplet]:
    return [Triplet(aspect=a, opinion=o, sentiment=s) for a, o, s in json.loads(blob)]


@dataclass
class TripletCacheStats:
    """Counters of one :class:`CachedTripletExtractor` (texts, not calls)."""

    hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    extractor_calls: int = 0


class PersistentTripletCache(SqliteCache[list[Triplet]]):
    """``text -> triplets`` rows of one extractor identity in a small SQLite file (table ``triplets``).

    Args:
        path: The SQLite file (its directory must exist; nothing is created otherwise).
        identity: :func:`extractor_identity` of the extractor; rows of other identities are dropped on open.
        max_rows: Rows kept; the oldest are deleted past it.

    Every failure (read-only directory, a locked or corrupt file) turns the cache off
    for the rest of the process instead of failing the verification (see
    :class:`~opinio_agents.stores.kv_cache.SqliteCache`).
    """

    def __init__(self, path: str | Path, identity: str, *, max_rows: int = TRIPLET_CACHE_MAX_ROWS) -> None:
        super().__init__(path, identity, table="triplets", encode=_dump, decode=_load, max_rows=max_rows)


class CachedTripletExtractor(TripletExtractor):
    """A :class:`~opinio_agents.triplets.base.TripletExtractor` that extracts each distinct text once.

    Args:
        extractor: The extractor whose triplets are cached (its model loads only on a miss);
            the embedded default when ``None``.
        cache_dir: Directory holding :data:`TRIPLET_CACHE_FILE` (a store directory); None keeps
            the cache in memory only.
        memory_items: Size of the in-process LRU.
        max_rows: Rows of the persistent cache.

    Thread-safe: one wrapper may serve the threads of a server.

    Example:
        >>> cached = CachedTripletExtractor(cache_dir=".opinio")              # doctest: +SKIP
        >>> cached.extract(["The wifi was slow."])                           # doctest: +SKIP
        [[Triplet(aspect='wifi', opinion='slow', sentiment=-1)]]
    """

    def __init__(
        self,
        extractor: TripletExtractor | None = None,
        *,
        cache_dir: str | Path | None = None,
        memory_items: int = TRIPLET_CACHE_MEMORY_ITEMS,
        max_rows: int = TRIPLET_CACHE_MAX_ROWS,
    ) -> None:
        if extractor is None:
            from opinio_agents.triplets.factory import get_triplet_extractor

            extractor = get_triplet_extractor("embedded")
        self.inner = extractor
        self.memory_items = max(1, int(memory_items))
        self.max_rows = max_rows
        self.stats = TripletCacheStats()
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._persistent: PersistentTripletCache | None = None
        self._identity: str | None = None
        self._tiers = TieredCache[list[Triplet]](self.memory_items, lambda: self.persistent)

    @property
    def identity(self) -> str:
        """:func:`extractor_identity` of the wrapped extractor (computed on first use)."""
        if self._identity is None:
            self._identity = extractor_identity(self.inner)
        return self._identity

    @property
    def persistent(self) -> PersistentTripletCache | None:
        """The on-disk cache (None without ``cache_dir``)."""
        if self._persistent is None and self._cache_dir is not None:
            self._persistent = PersistentTripletCache(
                self._cache_dir / TRIPLET_CACHE_FILE, self.identity, max_rows=self.max_rows
            )
        return self._persistent

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        """Triplets of each sentence; only texts never seen before reach the wrapped extractor, in one call."""
        texts = [str(s) for s in sentences]
        seen = self._tiers.lookup(texts)
        found, missing = seen.found, seen.missing
        self.stats.hits += seen.hits
        self.stats.disk_hits += seen.disk_hits
        if missing:
            wanted = set(missing)
            self.stats.misses += sum(1 for t in texts if t in wanted)
            self.stats.extractor_calls += 1
            fresh = {t: list(x) for t, x in zip(missing, self.inner.extract(missing), strict=True)}
            found.update(fresh)
            self._tiers.store(fresh)
        return [list(found[t]) for t in texts]

    def close(self) -> None:
        """Close the persistent cache's connection."""
        if self._persistent is not None:
            self._persistent.close()

    def __getattr__(self, attr: str) -> Any:
        # batch_size, weights_dir ... of the wrapped extractor (only called for missing attributes).
        if attr in ("inner", "_tiers", "_persistent", "_cache_dir", "_identity"):
            raise AttributeError(attr)
        return getattr(self.inner, attr)
