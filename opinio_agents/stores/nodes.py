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

from typing import Any

from llama_index.core.schema import TextNode

from opinio_agents.models import Sentence

__all__ = ["sentence_to_node", "publication_ordinal", "vector_metadata"]


def publication_ordinal(sentence: Sentence) -> int | None:
    """The publication date as an integer ``YYYYMMDD`` (Chroma filters need numbers)."""
    date = sentence.publication_date
    return None if date is None else date.year * 10000 + date.month * 100 + date.day


def vector_metadata(sentence: Sentence) -> dict[str, Any]:
    """The flat metadata stored with a sentence's vector (and on its node): the review's, plus ``publication_ordinal``.

    Example:
        >>> from opinio_agents.models import Sentence
        >>> s = Sentence(sentence_id="1:7:0", entity_id="1", review_id="7", index=0, text="Ok.", start=0, end=3,
        ...              publication_date="2021-03-02")
        >>> vector_metadata(s)["publication_ordinal"]
        20210302
    """
    metadata = sentence.metadata()
    ordinal = publication_ordinal(sentence)
    if ordinal is not None:
        metadata["publication_ordinal"] = ordinal
    return metadata


def sentence_to_node(sentence: Sentence) -> TextNode:
    """A TextNode whose id is the ``sentence_id`` and whose metadata is the review's."""
    metadata = vector_metadata(sentence)
    keys = list(metadata)
    return TextNode(
        id_=sentence.sentence_id,
        text=sentence.text,
        metadata=metadata,
        excluded_embed_metadata_keys=keys,
        excluded_llm_metadata_keys=keys,
    )
