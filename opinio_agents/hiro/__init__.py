"""HIRO: hierarchical indexing for query-free, attributable opinion summaries.

Every review sentence is mapped to a path through a discrete hierarchy
(recursive residual k-means over MiniLM embeddings, fitted once per store);
the retriever picks the subpaths that are popular in one entity *and*
specific to it, and their sentence clusters become aspects, query-free
PROS/CONS highlights, comparisons and summaries that keep their evidence.

Example:
    >>> from opinio_agents.hiro import discover_aspects, query_free_highlights
    >>> aspects = discover_aspects(index, "101")             # doctest: +SKIP
    >>> highlights = query_free_highlights(index, "101")     # doctest: +SKIP
"""

from opinio_agents.hiro.aspects import DiscoveredAspect, discover_aspects
from opinio_agents.hiro.attribution import (
    AttributionReport,
    CallableJudge,
    EntailmentJudge,
    LLMEntailmentJudge,
    NLIEntailmentJudge,
    attribution,
)
from opinio_agents.hiro.compare import ComparisonItem, EntityComparison, compare_entity
from opinio_agents.hiro.generators import GeneratedSentence, HiroDocGenerator, HiroSentGenerator, extractive_summary
from opinio_agents.hiro.highlights import query_free_highlights
from opinio_agents.hiro.indexer import ResidualKMeansIndexer
from opinio_agents.hiro.quality import DepthQuality, depth_quality, tfidf_quality
from opinio_agents.hiro.retriever import HiroCluster, retrieve_clusters, score_subpaths
from opinio_agents.hiro.store import HiroIndex
from opinio_agents.hiro.summarize import HiroSummary, hiro_summary

__all__ = [
    "HiroIndex",
    "ResidualKMeansIndexer",
    "HiroCluster",
    "retrieve_clusters",
    "score_subpaths",
    "DiscoveredAspect",
    "discover_aspects",
    "query_free_highlights",
    "ComparisonItem",
    "EntityComparison",
    "compare_entity",
    "GeneratedSentence",
    "extractive_summary",
    "HiroSentGenerator",
    "HiroDocGenerator",
    "HiroSummary",
    "hiro_summary",
    "EntailmentJudge",
    "CallableJudge",
    "LLMEntailmentJudge",
    "NLIEntailmentJudge",
    "AttributionReport",
    "attribution",
    "DepthQuality",
    "depth_quality",
    "tfidf_quality",
]
