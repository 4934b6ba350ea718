"""Compound nouns whose first word names another aspect: "room service" is not a mention of the room.

The list is data (``resources/words/support.json``, ``other_aspect_compounds``, with its reason). A word
used only as the first word of such a compound, where the query does not name the compound itself, is not
a mention of it: "We did not use room service." does not mention the room, "Room service was slow and the
room was tiny." does, and for the query "room service" both do. One rule for the mention counts
(:func:`~opinio_agents.synthesis.support.mention_mask`) and the query-free key points and quotes
(:func:`~opinio_agents.synthesis.keypoint.mentions_any`).

Example:
    >>> names_word(("we", "use", "room", "service"), "room", {"room"})
    False
    >>> names_word(("room", "service", "slow", "room", "tiny"), "room", {"room"})
    True
    >>> names_word(("we", "use", "room", "service"), "room", {"room", "service"})
    True
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cache

from opinio_agents.text.preprocess import tokenize_for_bm25
from opinio_agents.text.wordlists import word_set

__all__ = ["names_word", "placed_elsewhere", "stands_together"]

#: How many App. D tokens on either side of a place word a locator may stand ("restaurants in the area").
_LOCATOR_WINDOW = 3


@cache
def _pairs(name: str, *, by_second: bool) -> dict[str, frozenset[str]]:
    """The two-word phrases of ``support.json``'s list ``name`` (App. D tokens), one word -> the words paired
    with it: by the first word for ``other_aspect_compounds`` ("room" -> "service"), by the second for
    ``other_sense_phrases`` ("lift" -> "ski")."""
    out: dict[str, set[str]] = {}
    for phrase in word_set("support", name):
        tokens = tokenize_for_bm25(phrase)
        if len(tokens) == 2:
            key, other = (tokens[1], tokens[0]) if by_second else (tokens[0], tokens[1])
            out.setdefault(key, set()).add(other)
    return {word: frozenset(others) for word, others in out.items()}


def stands_together(tokens: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether the App. D ``tokens`` (in order) hold the words of ``phrase`` next to each other, in its order.

    A name of several words ("room service", "front desk", "walking distance") is a phrase, not a bag of its
    words: "Great rooms, good service." holds "room" and "service" but no room service, so it is no mention
    of a hotel's food. Stopwords are not App. D tokens, so "rooms and service" still reads as the phrase.

    Example:
        >>> stands_together(("room", "service", "slow"), ("room", "service"))
        True
        >>> stands_together(("great", "room", "good", "service"), ("room", "service"))
        False
    """
    size = len(phrase)
    if size <= 1:
        return not size or phrase[0] in tokens
    first = phrase[0]
    return any(
        token == first and tuple(tokens[i : i + size]) == tuple(phrase) for i, token in enumerate(tokens)
    )


def names_word(tokens: Sequence[str], word: str, query: Collection[str]) -> bool:
    """Whether ``tokens`` (App. D tokens, in order) use ``word`` other than as the first word of a listed
    compound whose second word ``query`` (the query's or form's tokens) does not hold, or after a listed word
    that gives it another sense ("ski lift" is no elevator, "can't wait to go back" and "eagerly waiting for the
    new flavours" are no wait) that ``query`` does not hold.

    Example:
        >>> names_word(("ski", "lift", "close"), "lift", {"lift"}), names_word(("lift", "slow"), "lift", {"lift"})
        (False, True)
        >>> names_word(("cannot", "wait", "go", "back"), "wait", {"wait", "time"})
        False
    """
    seconds = _pairs("other_aspect_compounds", by_second=False).get(word)
    firsts = _pairs("other_sense_phrases", by_second=True).get(word)
    if not seconds and not firsts:
        return word in tokens
    seconds = seconds or frozenset()
    firsts = firsts or frozenset()
    last = len(tokens) - 1
    return any(
        token == word
        and not (i < last and tokens[i + 1] in seconds and tokens[i + 1] not in query)
        and not (i > 0 and tokens[i - 1] in firsts and tokens[i - 1] not in query)
        for i, token in enumerate(tokens)
    )


@cache
def _places() -> tuple[frozenset[str], frozenset[str]]:
    """The place words that may stand outside the entity, and the words that locate them (App. D tokens)."""
    places = frozenset(t for w in word_set("support", "places_elsewhere") for t in tokenize_for_bm25(w))
    locators = frozenset(t for w in word_set("support", "places_elsewhere_locators") for t in tokenize_for_bm25(w))
    return places, locators


def placed_elsewhere(tokens: Sequence[str], word: str) -> bool:
    """Whether every use of the place ``word`` in ``tokens`` (App. D tokens, in order) is located around the
    entity rather than in it ("Lots of good restaurants in the area.", "Close to good restaurants."): such a
    place does not stand for the aspect its word names (a hotel's food). False for a word that is no place
    (``support.json``'s ``places_elsewhere``) and for a sentence that does not use it.

    Example:
        >>> placed_elsewhere(("lot", "good", "restaurant", "area"), "restaurant")
        True
        >>> placed_elsewhere(("hotel", "restaurant", "good", "plenty", "place", "eat", "nearby"), "restaurant")
        False
        >>> placed_elsewhere(("breakfast", "nearby"), "breakfast")
        False
    """
    places, locators = _places()
    if word not in places:
        return False
    at = [i for i, token in enumerate(tokens) if token == word]
    return bool(at) and all(
        locators.intersection(tokens[max(0, i - _LOCATOR_WINDOW) : i + _LOCATOR_WINDOW + 1]) for i in at
    )
