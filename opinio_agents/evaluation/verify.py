"""The AOS verifier of ``opinio evaluate``: re-exported from :mod:`opinio_agents.triplets.verifier`.

Example:
    >>> from opinio_agents.triplets.verifier import AOSVerifier as Same
    >>> AOSVerifier is Same
    True
"""

from opinio_agents.triplets.verifier import AOSVerifier, EmbeddingOpinionSimilarity

__all__ = ["EmbeddingOpinionSimilarity", "AOSVerifier"]
