"""The HIRO retriever: popular *and* specific subpaths of one entity, as sentence clusters.

For an entity ``e`` with reviews ``R_e``, the popularity of a subpath
``q_1..q_d`` is the number of reviews containing it at least once,
``Pop(q, R_e)``. Its baseline popularity is how often it is expected anyway:
the mean share of reviews containing it over all entities of the corpus,
scaled to this entity's number of reviews, ``Base(q) = |R_e| * mean_e' Pop(q, R_e') / |R_e'|``.
The score is

    score(q) = Pop(q, R_e) / (Base(q) + alpha)

(paper: alpha = 6, top k = 8). With equally sized entities, as in the paper's
Space setup, ``Base`` is exactly the mean popularity over entities. Short
subpaths are common everywhere, so their baseline is high and the score is
normalised for depth; a subpath frequent here but rare elsewhere scores high.

**A store of one entity.** With no other entity indexed, the baseline is the entity itself,
``Base(q) = Pop(q, R_e)``, every large subpath scores about 1, and ties go to the largest: only the
hierarchy's top-level codes (a dozen clusters of hundreds of sentences each) would come out, however
many reviews there are. Then each subpath below the top level is compared with an even split of
its parent instead, ``Base(q_1..q_d) = Pop(q_1..q_{d-1}, R_e) / K`` (``K`` codes per level), and a
top-level code, a broad region that a corpus baseline rates common everywhere, keeps
``Base = Pop``: a subpath scores high when it holds more of its parent's reviews than its siblings
do, the popular aspects inside each broad region of the hierarchy (:func:`hierarchy_baseline`).

The top-k subpaths are taken greedily (a subpath whose sentences mostly
overlap an already chosen cluster -- typically its parent or child -- is
skipped), then each cluster drops sentences with very low lexical (tf-idf)
similarity to the rest of the cluster, and clusters with high lexical overlap
are merged.

Example:
    >>> hiro = HiroIndex(index)                                   # doctest: +SKIP
    >>> clusters = retrieve_clusters(hiro, "1", top_k=8)          # doctest: +SKIP
    >>> clusters[0].subpaths, len(clusters[0].indices)            # doctest: +SKIP
    ([(3, 7)], 41)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.indexer import decode_subpath_id
from opinio_agents.hiro.lexical import TfidfModel
from opinio_agents.hiro.store import BaselinePopularity, HiroIndex, SubpathCounts

__all__ = [
    "HiroCluster",
    "ScoredSubpath",
    "score_subpaths",
    "hierarchy_baseline",
    "select_clusters",
    "retrieve_clusters",
    "DEFAULT_ALPHA",
    "DEFAULT_TOP_K",
]

DEFAULT_ALPHA = 6.0
DEFAULT_TOP_K = 8


@dataclass(frozen=True)
class ScoredSubpath:
    """A subpath with its popularity (reviews), baseline (expected reviews) and score."""

    subpath_id: int
    reviews: int
    expected: float
    score: float


@dataclass
class HiroCluster:
    """A retrieved cluster of sentences.

    Attributes:
        subpaths: The subpath(s) it came from (several after a merge).
        indices: Positions of its sentences in ``SentenceStore.sentences(entity)``.
        score: Best subpath score among its subpaths.
        reviews: Distinct reviews among its (filtered) sentences.
        expected: Baseline (expected) reviews of its best subpath.
        dropped: Sentences removed by the lexical filter.
    """

    subpaths: list[tuple[int, ...]]
    indices: list[int]
    score: float
    reviews: int = 0
    expected: float = 0.0
    dropped: int = 0
    sentence_ids: list[str] = field(default_factory=list)

    @property
    def depth(self) -> int:
        """Depth of the first (best) subpath."""
        return len(self.subpaths[0]) if self.subpaths else 0


def hierarchy_baseline(counts: SubpathCounts, ids: np.ndarray, n_codes: int) -> np.ndarray:
    """Expected reviews of each subpath in ``ids`` under an even split of its parent's reviews.

    The baseline of an entity that has no other entity to be compared with (see the module
    docstring): ``Pop(parent) / n_codes``; a top-level code, a broad region every entity has, is
    expected in full (``Pop(q)``), as the corpus baseline rates such subpaths common everywhere.

    Example:
        >>> counts = SubpathCounts(np.array([1, 2, 27]), np.array([30, 6, 20]), 40)
        >>> hierarchy_baseline(counts, np.array([1, 27]), 12).round(2).tolist()  # (0,) and (0, 1)
        [30.0, 2.5]
    """
    base = np.int64(n_codes + 1)
    ids = np.asarray(ids, dtype=np.int64)
    parents = np.zeros(len(ids), dtype=np.int64)
    scale = np.ones(len(ids), dtype=np.int64)
    rest = ids.copy()
    while np.any(rest >= base):  # the parent keeps every digit but the most significant one
        deeper = rest >= base
        parents[deeper] += (rest[deeper] % base) * scale[deeper]
        rest[deeper] //= base
        scale[deeper] *= base
    # A top-level code is a broad region every entity has (the corpus baseline rates such subpaths
    # common everywhere): it is expected in full. Deeper, a subpath is expected at an even split.
    return np.where(parents == 0, counts.lookup(ids), counts.lookup(parents) / float(n_codes))


def score_subpaths(
    counts: SubpathCounts,
    baseline: BaselinePopularity | None,
    *,
    alpha: float = DEFAULT_ALPHA,
    min_reviews: int = 2,
    n_codes: int | None = None,
) -> list[ScoredSubpath]:
    """Score every subpath of an entity, best first (ties: more reviews, then shorter id).

    Args:
        counts: The entity's subpath popularity.
        baseline: Mean popularity over the corpus; None when the entity has no other entity to be
            compared with (then :func:`hierarchy_baseline`, which needs ``n_codes``).
        alpha: Smoothing constant.
        min_reviews: Ignore subpaths found in fewer reviews.
        n_codes: Codes per level of the hierarchy.

    Raises:
        ConfigError: On a negative ``alpha``, ``min_reviews < 1``, or no baseline and no ``n_codes``.
    """
    if alpha < 0:
        raise ConfigError(f"alpha={alpha} must be >= 0 (the paper uses 6)")
    if min_reviews < 1:
        raise ConfigError(f"min_reviews={min_reviews} must be >= 1")
    if baseline is None and not n_codes:
        raise ConfigError("without a corpus baseline the hierarchy's n_codes is needed")
    keep = counts.reviews >= min_reviews
    ids, pops = counts.ids[keep], counts.reviews[keep]
    if baseline is None:
        expected = hierarchy_baseline(counts, ids, int(n_codes or 0))
    else:
        expected = baseline.lookup(ids) * counts.n_reviews
    scores = pops / (expected + alpha) if alpha > 0 else pops / np.maximum(expected, 1e-9)
    order = np.lexsort((ids, -pops, -scores))
    return [ScoredSubpath(int(ids[i]), int(pops[i]), float(expected[i]), float(scores[i])) for i in order]


def _lexical_filter(
    members: np.ndarray, vectors, min_similarity: float  # noqa: ANN001 - scipy sparse rows
) -> tuple[np.ndarray, int]:
    if len(members) < 3 or min_similarity <= 0:
        return members, 0
    rows = vectors[members]
    total = np.asarray(rows.sum(axis=0)).ravel()
    own = np.asarray(rows.multiply(rows).sum(axis=1)).ravel()
    mean_sim = (rows @ total - own) / (len(members) - 1)
    keep = (mean_sim >= min_similarity) & (own > 0)
    return members[keep], int((~keep).sum())


def select_clusters(
    sub_ids: np.ndarray,
    review_codes: np.ndarray,
    tokens: Sequence[Sequence[str]],
    baseline: BaselinePopularity | None,
    *,
    n_codes: int,
    top_k: int = DEFAULT_TOP_K,
    alpha: float = DEFAULT_ALPHA,
    min_reviews: int = 2,
    max_overlap: float = 0.5,
    min_similarity: float = 0.05,
    merge_similarity: float = 0.5,
) -> list[HiroCluster]:
    """The retrieval step on arrays (see the module docstring); used by :func:`retrieve_clusters`.

    Args:
        sub_ids: ``(n, D)`` subpath ids of the entity's sentences.
        review_codes: Review index of each sentence.
        tokens: App. D tokens of each sentence (for the lexical filter and merge).
        baseline: Baseline popularity over the corpus; None for an entity with no other entity to be
            compared with (:func:`hierarchy_baseline`).
        n_codes: Codes per level of the hierarchy (to decode subpaths).
        top_k: Subpaths to retrieve.
        alpha: Smoothing constant.
        min_reviews: Ignore subpaths found in fewer reviews.
        max_overlap: Skip a subpath when this share of the smaller of it and a
            chosen cluster is shared with that cluster.
        min_similarity: Drop sentences whose mean tf-idf similarity to the rest
            of their cluster is below this.
        merge_similarity: Merge clusters whose tf-idf centroids have at least this cosine.
    """
    if top_k < 1:
        raise ConfigError(f"top_k={top_k} must be >= 1 (the paper uses 8)")
    if not 0.0 < max_overlap <= 1.0:
        raise ConfigError(f"max_overlap={max_overlap} must be in (0, 1]")
    n = len(review_codes)
    if n == 0:
        return []
    counts = SubpathCounts.from_paths(sub_ids, review_codes)
    ranked = score_subpaths(counts, baseline, alpha=alpha, min_reviews=min_reviews, n_codes=n_codes)
    depth = sub_ids.shape[1]
    model = TfidfModel.fit(tokens)
    vectors = model.transform(tokens)

    chosen: list[np.ndarray] = []
    clusters: list[HiroCluster] = []
    for item in ranked:
        level = len(decode_subpath_id(item.subpath_id, n_codes)) - 1
        if level >= depth:
            continue
        members = np.flatnonzero(sub_ids[:, level] == item.subpath_id)
        member_set = set(members.tolist())
        if any(
            len(member_set.intersection(other.tolist())) >= max_overlap * min(len(members), len(other))
            for other in chosen
        ):
            continue
        chosen.append(members)
        kept, dropped = _lexical_filter(members, vectors, min_similarity)
        if len(np.unique(review_codes[kept])) < min_reviews:
            continue
        clusters.append(
            HiroCluster(
                subpaths=[decode_subpath_id(item.subpath_id, n_codes)],
                indices=kept.tolist(),
                score=item.score,
                expected=item.expected,
                dropped=dropped,
            )
        )
        if len(clusters) >= top_k:
            break
    clusters = _merge(clusters, vectors, merge_similarity)
    for cluster in clusters:
        cluster.reviews = int(len(np.unique(review_codes[cluster.indices])))
    clusters.sort(key=lambda c: (-c.score, -c.reviews))
    return clusters


def _centroid(vectors, indices: list[int]) -> np.ndarray:  # noqa: ANN001 - scipy sparse rows
    mean = np.asarray(vectors[indices].mean(axis=0)).ravel()
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def _merge(clusters: list[HiroCluster], vectors, threshold: float) -> list[HiroCluster]:  # noqa: ANN001
    if threshold >= 1.0 or len(clusters) < 2:
        return clusters
    merged = True
    while merged:
        merged = False
        centroids = [_centroid(vectors, c.indices) for c in clusters]
        for i in range(len(clusters)):
            for j in range(i + 1, len(clusters)):
                if float(centroids[i] @ centroids[j]) >= threshold:
                    a, b = clusters[i], clusters[j]
                    best = a if a.score >= b.score else b
                    clusters[i] = HiroCluster(
                        subpaths=[*best.subpaths, *(b.subpaths if best is a else a.subpaths)],
                        indices=sorted(set(a.indices) | set(b.indices)),
                        score=best.score,
                        expected=best.expected,
                        dropped=a.dropped + b.dropped,
                    )
                    del clusters[j]
                    merged = True
                    break
            if merged:
                break
    return clusters


def retrieve_clusters(
    hiro: HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = DEFAULT_TOP_K,
    alpha: float = DEFAULT_ALPHA,
    min_reviews: int = 2,
    max_overlap: float = 0.5,
    min_similarity: float = 0.05,
    merge_similarity: float = 0.5,
) -> list[HiroCluster]:
    """Top-k clusters of an indexed entity, best first, with their sentence ids.

    See :func:`select_clusters` for the arguments.
    """
    key = hiro.index.require_entity(entity_id)
    stored = hiro.index.sentences(key)
    clusters = select_clusters(
        hiro.subpaths(key),
        hiro.review_codes(key),
        [s.tokens for s in stored],
        hiro.corpus_baseline(key),
        n_codes=hiro.indexer.n_codes,
        top_k=top_k,
        alpha=alpha,
        min_reviews=min_reviews,
        max_overlap=max_overlap,
        min_similarity=min_similarity,
        merge_similarity=merge_similarity,
    )
    for cluster in clusters:
        cluster.sentence_ids = [stored[i].sentence.sentence_id for i in cluster.indices]
    return clusters
