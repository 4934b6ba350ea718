"""Aspect-opinion-sentiment (AOS) triplet extraction (OpinioRAG Sec. 4.1).

Public API (importing this package loads no model and does not import torch):

- :class:`Triplet`, :class:`SentenceTriplets`, :class:`TripletExtractor`,
  :data:`IMPLICIT_ASPECT` (``""``);
- :class:`EmbeddedTripletExtractor` - offline CPU default (frozen MiniLM + small head);
- :class:`TransformersTripletExtractor` - a local seq2seq checkpoint;
- :class:`LLMTripletExtractor` - any LangChain chat model;
- :func:`get_triplet_extractor` - build one from a spec.

Example:
    >>> from opinio_agents.triplets import get_triplet_extractor
    >>> extractor = get_triplet_extractor("embedded")
    >>> extractor.extract_one("The staff was friendly but the room was dirty.")  # doctest: +SKIP
    [Triplet(aspect='staff', opinion='friendly', sentiment=1),
     Triplet(aspect='room', opinion='dirty', sentiment=-1)]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from opinio_agents.triplets.base import (
    IMPLICIT_ASPECT,
    SentenceTriplets,
    Triplet,
    TripletExtractor,
)

if TYPE_CHECKING:
    from opinio_agents.triplets.embedded import EmbeddedTripletExtractor
    from opinio_agents.triplets.factory import get_triplet_extractor
    from opinio_agents.triplets.llm import LLMTripletExtractor
    from opinio_agents.triplets.seq2seq import TransformersTripletExtractor

__all__ = [
    "IMPLICIT_ASPECT",
    "Triplet",
    "SentenceTriplets",
    "TripletExtractor",
    "EmbeddedTripletExtractor",
    "TransformersTripletExtractor",
    "LLMTripletExtractor",
    "get_triplet_extractor",
]

# The extractors are imported on first use: importing a submodule such as ``triplets.aos``
# (which synthesis needs for every highlight) must not import LangChain through ``triplets.llm``.
_LAZY = {
    "EmbeddedTripletExtractor": "opinio_agents.triplets.embedded",
    "TransformersTripletExtractor": "opinio_agents.triplets.seq2seq",
    "LLMTripletExtractor": "opinio_agents.triplets.llm",
    "get_triplet_extractor": "opinio_agents.triplets.factory",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'opinio_agents.triplets' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
