"""Text processing: sentence segmentation, BM25 preprocessing and sentiment.

All three modules are light (regexes; lemma tables and the VADER lexicon load
lazily on first use), so they are imported eagerly here.

Example:
    >>> from opinio_agents.text import split_sentences, tokenize_for_bm25
    >>> tokenize_for_bm25("Free wi-fi!")
    ['free', 'wifi']
"""

from opinio_agents.text.preprocess import preprocess_for_bm25, tokenize_for_bm25
from opinio_agents.text.segment import segment_entity, segment_review, split_sentences
from opinio_agents.text.sentiment import (
    SentimentScorer,
    VaderSentimentScorer,
    default_sentiment_scorer,
    sentiment_label,
)

__all__ = [
    "split_sentences",
    "segment_review",
    "segment_entity",
    "preprocess_for_bm25",
    "tokenize_for_bm25",
    "SentimentScorer",
    "VaderSentimentScorer",
    "default_sentiment_scorer",
    "sentiment_label",
]
