"""The shared vocabulary: the kinds several layers name, each a ``Literal`` defined here once.

Layer 0 (it imports nothing of the package), so every layer may use it. The tuples list the
values of each ``Literal`` for checks and help texts; they are derived from it, never re-typed.

Example:
    >>> from opinio_agents.kinds import RETRIEVERS, QUERY_MODES
    >>> RETRIEVERS
    ('bm25', 'dense', 'hybrid')
    >>> QUERY_MODES
    ('queries', 'expert-queries', 'query-free')
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "RetrieverKind",
    "RETRIEVERS",
    "QueryMode",
    "QUERY_MODES",
    "SynthesizerKind",
    "SYNTHESIZERS",
]

#: How evidence is retrieved: BM25 Okapi, dense (MiniLM cosine) or both fused by RRF.
RetrieverKind = Literal["bm25", "dense", "hybrid"]
RETRIEVERS: tuple[RetrieverKind, ...] = get_args(RetrieverKind)

#: Where a result's queries came from: given by the caller, the entity's expert review, or none (HIRO).
QueryMode = Literal["queries", "expert-queries", "query-free"]
QUERY_MODES: tuple[QueryMode, ...] = get_args(QueryMode)

#: How a per-query (or whole-entity) highlight is written.
SynthesizerKind = Literal["extractive", "llm", "long-context"]
SYNTHESIZERS: tuple[SynthesizerKind, ...] = get_args(SynthesizerKind)
