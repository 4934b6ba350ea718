"""Turn a review sentence into a key-point style line (OpinioRAG App. C).

Key points are concise, clear and scan-friendly. Without a language model we
cannot paraphrase, so we *trim*: keep the clause that carries the opinion
about the query, drop discourse fillers ("Overall,", "To be honest,") and
first-person framing ("We loved ..." -> "Loved ..."), tidy noise (HTML
remnants, emoji, "!!!"), cap the length at a clause boundary and end with a
period.

Example:
    >>> to_key_point("Overall, the room was fine but the wifi was painfully slow!!!", "wi-fi")
    'The wifi was painfully slow.'
"""

from __future__ import annotations

import html
import re

from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = ["to_key_point", "clean_sentence", "best_clause"]

_TAG = re.compile(r"<[^>]{0,200}>")
_NON_TEXT = re.compile(r"[^\x20-\x7E\u00C0-\u024F\u2018\u2019\u201C\u201D\u2013\u2014]")
_REPEAT_PUNCT = re.compile(r"([!?.])[!?.]+")
_SPACES = re.compile(r"\s+")
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:;|,?\s+\b(?:but|however|although|though|whereas|except that|yet)\b,?)\s+", re.IGNORECASE
)
_FILLERS = re.compile(
    r"^(?:(?:overall|also|and|but|so|plus|however|honestly|basically|anyway|unfortunately|sadly|luckily|"
    r"thankfully|in general|generally|all in all|on the plus side|on the downside|on the other hand|"
    r"to be honest|to be fair|i have to say|i must say|i would say|i think|i feel|i guess|i found that|"
    r"we found that|oh and|ps|p\.s\.|btw|the only thing is|one thing|note that|that said)\b[,:]?\s*)+",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"^(?:i|we)\s+(?:really\s+|absolutely\s+|just\s+|also\s+)?"
    r"(loved|liked|enjoyed|appreciated|adored|hated|disliked|found|thought|noticed)\b\s*",
    re.IGNORECASE,
)
_MAX_WORDS = 28


def clean_sentence(text: str) -> str:
    """Remove HTML remnants, emoji and repeated punctuation; normalise whitespace."""
    text = html.unescape(_TAG.sub(" ", text))
    text = _NON_TEXT.sub(" ", text)
    text = _REPEAT_PUNCT.sub(r"\1", text)
    text = _SPACES.sub(" ", text).strip()
    letters = [c for c in text if c.isalpha()]
    if len(letters) >= 8 and sum(c.isupper() for c in letters) > 0.7 * len(letters):
        text = text.lower()  # SHOUTED sentences become sentence case in to_key_point
    return text


def best_clause(text: str, query: str, sign: int = 0) -> str:
    """The clause of ``text`` that talks about ``query`` (the whole text when unsplittable).

    Args:
        text: A cleaned sentence.
        query: The user query.
        sign: Preferred sentiment side (+1 / -1) to break ties between clauses; 0 for none.
    """
    clauses = [c.strip(" ,;") for c in _CLAUSE_SPLIT.split(text) if c and len(c.split()) >= 3]
    if len(clauses) <= 1:
        return text
    terms = set(tokenize_for_bm25(query))
    scored = []
    for position, clause in enumerate(clauses):
        overlap = len(terms.intersection(tokenize_for_bm25(clause)))
        scored.append((overlap, -position if sign >= 0 else position, clause))
    best = max(scored)
    return best[2] if best[0] > 0 else text


def to_key_point(text: str, query: str, *, sign: int = 0, max_words: int = _MAX_WORDS) -> str:
    """A concise key-point line built from one review sentence."""
    cleaned = clean_sentence(text)
    clause = best_clause(cleaned, query, sign)
    clause = _FILLERS.sub("", clause).strip()
    match = _FIRST_PERSON.match(clause)
    if match:
        clause = match.group(1).capitalize() + " " + clause[match.end() :]
    words = clause.split()
    if len(words) > max_words:
        head = " ".join(words[:max_words])
        cut = max(head.rfind(","), head.rfind(" - "), head.rfind(";"))
        clause = head[:cut] if cut > len(head) // 2 else head
    clause = clause.strip(" ,;:-")
    clause = re.sub(r"[.!?]+$", "", clause).strip()
    if not clause:
        return cleaned
    return clause[0].upper() + clause[1:] + "."
