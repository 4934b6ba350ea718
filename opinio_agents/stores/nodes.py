"""Conversion between :class:`~opinio_agents.models.Sentence` and LlamaIndex nodes (the vector format of the store).

Review metadata travels on the node but is excluded from the text that is
embedded or shown to an LLM (LlamaIndex would otherwise prepend it).

Example:
    >>> from opinio_agents.models import Sentence
    >>> s = Sentence(sentence_id="1:7:0", entity_id="1", review_id="7", index=0,
    ...              text="Great pool.", start=0, end=11, rating=5.0)
    >>> node = sentence_to_node(s)
    >>> node.node_id, node.metadata["rating"]
    ('1:7:0', 5.0)
"""

from __future__ import annotations

from llama_index.core.schema import TextNode

from opinio_agents.models import Sentence

__all__ = ["sentence_to_node", "publication_ordinal"]


def publication_ordinal(sentence: Sentence) -> int | None:
    """The publication date as an integer ``YYYYMMDD`` (Chroma filters need numbers)."""
    date = sentence.publication_date
    return None if date is None else date.year * 10000 + date.month * 100 + date.day


def sentence_to_node(sentence: Sentence) -> TextNode:
    """A TextNode whose id is the ``sentence_id`` and whose metadata is the review's."""
    metadata = sentence.metadata()
    ordinal = publication_ordinal(sentence)
    if ordinal is not None:
        metadata["publication_ordinal"] = ordinal
    keys = list(metadata)
    return TextNode(
        id_=sentence.sentence_id,
        text=sentence.text,
        metadata=metadata,
        excluded_embed_metadata_keys=keys,
        excluded_llm_metadata_keys=keys,
    )
