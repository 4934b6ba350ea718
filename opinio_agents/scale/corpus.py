"""Index a whole corpus in one resumable run whose own memory does not grow with the number of entities.

``OpinioRAG.index`` over a file keeps what it built for every entity (the retriever
factory's nodes and BM25 index, the store's sentence cache) and fits HIRO on all
vectors at once: right for a few entities, not for OpinioBank's 500 x 10.5K sentences.
:func:`index_corpus` runs the same indexing one entity at a time under one writer lock,
drops each entity's caches once it is stored (its BM25 index is on disk), fits HIRO on a
bounded sample (``max_fit_points``) and encodes each entity's HIRO paths, again one
entity at a time. The embedded Chroma engine keeps native memory for every collection its
client has opened, so the client is closed and reopened after each entity (about 50 ms);
with a Chroma server, ``OpinioRAG(chroma_host=...)``, that memory is the server's.
Killed anywhere, the next run skips the entities already complete
and finishes the interrupted one without re-encoding the vectors it had stored.

Example:
    >>> from opinio_agents.api import OpinioRAG
    >>> from opinio_agents.io.loaders import iter_valid_entities
    >>> rag = OpinioRAG(".opinio")                                               # doctest: +SKIP
    >>> report = index_corpus(rag, iter_valid_entities("corpus.json"),           # doctest: +SKIP
    ...                       on_entity=lambda p: print(p.position, p.rss_mib))
    1 812.4
    2 815.0
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from opinio_agents.indexing import IndexStats
from opinio_agents.models import Entity

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG

__all__ = ["CorpusProgress", "CorpusReport", "index_corpus", "rss_mib", "dir_size"]


def rss_mib() -> float:
    """Resident set size of this process in MiB (Linux ``/proc``; 0.0 where unavailable).

    Example:
        >>> rss_mib() > 0 or not Path("/proc/self/status").exists()
        True
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def dir_size(path: str | Path) -> int:
    """Bytes of every file under ``path`` (0 when it does not exist).

    Example:
        >>> dir_size("/nonexistent-opinio-dir")
        0
    """
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


@dataclass(frozen=True)
class CorpusProgress:
    """One step of a corpus run: an entity stored (``phase='index'``) or its HIRO paths encoded (``'hiro'``)."""

    phase: str
    position: int
    entity_id: str
    stats: IndexStats | None
    rss_mib: float
    elapsed: float


@dataclass
class CorpusReport:
    """What a corpus run did.

    Attributes:
        entities: Entities read.
        skipped: Entities already complete and unchanged (a resumed run skips them).
        sentences_embedded: Sentences encoded by this run.
        sentences_resumed: Sentences whose stored vector a resumed run found and kept.
        sentences_total: Sentences of the entities of this run.
        hiro_fit_seconds: Wall time of the HIRO fit (0 when the store already had one).
        hiro_fit_info: The fit's statistics (points, seconds, load seconds).
        hiro_paths_seconds: Wall time encoding the entities' HIRO paths.
        seconds: Wall time of the run.
        stats: Per-entity indexing statistics.
    """

    entities: int = 0
    skipped: int = 0
    sentences_embedded: int = 0
    sentences_resumed: int = 0
    sentences_total: int = 0
    hiro_fit_seconds: float = 0.0
    hiro_fit_info: dict[str, object] = field(default_factory=dict)
    hiro_paths_seconds: float = 0.0
    seconds: float = 0.0
    stats: list[IndexStats] = field(default_factory=list)


def index_corpus(
    rag: OpinioRAG,
    entities: Iterable[Entity],
    *,
    fit_hiro: bool = True,
    show_progress: bool = False,
    on_entity: Callable[[CorpusProgress], None] | None = None,
) -> CorpusReport:
    """Index ``entities`` one at a time under one writer lock, with memory flat in their number.

    Args:
        rag: The façade whose store, indexer and retriever factory do the work.
        entities: The corpus, streamed (e.g. :func:`~opinio_agents.io.loaders.iter_valid_entities`).
        fit_hiro: Fit the HIRO hierarchy (on at most ``max_fit_points`` sampled sentences) when the
            store has none, then encode every entity's paths.
        show_progress: Show the encoder's progress bar per entity.
        on_entity: Called after each entity is stored and after its HIRO paths are encoded.

    Raises:
        opinio_agents.stores.lock.StoreLockedError: Another process writes to the store.
    """
    report = CorpusReport()
    started = time.perf_counter()
    keys: list[str] = []
    store = rag.store

    def step(phase: str, position: int, key: str, stats: IndexStats | None) -> None:
        if on_entity is not None:
            on_entity(CorpusProgress(phase, position, key, stats, rss_mib(), time.perf_counter() - started))

    with store.writer_lock():
        for position, entity in enumerate(entities, start=1):
            report.entities += 1
            (stats,) = rag.index(entity, fit_hiro=False, show_progress=show_progress)
            key = entity.key
            keys.append(key)
            if not stats.changed:
                report.skipped += 1
            report.sentences_embedded += stats.sentences_embedded
            report.sentences_resumed += stats.sentences_resumed
            report.sentences_total += stats.sentences_total
            report.stats.append(stats)
            _release(rag, key)
            step("index", position, key, stats)
        if fit_hiro and keys:
            from opinio_agents.hiro.indexer import ResidualKMeansIndexer

            n_codes = int(rag.hiro_options.get("n_codes", ResidualKMeansIndexer.n_codes))
            if not rag.hiro_fitted and store.count_sentences() >= n_codes:
                t0 = time.perf_counter()
                rag.fit_hiro()
                report.hiro_fit_seconds = time.perf_counter() - t0
                report.hiro_fit_info = dict(rag.hiro.indexer.info)
                store.close()  # the fit read every entity's vectors: drop what the store cached
            if rag.hiro_fitted:
                t0 = time.perf_counter()
                for position, key in enumerate(keys, start=1):
                    rag.hiro.paths(key)
                    _release(rag, key)
                    step("hiro", position, key, None)
                report.hiro_paths_seconds = time.perf_counter() - t0
    report.seconds = time.perf_counter() - started
    return report


def _release(rag: OpinioRAG, key: str) -> None:
    """Drop what the façade cached for one entity (its BM25 index and HIRO paths are on disk)."""
    rag.retrievers.invalidate()  # every cached retriever: they hold collections of the old client
    rag.store.close()  # the sentence/vector cache; the catalog reopens on the next use
    rag.store.release_vector_client()  # embedded Chroma's per-collection memory
