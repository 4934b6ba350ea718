"""Non-LLM baselines of OpinioRAG App. F and the retrieval-only ablation of Sec. 5.

* :class:`~opinio_agents.evaluation.baselines.random_select.RandomBaseline`
* :class:`~opinio_agents.evaluation.baselines.oracle.ExtractiveOracle`
* :class:`~opinio_agents.evaluation.baselines.graph.TextRankBaseline`
* :class:`~opinio_agents.evaluation.baselines.graph.LexRankBaseline`
* :class:`~opinio_agents.evaluation.baselines.retrieval.RetrievalOnlyBaseline`
* :mod:`~opinio_agents.evaluation.baselines.summary` - random / LexRank / centroid / oracle
  sentence selection for summaries scored against human references.

The long-context LLM baseline is :mod:`opinio_agents.synthesis.long_context`.
"""

from opinio_agents.evaluation.baselines.base import Baseline, BaselineInput, Candidate
from opinio_agents.evaluation.baselines.graph import LexRankBaseline, TextRankBaseline
from opinio_agents.evaluation.baselines.oracle import ExtractiveOracle
from opinio_agents.evaluation.baselines.random_select import RandomBaseline
from opinio_agents.evaluation.baselines.retrieval import RetrievalOnlyBaseline, candidates_from_index

__all__ = [
    "Baseline",
    "BaselineInput",
    "Candidate",
    "RandomBaseline",
    "ExtractiveOracle",
    "TextRankBaseline",
    "LexRankBaseline",
    "RetrievalOnlyBaseline",
    "candidates_from_index",
]
