"""Representation quality of a hierarchy: purity minus colocation per depth (HIRO Sec. 4.2).

For the clusters formed by the subpaths ``q_1..q_d`` at each depth ``d``:

* **purity** is the mean intra-cluster similarity: for each cluster with at
  least two sentences, the mean similarity over its sentence pairs, averaged
  over clusters;
* **colocation** is the mean inter-cluster similarity: for each pair of
  distinct clusters, the mean similarity between their sentences, averaged
  over cluster pairs.

Both are computed exactly from cluster sums (no pair sampling): for unit rows
``x_i`` the mean pairwise similarity inside ``A`` is
``(|s_A|^2 - sum |x_i|^2) / (|A| (|A| - 1))`` and the mean similarity between
``A`` and ``B`` is ``mu_A . mu_B``. Similarity is tf-idf cosine over the App. D
tokens (the paper's lexical measure) or the embedding cosine.

Example:
    >>> import numpy as np
    >>> vectors = np.eye(4, dtype="float32")[[0, 0, 1, 1]]
    >>> rows = depth_quality(vectors, np.array([[0], [0], [1], [1]]))
    >>> rows[0].purity, rows[0].colocation, rows[0].score
    (1.0, 0.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.lexical import TfidfModel

__all__ = ["DepthQuality", "depth_quality", "tfidf_quality", "quality_table"]


@dataclass(frozen=True)
class DepthQuality:
    """Purity, colocation and their difference for the clusters at one depth."""

    depth: int
    clusters: int
    purity: float
    colocation: float

    @property
    def score(self) -> float:
        """Purity minus colocation (higher is better)."""
        return round(self.purity - self.colocation, 4)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict including ``score``."""
        return {**asdict(self), "score": self.score}



def depth_quality(vectors: Any, paths: np.ndarray, *, max_depth: int | None = None) -> list[DepthQuality]:
    """Purity and colocation per depth for unit-norm ``vectors`` (dense array or scipy sparse rows).

    Args:
        vectors: ``(n, dim)`` rows with unit (or zero) norm, aligned with ``paths``.
        paths: ``(n, D)`` code paths.
        max_depth: Evaluate depths ``1..max_depth`` (default: all).
    """
    n = paths.shape[0]
    if vectors.shape[0] != n:
        raise ConfigError(f"vectors ({vectors.shape[0]} rows) and paths ({n} rows) must be aligned")
    depth = paths.shape[1] if max_depth is None else min(max_depth, paths.shape[1])
    is_sparse = hasattr(vectors, "tocsr")
    if is_sparse:
        sq_norms = np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel()
    else:
        vectors = np.asarray(vectors, dtype=np.float64)
        sq_norms = np.einsum("ij,ij->i", vectors, vectors)
    out: list[DepthQuality] = []
    for d in range(1, depth + 1):
        _, labels = np.unique(paths[:, :d], axis=0, return_inverse=True)
        labels = labels.ravel()
        n_clusters = int(labels.max()) + 1 if n else 0
        sizes = np.bincount(labels, minlength=n_clusters).astype(np.float64)
        if is_sparse:
            from scipy import sparse

            member = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_clusters, n))
            sums = member @ vectors
            sum_sq = np.asarray(sums.multiply(sums).sum(axis=1)).ravel()
            means = sparse.diags(1.0 / sizes) @ sums
            total = np.asarray(means.sum(axis=0)).ravel()
            mean_sq = np.asarray(means.multiply(means).sum(axis=1)).ravel()
        else:
            sums = np.zeros((n_clusters, vectors.shape[1]))
            np.add.at(sums, labels, vectors)
            sum_sq = np.einsum("ij,ij->i", sums, sums)
            means = sums / sizes[:, None]
            total = means.sum(axis=0)
            mean_sq = np.einsum("ij,ij->i", means, means)
        self_sq = np.bincount(labels, weights=sq_norms, minlength=n_clusters)
        multi = sizes >= 2
        purity = (
            float(np.mean((sum_sq[multi] - self_sq[multi]) / (sizes[multi] * (sizes[multi] - 1))))
            if multi.any()
            else 0.0
        )
        if n_clusters >= 2:
            colocation = float((total @ total - mean_sq.sum()) / (n_clusters * (n_clusters - 1)))
        else:
            colocation = 0.0
        out.append(DepthQuality(d, n_clusters, round(purity, 4), round(colocation, 4)))
    return out


def tfidf_quality(
    token_lists: Sequence[Sequence[str]], paths: np.ndarray, *, max_depth: int | None = None
) -> list[DepthQuality]:
    """:func:`depth_quality` with tf-idf cosine over tokens (fitted on these sentences)."""
    model = TfidfModel.fit(token_lists)
    return depth_quality(model.transform(token_lists), paths, max_depth=max_depth)


def quality_table(rows: Sequence[DepthQuality], *, title: str = "") -> str:
    """A markdown table of purity, colocation and purity - colocation per depth."""
    lines = [f"**{title}**", ""] if title else []
    lines += ["| depth | clusters | purity | colocation | purity - colocation |", "|---|---|---|---|---|"]
    lines += [f"| {r.depth} | {r.clusters} | {r.purity:.4f} | {r.colocation:.4f} | {r.score:.4f} |" for r in rows]
    return "\n".join(lines)
