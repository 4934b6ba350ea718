"""Past one entity, past one machine: bounded-memory corpus indexing and distributed indexing on Ray.

* :func:`~opinio_agents.scale.corpus.index_corpus` indexes a whole corpus one entity at
  a time with memory that does not grow with the number of entities (each entity's
  caches are dropped once it is stored), resumable after a kill.
* :func:`~opinio_agents.scale.distributed.index_with_ray` partitions entities across
  Ray workers (Ray Data ``map_batches`` with an actor pool holding the encoder), writes
  the vectors to a Chroma server and merges the catalog and BM25 on the driver, so the
  store is the one a single-machine build makes (extra ``scale``).

The package is a lazy namespace: nothing (Ray least of all) is imported until used.

Example:
    >>> from opinio_agents.scale import index_corpus          # doctest: +SKIP
    >>> from opinio_agents.scale import index_with_ray        # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["index_corpus", "CorpusProgress", "index_with_ray", "DistributedStats", "EntityWorker"]

_WHERE = {
    "index_corpus": "opinio_agents.scale.corpus",
    "CorpusProgress": "opinio_agents.scale.corpus",
    "index_with_ray": "opinio_agents.scale.distributed",
    "DistributedStats": "opinio_agents.scale.distributed",
    "EntityWorker": "opinio_agents.scale.distributed",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'opinio_agents.scale' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
