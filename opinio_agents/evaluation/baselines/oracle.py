"""Extractive oracle (App. F): for each expert sentence, the review sentence with the best ROUGE-L.

The sentiment constraint applies: PROS are chosen among positive sentences,
CONS among negative ones (falling back to all sentences when a side has none).
A sentence is used at most once; ties go to the earlier sentence, so the
oracle is deterministic. It reads the references, so it is an upper bound.

Example:
    >>> from opinio_agents.evaluation.baselines.base import BaselineInput, Candidate
    >>> from opinio_agents.models import ExpertReview
    >>> cands = [Candidate("1:1:0", "The pool is huge and warm.", 1),
    ...          Candidate("1:1:1", "Tiny cold pool.", -1)]
    >>> expert = ExpertReview(pros={"pool": "Huge warm pool."})
    >>> hs = ExtractiveOracle().run(BaselineInput("1", expert, cands))
    >>> hs.pros[0].text
    'The pool is huge and warm.'
"""

from __future__ import annotations

from collections.abc import Sequence

from opinio_agents.evaluation.baselines.base import (
    Baseline,
    BaselineInput,
    Candidate,
    make_highlights,
    unique_candidates,
)
from opinio_agents.evaluation.rouge import lcs_length, rouge_tokenize
from opinio_agents.models import HighlightSet

__all__ = ["ExtractiveOracle"]


def _rl_f1(ref: Sequence[str], pred: Sequence[str]) -> float:
    if not ref or not pred:
        return 0.0
    hits = lcs_length(ref, pred)
    if not hits:
        return 0.0
    p, r = hits / len(pred), hits / len(ref)
    return 2 * p * r / (p + r)


class ExtractiveOracle(Baseline):
    """Best-ROUGE-L review sentence per expert PRO/CON under the sentiment constraint.

    Args:
        use_stemmer: Stem tokens as the ROUGE evaluation does.
    """

    name = "oracle"

    def __init__(self, *, use_stemmer: bool = True) -> None:
        self.use_stemmer = use_stemmer

    def run(self, data: BaselineInput) -> HighlightSet:
        """The oracle's picks for one entity."""
        candidates = unique_candidates(data.candidates)
        tokens = {
            c.sentence_id: rouge_tokenize(c.text, use_stemmer=self.use_stemmer) for c in candidates
        }
        used: set[str] = set()
        picks: dict[int, list[tuple[str, Candidate]]] = {1: [], -1: []}
        for label, refs in ((1, data.expert.pros), (-1, data.expert.cons)):
            pool = [c for c in candidates if c.label == label] or candidates
            for query, reference in refs.items():
                ref = rouge_tokenize(reference, use_stemmer=self.use_stemmer)
                ref_set = set(ref)
                best: Candidate | None = next((c for c in pool if c.sentence_id not in used), None)
                best_score = 0.0
                for cand in pool:
                    if cand.sentence_id in used or ref_set.isdisjoint(tokens[cand.sentence_id]):
                        continue
                    score = _rl_f1(ref, tokens[cand.sentence_id])
                    if score > best_score:
                        best, best_score = cand, score
                if best is not None:
                    used.add(best.sentence_id)
                    picks[label].append((query, best))
        return make_highlights(data, picks[1], picks[-1], name=self.name)
