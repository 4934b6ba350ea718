"""A small content-addressed cache: an in-process LRU plus a bounded SQLite file in a store directory.

Both the query-vector cache (:mod:`opinio_agents.retrieval.query_cache`) and the triplet
cache (:mod:`opinio_agents.triplets.cache`) keep ``text -> value`` rows of one *identity*
(a digest of the encoder or extractor that made the values) in a file of the store:

* rows are addressed by a digest of the identity and the exact text, so a changed text
  is a new key and nothing ever needs invalidating;
* opening the file with another identity drops the other identity's rows;
* the file holds at most ``max_rows`` rows, the oldest are deleted first;
* it is written only into an existing directory (a cache never creates a store), and any
  failure (read-only directory, a locked or corrupt file, a row that does not decode)
  turns the file off for the rest of the process instead of failing the caller: it is a
  cache, never a source of truth.

Example:
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = tmp.name
    >>> cache = SqliteCache(
    ...     f"{folder}/c.sqlite", "id-1", table="words", encode=str.encode, decode=bytes.decode, max_rows=100
    ... )
    >>> cache.put_many({"pool": "great"}); cache.get_many(["pool", "bed"])
    {'pool': 'great'}
    >>> memory = LruMemory[str](2)
    >>> memory.put_many({"a": "1", "b": "2", "c": "3"}); sorted(memory.get_many(["a", "b", "c"]))
    ['b', 'c']
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["SqliteCache", "LruMemory", "TieredCache", "Lookup"]

V = TypeVar("V")
_SQL_CHUNK = 500  # keys per SELECT (SQLite's historical limit is 999 host parameters)
_COLUMNS = ["key", "identity", "value", "added"]


class LruMemory(Generic[V]):
    """``text -> value`` in memory, the least recently used dropped past ``size`` (thread-safe).

    Args:
        size: Values kept.
    """

    def __init__(self, size: int) -> None:
        self.size = max(1, int(size))
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, texts: Sequence[str]) -> dict[str, V]:
        """The values held among ``texts`` (each one found becomes the most recently used)."""
        found: dict[str, V] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                value = self._items.get(text)
                if value is not None:
                    self._items.move_to_end(text)
                    found[text] = value
        return found

    def put_many(self, items: Mapping[str, V]) -> None:
        """Keep ``items`` as the most recently used values."""
        with self._lock:
            for text, value in items.items():
                self._items[text] = value
                self._items.move_to_end(text)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def values(self) -> Iterator[V]:
        """The values held, least recently used first (a snapshot)."""
        with self._lock:
            return iter(list(self._items.values()))

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class SqliteCache(Generic[V]):
    """``text -> value`` rows of one identity in a table of a small SQLite file.

    Args:
        path: The SQLite file (its directory must exist; nothing is created otherwise).
        identity: What made the values; rows of other identities are dropped on open.
        table: The table holding the rows (a table of another shape is dropped and made anew).
        encode: A value as bytes.
        decode: Bytes back as a value, or None for a row to ignore.
        max_rows: Rows kept; the oldest are deleted past it.
    """

    def __init__(
        self,
        path: str | Path,
        identity: str,
        *,
        table: str,
        encode: Callable[[V], bytes],
        decode: Callable[[bytes], V | None],
        max_rows: int,
    ) -> None:
        if not table.isidentifier():
            raise ValueError(f"table {table!r} is not an SQL identifier")
        self.path = Path(path)
        self.identity = identity
        self.table = table
        self.max_rows = max(1, int(max_rows))
        self._encode = encode
        self._decode = decode
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._disabled = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._disabled:
            return None
        if self._conn is None:
            if not self.path.parent.is_dir():
                return None  # no store yet: never create one for a cache
            table = self.table
            try:
                conn = sqlite3.connect(str(self.path), timeout=2.0, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
                if columns and columns != _COLUMNS:  # a file of an older layout: a cache starts again
                    conn.execute(f"DROP TABLE {table}")
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, identity TEXT NOT NULL, "
                    "value BLOB NOT NULL, added REAL NOT NULL)"
                )
                conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_added ON {table} (added)")
                with conn:
                    conn.execute(f"DELETE FROM {table} WHERE identity != ?", (self.identity,))
            except (sqlite3.Error, OSError):
                self._disabled = True
                return None
            self._conn = conn
        return self._conn

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\x00{text}".encode()).hexdigest()

    def get_many(self, texts: Sequence[str]) -> dict[str, V]:
        """The cached values among ``texts`` (missing ones are left out)."""
        if not texts or not self.path.exists():
            return {}
        with self._lock:
            conn = self._connect()
            if conn is None:
                return {}
            keys = {self._key(t): t for t in texts}
            found: dict[str, V] = {}
            try:
                items = list(keys)
                for start in range(0, len(items), _SQL_CHUNK):
                    chunk = items[start : start + _SQL_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = conn.execute(
                        f"SELECT key, value FROM {self.table} WHERE identity = ? AND key IN ({marks})",
                        (self.identity, *chunk),
                    ).fetchall()
                    for key, blob in rows:
                        value = self._decode(bytes(blob))
                        if value is not None:
                            found[keys[key]] = value
            except (sqlite3.Error, ValueError, TypeError):
                self._disabled = True
                return {}
            return found

    def first(self) -> V | None:
        """Any one cached value (None when there is none): what a caller reads a shape from."""
        if not self.path.exists():
            return None
        with self._lock:
            conn = self._connect()
            if conn is None:
                return None
            try:
                row = conn.execute(
                    f"SELECT value FROM {self.table} WHERE identity = ? LIMIT 1", (self.identity,)
                ).fetchone()
                return self._decode(bytes(row[0])) if row else None
            except (sqlite3.Error, ValueError, TypeError):
                self._disabled = True
                return None

    def put_many(self, items: Mapping[str, V]) -> None:
        """Store ``text -> value`` rows, then trim the file to ``max_rows``."""
        if not items:
            return
        with self._lock:
            conn = self._connect()
            if conn is None:
                return
            now = time.time()
            rows = [(self._key(text), self.identity, self._encode(value), now) for text, value in items.items()]
            try:
                with conn:
                    conn.executemany(f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?, ?, ?)", rows)
                    (count,) = conn.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()
                    if count > self.max_rows:
                        conn.execute(
                            f"DELETE FROM {self.table} WHERE key IN "
                            f"(SELECT key FROM {self.table} ORDER BY added LIMIT ?)",
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


@dataclass
class Lookup(Generic[V]):
    """What :meth:`TieredCache.lookup` found: values by text, and counts of texts (repeats counted)."""

    found: dict[str, V]
    hits: int
    disk_hits: int
    missing: list[str]  # distinct texts found nowhere, in first-seen order


class TieredCache(Generic[V]):
    """An :class:`LruMemory` in front of an optional :class:`SqliteCache`.

    Args:
        memory_items: Size of the in-process LRU.
        disk: Returns the persistent cache, or None for memory only (called when first needed).
    """

    def __init__(self, memory_items: int, disk: Callable[[], SqliteCache[V] | None]) -> None:
        self.memory = LruMemory[V](memory_items)
        self._disk = disk

    def lookup(self, texts: Sequence[str]) -> Lookup[V]:
        """Values of ``texts`` from memory, then from disk for the rest (disk hits are kept in memory)."""
        found = self.memory.get_many(texts)
        hits = sum(1 for t in texts if t in found)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        disk_hits = 0
        disk = self._disk() if missing else None
        if disk is not None:
            from_disk = disk.get_many(missing)
            disk_hits = sum(1 for t in texts if t in from_disk)
            found.update(from_disk)
            self.memory.put_many(from_disk)
            missing = [t for t in missing if t not in from_disk]
        return Lookup(found, hits, disk_hits, missing)

    def store(self, fresh: Mapping[str, V]) -> None:
        """Keep freshly computed values in memory and on disk."""
        self.memory.put_many(fresh)
        disk = self._disk() if fresh else None
        if disk is not None:
            disk.put_many(fresh)
