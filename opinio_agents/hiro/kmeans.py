"""Seeded k-means in numpy: k-means++ initialisation, Lloyd (or mini-batch) updates.

Small, dependency-free and deterministic for a seed, which is all the
recursive residual k-means indexer needs (K = 12 codes per level).

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> points = np.vstack([rng.normal(0, .1, (50, 2)), rng.normal(5, .1, (50, 2))])
    >>> result = kmeans(points, 2, seed=0)
    >>> sorted(np.bincount(result.labels).tolist())
    [50, 50]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opinio_agents.errors import ConfigError

__all__ = ["KMeansResult", "kmeans", "assign", "cluster_sums"]


@dataclass(frozen=True)
class KMeansResult:
    """Centroids ``(k, dim)``, labels of the fitted points and their inertia."""

    centroids: np.ndarray
    labels: np.ndarray
    inertia: float
    iterations: int


def assign(points: np.ndarray, centroids: np.ndarray, *, chunk: int = 65_536) -> np.ndarray:
    """Index of the nearest centroid (squared Euclidean) for every point."""
    out = np.empty(len(points), dtype=np.int64)
    c_sq = np.einsum("ij,ij->i", centroids, centroids)
    for start in range(0, len(points), chunk):
        block = points[start : start + chunk]
        dist = c_sq[None, :] - 2.0 * (block @ centroids.T)
        out[start : start + chunk] = np.argmin(dist, axis=1)
    return out


def _sq_dist_to(points: np.ndarray, centre: np.ndarray) -> np.ndarray:
    diff = points - centre
    return np.einsum("ij,ij->i", diff, diff)


def _kmeans_pp(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    n = len(points)
    centres = np.empty((k, points.shape[1]), dtype=points.dtype)
    centres[0] = points[rng.integers(n)]
    closest = _sq_dist_to(points, centres[0])
    for i in range(1, k):
        total = float(closest.sum())
        if total <= 0.0:
            centres[i] = points[rng.integers(n)]
        else:
            # Greedy k-means++: best of a few candidates drawn proportionally to D^2.
            candidates = rng.choice(n, size=min(n, 2 + int(np.log(k))), p=closest / total)
            best, best_pot, best_d = candidates[0], np.inf, closest
            for c in candidates:
                d = np.minimum(closest, _sq_dist_to(points, points[c]))
                pot = float(d.sum())
                if pot < best_pot:
                    best, best_pot, best_d = c, pot, d
            centres[i] = points[best]
            closest = best_d
    return centres


def cluster_sums(points: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster float64 sums of ``points`` and the cluster sizes.

    Bit-for-bit what ``np.add.at(sums, labels, points)`` gives (a stable sort keeps each
    cluster's points in their order, and ``reduceat`` adds them in that order), at a
    fraction of its cost (``ufunc.at`` dominated the HIRO fit).

    Example:
        >>> sums, sizes = cluster_sums(np.array([[1.0], [2.0], [4.0]]), np.array([1, 0, 1]), 3)
        >>> sums.ravel().tolist(), sizes.tolist()
        ([2.0, 5.0, 0.0], [1, 2, 0])
    """
    sizes = np.bincount(labels, minlength=k)
    sums = np.zeros((k, points.shape[1]), dtype=np.float64)
    nonempty = np.flatnonzero(sizes)
    if len(nonempty):
        order = np.argsort(labels, kind="stable")
        starts = (np.cumsum(sizes) - sizes)[nonempty]
        sums[nonempty] = np.add.reduceat(points[order], starts, axis=0, dtype=np.float64)
    return sums, sizes


#: Seed distance between two restarts of one k-means.
_RESTART_STRIDE = 1_000_003


def kmeans(
    points: np.ndarray,
    k: int,
    *,
    seed: int = 0,
    max_iter: int = 25,
    tol: float = 1e-5,
    batch_size: int | None = None,
    init_sample: int = 20_000,
    restarts: int = 1,
) -> KMeansResult:
    """Cluster ``points`` into ``k`` groups.

    Args:
        points: ``(n, dim)`` float array.
        k: Number of clusters (at most ``n``).
        seed: Random seed (initialisation and mini-batches).
        max_iter: Lloyd iterations (or mini-batch epochs).
        tol: Stop when the relative inertia change falls below it.
        batch_size: Mini-batch size; ``None`` runs full-batch Lloyd iterations.
        init_sample: Points drawn for k-means++ initialisation on large inputs.
        restarts: Runs from different initialisations; the one with the lowest inertia is returned, so the
            clusters depend less on the seed.

    Raises:
        ConfigError: When ``k`` is not in ``[1, n]``.
    """
    if restarts < 1:
        raise ConfigError(f"restarts={restarts} must be >= 1")
    runs = (  # far-apart seeds: another restart's seed is never a neighbouring node's
        _kmeans_once(
            points,
            k,
            seed=seed + _RESTART_STRIDE * run,
            max_iter=max_iter,
            tol=tol,
            batch_size=batch_size,
            init_sample=init_sample,
        )
        for run in range(restarts)
    )
    return min(runs, key=lambda result: result.inertia)


def _kmeans_once(
    points: np.ndarray,
    k: int,
    *,
    seed: int,
    max_iter: int,
    tol: float,
    batch_size: int | None,
    init_sample: int,
) -> KMeansResult:
    x = np.ascontiguousarray(points, dtype=np.float32)
    n = len(x)
    if not 1 <= k <= n:
        raise ConfigError(f"k={k} must be between 1 and the number of points ({n}); index more sentences")
    if max_iter < 1:
        raise ConfigError(f"max_iter={max_iter} must be >= 1")
    rng = np.random.default_rng(seed)
    init_pool = x if n <= init_sample else x[rng.choice(n, init_sample, replace=False)]
    centroids = _kmeans_pp(init_pool, k, rng).astype(np.float32)
    previous = np.inf
    iterations = 0
    if batch_size:
        counts = np.zeros(k, dtype=np.float64)
        steps_per_epoch = max(1, n // batch_size)
        for iterations in range(1, max_iter + 1):  # noqa: B007 - returned after the loop
            for _ in range(steps_per_epoch):
                batch = x[rng.choice(n, min(batch_size, n), replace=False)]
                labels = assign(batch, centroids)
                for c in np.unique(labels):
                    members = batch[labels == c]
                    counts[c] += len(members)
                    rate = len(members) / counts[c]
                    centroids[c] = (1.0 - rate) * centroids[c] + rate * members.mean(axis=0)
    else:
        for iterations in range(1, max_iter + 1):  # noqa: B007 - returned after the loop
            labels = assign(x, centroids)
            sums, sizes = cluster_sums(x, labels, k)
            empty = np.flatnonzero(sizes == 0)
            if len(empty):
                # Re-seed empty clusters on the points farthest from their centroid.
                far = np.argsort(-np.einsum("ij,ij->i", x - centroids[labels], x - centroids[labels]))
                for c, p in zip(empty, far):
                    sums[c], sizes[c] = x[p], 1
            centroids = (sums / sizes[:, None]).astype(np.float32)
            residual = x - centroids[labels]
            inertia = float(np.einsum("ij,ij->", residual, residual))
            if previous < np.inf and abs(previous - inertia) <= tol * max(previous, 1e-12):
                break
            previous = inertia
    labels = assign(x, centroids)
    residual = x - centroids[labels]
    return KMeansResult(centroids, labels, float(np.einsum("ij,ij->", residual, residual)), iterations)
