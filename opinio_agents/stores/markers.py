"""Completion markers: which entities' last write finished, kept in the catalog's ``meta`` table.

An entity counts as indexed only once its marker (``complete:<entity key>``, set to the
entity's generation) is written, last of all. A store written before markers existed has
no ``completion_markers`` row; there every entity counts as complete, and the first write
that keeps markers marks all entities already present (:meth:`CompletionMarkers.adopt`).

Example:
    >>> from opinio_agents.stores.catalog import Catalog
    >>> markers = CompletionMarkers(lambda: Catalog("/tmp/opinio-doc-markers/catalog.sqlite"))
    >>> markers.kept()
    False
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from opinio_agents.stores.catalog import Catalog

__all__ = ["CompletionMarkers"]

_KEPT = "completion_markers"  # meta row set once the store keeps completion markers
_PREFIX = "complete:"


class CompletionMarkers:
    """The completion markers of one store.

    Args:
        catalog: Returns the store's catalog (opened on first use).
    """

    def __init__(self, catalog: Callable[[], Catalog]) -> None:
        self._catalog = catalog

    def kept(self) -> bool:
        """Whether the store keeps completion markers (written since markers exist)."""
        return self._catalog().get_meta(_KEPT) is not None

    def is_complete(self, entity_key: str, generation: int) -> bool:
        """Whether the entity's marker is ``generation`` (always true in a store without markers)."""
        catalog = self._catalog()
        if catalog.get_meta(_KEPT) is None:
            return True
        return catalog.get_meta(_PREFIX + entity_key) == str(generation)

    def adopt(self, conn: sqlite3.Connection) -> None:
        """Within a write transaction: start keeping markers, marking every entity already stored complete."""
        catalog = self._catalog()
        if catalog.get_meta(_KEPT) is not None:
            return
        for entity_key in catalog.entity_keys():
            self._put(conn, entity_key, catalog.generation(entity_key))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", (_KEPT,))

    def mark(self, entity_key: str, generation: int) -> None:
        """Write the entity's marker (one transaction)."""
        with self._catalog().transaction() as conn:
            self._put(conn, entity_key, generation)

    @staticmethod
    def _put(conn: sqlite3.Connection, entity_key: str, generation: int | None) -> None:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_PREFIX + entity_key, str(generation)))
