"""AOS verification metrics (OpinioRAG Sec. 4.1): re-exported from :mod:`opinio_agents.triplets.aos`.

The one implementation of AR, SF and OF lives in the triplets layer, so that
synthesis can verify every highlight at generation time with the very functions
``opinio evaluate`` reports; this module keeps the evaluation import path.

Example:
    >>> from opinio_agents.evaluation.aos import aspect_relevance
    >>> from opinio_agents.triplets.aos import aspect_relevance as same
    >>> aspect_relevance is same
    True
"""

from opinio_agents.triplets.aos import (
    AOSScore,
    AOSSummary,
    OpinionSimilarity,
    aspect_relevance,
    dominant_aspects,
    dominant_sentiments,
    focus_triplet,
    opinion_faithfulness,
    same_opinion,
    score_aos,
    sentiment_factuality,
    summarize_aos,
)

__all__ = [
    "OpinionSimilarity",
    "dominant_aspects",
    "focus_triplet",
    "aspect_relevance",
    "dominant_sentiments",
    "sentiment_factuality",
    "opinion_faithfulness",
    "AOSScore",
    "AOSSummary",
    "score_aos",
    "summarize_aos",
    "same_opinion",
]
