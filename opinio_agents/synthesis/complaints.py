"""Whether a key point complains: the complaint reading of CON and PRO key points.

Its own module so that both :mod:`~opinio_agents.synthesis.selection` (a CON must complain, a PRO may not only
complain) and :mod:`~opinio_agents.synthesis.keypoint` (the clause of a mixed sentence on a key point's side) read
a complaint the same way, without importing each other.

Example:
    >>> states_complaint("The rooms are small."), uses_complaint_word("Internet wasn't free.")
    (True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opinio_agents.text.preprocess import plain_apostrophes
from opinio_agents.text.wordlists import word_set

__all__ = ["states_complaint", "uses_complaint_word", "NEGATION", "ComplaintSettings", "COMPLAINT_SETTINGS"]


@dataclass(frozen=True)
class ComplaintSettings:
    """The settings of the complaint reading (the values shipped; figures in ``benchmarks/README.md``).

    Attributes:
        complaint_valence: :func:`states_complaint`: how negative the lexicon must read a word alone for it
            to complain ("rude" -0.51, "lack" -0.32; "stop" -0.30 and "blocks" -0.23, of "a few blocks away",
            do not).
    """

    complaint_valence: float = 0.3


#: The settings the complaint reading uses.
COMPLAINT_SETTINGS = ComplaintSettings()

#: A negation ("not", "no", "never", "wasn't" ...).
NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|nor|without)\b|n't\b", re.IGNORECASE)
_WORD_APOS = re.compile(r"[a-z0-9']+")
_MONEY = re.compile(r"[$\u00a3\u20ac]\s?\d|\d\s?(?:euros?|dollars?|usd|eur|gbp)\b", re.IGNORECASE)


def states_complaint(text: str) -> bool:
    """Whether a key point complains: what a CON must do, whatever the stored sentiment of its sentence says.

    It does with a word the sentiment lexicon reads clearly negative (at most
    ``-ComplaintSettings.complaint_valence`` alone: "rude", "disappointing"; not "stop" or "blocks"), a ``complaint``
    word the lexicon misses or misreads ("small", "expensive", "noisy", "too"), a negation ("not free",
    "no air conditioning", "wasn't included") or a price ("Valet parking was over $25"). "The beach is a
    short walk away" and "The noise was muted", stored negative, do not.

    Example:
        >>> states_complaint("The rooms are small."), states_complaint("Internet wasn't free.")
        (True, True)
        >>> states_complaint("The beach is a short walk away."), states_complaint("The noise was muted.")
        (False, False)
    """
    text = plain_apostrophes(text)
    return bool(NEGATION.search(text) or _MONEY.search(text)) or uses_complaint_word(text)


def uses_complaint_word(text: str) -> bool:
    """Whether ``text`` uses a word that complains by itself: a ``complaint`` word ("small", "noisy") or one the
    sentiment lexicon reads clearly negative alone (at most ``-ComplaintSettings.complaint_valence``: "rude").

    Example:
        >>> uses_complaint_word("The rooms are small."), uses_complaint_word("Internet wasn't free.")
        (True, False)
    """
    from opinio_agents.text.sentiment import default_sentiment_scorer

    words = _WORD_APOS.findall(plain_apostrophes(text).lower())
    complaint = word_set("selection", "complaint")
    if any(w in complaint for w in words):
        return True
    scorer = default_sentiment_scorer()
    lexicon = scorer.opinion_words()
    return any(scorer.score_one(w) <= -COMPLAINT_SETTINGS.complaint_valence for w in words if w in lexicon)
