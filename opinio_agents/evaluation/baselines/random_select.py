"""Random baseline (App. F): as many random sentences as the expert has PROS, then CONS.

Sampling is without replacement and the PROS are removed before the CONS are
drawn. The generator is seeded with ``seed`` and the entity id, so a run is
reproducible and independent of the order entities are processed in.

Example:
    >>> from opinio_agents.evaluation.baselines.base import BaselineInput, Candidate
    >>> from opinio_agents.models import ExpertReview
    >>> data = BaselineInput("1", ExpertReview(pros={"a": "x"}, cons={"b": "y"}),
    ...                      [Candidate(f"1:1:{i}", f"s{i}", 0) for i in range(5)])
    >>> hs = RandomBaseline(seed=3).run(data)
    >>> len(hs.pros), len(hs.cons), hs.pros[0].text != hs.cons[0].text
    (1, 1, True)
"""

from __future__ import annotations

import random

from opinio_agents.evaluation.baselines.base import (
    Baseline,
    BaselineInput,
    make_highlights,
    unique_candidates,
)
from opinio_agents.models import HighlightSet

__all__ = ["RandomBaseline"]


class RandomBaseline(Baseline):
    """Random PROS/CONS sentences.

    Args:
        seed: Base seed; combined with the entity id.
    """

    name = "random"

    def __init__(self, seed: int = 13) -> None:
        self.seed = seed

    def run(self, data: BaselineInput) -> HighlightSet:
        """Random picks; fewer than asked when the entity has too few sentences."""
        rng = random.Random(f"{self.seed}:{data.entity_id}")
        pool = unique_candidates(data.candidates)
        pro_queries, con_queries = list(data.expert.pros), list(data.expert.cons)
        pros = rng.sample(pool, min(len(pro_queries), len(pool)))
        chosen = {c.sentence_id for c in pros}
        rest = [c for c in pool if c.sentence_id not in chosen]
        cons = rng.sample(rest, min(len(con_queries), len(rest)))
        return make_highlights(
            data,
            list(zip(pro_queries, pros, strict=False)),
            list(zip(con_queries, cons, strict=False)),
            name=self.name,
        )
