"""What "identical to a clean build" means for a store, and a function that compares two stores.

A :class:`StoreSnapshot` holds everything a store's readers can observe, minus
what legitimately differs between two builds of the same data:

* **catalog**: every entity row (id, name, expert review, review count, whether its
  completion marker is current), every review row (id, position, content hash,
  embedded flag, the stored review) and every sentence row (id, review, index, text,
  offsets, metadata, BM25 tokens, sentiment), plus the store-wide model records.
  Not compared: ``updated_at`` and the generation counter (a resumed run bumps it
  more often; it only invalidates caches).
* **Chroma**: for each entity, the set of vector ids, each id's vector and metadata.
* **files**: every file under ``bm25/`` and ``hiro/`` by relative path (``.npz``
  compared array by array, ``.json`` by value without timing fields, other files by
  text), and no temporary or old file (``*.tmp*``, ``*.old-*``) anywhere.

Vectors and sentiments are compared with a tolerance (``atol``): a resumed run
encodes the remaining sentences in other batches, and a neural encoder's output
then moves in the last float bits.

Example:
    >>> from opinio_agents.stores.snapshot import compare_stores
    >>> compare_stores("/tmp/opinio-doc-clean", "/tmp/opinio-doc-resumed")   # doctest: +SKIP
    []
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from opinio_agents.errors import StoreError

__all__ = ["StoreSnapshot", "snapshot_store", "compare_stores", "diff_snapshots"]

#: Keys of JSON files that record how long something took (they differ between any two runs).
VOLATILE_JSON_KEYS = frozenset({"info", "seconds", "load_seconds", "fit_seconds", "created_at", "updated_at"})
_LEFTOVER_MARKS = (".tmp", ".old-")


@dataclass
class StoreSnapshot:
    """Everything observable in a store (see the module docstring for what is left out)."""

    meta: dict[str, str] = field(default_factory=dict)
    entities: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    reviews: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    sentences: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    sentiments: dict[str, np.ndarray] = field(default_factory=dict)
    vectors: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    vector_meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)
    leftovers: list[str] = field(default_factory=list)


def _json_value(text: str) -> Any:
    value = json.loads(text)
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in VOLATILE_JSON_KEYS}
    return value


def _file_value(path: Path) -> Any:
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            return {name: np.asarray(data[name]) for name in data.files}
    if path.suffix == ".json":
        return _json_value(path.read_text("utf-8"))
    return path.read_text("utf-8", errors="replace")


def snapshot_store(store_dir: str | Path) -> StoreSnapshot:
    """Read everything observable from a store directory (opens it read-only in effect; writes nothing).

    Raises:
        StoreError: When ``store_dir`` holds no catalog.
    """
    import sqlite3

    from opinio_agents.stores.chroma import collection_name, make_chroma_client

    root = Path(store_dir)
    catalog = root / "catalog.sqlite"
    if not catalog.is_file():
        raise StoreError(f"{str(root)!r} has no catalog.sqlite; it is not a store")
    snap = StoreSnapshot()
    conn = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        snap.meta = {
            k: v
            for k, v in conn.execute("SELECT key, value FROM meta ORDER BY key")
            if not k.startswith("complete:")
        }
        rows_meta = list(conn.execute("SELECT key, value FROM meta"))
        markers = {k[len("complete:") :]: v for k, v in rows_meta if k.startswith("complete:")}
        keeps_markers = "completion_markers" in snap.meta
        for key, entity_id, name, expert, n_reviews, generation in conn.execute(
            "SELECT entity_key, entity_id, entity_name, expert_review, n_reviews, generation "
            "FROM entities ORDER BY rowid"
        ):
            complete = (not keeps_markers) or markers.get(key) == str(generation)
            snap.entities[key] = (entity_id, name, expert, n_reviews, complete)
            snap.reviews[key] = list(
                conn.execute(
                    "SELECT review_id, position, content_hash, embedded, review FROM reviews "
                    "WHERE entity_key = ? ORDER BY position, review_id",
                    (key,),
                )
            )
            rows = list(
                conn.execute(
                    "SELECT sentence_id, review_id, idx, text, start, end, metadata, tokens, sentiment "
                    "FROM sentences WHERE entity_key = ? ORDER BY sentence_id",
                    (key,),
                )
            )
            snap.sentences[key] = [row[:-1] for row in rows]
            snap.sentiments[key] = np.asarray([row[-1] for row in rows], dtype=np.float64)
    finally:
        conn.close()

    if (root / "chroma").is_dir():
        client = make_chroma_client(root / "chroma")
        existing = {c.name if hasattr(c, "name") else str(c) for c in client.list_collections()}
        for key in snap.entities:
            name = collection_name(key)
            if name not in existing:
                snap.vectors[key], snap.vector_meta[key] = {}, {}
                continue
            got = client.get_collection(name).get(include=["embeddings", "metadatas"])
            embeddings = got["embeddings"] if got["embeddings"] is not None else []
            snap.vectors[key] = {sid: np.asarray(v, dtype=np.float32) for sid, v in zip(got["ids"], embeddings)}
            snap.vector_meta[key] = dict(zip(got["ids"], got["metadatas"] or []))

    for sub in ("bm25", "hiro"):
        base = root / sub
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = str(path.relative_to(root))
            parts = path.relative_to(base).parts
            if any(mark in part for part in parts for mark in _LEFTOVER_MARKS):
                if any(mark in path.name for mark in _LEFTOVER_MARKS):
                    snap.leftovers.append(rel)
                continue
            if path.is_file():
                snap.files[rel] = _file_value(path)
    return snap


def _same(a: Any, b: Any, atol: float) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype.kind == "f":
            return bool(np.allclose(a, b, atol=atol, rtol=0.0))
        return bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], atol) for k in a)
    return bool(a == b)


def diff_snapshots(expected: StoreSnapshot, actual: StoreSnapshot, *, atol: float = 1e-5) -> list[str]:
    """Differences between two snapshots, one short line each (empty: identical).

    Example:
        >>> diff_snapshots(StoreSnapshot(), StoreSnapshot())
        []
    """
    out: list[str] = []
    if actual.leftovers:
        out.append(f"leftover temporary files: {', '.join(actual.leftovers[:5])}")
    if expected.meta != actual.meta:
        every = expected.meta.keys() | actual.meta.keys()
        keys = sorted(k for k in every if expected.meta.get(k) != actual.meta.get(k))
        out.append(f"store meta differs: {', '.join(keys)}")
    if list(expected.entities) != list(actual.entities):
        out.append(f"entities differ: {list(expected.entities)} vs {list(actual.entities)}")
    for key in expected.entities:
        if key not in actual.entities:
            continue
        if expected.entities[key] != actual.entities[key]:
            e, a = expected.entities[key], actual.entities[key]
            what = "completion marker" if e[:4] == a[:4] else "entity row"
            out.append(f"entity {key!r}: {what} differs")
        if expected.reviews[key] != actual.reviews[key]:
            counts = f"{len(expected.reviews[key])} vs {len(actual.reviews[key])}"
            out.append(f"entity {key!r}: review rows differ ({counts})")
        if expected.sentences[key] != actual.sentences[key]:
            out.append(
                f"entity {key!r}: sentence rows differ ({len(expected.sentences[key])} vs {len(actual.sentences[key])})"
            )
        elif not _same(expected.sentiments[key], actual.sentiments[key], atol):
            out.append(f"entity {key!r}: sentiments differ")
        ev, av = expected.vectors.get(key, {}), actual.vectors.get(key, {})
        if ev.keys() != av.keys():
            extra_ids = len(av.keys() - ev.keys())
            out.append(f"entity {key!r}: Chroma ids differ ({len(ev)} vs {len(av)}; {extra_ids} extra)")
        elif not all(_same(ev[sid], av[sid], atol) for sid in ev):
            out.append(f"entity {key!r}: Chroma vectors differ")
        elif expected.vector_meta.get(key) != actual.vector_meta.get(key):
            out.append(f"entity {key!r}: Chroma metadata differs")
    if expected.files.keys() != actual.files.keys():
        missing = sorted(expected.files.keys() - actual.files.keys())
        extra = sorted(actual.files.keys() - expected.files.keys())
        out.append(f"files differ: missing {missing[:4]}, extra {extra[:4]}")
    for rel in sorted(expected.files.keys() & actual.files.keys()):
        if not _same(expected.files[rel], actual.files[rel], atol):
            out.append(f"file {rel} differs")
    return out


def compare_stores(expected: str | Path, actual: str | Path, *, atol: float = 1e-5) -> list[str]:
    """Differences between two store directories (empty when ``actual`` is identical to ``expected``)."""
    return diff_snapshots(snapshot_store(expected), snapshot_store(actual), atol=atol)
