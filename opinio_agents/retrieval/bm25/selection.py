"""Top-K selection over a score vector, keeping only positive scores.

OpinioRAG (App. B.1) returns at most K sentences *with a score > 0*; ties are
broken by document order so results are deterministic.

Example:
    >>> import numpy as np
    >>> top_k_positive(np.array([0.0, 2.0, 1.0, 2.0]), 3)
    [(1, 2.0), (3, 2.0), (2, 1.0)]
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_k_positive"]


def top_k_positive(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Return ``(index, score)`` of the ``k`` best strictly positive scores, best first."""
    if k <= 0 or scores.size == 0:
        return []
    positive = np.flatnonzero(scores > 0)
    if positive.size > 4 * k:  # keep only what can make the top k (every tie of the k-th score included)
        values = scores[positive]
        kth = np.partition(values, values.size - k)[values.size - k]
        positive = positive[values >= kth]
    # Sort by score descending, then by index ascending (deterministic ties).
    chosen = positive[np.lexsort((positive, -scores[positive]))][:k]
    return [(int(i), float(scores[i])) for i in chosen]
