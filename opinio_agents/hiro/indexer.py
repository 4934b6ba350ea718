"""The hierarchical indexer: sentence embedding -> path ``q_1..q_D`` by residual k-means.

This is the training-free indexer the HIRO paper compares against (Sec. 4.2):
k-means (K codes) on the sentence embeddings, then k-means on the residuals
between each embedding and its centroid, and so on for D levels. By default
the residual k-means is recursive per node (each cluster's residuals get their
own K codes, so a child refines its parent's topic); ``tree=False`` shares one
codebook per level (plain residual vector quantisation). A path's prefix ``q_1..q_d``
is a *subpath*; all sentences sharing it form a cluster at depth ``d``.

The indexer is fitted once over a corpus of many entities, saved inside the
store (``<store>/hiro/codebooks-<fingerprint>.npz`` + ``indexer.json``) and reused to encode
the sentences of any entity indexed later.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> vectors = rng.normal(size=(300, 8)).astype("float32")
    >>> indexer = ResidualKMeansIndexer(n_codes=4, depth=2, seed=0).fit(vectors)
    >>> indexer.encode(vectors[:3]).shape
    (3, 2)
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.hiro.kmeans import kmeans
from opinio_agents.stores.lock import left_by_dead

__all__ = ["ResidualKMeansIndexer", "MAX_DEPTH", "subpath_ids", "decode_subpath_id"]

#: Deepest supported hierarchy (subpath ids must fit in int64).
MAX_DEPTH = 16
_CODEBOOKS = "codebooks.npz"
_META = "indexer.json"


@dataclass
class ResidualKMeansIndexer:
    """Recursive residual k-means over sentence embeddings.

    Args:
        n_codes: Codes per level (K; the paper uses 12).
        depth: Number of levels (D).
        seed: Random seed: the same seed and data give the same codebooks.
        max_iter: Lloyd iterations per level.
        max_fit_points: Fit on at most this many points (a seeded sample).
        restarts: k-means runs per node from different initialisations, the lowest inertia kept. With one,
            the clusters, so the aspects and the query-free summary, hang on the seed: SPACE dev general
            ROUGE-L over seeds 0-3 of one store was 28.7 / 28.9 / 24.7 / 27.7 (spread 4.2); with 4 it is
            27.7 / 26.9 / 27.3 / 26.5 (spread 1.2, mean 27.5 -> 27.1) for 2-3x the fit time (10.8 -> 22-33 s
            on SPACE dev's 17,345 sentences); restarts at the top level only: spread 2.2.
        tree: ``True`` (default): each node of level ``d`` has its own codebook,
            fitted on the residuals of its members (a residual k-means tree, so
            children refine their parent's topic). ``False``: one codebook shared
            by all nodes of a level (plain residual vector quantisation, the
            paper's exact comparison baseline).

    Attributes:
        codebooks: Per level, ``(nodes, n_codes, dim)`` centroids once fitted
            (``nodes`` is ``n_codes ** level`` for a tree, 1 when shared).
        info: Fit statistics (points, seconds, per-level inertia).
    """

    n_codes: int = 12
    depth: int = 3
    seed: int = 0
    max_iter: int = 25
    max_fit_points: int = 100_000
    tree: bool = True
    restarts: int = 4
    codebooks: list[np.ndarray] | None = None
    info: dict = field(default_factory=dict)
    # (codebooks list, its arrays, hash): the fingerprint is read once per entity whenever the store's
    # baseline or a result's state is checked, and hashing 1.9 MB of centroids each time cost 1.6 ms.
    _fingerprinted: tuple[list[np.ndarray], tuple[np.ndarray, ...], str] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not 2 <= self.n_codes <= 255:
            raise ConfigError(f"n_codes={self.n_codes} must be between 2 and 255 (the paper uses 12)")
        if not 1 <= self.depth <= MAX_DEPTH:
            raise ConfigError(f"depth={self.depth} must be between 1 and {MAX_DEPTH}")
        if self.tree and self.n_codes**self.depth > 2_000_000:
            raise ConfigError(
                f"a tree with n_codes={self.n_codes} and depth={self.depth} has too many nodes; "
                "lower the depth or pass tree=False"
            )
        if (self.n_codes + 1) ** self.depth >= 2**62:
            raise ConfigError(f"n_codes={self.n_codes} with depth={self.depth} is too large; lower one of them")
        if self.restarts < 1:
            raise ConfigError(f"restarts={self.restarts} must be >= 1")
        if self.max_fit_points < self.n_codes:
            raise ConfigError(f"max_fit_points={self.max_fit_points} must be >= n_codes ({self.n_codes})")

    @property
    def fitted(self) -> bool:
        """Whether codebooks are available."""
        return self.codebooks is not None

    @property
    def fingerprint(self) -> str:
        """Short hash of the codebooks (changes whenever the hierarchy is refitted).

        Computed once per set of codebooks, which are made read-only when it is, so only
        assigning new ones (a refit, or ``codebooks = [...]``) can change it.
        """
        books = self.codebooks
        if books is None:
            return ""
        known = self._fingerprinted
        if known is not None and known[0] is books and len(known[1]) == len(books) and all(
            a is b for a, b in zip(known[1], books, strict=True)
        ):
            return known[2]
        _freeze(books)
        digest = hashlib.sha1()
        for book in books:
            digest.update(np.ascontiguousarray(book).tobytes())
        self._fingerprinted = (books, tuple(books), digest.hexdigest()[:16])
        return self._fingerprinted[2]

    def fit(self, embeddings: np.ndarray) -> ResidualKMeansIndexer:
        """Fit one codebook per level on ``embeddings`` ``(n, dim)``; returns ``self``.

        Raises:
            ConfigError: With fewer points than ``n_codes``.
        """
        x = np.asarray(embeddings, dtype=np.float32)
        if x.ndim != 2 or len(x) < self.n_codes:
            raise ConfigError(
                f"need at least n_codes={self.n_codes} embeddings to fit the hierarchy, got shape {x.shape}; "
                "index more reviews first"
            )
        started = time.perf_counter()
        rng = np.random.default_rng(self.seed)
        if len(x) > self.max_fit_points:
            x = x[np.sort(rng.choice(len(x), self.max_fit_points, replace=False))]
        residual = x.copy()
        books: list[np.ndarray] = []
        inertia = []
        nodes = np.zeros(len(x), dtype=np.int64)
        for level in range(self.depth):
            n_nodes = self.n_codes**level if self.tree else 1
            book = np.zeros((n_nodes, self.n_codes, x.shape[1]), dtype=np.float32)
            codes = np.zeros(len(x), dtype=np.int64)
            groups = _groups(nodes) if self.tree else {0: np.arange(len(x))}
            for node, members in groups.items():
                book[node], codes[members] = self._fit_node(residual[members], level, node)
            residual -= book[nodes if self.tree else 0, codes]
            inertia.append(float(np.einsum("ij,ij->", residual, residual)) / len(x))
            nodes = nodes * self.n_codes + codes
            books.append(book)
        self.codebooks = books
        self.info = {
            "fit_points": int(len(x)),
            "fit_seconds": round(time.perf_counter() - started, 3),
            "mean_sq_residual": [round(v, 5) for v in inertia],
        }
        return self

    def _fit_node(self, points: np.ndarray, level: int, node: int) -> tuple[np.ndarray, np.ndarray]:
        """Codebook and codes of one node's points (fewer points than codes: each point is a code)."""
        if len(points) <= self.n_codes:
            book = np.zeros((self.n_codes, points.shape[1]), dtype=np.float32)
            book[: len(points)] = points
            if len(points):
                book[len(points) :] = points[0]
            return book, np.arange(len(points), dtype=np.int64)
        seed = self.seed + 7919 * level + 104_729 * node
        result = kmeans(points, self.n_codes, seed=seed, max_iter=self.max_iter, restarts=self.restarts)
        return result.centroids, result.labels

    def encode(self, embeddings: np.ndarray) -> np.ndarray:
        """Paths ``(n, depth)`` of code indices (uint8) for ``embeddings``.

        Raises:
            StoreError: When the indexer is not fitted or dimensions differ.
        """
        books = self._require()
        x = np.asarray(embeddings, dtype=np.float32)
        dim = books[0].shape[2]
        if x.ndim != 2 or (len(x) and x.shape[1] != dim):
            raise StoreError(
                f"embeddings of shape {x.shape} do not match the hierarchy's dimension {dim}; "
                "refit the hierarchy for this embedding model"
            )
        paths = np.zeros((len(x), self.depth), dtype=np.uint8)
        chunk = 1024  # rows per step: the (chunk, K, dim) temporaries stay ~20 MB (each row is computed alone)
        for start in range(0, len(x), chunk):
            residual = x[start : start + chunk].copy()
            nodes = np.zeros(len(residual), dtype=np.int64)
            for level, book in enumerate(books):
                centroids = book[nodes] if self.tree else np.broadcast_to(book[0], (len(residual), *book.shape[1:]))
                diff = centroids - residual[:, None, :]
                codes = np.argmin(np.einsum("nkd,nkd->nk", diff, diff), axis=1)
                paths[start : start + len(residual), level] = codes
                residual -= centroids[np.arange(len(residual)), codes]
                nodes = nodes * self.n_codes + codes
        return paths

    def _require(self) -> list[np.ndarray]:
        if self.codebooks is None:
            raise StoreError("the HIRO hierarchy is not fitted; call fit() or HiroIndex.fit() first")
        return self.codebooks

    # -- persistence -----------------------------------------------------------
    def save(self, directory: str | Path, *, extra: dict | None = None) -> Path:
        """Write the codebooks and ``indexer.json`` into ``directory``, as one atomic switch.

        The codebooks go to a new file named by their fingerprint
        (``codebooks-<fingerprint>.npz``); ``indexer.json``, which names that file, is
        replaced last. A process killed at any point leaves either the old hierarchy or
        the new one, never new codebooks under old metadata; files of older fits are
        removed once the switch is done.
        """
        books = self._require()
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        for leftover in [*folder.glob(".codebooks-*.tmp.npz"), *folder.glob(f".{_META}.*.tmp")]:
            if left_by_dead(leftover.name):  # a killed fit's temporary file
                leftover.unlink(missing_ok=True)
        name = f"codebooks-{self.fingerprint}.npz"
        unique = f"{os.getpid()}.{uuid.uuid4().hex[:8]}"
        tmp = folder / f".{name}.{unique}.tmp.npz"
        arrays: dict[str, Any] = {f"level_{i}": book for i, book in enumerate(books)}
        np.savez(tmp, **arrays)
        tmp.replace(folder / name)
        meta = {
            "n_codes": self.n_codes,
            "depth": self.depth,
            "seed": self.seed,
            "max_iter": self.max_iter,
            "max_fit_points": self.max_fit_points,
            "tree": self.tree,
            "restarts": self.restarts,
            "fingerprint": self.fingerprint,
            "codebooks_file": name,
            "info": self.info,
            **(extra or {}),
        }
        tmp_meta = folder / f".{_META}.{unique}.tmp"
        tmp_meta.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        tmp_meta.replace(folder / _META)
        for stale in [*folder.glob("codebooks-*.npz"), folder / _CODEBOOKS]:
            if stale.name != name and stale.is_file():
                stale.unlink(missing_ok=True)
        return folder

    @staticmethod
    def _codebooks_path(folder: Path) -> Path | None:
        """The codebooks file ``indexer.json`` names (``codebooks.npz`` for older stores)."""
        try:
            meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        name = meta.get("codebooks_file", _CODEBOOKS) if isinstance(meta, dict) else _CODEBOOKS
        if not isinstance(name, str) or Path(name).name != name:
            return None
        return folder / name

    @classmethod
    def exists(cls, directory: str | Path) -> bool:
        """Whether a saved hierarchy is in ``directory``."""
        books = cls._codebooks_path(Path(directory))
        return books is not None and books.is_file()

    @classmethod
    def load(cls, directory: str | Path) -> ResidualKMeansIndexer:
        """Load a hierarchy saved by :meth:`save`.

        Raises:
            StoreError: When the files are missing or inconsistent.
        """
        folder = Path(directory)
        if not cls.exists(folder):
            raise StoreError(f"no HIRO hierarchy in {str(folder)!r}; fit one with HiroIndex.fit()")
        try:
            meta = json.loads((folder / _META).read_text(encoding="utf-8"))
            books_path = cls._codebooks_path(folder)
            if books_path is None:
                raise ValueError("indexer.json does not name a codebooks file")
            with np.load(books_path) as data:
                books = [np.asarray(data[f"level_{i}"], dtype=np.float32) for i in range(int(meta["depth"]))]
            indexer = cls(
                n_codes=int(meta["n_codes"]),
                depth=int(meta["depth"]),
                seed=int(meta["seed"]),
                max_iter=int(meta.get("max_iter", 25)),
                max_fit_points=int(meta.get("max_fit_points", 100_000)),
                tree=bool(meta.get("tree", True)),
                restarts=int(meta.get("restarts", 1)),  # hierarchies saved before restarts had one run
                codebooks=books,
                info=dict(meta.get("info", {})),
            )
        except (KeyError, ValueError, OSError) as exc:
            raise StoreError(
                f"HIRO hierarchy in {str(folder)!r} is corrupt ({exc}); delete the folder to refit"
            ) from exc
        for level, book in enumerate(books):
            nodes = indexer.n_codes**level if indexer.tree else 1
            if book.ndim != 3 or book.shape[:2] != (nodes, indexer.n_codes):
                raise StoreError(
                    f"HIRO hierarchy in {str(folder)!r} has level {level} codebooks of shape {book.shape}; "
                    "delete the folder to refit"
                )
        return indexer


def _groups(nodes: np.ndarray) -> dict[int, np.ndarray]:
    order = np.argsort(nodes, kind="stable")
    values, starts = np.unique(nodes[order], return_index=True)
    return {int(v): part for v, part in zip(values, np.split(order, starts[1:]))}


def subpath_ids(paths: np.ndarray, n_codes: int, depth: int) -> np.ndarray:
    """Integer id of every prefix: ``(n, depth)`` where column ``d`` is the id of ``q_1..q_{d+1}``.

    Ids use base ``n_codes + 1`` with digits ``code + 1``, so prefixes of
    different lengths never collide.

    Example:
        >>> subpath_ids(np.array([[0, 1]]), 12, 2).tolist()
        [[1, 27]]
    """
    base = np.int64(n_codes + 1)
    out = np.zeros((len(paths), depth), dtype=np.int64)
    acc = np.zeros(len(paths), dtype=np.int64)
    scale = np.int64(1)
    for d in range(depth):
        acc = acc + (paths[:, d].astype(np.int64) + 1) * scale
        out[:, d] = acc
        scale = scale * base
    return out


def decode_subpath_id(value: int, n_codes: int) -> tuple[int, ...]:
    """The codes of a subpath id (inverse of :func:`subpath_ids`).

    Example:
        >>> decode_subpath_id(27, 12)
        (0, 1)
    """
    base = n_codes + 1
    codes = []
    v = int(value)
    while v:
        v, digit = divmod(v, base)
        codes.append(digit - 1)
    return tuple(codes)


def _freeze(books: list[np.ndarray]) -> None:
    """Make codebooks read-only, in place, once their fingerprint is cached on them."""
    for book in books:
        book.flags.writeable = False
