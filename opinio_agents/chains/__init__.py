"""LangChain runnables: the per-query highlight chain and the long-context baseline chain."""

from opinio_agents.chains.highlight import (
    SENTIMENT_THRESHOLD,
    HighlightChain,
    HighlightResult,
    evidence_polarity,
    label_for,
)
from opinio_agents.chains.long_context import LongContextChain, LongContextResult, match_query
from opinio_agents.chains.structured import (
    REPAIR_INSTRUCTION,
    OutputInvalid,
    StructuredCaller,
    StructuredMode,
    StructuredResult,
)

__all__ = [
    "HighlightChain",
    "HighlightResult",
    "evidence_polarity",
    "label_for",
    "SENTIMENT_THRESHOLD",
    "LongContextChain",
    "LongContextResult",
    "match_query",
    "StructuredCaller",
    "StructuredResult",
    "StructuredMode",
    "OutputInvalid",
    "REPAIR_INSTRUCTION",
]
