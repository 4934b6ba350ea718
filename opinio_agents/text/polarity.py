"""Which side a set of evidence sentences leans to, by their own sentiment.

One definition serves every synthesizer (extractive, LLM chain, HIRO): the side
with more clearly opinionated sentences (|sentiment| above the neutral band)
wins; a tie, or no opinionated sentence, is ``None``.

Example:
    >>> from opinio_agents.models import Evidence
    >>> ev = [Evidence(sentence_id="1:1:0", text="a", sentiment=0.6),
    ...       Evidence(sentence_id="1:2:0", text="b", sentiment=-0.2),
    ...       Evidence(sentence_id="1:3:0", text="c", sentiment=0.3)]
    >>> evidence_polarity(ev).value
    'pros'
"""

from __future__ import annotations

from collections.abc import Sequence

from opinio_agents.models import SENTIMENT_THRESHOLD, Evidence, Polarity

__all__ = ["evidence_polarity"]


def evidence_polarity(evidence: Sequence[Evidence], threshold: float = SENTIMENT_THRESHOLD) -> Polarity | None:
    """The side most opinionated evidence sentences fall on; None when tied or neutral."""
    positive = sum(1 for e in evidence if (e.sentiment or 0.0) > threshold)
    negative = sum(1 for e in evidence if (e.sentiment or 0.0) < -threshold)
    if positive == negative:
        return None
    return Polarity.PROS if positive > negative else Polarity.CONS
