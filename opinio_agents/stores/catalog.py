"""The catalog: an SQLite file holding entities, review hashes and sentences.

It is the source of truth for what has been indexed. Sentences keep their
original text, character offsets, review metadata, App. D BM25 tokens and a
sentiment score, so BM25 indexes, support counts and evidence can be rebuilt
without re-reading the dataset or re-embedding anything. Every write is one
transaction: an interrupted run never leaves half a review behind.

Example:
    >>> catalog = Catalog("/tmp/opinio-doc/catalog.sqlite")   # doctest: +SKIP
    >>> catalog.entity_keys()                                 # doctest: +SKIP
    ['1', '2']
    >>> catalog.entity_record("1").n_reviews                   # doctest: +SKIP
    120
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opinio_agents.errors import StoreError
from opinio_agents.models import REVIEW_METADATA_FIELDS, Entity, ExpertReview, Review, Sentence

__all__ = ["Catalog", "EntityRecord", "StoredSentence", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (
    entity_key TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL,
    entity_name TEXT NOT NULL,
    expert_review TEXT,
    n_reviews INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT,
    generation INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS reviews (
    entity_key TEXT NOT NULL,
    review_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0,
    review TEXT NOT NULL,
    PRIMARY KEY (entity_key, review_id)
);
CREATE TABLE IF NOT EXISTS sentences (
    sentence_id TEXT PRIMARY KEY,
    entity_key TEXT NOT NULL,
    review_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    text TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    metadata TEXT NOT NULL,
    tokens TEXT NOT NULL,
    sentiment REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sentences_by_review ON sentences (entity_key, review_id, idx);
CREATE TABLE IF NOT EXISTS text_vectors (text_key TEXT PRIMARY KEY, vector BLOB NOT NULL);
"""
#: Host parameters per SQL statement (SQLite's historical limit is 999).
_PARAMS = 900


@dataclass(frozen=True)
class StoredSentence:
    """A sentence as stored: the :class:`Sentence` plus its BM25 tokens and sentiment."""

    sentence: Sentence
    tokens: tuple[str, ...]
    sentiment: float


@dataclass(frozen=True)
class EntityRecord:
    """What the catalog knows about an indexed entity.

    Attributes:
        key: The entity id as a string (the catalog's key).
        entity_id: The original id (``int`` or ``str``, as in the dataset).
        entity_name: Display name (may be empty).
        expert_review: The expert review, when the dataset has one.
        n_reviews: Number of user reviews.
        updated_at: ISO timestamp (UTC) of the last indexing run that touched the entity.
        generation: Incremented by every write to the entity; caches compare it to notice re-indexing.

    Example:
        >>> record = EntityRecord("7", 7, "Harbor Inn", None, 5, None, 1)
        >>> record.display_name, record.queries
        ('Harbor Inn', [])
    """

    key: str
    entity_id: str | int
    entity_name: str
    expert_review: ExpertReview | None
    n_reviews: int
    updated_at: str | None
    generation: int

    @property
    def display_name(self) -> str:
        """The entity name, or ``entity <key>`` when it has none."""
        return self.entity_name or f"entity {self.key}"

    @property
    def queries(self) -> list[str]:
        """The expert review's queries (pros then cons), empty without an expert review."""
        return [] if self.expert_review is None else self.expert_review.queries


class Catalog:
    """SQLite catalog of indexed entities, reviews and sentences (thread-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            columns = {row[1] for row in self._conn.execute("PRAGMA table_info(entities)")}
            if "generation" not in columns:  # catalogs written before generations existed
                self._conn.execute("ALTER TABLE entities ADD COLUMN generation INTEGER NOT NULL DEFAULT 0")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a valid opinio catalog ({exc}); delete the store and re-index") from exc
        version = self.get_meta("schema_version")
        if version is None:
            self.set_meta("schema_version", str(SCHEMA_VERSION))
        elif int(version) != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: catalog schema v{version} but this opinio_agents needs v{SCHEMA_VERSION}; "
                "re-index into a new --store directory"
            )

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write transaction."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # -- meta ---------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A store-wide setting (e.g. the embedding model name)."""
        with self._lock:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a store-wide setting."""
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- entities -----------------------------------------------------------
    def upsert_entity(
        self,
        conn: sqlite3.Connection,
        entity_key: str,
        entity_id: str | int,
        entity_name: str,
        expert_review: ExpertReview | None,
        n_reviews: int,
    ) -> None:
        """Record (or update) an entity inside an open transaction (its generation is kept)."""
        conn.execute(
            "INSERT INTO entities (entity_key, entity_id, entity_name, expert_review, n_reviews, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (entity_key) DO UPDATE SET entity_id = excluded.entity_id, "
            "entity_name = excluded.entity_name, expert_review = excluded.expert_review, "
            "n_reviews = excluded.n_reviews, updated_at = excluded.updated_at",
            (
                entity_key,
                json.dumps(entity_id),
                entity_name,
                expert_review.model_dump_json() if expert_review else None,
                n_reviews,
                dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            ),
        )

    def bump_generation(self, conn: sqlite3.Connection, entity_key: str) -> None:
        """Mark the entity as changed inside an open transaction (invalidates every cache of it)."""
        conn.execute("UPDATE entities SET generation = generation + 1 WHERE entity_key = ?", (entity_key,))

    def generation(self, entity_key: str) -> int | None:
        """The entity's generation (None if it is not in the catalog)."""
        with self._lock:
            row = self._conn.execute("SELECT generation FROM entities WHERE entity_key = ?", (entity_key,)).fetchone()
        return None if row is None else int(row[0])

    def entity_keys(self) -> list[str]:
        """Ids (as strings) of every indexed entity, in insertion order."""
        with self._lock:
            return [row[0] for row in self._conn.execute("SELECT entity_key FROM entities ORDER BY rowid")]

    def entity_record(self, entity_key: str) -> EntityRecord | None:
        """Name, original id, expert review, review count and generation of an entity (None if absent)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT entity_id, entity_name, expert_review, n_reviews, updated_at, generation "
                "FROM entities WHERE entity_key = ?",
                (entity_key,),
            ).fetchone()
        if row is None:
            return None
        return EntityRecord(
            key=entity_key,
            entity_id=json.loads(row[0]),
            entity_name=row[1],
            expert_review=ExpertReview.model_validate_json(row[2]) if row[2] else None,
            n_reviews=int(row[3]),
            updated_at=row[4],
            generation=int(row[5]),
        )

    # -- reviews ------------------------------------------------------------
    def review_hashes(self, entity_key: str) -> dict[str, tuple[str, bool]]:
        """``{review_id: (content_hash, embedded)}`` for an entity."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT review_id, content_hash, embedded FROM reviews WHERE entity_key = ?", (entity_key,)
            ).fetchall()
        return {row[0]: (row[1], bool(row[2])) for row in rows}

    def review_states(self, entity_key: str) -> dict[str, tuple[str, bool, int]]:
        """``{review_id: (content_hash, embedded, position)}`` for an entity."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT review_id, content_hash, embedded, position FROM reviews WHERE entity_key = ?", (entity_key,)
            ).fetchall()
        return {row[0]: (row[1], bool(row[2]), int(row[3])) for row in rows}

    def delete_reviews(self, conn: sqlite3.Connection, entity_key: str, review_ids: Iterable[str]) -> list[str]:
        """Delete reviews and their sentences; return the deleted sentence ids."""
        deleted: list[str] = []
        for review_id in review_ids:
            deleted.extend(
                row[0]
                for row in conn.execute(
                    "SELECT sentence_id FROM sentences WHERE entity_key = ? AND review_id = ?",
                    (entity_key, review_id),
                )
            )
            conn.execute("DELETE FROM sentences WHERE entity_key = ? AND review_id = ?", (entity_key, review_id))
            conn.execute("DELETE FROM reviews WHERE entity_key = ? AND review_id = ?", (entity_key, review_id))
        return deleted

    def insert_review(
        self,
        conn: sqlite3.Connection,
        entity_key: str,
        review: Review,
        position: int,
        content_hash: str,
        sentences: Sequence[Sentence],
        tokens: Sequence[Sequence[str]],
        sentiments: Sequence[float],
    ) -> None:
        """Insert a review (not yet embedded) with its sentences."""
        review_id = str(review.review_id)
        conn.execute(
            "INSERT OR REPLACE INTO reviews VALUES (?, ?, ?, ?, 0, ?)",
            (entity_key, review_id, position, content_hash, review.model_dump_json(exclude_none=True)),
        )
        conn.executemany(
            "INSERT OR REPLACE INTO sentences VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    s.sentence_id,
                    entity_key,
                    review_id,
                    s.index,
                    s.text,
                    s.start,
                    s.end,
                    json.dumps(_review_metadata(s)),
                    " ".join(tok),
                    float(senti),
                )
                for s, tok, senti in zip(sentences, tokens, sentiments)
            ],
        )

    def set_positions(self, conn: sqlite3.Connection, entity_key: str, positions: dict[str, int]) -> None:
        """Update the order of reviews within an entity."""
        conn.executemany(
            "UPDATE reviews SET position = ? WHERE entity_key = ? AND review_id = ?",
            [(pos, entity_key, rid) for rid, pos in positions.items()],
        )

    def mark_embedded(self, conn: sqlite3.Connection, entity_key: str, review_ids: Iterable[str]) -> None:
        """Mark reviews whose sentences are all in the vector store."""
        conn.executemany(
            "UPDATE reviews SET embedded = 1 WHERE entity_key = ? AND review_id = ?",
            [(entity_key, rid) for rid in review_ids],
        )

    def entity(self, entity_key: str) -> Entity:
        """Rebuild the stored entity (reviews in their dataset order)."""
        info = self.entity_record(entity_key)
        if info is None:
            raise StoreError(f"entity {entity_key!r} is not in the catalog {str(self.path)!r}")
        with self._lock:
            rows = self._conn.execute(
                "SELECT review FROM reviews WHERE entity_key = ? ORDER BY position", (entity_key,)
            ).fetchall()
        return Entity(
            entity_id=info.entity_id,
            entity_name=info.entity_name,
            expert_review=info.expert_review,
            user_reviews=[Review.model_validate_json(row[0]) for row in rows],
        )

    def set_sentiments(self, conn: sqlite3.Connection, scores: Sequence[tuple[str, float]]) -> None:
        """Overwrite the sentiment of sentences (``(sentence_id, score)`` pairs)."""
        conn.executemany("UPDATE sentences SET sentiment = ? WHERE sentence_id = ?", [(s, i) for i, s in scores])

    # -- sentences ----------------------------------------------------------
    def sentences(self, entity_key: str, review_ids: Iterable[str] | None = None) -> list[StoredSentence]:
        """The entity's sentences in review order (optionally only some reviews)."""
        sql = (
            "SELECT s.sentence_id, s.review_id, s.idx, s.text, s.start, s.end, s.metadata, s.tokens, s.sentiment "
            "FROM sentences s JOIN reviews r ON r.entity_key = s.entity_key AND r.review_id = s.review_id "
            "WHERE s.entity_key = ?"
        )
        params: list[Any] = [entity_key]
        wanted = None if review_ids is None else set(review_ids)
        sql += " ORDER BY r.position, s.idx"
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        out: list[StoredSentence] = []
        for sid, rid, idx, text, start, end, meta, tokens, senti in rows:
            if wanted is not None and rid not in wanted:
                continue
            sentence = Sentence(
                sentence_id=sid,
                entity_id=entity_key,
                review_id=rid,
                index=idx,
                text=text,
                start=start,
                end=end,
                **json.loads(meta),
            )
            out.append(StoredSentence(sentence, tuple(tokens.split()) if tokens else (), float(senti)))
        return out

    # -- vectors by text (encode each distinct text once) ----------------------
    def text_vectors(self, text_keys: Sequence[str]) -> dict[str, bytes]:
        """Stored vectors (raw float32 bytes) by text key; keys without one are absent."""
        found: dict[str, bytes] = {}
        keys = list(dict.fromkeys(text_keys))
        with self._lock:
            for i in range(0, len(keys), _PARAMS):
                chunk = keys[i : i + _PARAMS]
                marks = ",".join("?" * len(chunk))
                found.update(
                    (str(key), bytes(blob))
                    for key, blob in self._conn.execute(
                        f"SELECT text_key, vector FROM text_vectors WHERE text_key IN ({marks})", chunk
                    )
                )
        return found

    def put_text_vectors(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Store vectors by text key, in one transaction (an existing key keeps its vector)."""
        if not items:
            return
        with self.transaction() as conn:
            conn.executemany("INSERT OR IGNORE INTO text_vectors (text_key, vector) VALUES (?, ?)", items)

    def count_text_vectors(self) -> int:
        """Number of distinct texts whose vector is stored."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM text_vectors").fetchone()[0])

    def count_sentences(self, entity_key: str | None = None) -> int:
        """Number of stored sentences (of one entity, or all)."""
        with self._lock:
            if entity_key is None:
                return int(self._conn.execute("SELECT COUNT(*) FROM sentences").fetchone()[0])
            return int(
                self._conn.execute("SELECT COUNT(*) FROM sentences WHERE entity_key = ?", (entity_key,)).fetchone()[0]
            )


def _review_metadata(sentence: Sentence) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name in REVIEW_METADATA_FIELDS:
        value = getattr(sentence, name)
        if value is not None:
            data[name] = value.isoformat() if isinstance(value, dt.date) else value
    return data
