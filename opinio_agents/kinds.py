"""The shared vocabulary: the kinds several layers name, each a ``Literal`` defined here once.

Layer 0 (it imports nothing of the package, and nothing heavy), so every layer may use it,
the CLI included at start-up. The tuples list the values of each ``Literal`` for checks and
help texts; they are derived from it, never re-typed. ``DEFAULT_STORE`` is here for the same
reason: the library and the CLI name the same default index directory.

Example:
    >>> from opinio_agents.kinds import RETRIEVERS, QUERY_MODES
    >>> RETRIEVERS
    ('bm25', 'dense', 'hybrid')
    >>> QUERY_MODES
    ('queries', 'expert-queries', 'query-free')
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

__all__ = [
    "RetrieverKind",
    "RETRIEVERS",
    "QueryMode",
    "QUERY_MODES",
    "SynthesizerKind",
    "SYNTHESIZERS",
    "PolarityName",
    "POLARITY_NAMES",
    "AspectSource",
    "Verdict",
    "Granularity",
    "ChatMode",
    "ChatRole",
    "DraftPolarity",
    "DRAFT_POLARITIES",
    "DEFAULT_STORE",
]

#: Where the index lives unless told otherwise (``OpinioRAG(store_dir=...)``, ``--store``).
DEFAULT_STORE = Path(".opinio")

#: How evidence is retrieved: BM25 Okapi, dense (MiniLM cosine) or both fused by RRF.
RetrieverKind = Literal["bm25", "dense", "hybrid"]
RETRIEVERS: tuple[RetrieverKind, ...] = get_args(RetrieverKind)

#: Where a result's queries came from: given by the caller, the entity's expert review, or none (HIRO).
QueryMode = Literal["queries", "expert-queries", "query-free"]
QUERY_MODES: tuple[QueryMode, ...] = get_args(QueryMode)

#: How a per-query (or whole-entity) highlight is written.
SynthesizerKind = Literal["extractive", "llm", "long-context"]
SYNTHESIZERS: tuple[SynthesizerKind, ...] = get_args(SynthesizerKind)

#: A highlight's side as a name (the values of ``models.Polarity``; OpinioBank's keys).
PolarityName = Literal["pros", "cons"]
POLARITY_NAMES: tuple[PolarityName, ...] = get_args(PolarityName)

#: Where an entity's aspect list came from: the HIRO hierarchy or its expert review.
AspectSource = Literal["hiro", "expert-queries"]

#: How well a highlight's own evidence backs it (``HighlightVerification.verdict``).
Verdict = Literal["supported", "weak", "contradicted"]

#: The periods of a trend: calendar years or quarters.
Granularity = Literal["year", "quarter"]

#: How a chat turn was answered: by a chat model, or extractively from the evidence.
ChatMode = Literal["llm", "extractive"]

#: Who wrote a turn of a chat conversation (the client keeps the conversation).
ChatRole = Literal["user", "assistant"]

#: A highlight's side as an LLM writes it in its answer (upper case, as the prompts ask).
DraftPolarity = Literal["PROS", "CONS"]
DRAFT_POLARITIES: tuple[DraftPolarity, ...] = get_args(DraftPolarity)
