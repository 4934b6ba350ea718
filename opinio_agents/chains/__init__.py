"""LangChain runnables: the per-query and per-entity highlight chains and the long-context baseline chain.

All are ``RunnableSerializable`` subclasses that ask their model through the one
structured-output layer, :class:`opinio_agents.llm.StructuredChat`.
"""

from opinio_agents.chains.highlight import (
    HIGHLIGHT_REPAIR_INSTRUCTION,
    HighlightChain,
    HighlightResult,
    evidence_polarity,
    label_for,
)
from opinio_agents.chains.highlight_batch import EntityHighlightChain, EntityHighlightResult
from opinio_agents.chains.long_context import LongContextChain, LongContextResult, match_query

__all__ = [
    "HighlightChain",
    "HighlightResult",
    "EntityHighlightChain",
    "EntityHighlightResult",
    "HIGHLIGHT_REPAIR_INSTRUCTION",
    "evidence_polarity",
    "label_for",
    "LongContextChain",
    "LongContextResult",
    "match_query",
]
