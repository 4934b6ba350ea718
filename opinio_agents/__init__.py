"""opinio_agents: user-centric opinion highlights from large collections of reviews.

The public API is imported lazily, so ``import opinio_agents`` loads no model,
opens no store and touches no network.

Example:
    >>> from opinio_agents import OpinioRAG, load_sample
    >>> rag = OpinioRAG(store_dir="/tmp/opinio-demo")            # doctest: +SKIP
    >>> rag.index(load_sample())                                 # doctest: +SKIP
    >>> rag.highlights(101, ["wi-fi", "breakfast buffet"])       # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import os
from typing import Any

__version__ = "0.1.0"

# OpenMP threads (torch's intra-op pool) that wait for work by sleeping, not spinning.
# Spinning pays only on an idle machine; on a busy one (a server's threads, Ray workers,
# other processes) each parallel region waits for descheduled spinners: the triplet
# extractor on 8 sentences took 10-20 s wall (2-5 s CPU) with the default policy and
# 0.5 s (0.14 s CPU) with this one, in the same run on a loaded 2-core host. It takes
# effect only when set before torch loads; an explicit user setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__all__ = [
    "OpinioRAG",
    "Entity",
    "Review",
    "ExpertReview",
    "Sentence",
    "Highlight",
    "HighlightSet",
    "Evidence",
    "Support",
    "Trend",
    "Weighting",
    "Alert",
    "Polarity",
    "OpinioError",
    "DataError",
    "ConfigError",
    "StoreError",
    "LLMError",
    "LLMOutputError",
    "MissingDependencyError",
    "SentenceStore",
    "Indexer",
    "RetrieverFactory",
    "HighlightPipeline",
    "ExtractiveSynthesizer",
    "LLMSynthesizer",
    "LongContextSynthesizer",
    "resolve_chat_model",
    "load_entities",
    "iter_entities",
    "load_sample",
    "sample_path",
    "generate_dataset",
    "__version__",
]

_LAZY = {
    "OpinioRAG": "opinio_agents.api",
    "SentenceStore": "opinio_agents.stores.sentence_store",
    "Indexer": "opinio_agents.indexing.indexer",
    "RetrieverFactory": "opinio_agents.retrieval.factory",
    "HighlightPipeline": "opinio_agents.pipeline",
    "ExtractiveSynthesizer": "opinio_agents.synthesis.extractive",
    "LLMSynthesizer": "opinio_agents.synthesis.llm",
    "LongContextSynthesizer": "opinio_agents.synthesis.long_context",
    "resolve_chat_model": "opinio_agents.llm.providers",
    "load_entities": "opinio_agents.io.loaders",
    "iter_entities": "opinio_agents.io.loaders",
    "load_sample": "opinio_agents.datasets.sample",
    "sample_path": "opinio_agents.datasets.sample",
    "generate_dataset": "opinio_agents.datasets.synthetic",
    "Weighting": "opinio_agents.trends",
    "Trend": "opinio_agents.models",
    **{name: "opinio_agents.models" for name in (
        "Entity", "Review", "ExpertReview", "Sentence", "Highlight", "HighlightSet", "Evidence", "Support",
        "Alert", "Polarity",
    )},
    **{name: "opinio_agents.errors" for name in (
        "OpinioError", "DataError", "ConfigError", "StoreError", "LLMError", "LLMOutputError",
        "MissingDependencyError",
    )},
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'opinio_agents' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
