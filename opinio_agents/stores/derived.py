"""Files derived from the catalog and Chroma: persisted BM25 indexes and matrix copies of the vectors.

Both are caches of a store: each is stamped with what it was derived from and ignored
(never trusted) once the entity changes, and both are written to a temporary name and
renamed into place, so that a kill leaves either the old file or the new one.

Layout under the store directory::

    bm25/<collection>/         one persisted BM25 index per entity, stamped with the entity's content digest
    vectors/<collection>.npz   the entity's vectors as one matrix, stamped with its generation and digest

Example:
    >>> from pathlib import Path
    >>> Bm25Files(Path("/tmp/opinio-doc")).directory("7").parent.name
    'bm25'
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from opinio_agents.errors import StoreError
from opinio_agents.stores.checkpoints import checkpoint
from opinio_agents.stores.chroma import collection_name
from opinio_agents.stores.lock import left_by_dead

__all__ = ["Bm25Files", "VectorCopies", "write_atomic"]

_STAMP_FILE = "opinio_stamp.txt"
T = TypeVar("T")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path``, flush it to disk, then rename it over ``path``."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class Bm25Files:
    """The persisted BM25 index of each entity under ``<store>/bm25/``.

    Args:
        store_dir: The store directory.
    """

    def __init__(self, store_dir: Path) -> None:
        self.root = store_dir / "bm25"

    def directory(self, entity_key: str) -> Path:
        """Directory of the entity's persisted BM25 data."""
        return self.root / collection_name(entity_key)

    def load(self, entity_key: str, digest: Callable[[], str], reader: Callable[[Path], T]) -> T | None:
        """``reader(directory)`` when the data is stamped with ``digest()``, else None (stale, absent, unreadable).

        ``digest`` is called only when there is a stamp to compare it with.
        """
        directory = self.directory(entity_key)
        try:
            stamp = (directory / _STAMP_FILE).read_text("utf-8").strip()
        except OSError:
            return None
        if stamp != digest():
            return None
        try:
            return reader(directory)
        except (StoreError, OSError, ValueError, KeyError):
            return None

    def save(self, entity_key: str, digest: Callable[[], str], writer: Callable[[Path], None]) -> None:
        """``writer(directory)`` fills a fresh directory, stamped with ``digest()``, that then replaces the old one."""
        target = self.directory(entity_key)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            writer(tmp)
            checkpoint("bm25-files-written")
            tmp.mkdir(parents=True, exist_ok=True)
            write_atomic(tmp / _STAMP_FILE, digest())
            checkpoint("bm25-stamped")
            old = target.with_name(f"{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
            if target.exists():
                target.rename(old)
                checkpoint("bm25-old-moved")
            tmp.rename(target)
            checkpoint("bm25-in-place")
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.sweep(entity_key)

    def sweep(self, entity_key: str) -> None:
        """Remove temporary and old BM25 directories of the entity that a killed run left behind."""
        target = self.directory(entity_key)
        if target.parent.is_dir():
            for path in target.parent.iterdir():
                if path.name.startswith((f"{target.name}.tmp-", f"{target.name}.old-")) and left_by_dead(path.name):
                    shutil.rmtree(path, ignore_errors=True)


class VectorCopies:
    """A copy of each entity's vectors as one matrix under ``<store>/vectors/``, read instead of Chroma.

    Args:
        store_dir: The store directory.
    """

    def __init__(self, store_dir: Path) -> None:
        self.root = store_dir / "vectors"

    def file(self, entity_key: str) -> Path:
        """The entity's ``.npz`` file."""
        return self.root / f"{collection_name(entity_key)}.npz"

    def load(self, entity_key: str, stamp: str, rows: int) -> np.ndarray | None:
        """The matrix when the copy carries ``stamp`` and ``rows`` rows, else None (absent, stale, unreadable)."""
        file = self.file(entity_key)
        if not file.is_file():
            return None
        try:
            with np.load(file, allow_pickle=False) as data:
                if str(data["stamp"]) != stamp or data["vectors"].shape[0] != rows:
                    return None
                return np.ascontiguousarray(data["vectors"], dtype=np.float32)
        except (OSError, KeyError, ValueError):
            return None

    def save(self, entity_key: str, stamp: str, matrix: np.ndarray) -> None:
        """Write the copy (atomically); a read-only store keeps Chroma as the only copy."""
        file = self.file(entity_key)
        tmp = file.with_name(f".{file.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp.npz")
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as handle:
                np.savez(handle, vectors=matrix, stamp=np.array(stamp))
            os.replace(tmp, file)
        except OSError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
