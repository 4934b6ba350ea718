"""Aspect matching tolerant of surface variation, used by the AOS metrics.

Triplet extractors return aspects as written in the sentence, so the same
aspect surfaces as ``"Wi-Fi"``, ``"wifi"``, ``"the wi-fi"`` or ``"beds"`` /
``"bed"``. Two aspects *match* (:func:`aspects_match`) when their normalised
forms (:func:`normalize_aspect`) are equal, where normalisation

1. lower-cases and turns ``'s`` possessives, punctuation and hyphens into spaces
   (``"Wi-Fi"`` -> ``"wi fi"``),
2. drops determiners and possessive pronouns (``the``, ``a``, ``our``, ``their`` ...),
3. lemmatises each word as a noun (``beds`` -> ``bed``; lemminflect, a core
   dependency; words are kept as they are if it is missing),
4. removes the spaces (``"wi fi"`` and ``"wifi"`` both become ``"wifi"``).

With ``head_match=True`` (the default used by the metrics) two multi-word
aspects also match when they share their last word, the head noun of an
English noun phrase (``"room bathroom"`` vs ``"bathroom"``, ``"hotel staff"``
vs ``"staff"``); single-letter heads never match this way. Implicit aspects
(the empty string) never match anything, not even each other: an opinion
without an aspect term cannot show topical alignment (App. E.1).

Example:
    >>> normalize_aspect("The Wi-Fi")
    'wifi'
    >>> aspects_match("beds", "Bed"), aspects_match("hotel staff", "staff")
    (True, True)
    >>> aspects_match("", "")
    False
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["normalize_aspect", "aspect_words", "aspects_match", "DETERMINERS"]

#: Words dropped from aspects before comparison.
DETERMINERS: frozenset[str] = frozenset(
    {
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "our",
        "my",
        "their",
        "its",
        "his",
        "her",
        "your",
    }
)

_NON_WORD = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=8192)
def _lemma(word: str) -> str:
    try:
        from lemminflect import getLemma
    except ImportError:  # pragma: no cover - core dependency
        return word
    lemmas = getLemma(word, upos="NOUN")
    return lemmas[0].lower() if lemmas else word


@lru_cache(maxsize=16384)
def aspect_words(aspect: str) -> tuple[str, ...]:
    """Lower-cased, determiner-free, noun-lemmatised words of an aspect.

    Example:
        >>> aspect_words("Our rooms' Beds")
        ('room', 'bed')
    """
    text = aspect.lower().replace("'s ", " ").replace("\u2019s ", " ")
    words = [w for w in _NON_WORD.sub(" ", text).split() if w not in DETERMINERS]
    return tuple(_lemma(w) if len(w) > 3 else w for w in words)


def normalize_aspect(aspect: str) -> str:
    """The comparison key of an aspect ('' for an implicit aspect).

    Example:
        >>> normalize_aspect("Wi-Fi"), normalize_aspect("wifi")
        ('wifi', 'wifi')
    """
    return "".join(aspect_words(aspect))


def aspects_match(first: str, second: str, *, head_match: bool = True) -> bool:
    """Whether two aspect strings denote the same aspect (see the module doc).

    Args:
        first: An aspect as extracted.
        second: Another aspect as extracted.
        head_match: Also match multi-word aspects sharing their head (last) noun.

    Example:
        >>> aspects_match("front desk staff", "staff"), aspects_match("pool", "pool bar")
        (True, False)
    """
    key_a, key_b = normalize_aspect(first), normalize_aspect(second)
    if not key_a or not key_b:
        return False
    if key_a == key_b:
        return True
    if not head_match:
        return False
    words_a, words_b = aspect_words(first), aspect_words(second)
    head = words_a[-1]
    return len(head) > 1 and head == words_b[-1]
