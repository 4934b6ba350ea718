"""Exact-match scores for triplet extraction.

A predicted triplet counts as correct only if its aspect span, opinion span and
sentiment all equal a gold triplet of the same sentence (ASTE convention).

Example:
    >>> s = triplet_scores([{((0, 0), (2, 2), 1)}], [{((0, 0), (2, 2), 1), ((4, 4), (5, 5), -1)}])
    >>> s.precision, s.recall, round(s.f1, 3)
    (1.0, 0.5, 0.667)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["PRF", "triplet_scores"]


@dataclass(frozen=True)
class PRF:
    """Micro precision / recall / F1 with the underlying counts."""

    tp: int
    n_pred: int
    n_gold: int

    @property
    def precision(self) -> float:
        """tp / predicted (0 when nothing was predicted)."""
        return self.tp / self.n_pred if self.n_pred else 0.0

    @property
    def recall(self) -> float:
        """tp / gold (0 when there is no gold item)."""
        return self.tp / self.n_gold if self.n_gold else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def triplet_scores(
    predicted: Sequence[Iterable[Hashable]], gold: Sequence[Iterable[Hashable]]
) -> PRF:
    """Micro P/R/F1 of per-sentence item sets (items compared with ``==``)."""
    if len(predicted) != len(gold):
        from opinio_agents.errors import ConfigError

        raise ConfigError(f"predicted has {len(predicted)} sentences but gold has {len(gold)}")
    tp = n_pred = n_gold = 0
    for pred_items, gold_items in zip(predicted, gold, strict=True):
        p, g = set(pred_items), set(gold_items)
        tp += len(p & g)
        n_pred += len(p)
        n_gold += len(g)
    return PRF(tp=tp, n_pred=n_pred, n_gold=n_gold)
