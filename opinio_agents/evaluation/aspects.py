"""Aspect matching of the AOS metrics: re-exported from :mod:`opinio_agents.triplets.aspects`.

Example:
    >>> aspects_match("Wi-Fi", "wifi")
    True
"""

from opinio_agents.triplets.aspects import DETERMINERS, aspect_words, aspects_match, normalize_aspect

__all__ = ["normalize_aspect", "aspect_words", "aspects_match", "DETERMINERS"]
