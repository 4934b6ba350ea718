"""Robust parsing of triplets written as text by seq2seq models or LLMs.

Accepted item forms (items separated by ``,``/``;``/newlines, or given as
tuples/brackets): ``aspect:opinion:positive``, ``aspect|opinion|neg``,
``(aspect, opinion, NEU)``, ``[aspect; opinion; 1]``. Unknown polarities and
malformed items are skipped. Aspects such as ``NULL``/``noaspectterm``/
``implicit`` map to the implicit aspect ``""``.

Example:
    >>> [(t.aspect, t.sentiment) for t in parse_triplet_text("staff:friendly:pos, room:dirty:neg")]
    [('staff', 1), ('room', -1)]
    >>> parse_triplet_text("(wi-fi, slow, NEG)")
    [Triplet(aspect='wi-fi', opinion='slow', sentiment=-1)]
"""

from __future__ import annotations

import re

from opinio_agents.triplets.base import IMPLICIT_ASPECT, Sentiment, Triplet

__all__ = ["parse_sentiment", "parse_triplet_text", "IMPLICIT_ASPECT_NAMES"]

_SENTIMENTS: dict[str, Sentiment] = {
    "positive": 1,
    "pos": 1,
    "1": 1,
    "+1": 1,
    "negative": -1,
    "neg": -1,
    "-1": -1,
    "neutral": 0,
    "neu": 0,
    "0": 0,
    "mixed": 0,
    "conflict": 0,
}
#: Aspect strings a model may emit for an implicit aspect.
IMPLICIT_ASPECT_NAMES = frozenset({"", "null", "none", "noaspectterm", "implicit", "n/a", "-"})
_GROUP_RE = re.compile(r"[(\[{]([^()\[\]{}]*)[)\]}]")
_FIELD_SEP_RE = re.compile(r"\s*[:|]\s*")


def parse_sentiment(value: object) -> Sentiment | None:
    """Map a polarity word/number to -1/0/1, or None when unknown.

    Example:
        >>> parse_sentiment("Positive"), parse_sentiment(-1), parse_sentiment("great")
        (1, -1, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value in (-1, 0, 1):
        return int(value)  # type: ignore[return-value]
    return _SENTIMENTS.get(str(value).strip().strip("'\"").lower())


def _clean(field: str) -> str:
    return field.strip().strip("'\"`").strip()


def _triplet(aspect: str, opinion: str, polarity: str) -> Triplet | None:
    sentiment = parse_sentiment(polarity)
    aspect, opinion = _clean(aspect), _clean(opinion)
    if sentiment is None or not opinion:
        return None
    if aspect.lower() in IMPLICIT_ASPECT_NAMES:
        aspect = IMPLICIT_ASPECT
    return Triplet(aspect=aspect, opinion=opinion, sentiment=sentiment)


def parse_triplet_text(text: str) -> list[Triplet]:
    """Parse every well-formed triplet in ``text`` (order kept, duplicates dropped)."""
    found: list[Triplet | None] = []
    groups = _GROUP_RE.findall(text)
    if groups:
        for group in groups:
            fields = [f for f in re.split(r"\s*[,;:|]\s*", group)]
            if len(fields) >= 3:
                found.append(_triplet(", ".join(fields[:-2]), fields[-2], fields[-1]))
    else:
        for item in re.split(r"\s*[,;\n]\s*", text):
            fields = _FIELD_SEP_RE.split(item.strip())
            if len(fields) >= 3:
                found.append(_triplet(":".join(fields[:-2]), fields[-2], fields[-1]))
    out: list[Triplet] = []
    for triplet in found:
        if triplet is not None and triplet not in out:
            out.append(triplet)
    return out
