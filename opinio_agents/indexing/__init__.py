"""Ingestion: reviews -> sentences -> BM25 tokens -> vectors -> sentiment, written to a sentence store.

:class:`Indexer` runs the stages of :mod:`opinio_agents.indexing.stages` in
order; each stage is a small protocol and can be replaced without touching
the others (``Indexer(store, sentiment=LexiconSentiment())``).

Example:
    >>> from opinio_agents.indexing import Indexer, LexiconSentiment
    >>> from opinio_agents.stores import SentenceStore
    >>> Indexer(SentenceStore("/tmp/opinio-doc"), sentiment=LexiconSentiment()).sentiment.name
    'vader-review-v1'
"""

from opinio_agents.indexing.indexer import Indexer, IndexStats
from opinio_agents.indexing.plan import ReviewPlan, plan_reviews, review_hash
from opinio_agents.indexing.stages import (
    AppendixDTokenizer,
    Bm25Tokenizer,
    HeadBlendSentiment,
    LexiconSentiment,
    RuleSegmenter,
    Segmenter,
    SentimentStage,
    default_sentiment,
)

__all__ = [
    "Indexer",
    "IndexStats",
    "review_hash",
    "ReviewPlan",
    "plan_reviews",
    "Segmenter",
    "Bm25Tokenizer",
    "SentimentStage",
    "RuleSegmenter",
    "AppendixDTokenizer",
    "LexiconSentiment",
    "HeadBlendSentiment",
    "default_sentiment",
]
