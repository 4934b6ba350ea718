"""HIRO inside a store: the fitted hierarchy, every entity's paths and the baseline popularity.

Layout under ``<store>/hiro/``::

    codebooks-<fp>.npz, indexer.json  the fitted residual k-means hierarchy (indexer.json names the codebooks)
    paths/<collection>.npz         one entity's sentence paths + content fingerprint
    results/<collection>/<kind>-<params>.json  derived results (aspects, query-free highlights), see below
    own/<collection>/<digest>/     one entity's own hierarchy (:meth:`HiroIndex.own`), laid out alike

The hierarchy is fitted once over the sentences of all indexed entities and
then reused: an entity indexed later is only *encoded*. Fitting is an explicit
step (:meth:`HiroIndex.fit`, run by :meth:`OpinioRAG.index
<opinio_agents.api.OpinioRAG.index>`); a ``HiroIndex(..., auto_fit=False)``
never fits as a side effect of a query and says how to fit instead. An entity's paths are
recomputed when its reviews change (the catalog's review hashes are the
fingerprint) or when the hierarchy is refitted.

Derived results that are expensive to compute but cheap to store -- the named aspects
of :func:`~opinio_agents.hiro.aspects.discover_aspects` and the query-free highlights --
are kept with the hierarchy (:meth:`HiroIndex.load_result` / :meth:`HiroIndex.save_result`).
Each one records the :meth:`HiroIndex.result_state` it was computed under: the
hierarchy's fingerprint, the generation of the entity and of every entity in the
baseline, and a digest of the code that computes it (:func:`result_code_digest`).
Re-indexing any entity, refitting the hierarchy or upgrading the package therefore
makes it stale, and it is computed again on the next call.

Example:
    >>> from opinio_agents.stores import SentenceStore
    >>> hiro = HiroIndex(SentenceStore("/tmp/opinio-doc"))          # doctest: +SKIP
    >>> hiro.fit()                                                  # doctest: +SKIP
    >>> hiro.paths("1").shape                                       # doctest: +SKIP
    (1650, 4)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from opinio_agents.errors import StoreError
from opinio_agents.hiro.indexer import ResidualKMeansIndexer, subpath_ids
from opinio_agents.stores.checkpoints import checkpoint
from opinio_agents.stores.chroma import collection_name
from opinio_agents.stores.lock import left_by_dead
from opinio_agents.stores.sentence_store import SentenceStore

__all__ = ["HiroIndex", "SubpathCounts", "BaselinePopularity", "as_hiro_index", "result_code_digest"]

#: Derived results kept in memory per index (the files keep them all).
_MEMORY_RESULTS = 48
#: Parts of the package whose code decides a derived result (hashed into its state); ``resources``
#: holds the aspect lexicon and the word lists the namer and the key points read.
_RESULT_CODE = (
    "hiro",
    "triplets",
    "text",
    "synthesis",
    "embeddings",
    "resources",
    "models.py",
    "trends.py",
    "summarizers.py",
)


@dataclass(frozen=True)
class SubpathCounts:
    """Popularity of the subpaths of one entity.

    Attributes:
        ids: Sorted subpath ids (see :func:`~opinio_agents.hiro.indexer.subpath_ids`).
        reviews: Number of the entity's reviews containing each subpath at least once.
        n_reviews: Reviews of the entity that have at least one sentence.
    """

    ids: np.ndarray
    reviews: np.ndarray
    n_reviews: int

    @classmethod
    def from_paths(cls, sub_ids: np.ndarray, review_codes: np.ndarray) -> SubpathCounts:
        """Count, for each subpath, the distinct reviews whose sentences contain it."""
        if sub_ids.size == 0:
            return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0)
        depth = sub_ids.shape[1]
        pairs = np.stack([np.repeat(review_codes, depth), sub_ids.ravel()], axis=1)
        unique_pairs = np.unique(pairs, axis=0)
        ids, counts = np.unique(unique_pairs[:, 1], return_counts=True)
        return cls(ids, counts.astype(np.int64), int(len(np.unique(review_codes))))

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """Review counts for ``ids`` (0 where absent)."""
        pos = np.searchsorted(self.ids, ids)
        pos = np.clip(pos, 0, max(len(self.ids) - 1, 0))
        found = (len(self.ids) > 0) & (self.ids[pos] == ids) if len(self.ids) else np.zeros(len(ids), dtype=bool)
        return np.where(found, self.reviews[pos] if len(self.ids) else 0, 0)


@dataclass(frozen=True)
class BaselinePopularity:
    """Baseline popularity: the mean share of reviews containing each subpath, over entities.

    Attributes:
        ids: Sorted subpath ids.
        share: Mean over the baseline entities of ``reviews containing it / reviews``.
        entities: Keys of the entities averaged.
    """

    ids: np.ndarray
    share: np.ndarray
    entities: tuple[str, ...]

    @classmethod
    def from_counts(cls, counts: dict[str, SubpathCounts]) -> BaselinePopularity:
        """Average the per-entity review shares (an entity lacking a subpath counts as 0)."""
        usable = {k: c for k, c in counts.items() if c.n_reviews > 0}
        if not usable:
            return cls(np.zeros(0, dtype=np.int64), np.zeros(0), ())
        all_ids = np.unique(np.concatenate([c.ids for c in usable.values()]))
        total = np.zeros(len(all_ids))
        for c in usable.values():
            total[np.searchsorted(all_ids, c.ids)] += c.reviews / c.n_reviews
        return cls(all_ids, total / len(usable), tuple(usable))

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """Mean share for ``ids`` (0 where no baseline entity has the subpath)."""
        if not len(self.ids):
            return np.zeros(len(ids))
        pos = np.clip(np.searchsorted(self.ids, ids), 0, len(self.ids) - 1)
        return np.where(self.ids[pos] == ids, self.share[pos], 0.0)


class HiroIndex:
    """The HIRO hierarchy of a :class:`SentenceStore`.

    Args:
        index: The sentence store.
        n_codes: Codes per level for a new fit (K; paper: 12).
        depth: Levels for a new fit (D).
        seed: Seed for a new fit.
        max_fit_points: Sentences sampled to fit the hierarchy.
        tree: Per-node codebooks (default) or one shared codebook per level
            (see :class:`~opinio_agents.hiro.indexer.ResidualKMeansIndexer`).
        directory: Where the hierarchy and paths live (default ``<store>/hiro``).
        auto_fit: Fit the hierarchy on first use when none is saved (the
            standalone default); with False, using an unfitted index raises
            :class:`~opinio_agents.errors.StoreError` and only :meth:`fit` fits.
        entities: The entities the hierarchy covers: it is fitted on them and they alone make up
            its baseline (default: every entity of the store; :meth:`own` gives one entity's).

    A saved hierarchy is always loaded as it is; ``n_codes``/``depth``/``seed``
    only matter when :meth:`fit` runs. All methods are safe to call from
    several threads.
    """

    def __init__(
        self,
        index: SentenceStore,
        *,
        n_codes: int = 12,
        depth: int = 3,
        seed: int = 0,
        max_fit_points: int = 100_000,
        tree: bool = True,
        directory: str | Path | None = None,
        auto_fit: bool = True,
        entities: Sequence[str] | None = None,
    ) -> None:
        self.index = index
        self.auto_fit = auto_fit
        self._scope = None if entities is None else frozenset(entities)
        self._own: dict[str, HiroIndex] = {}
        self._directory = Path(directory) if directory is not None else index.store_dir / "hiro"
        self._config = ResidualKMeansIndexer(
            n_codes=n_codes, depth=depth, seed=seed, max_fit_points=max_fit_points, tree=tree
        )
        self._indexer: ResidualKMeansIndexer | None = None
        self._paths: dict[str, tuple[str, np.ndarray]] = {}
        self._baseline: BaselinePopularity | None = None
        self._results: OrderedDict[tuple[str, str], tuple[str, Any]] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def directory(self) -> Path:
        """Where the hierarchy lives (``<store>/hiro`` by default)."""
        return self._directory

    # -- the hierarchy -----------------------------------------------------------
    @property
    def fitted(self) -> bool:
        """Whether a hierarchy is loaded or saved in :attr:`directory` (nothing is fitted to answer)."""
        with self._lock:
            return self._indexer is not None or ResidualKMeansIndexer.exists(self.directory)

    @property
    def indexer(self) -> ResidualKMeansIndexer:
        """The fitted hierarchy: loaded from the store, else fitted now when ``auto_fit`` is on.

        Raises:
            StoreError: When no hierarchy is saved and ``auto_fit`` is off.
        """
        with self._lock:
            if self._indexer is None:
                if ResidualKMeansIndexer.exists(self.directory):
                    self._indexer = ResidualKMeansIndexer.load(self.directory)
                elif self.auto_fit:
                    return self.fit()
                else:
                    raise StoreError(
                        f"{str(self.index.store_dir)!r} has no HIRO hierarchy yet; fit it once with "
                        "OpinioRAG.fit_hiro() (or HiroIndex.fit()); `opinio index` and OpinioRAG.index() fit "
                        "it when the store has enough sentences"
                    )
            return self._indexer

    def fit(self, entity_ids: list[str] | None = None) -> ResidualKMeansIndexer:
        """Fit (or refit) the hierarchy over the embeddings of ``entity_ids`` (default: all) and save it.

        Raises:
            StoreError: When the store has no indexed entity.
        """
        keys = [self.index.require_entity(e) for e in entity_ids] if entity_ids else self._entity_keys()
        if not keys:
            raise StoreError(
                f"{str(self.index.store_dir)!r} has no indexed entity to fit the HIRO hierarchy on; "
                "run `opinio index DATASET` first"
            )
        with self._lock:
            started = time.perf_counter()
            points = self._fit_points(keys)
            load_seconds = time.perf_counter() - started
            fresh = ResidualKMeansIndexer(
                n_codes=self._config.n_codes,
                depth=self._config.depth,
                seed=self._config.seed,
                max_fit_points=self._config.max_fit_points,
                tree=self._config.tree,
                restarts=self._config.restarts,
            ).fit(points)
            fresh.info["load_seconds"] = round(load_seconds, 3)
            fresh.info["entities"] = len(keys)
            fresh.save(self.directory, extra={"embedding_model": _model_name(self.index)})
            checkpoint("hiro-fit-saved")
            self._indexer = fresh
            self._paths.clear()
            self._baseline = None
            self._results.clear()
            return fresh

    def _fit_points(self, keys: list[str]) -> np.ndarray:
        """The vectors the hierarchy is fitted on, read with memory bounded by ``max_fit_points``.

        Below the cap these are all the entities' vectors, stacked. Above it, the seeded
        sample :meth:`ResidualKMeansIndexer.fit` would draw from the stacked matrix is drawn
        here instead, and only those rows are read, entity by entity (nothing is cached), so
        a corpus of millions of sentences never sits in memory whole and the fit is the same.
        Above the cap the embedded vector client is released after each entity's read (its
        collections with it): the caller drops what holds collections (``OpinioRAG.fit_hiro`` does).
        """
        cap = self._config.max_fit_points
        counts = [self.index.count_sentences(k) for k in keys]
        total = sum(counts)
        if total <= cap:
            return np.vstack([self.index.embeddings(k) for k in keys])
        rng = np.random.default_rng(self._config.seed)  # as ResidualKMeansIndexer.fit draws its sample
        pick = np.sort(rng.choice(total, cap, replace=False))
        parts: list[np.ndarray] = []
        offset = 0
        for key, n in zip(keys, counts):
            lo, hi = np.searchsorted(pick, [offset, offset + n])
            if hi > lo:
                stored = self.index.catalog.sentences(key)
                ids = [stored[int(row)].sentence.sentence_id for row in pick[lo:hi] - offset]
                found = self.index.vectors(key, ids)
                missing = [sid for sid in ids if sid not in found]
                if missing:
                    raise StoreError(
                        f"entity {key!r}: {len(missing)} sentences have no vector (e.g. {missing[0]!r}); "
                        "re-run `opinio index` to complete the store"
                    )
                parts.append(np.vstack([found[sid] for sid in ids]))
                # Embedded Chroma keeps every opened collection's index in memory for the client's
                # life: on 1M sentences (451 entities) the fit's RSS rose from 0.7 to 3.9 GiB.
                self.index.release_vector_client()
            offset += n
        return np.vstack(parts)

    # -- per-entity paths ----------------------------------------------------------
    def _content_fingerprint(self, key: str) -> str:
        hashes = self.index.catalog.review_hashes(key)
        digest = hashlib.sha1()
        for rid in sorted(hashes):
            digest.update(f"{rid}\x00{hashes[rid][0]}\x01".encode())
        return digest.hexdigest()[:20]

    def _paths_file(self, key: str) -> Path:
        return self.directory / "paths" / f"{collection_name(key)}.npz"

    def paths(self, entity_id: str | int) -> np.ndarray:
        """``(n_sentences, depth)`` paths of the entity's sentences, aligned with ``index.sentences``."""
        key = self.index.require_entity(entity_id)
        indexer = self.indexer
        expected = f"{indexer.fingerprint}:{self._content_fingerprint(key)}"
        with self._lock:  # one writer per store: two threads must not race on the same file
            return self._compute_paths(key, indexer, expected)

    def _compute_paths(self, key: str, indexer: ResidualKMeansIndexer, expected: str) -> np.ndarray:
        cached = self._paths.get(key)
        if cached is not None and cached[0] == expected:
            return cached[1]
        n = len(self.index.sentences(key))
        file = self._paths_file(key)
        _sweep_leftovers(file)
        paths: np.ndarray | None = None
        if file.is_file():
            try:
                with np.load(file) as data:
                    if str(data["fingerprint"]) == expected and data["paths"].shape == (n, indexer.depth):
                        paths = np.asarray(data["paths"])
            except (KeyError, ValueError, OSError):
                paths = None
        if paths is None:
            paths = indexer.encode(self.index.embeddings(key))
            file.parent.mkdir(parents=True, exist_ok=True)
            _save_npz_atomic(file, paths=paths, fingerprint=np.array(expected))
            self._baseline = None
        self._paths[key] = (expected, paths)
        return paths

    def subpaths(self, entity_id: str | int) -> np.ndarray:
        """``(n_sentences, depth)`` subpath ids of the entity's sentences."""
        indexer = self.indexer
        return subpath_ids(self.paths(entity_id), indexer.n_codes, indexer.depth)

    def review_codes(self, entity_id: str | int) -> np.ndarray:
        """Integer review index of every sentence (aligned with ``index.sentences``)."""
        reviews = [s.sentence.review_id for s in self.index.sentences(self.index.require_entity(entity_id))]
        lookup = {rid: i for i, rid in enumerate(dict.fromkeys(reviews))}
        return np.asarray([lookup[r] for r in reviews], dtype=np.int64)

    def popularity(self, entity_id: str | int) -> SubpathCounts:
        """Review counts of every subpath of the entity."""
        return SubpathCounts.from_paths(self.subpaths(entity_id), self.review_codes(entity_id))

    def baseline(self) -> BaselinePopularity:
        """Mean review share of every subpath over all indexed entities (cached until something changes).

        Only complete entities count: one that a writer is indexing right now (listed by
        ``entity_keys`` while the writer works) joins once its completion marker is written.
        """
        keys = [k for k in self._entity_keys() if self.index.is_complete(k)]
        for key in keys:
            self.paths(key)  # refreshes stale paths and resets the cache if anything changed
        with self._lock:
            if self._baseline is None or set(self._baseline.entities) != {
                k for k in keys if len(self.index.sentences(k))
            }:
                self._baseline = BaselinePopularity.from_counts({k: self.popularity(k) for k in keys})
            return self._baseline

    def corpus_baseline(self, entity_id: str | int) -> BaselinePopularity | None:
        """The corpus popularity an entity's subpaths are compared with, or None when no other entity is indexed.

        With None, HIRO's retriever compares each subpath with an even split of its parent instead
        (:func:`~opinio_agents.hiro.retriever.hierarchy_baseline`); the query-free highlights smooth that
        estimate more (``QueryFreeSettings.own_alpha``).

        Raises:
            StoreError: When the entity is not indexed.
        """
        key = self.index.require_entity(entity_id)
        baseline = self.baseline()
        return baseline if any(other != key for other in baseline.entities) else None

    def own(self, entity_id: str | int) -> HiroIndex:
        """The entity's own hierarchy: fitted on its sentences alone, with no other entity in its baseline.

        The query-free summary clusters an entity with it (``QueryFreeSettings``): a hierarchy fitted
        on every entity spends its codes on what tells the entities apart, one fitted on this entity's
        sentences on what its reviewers discuss. It is fitted on first use with this hierarchy's
        settings and seed (about a second for a thousand sentences), saved under
        ``own/<collection>/`` beside the store's hierarchy, and fitted again when the entity's reviews
        change (the folder is named by their fingerprint; older ones are removed). An entity alone
        in the hierarchy already has it: this index itself.

        Raises:
            StoreError: When the entity is not indexed.

        Example:
            >>> hiro.own("101").corpus_baseline("101") is None          # doctest: +SKIP
            True
        """
        key = self.index.require_entity(entity_id)
        if self.corpus_baseline(key) is None:  # the one test of an entity alone in its hierarchy
            return self
        indexer = self.indexer
        digest = hashlib.sha1(
            f"{self._content_fingerprint(key)}:{indexer.n_codes}:{indexer.depth}:{indexer.seed}:"
            f"{indexer.tree}:{indexer.max_fit_points}".encode()
        ).hexdigest()[:16]
        folder = self.directory / "own" / collection_name(key) / digest
        with self._lock:
            known = self._own.get(key)
            if known is not None and known.directory == folder:
                return known
            own = HiroIndex(
                self.index,
                n_codes=indexer.n_codes,
                depth=indexer.depth,
                seed=indexer.seed,
                max_fit_points=indexer.max_fit_points,
                tree=indexer.tree,
                directory=folder,
                auto_fit=False,
                entities=[key],
            )
            if not own.fitted:
                own.fit([key])
                for stale in folder.parent.iterdir():  # fitted on reviews the entity no longer has
                    if stale != folder and stale.is_dir():
                        shutil.rmtree(stale, ignore_errors=True)
            self._own[key] = own
            return own

    def _entity_keys(self) -> list[str]:
        """The store's entities this hierarchy covers (all of them unless ``entities`` was given)."""
        keys = self.index.entity_keys()
        return keys if self._scope is None else [k for k in keys if k in self._scope]

    # -- derived results, persisted with the hierarchy --------------------------------------
    def result_state(self, entity_id: str | int) -> str:
        """Digest of what the entity's HIRO results depend on (changes whenever one of them may).

        That is the hierarchy's fingerprint, the entity's generation, the generations of the
        complete entities that make up the baseline, and :func:`result_code_digest`. Only
        catalog counters are read (no paths, vectors or sentences), so checking a stored
        result costs milliseconds.

        Raises:
            StoreError: When the entity is not indexed or no hierarchy is fitted (and ``auto_fit`` is off).
        """
        key = self.index.require_entity(entity_id)
        indexer = self.indexer
        digest = hashlib.sha1()
        digest.update(f"{indexer.fingerprint}\x00{key}\x00{self.index.generation(key)}\x00".encode())
        for other in self._entity_keys():
            if self.index.is_complete(other):
                digest.update(f"{other}:{self.index.generation(other)}\x01".encode())
        digest.update(result_code_digest().encode())
        return digest.hexdigest()[:24]

    def _remember(self, slot: tuple[str, str], item: tuple[str, Any]) -> None:
        """Keep a result in memory (the :data:`_MEMORY_RESULTS` most recent ones; caller holds the lock)."""
        self._results[slot] = item
        self._results.move_to_end(slot)
        while len(self._results) > _MEMORY_RESULTS:
            self._results.popitem(last=False)

    def _result_file(self, key: str, kind: str, params: dict[str, Any]) -> Path:
        blob = json.dumps(params, sort_keys=True, default=str)
        name = f"{kind}-{hashlib.sha1(blob.encode()).hexdigest()[:16]}.json"
        return self.directory / "results" / collection_name(key) / name

    def load_result(
        self, entity_id: str | int, kind: str, params: dict[str, Any], *, state: str | None = None
    ) -> Any | None:
        """The stored ``kind`` result of the entity for ``params`` when it is current, else None.

        Args:
            entity_id: An indexed entity.
            kind: The result's name (``"aspects"``, ``"query-free"``).
            params: The arguments it was computed with (JSON-serialisable).
            state: :meth:`result_state` when the caller has just read it (read here otherwise).

        Example:
            >>> hiro.load_result("101", "aspects", {"top_k": 10})        # doctest: +SKIP
            [{'aspect': 'wi-fi', ...}, ...]
        """
        key = self.index.require_entity(entity_id)
        state = state or self.result_state(key)
        file = self._result_file(key, kind, params)
        with self._lock:
            cached = self._results.get((key, str(file)))
            if cached is not None and cached[0] == state:
                self._results.move_to_end((key, str(file)))
                return cached[1]
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("state") != state or "value" not in record:
            return None
        with self._lock:
            self._remember((key, str(file)), (state, record["value"]))
        return record["value"]

    def save_result(
        self, entity_id: str | int, kind: str, params: dict[str, Any], value: Any, *, state: str | None = None
    ) -> bool:
        """Persist a ``kind`` result (JSON) for :meth:`load_result`; False when the store is read-only.

        Pass the :meth:`result_state` read *before* computing ``value`` as ``state``, so a
        result computed while the store changed is never stored as current.
        """
        key = self.index.require_entity(entity_id)
        state = state or self.result_state(key)
        file = self._result_file(key, kind, params)
        with self._lock:
            self._remember((key, str(file)), (state, value))
        text = json.dumps({"state": state, "kind": kind, "params": params, "value": value}, separators=(",", ":"))
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_name(f".{file.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, file)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError:  # a read-only store: the result stays cached in this process only
            return False
        return True


@lru_cache(maxsize=1)
def result_code_digest() -> str:
    """Digest of the package code that derived HIRO results depend on (read once per process).

    The sources of :data:`_RESULT_CODE` and the names, sizes and modification times of
    the bundled model files under them, so a stored result never outlives the code or
    weights that computed it.

    Example:
        >>> len(result_code_digest())
        16
    """
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha1()
    for part in _RESULT_CODE:
        path = root / part
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in files:
            if not file.is_file() or "__pycache__" in file.parts:
                continue
            digest.update(str(file.relative_to(root)).encode() + b"\x00")
            if file.suffix == ".py":
                digest.update(file.read_bytes())
            else:
                stat = file.stat()
                digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _sweep_leftovers(file: Path) -> None:
    """Delete temporary files of ``file`` that a killed process left behind (never a live writer's)."""
    if file.parent.is_dir():
        for old in file.parent.glob(f".{file.stem}.*.tmp.npz"):
            if left_by_dead(old.name):
                old.unlink(missing_ok=True)


def _save_npz_atomic(file: Path, **arrays: Any) -> None:
    """Write ``arrays`` to a uniquely named temporary file beside ``file``, fsync it, then rename it over ``file``.

    Readers can compute paths too, so two processes may write the same file: each
    writes its own temporary file and the last rename wins, never a mix of both.
    """
    tmp = file.with_name(f".{file.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp.npz")
    try:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        checkpoint("hiro-paths-tmp")
        os.replace(tmp, file)
        checkpoint("hiro-paths-in-place")
    finally:
        if tmp.exists():
            tmp.unlink()


def _model_name(store: SentenceStore) -> str | None:
    """Name of the embedding model recorded by the store (None for a store that recorded none)."""
    recorded = store.models().embedding
    return None if recorded is None else recorded.name


def as_hiro_index(index: SentenceStore | HiroIndex) -> HiroIndex:
    """``index`` itself when it is a :class:`HiroIndex`, else a new one over the store.

    The standalone HIRO functions accept either; a new index fits its hierarchy on first
    use (``auto_fit``), while :class:`~opinio_agents.api.OpinioRAG` passes its own shared,
    explicitly fitted index.
    """
    return index if isinstance(index, HiroIndex) else HiroIndex(index)
