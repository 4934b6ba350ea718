"""Hand-made inputs shared by the selection tests: unit vectors and stored sentences of one entity ("9").

Example:
    >>> stored(0, "Great staff.", 0.6).sentence.sentence_id
    '9:0:0'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from opinio_agents.models import Sentence
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.text.preprocess import tokenize_for_bm25

if TYPE_CHECKING:
    from opinio_agents.hiro.aspects import DiscoveredAspect


def unit(rows: list[list[float]]) -> np.ndarray:
    """The rows scaled to unit length (stand-ins for sentence embeddings)."""
    m = np.array(rows, dtype=float)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def stored(i: int, text: str, sentiment: float) -> StoredSentence:
    """Sentence ``i`` of entity "9", alone in review ``i``, with its App. D tokens and ``sentiment``."""
    sentence = Sentence(
        sentence_id=f"9:{i}:0", entity_id="9", review_id=str(i), index=0, text=text, start=0, end=len(text)
    )
    return StoredSentence(sentence, tuple(tokenize_for_bm25(text)), sentiment)


def one_cluster_aspect(name: str, count: int) -> DiscoveredAspect:
    """A discovered aspect ``name`` of sentences 0 .. count - 1, all positive, all using its name, in one cluster."""
    from opinio_agents.hiro.aspects import DiscoveredAspect, HiroCluster

    indices = list(range(count))
    return DiscoveredAspect(
        name, count, count, 0, 0, count, 1.0, sentence_indices=indices, term_indices=indices,
        clusters=[HiroCluster(subpaths=[(1,)], indices=indices, score=1.0)], forms=[name],
    )
