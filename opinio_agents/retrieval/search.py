"""The scoring core under the retrievers: BM25, exact cosine and reciprocal-rank fusion on arrays.

The LlamaIndex retrievers of this package (``OpinioBM25Retriever``, the dense
retriever, LlamaIndex's ``QueryFusionRetriever``) wrap LlamaIndex nodes around the
same scores. :meth:`~opinio_agents.retrieval.RetrieverFactory.retrieve` calls these
functions directly on the entity's cached BM25 matrix and stored vectors, which
gives the same sentences in the same order without building nodes or query
bundles (a hybrid query over 10K sentences then costs about a millisecond of
arithmetic, not tens of milliseconds of framework).

Example:
    >>> import numpy as np
    >>> vectors = np.eye(3, dtype=np.float32)
    >>> dense_top_k(vectors, np.array([0.6, 0.8, 0.0], dtype=np.float32), 5)
    [(1, 0.800000011920929), (0, 0.6000000238418579)]
    >>> rrf_fuse([[(0, 2.0), (1, 1.0)], [(1, 0.8), (2, 0.5)]], top_k=3)
    [(1, 0.03306010928961749), (0, 0.016666666666666666), (2, 0.01639344262295082)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from opinio_agents.retrieval.bm25.selection import top_k_positive

__all__ = ["dense_top_k", "rrf_fuse", "RRF_K"]

#: The reciprocal-rank constant of LlamaIndex's ``QueryFusionRetriever`` (and of Cormack et al.).
RRF_K = 60.0


def dense_top_k(vectors: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """``(row, cosine)`` of the ``k`` rows most similar to ``query`` with cosine > 0, best first.

    Rows and query are L2-normalised, so the dot product is the cosine (exact search,
    ties broken by row order).
    """
    if k <= 0 or vectors.shape[0] == 0:
        return []
    query = np.asarray(query, dtype=vectors.dtype).ravel()
    if query.shape[0] != vectors.shape[1]:
        from opinio_agents.errors import ConfigError

        raise ConfigError(
            f"query vector has dimension {query.shape[0]} but the stored vectors have {vectors.shape[1]}; "
            "embed the query with the model that built the store"
        )
    # einsum, not ``vectors @ query``: a matrix-vector product is memory-bound, and BLAS's threads
    # only contend (tens of times slower on a busy machine); einsum runs on the calling thread.
    return top_k_positive(np.einsum("ij,j->i", vectors, query), k)


def rrf_fuse(ranked: Sequence[Sequence[tuple[int, float]]], *, top_k: int, k: float = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of ranked ``(row, score)`` lists: ``sum 1 / (rank + k)``, best first.

    Mirrors LlamaIndex's ``QueryFusionRetriever`` in ``reciprocal_rerank`` mode: each
    list is ranked by score (stable), a row's fused score adds ``1 / (rank + k)`` over
    the lists it appears in, and ties keep the order in which rows were first seen.
    """
    fused: dict[int, float] = {}
    for hits in ranked:
        for rank, (row, _score) in enumerate(sorted(hits, key=lambda hit: hit[1] or 0.0, reverse=True)):
            fused[row] = fused.get(row, 0.0) + 1.0 / (rank + k)
    ordered = sorted(fused.items(), key=lambda item: item[1], reverse=True)
    return ordered[:top_k]
