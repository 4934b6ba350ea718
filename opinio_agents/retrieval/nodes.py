"""Sentence <-> LlamaIndex node conversion, re-exported for retrieval code.

The conversion lives in :mod:`opinio_agents.stores.nodes` because the store
writes vectors in this format; retrievers read it back.

Example:
    >>> from opinio_agents.retrieval.nodes import sentence_to_node
    >>> callable(sentence_to_node)
    True
"""

from opinio_agents.stores.nodes import publication_ordinal, sentence_to_node

__all__ = ["sentence_to_node", "publication_ordinal"]
