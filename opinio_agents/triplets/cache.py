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
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opinio_agents.triplets.base import Triplet, TripletExtractor

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
_SQL_CHUNK = 500


def _files_digest(directory: Path) -> str:
    """A digest of the regular files directly in ``directory`` (names, sizes, contents)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        digest.update(f"{path.name}\x00{path.stat().st_size}\x00".encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


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
    parts.extend(_files_digest(folder) for folder in folders)
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:20]


def _dump(triplets: Sequence[Triplet]) -> str:
    return json.dumps([[t.aspect, t.opinion, t.sentiment] for t in triplets], ensure_ascii=False)


def _load(blob: str) -> list[Triplet]:
    return [Triplet(aspect=a, opinion=o, sentiment=s) for a, o, s in json.loads(blob)]


@dataclass
class TripletCacheStats:
    """Counters of one :class:`CachedTripletExtractor` (texts, not calls)."""

    hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    extractor_calls: int = 0


class PersistentTripletCache:
    """``text -> triplets`` rows of one extractor identity in a small SQLite file.

    Args:
        path: The SQLite file (its directory must exist; nothing is created otherwise).
        identity: :func:`extractor_identity` of the extractor; rows of other identities are dropped on open.
        max_rows: Rows kept; the oldest are deleted past it.

    Every failure (read-only directory, a locked or corrupt file) turns the cache off
    for the rest of the process instead of failing the verification.
    """

    def __init__(self, path: str | Path, identity: str, *, max_rows: int = TRIPLET_CACHE_MAX_ROWS) -> None:
        self.path = Path(path)
        self.identity = identity
        self.max_rows = max(1, int(max_rows))
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._disabled = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._disabled:
            return None
        if self._conn is None:
            if not self.path.parent.is_dir():
                return None  # no store yet: never create one for a cache
            try:
                conn = sqlite3.connect(str(self.path), timeout=2.0, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS triplets (key TEXT PRIMARY KEY, identity TEXT NOT NULL, "
                    "triplets TEXT NOT NULL, added REAL NOT NULL)"
                )
                conn.execute("CREATE INDEX IF NOT EXISTS triplets_added ON triplets (added)")
                with conn:
                    conn.execute("DELETE FROM triplets WHERE identity != ?", (self.identity,))
            except (sqlite3.Error, OSError):
                self._disabled = True
                return None
            self._conn = conn
        return self._conn

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\x00{text}".encode()).hexdigest()

    def get_many(self, texts: Sequence[str]) -> dict[str, list[Triplet]]:
        """The cached triplets among ``texts`` (missing ones are left out)."""
        if not texts or not self.path.exists():
            return {}
        with self._lock:
            conn = self._connect()
            if conn is None:
                return {}
            keys = {self._key(t): t for t in texts}
            found: dict[str, list[Triplet]] = {}
            try:
                items = list(keys)
                for start in range(0, len(items), _SQL_CHUNK):
                    chunk = items[start : start + _SQL_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = conn.execute(
                        f"SELECT key, triplets FROM triplets WHERE identity = ? AND key IN ({marks})",
                        (self.identity, *chunk),
                    ).fetchall()
                    for key, blob in rows:
                        found[keys[key]] = _load(blob)
            except (sqlite3.Error, ValueError, TypeError):
                self._disabled = True
                return {}
            return found

    def put_many(self, items: dict[str, list[Triplet]]) -> None:
        """Store ``text -> triplets`` rows, then trim the file to ``max_rows``."""
        if not items:
            return
        with self._lock:
            conn = self._connect()
            if conn is None:
                return
            now = time.time()
            rows = [(self._key(text), self.identity, _dump(found), now) for text, found in items.items()]
            try:
                with conn:
                    conn.executemany("INSERT OR REPLACE INTO triplets VALUES (?, ?, ?, ?)", rows)
                    (count,) = conn.execute("SELECT COUNT(*) FROM triplets").fetchone()
                    if count > self.max_rows:
                        conn.execute(
                            "DELETE FROM triplets WHERE key IN (SELECT key FROM triplets ORDER BY added LIMIT ?)",
                            (count - self.max_rows,),
                        )
            except sqlite3.Error:
                self._disabled = True

    def close(self) -> None:
        """Close the connection (it reopens on next use)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


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
        self.stats = TripletCacheStats()
        self._memory: OrderedDict[str, list[Triplet]] = OrderedDict()
        self._lock = threading.Lock()
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._persistent: PersistentTripletCache | None = None
        self._identity: str | None = None

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
            self._persistent = PersistentTripletCache(self._cache_dir / TRIPLET_CACHE_FILE, self.identity)
        return self._persistent

    def _remember(self, items: dict[str, list[Triplet]]) -> None:
        with self._lock:
            for text, found in items.items():
                self._memory[text] = found
                self._memory.move_to_end(text)
            while len(self._memory) > self.memory_items:
                self._memory.popitem(last=False)

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        """Triplets of each sentence; only texts never seen before reach the wrapped extractor, in one call."""
        texts = [str(s) for s in sentences]
        found: dict[str, list[Triplet]] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                cached = self._memory.get(text)
                if cached is not None:
                    self._memory.move_to_end(text)
                    found[text] = cached
        self.stats.hits += sum(1 for t in texts if t in found)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        persistent = self.persistent if missing else None
        if persistent is not None:
            from_disk = persistent.get_many(missing)
            self.stats.disk_hits += sum(1 for t in texts if t in from_disk)
            found.update(from_disk)
            self._remember(from_disk)
            missing = [t for t in missing if t not in from_disk]
        if missing:
            wanted = set(missing)
            self.stats.misses += sum(1 for t in texts if t in wanted)
            self.stats.extractor_calls += 1
            fresh = {t: list(x) for t, x in zip(missing, self.inner.extract(missing), strict=True)}
            found.update(fresh)
            self._remember(fresh)
            if persistent is not None:
                persistent.put_many(fresh)
        return [list(found[t]) for t in texts]

    def close(self) -> None:
        """Close the persistent cache's connection."""
        if self._persistent is not None:
            self._persistent.close()

    def __getattr__(self, attr: str) -> Any:
        # batch_size, weights_dir ... of the wrapped extractor (only called for missing attributes).
        if attr in ("inner", "_memory", "_lock", "_persistent", "_cache_dir", "_identity"):
            raise AttributeError(attr)
        return getattr(self.inner, attr)
