"""AOS verification metrics of OpinioRAG Sec. 4.1: AR, SF and OF as pure functions.

Every function takes the triplets extracted from the retrieved evidence ``R``
(one flat list over all evidence sentences) and from the generated highlight
``G``; nothing here runs a model. Aspects are compared with
:func:`~opinio_agents.triplets.aspects.aspects_match` (tolerant of case,
hyphens, plurals, determiners and head nouns).

Definitions and the choices the paper leaves open:

* **a\\*** (Eq. 4) is the most frequent explicit aspect of ``R``; frequencies are
  counted per triplet over normalised aspects; implicit aspects are not counted.
  On a tie every tied aspect is dominant.
* **AR** (Eq. 5) is 1 when an aspect of ``G`` matches a dominant aspect, else 0;
  undefined (``None``) when ``R`` has no explicit aspect.
* The **focus triplet** ``(a_G, o_G, s_G)`` of ``G`` is its first triplet whose
  aspect is dominant, else its first explicit triplet, else its first triplet.
  An implicit ``a_G`` is read as referring to the dominant aspect(s) of ``R``
  (App. E.1's implicit-aspect case), or to all of ``R`` when ``R`` has none.
* **SF** (Eqs. 6-7): ``s*`` is the most frequent non-neutral sentiment among the
  triplets of ``R`` with aspect ``a_G``; neutral triplets are excluded. SF is 1
  when ``s_G`` equals ``s*`` (on a tie both polarities are dominant), so a
  neutral ``s_G`` scores 0. Undefined when ``R`` has no non-neutral triplet for
  ``a_G``, or ``G`` has no triplet.
* **OF**: mean similarity of ``o_G`` to every opinion of ``R`` with aspect
  ``a_G`` and sentiment ``s_G``; an exact (case/punctuation-insensitive) match
  scores 1, otherwise the similarity function (cosine of embeddings, clipped to
  [0, 1]). 0 when ``R`` discusses ``a_G`` but never with sentiment ``s_G``
  (the opinion is unsupported); undefined when ``R`` never discusses ``a_G``.

Expectations (:func:`summarize_aos`) average the defined scores over highlights
and report how many were defined.

Example:
    >>> from opinio_agents.triplets.base import Triplet as T
    >>> evidence = [T(aspect="wifi", opinion="slow", sentiment=-1),
    ...             T(aspect="Wi-Fi", opinion="weak", sentiment=-1)]
    >>> highlight = [T(aspect="wi-fi", opinion="slow", sentiment=-1)]
    >>> aspect_relevance(evidence, highlight), sentiment_factuality(evidence, highlight)
    (1.0, 1.0)
    >>> opinion_faithfulness(evidence, highlight, similarity=lambda a, bs: [0.5 for _ in bs])
    0.75
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from opinio_agents.triplets.aspects import aspects_match, normalize_aspect
from opinio_agents.triplets.base import Triplet

__all__ = [
    "OpinionSimilarity",
    "dominant_aspects",
    "focus_triplet",
    "aspect_relevance",
    "dominant_sentiments",
    "sentiment_factuality",
    "opinion_faithfulness",
    "AOSScore",
    "AOSSummary",
    "score_aos",
    "summarize_aos",
    "same_opinion",
]

#: ``similarity(opinion, others) -> one score in [-1, 1] per other opinion``.
OpinionSimilarity = Callable[[str, Sequence[str]], Sequence[float]]

_PUNCT = re.compile(r"[^a-z0-9]+")


def same_opinion(first: str, second: str) -> bool:
    """Exact opinion match, ignoring case, punctuation and spacing.

    Example:
        >>> same_opinion("Very  clean!", "very clean")
        True
    """
    a = " ".join(_PUNCT.sub(" ", first.lower()).split())
    return bool(a) and a == " ".join(_PUNCT.sub(" ", second.lower()).split())


def dominant_aspects(evidence: Sequence[Triplet]) -> list[str]:
    """The most frequent explicit aspect(s) of the evidence (a* of Eq. 4); all of them on a tie.

    Each is returned in the surface form of its first occurrence; empty when the
    evidence has no explicit aspect.

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> dominant_aspects([T(aspect="Pool", opinion="big", sentiment=1),
        ...                   T(aspect="pools", opinion="cold", sentiment=-1),
        ...                   T(aspect="bar", opinion="loud", sentiment=-1)])
        ['Pool']
    """
    counts: Counter[str] = Counter()
    first_form: dict[str, str] = {}
    for triplet in evidence:
        key = normalize_aspect(triplet.aspect)
        if not key:
            continue
        counts[key] += 1
        first_form.setdefault(key, triplet.aspect)
    if not counts:
        return []
    top = max(counts.values())
    return [first_form[key] for key, n in counts.items() if n == top]


def focus_triplet(highlight: Sequence[Triplet], dominant: Sequence[str]) -> Triplet | None:
    """The highlight triplet the SF and OF metrics judge (see the module doc)."""
    for triplet in highlight:
        if any(aspects_match(triplet.aspect, a) for a in dominant):
            return triplet
    for triplet in highlight:
        if not triplet.is_implicit:
            return triplet
    return highlight[0] if highlight else None


def _about(evidence: Sequence[Triplet], focus: Triplet, dominant: Sequence[str]) -> list[Triplet]:
    """Evidence triplets about the focus aspect (implicit focus: the dominant aspects, else all)."""
    if focus.is_implicit:
        if not dominant:
            return list(evidence)
        return [t for t in evidence if any(aspects_match(t.aspect, a) for a in dominant)]
    return [t for t in evidence if aspects_match(t.aspect, focus.aspect)]


def aspect_relevance(evidence: Sequence[Triplet], highlight: Sequence[Triplet]) -> float | None:
    """AR = 1(a* = a_G) (Eq. 5); ``None`` when the evidence has no explicit aspect.

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> aspect_relevance([T(aspect="view", opinion="amazing", sentiment=1)],
        ...                  [T(aspect="location", opinion="beautiful", sentiment=1)])
        0.0
    """
    dominant = dominant_aspects(evidence)
    if not dominant:
        return None
    hit = any(aspects_match(t.aspect, a) for t in highlight for a in dominant)
    return 1.0 if hit else 0.0


def dominant_sentiments(evidence: Sequence[Triplet]) -> list[int]:
    """s* of Eq. 6: the most frequent of -1/1 (both on a tie; none without a polar triplet).

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> dominant_sentiments([T(aspect="a", opinion="x", sentiment=0),
        ...                      T(aspect="a", opinion="y", sentiment=-1)])
        [-1]
    """
    pos = sum(1 for t in evidence if t.sentiment == 1)
    neg = sum(1 for t in evidence if t.sentiment == -1)
    if pos == neg == 0:
        return []
    if pos == neg:
        return [-1, 1]
    return [1] if pos > neg else [-1]


def sentiment_factuality(evidence: Sequence[Triplet], highlight: Sequence[Triplet]) -> float | None:
    """SF = 1(s_G = s*) (Eq. 7) for the focus aspect; ``None`` when undefined (module doc).

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> sentiment_factuality([T(aspect="wifi", opinion="terrible", sentiment=-1)],
        ...                      [T(aspect="wifi", opinion="a bit slow", sentiment=1)])
        0.0
    """
    focus = focus_triplet(highlight, dominant_aspects(evidence))
    if focus is None:
        return None
    stars = dominant_sentiments(_about(evidence, focus, dominant_aspects(evidence)))
    if not stars:
        return None
    return 1.0 if focus.sentiment in stars else 0.0


def opinion_faithfulness(
    evidence: Sequence[Triplet],
    highlight: Sequence[Triplet],
    similarity: OpinionSimilarity,
) -> float | None:
    """OF: mean similarity of o_G to the evidence opinions with the same aspect and sentiment.

    Args:
        evidence: Triplets of all retrieved sentences.
        highlight: Triplets of the generated highlight.
        similarity: ``similarity(o_G, opinions)`` -> cosine-like scores; only
            called for opinions that do not match ``o_G`` exactly.

    Returns:
        The score in [0, 1], or ``None`` when undefined (module doc).

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> ev = [T(aspect="beds", opinion="comfortable", sentiment=1)]
        >>> generated = [T(aspect="bed", opinion="luxurious", sentiment=1)]
        >>> opinion_faithfulness(ev, generated, lambda a, bs: [0.4])
        0.4
    """
    dominant = dominant_aspects(evidence)
    focus = focus_triplet(highlight, dominant)
    if focus is None:
        return None
    about = _about(evidence, focus, dominant)
    if not about:
        return None
    opinions = [t.opinion for t in about if t.sentiment == focus.sentiment]
    if not opinions:
        return 0.0
    scores = [1.0 if same_opinion(focus.opinion, o) else None for o in opinions]
    pending = [o for o, s in zip(opinions, scores, strict=False) if s is None]
    if pending:
        sims = iter(similarity(focus.opinion, pending))
        scores = [s if s is not None else min(1.0, max(0.0, float(next(sims)))) for s in scores]
    return sum(scores) / len(scores)  # type: ignore[arg-type]


@dataclass
class AOSScore:
    """The AOS verification of one highlight, kept for inspection (App. E cases).

    Attributes:
        ar: Aspect relevance (None when undefined).
        sf: Sentiment factuality (None when undefined).
        of: Opinion faithfulness (None when undefined).
        dominant_aspects: a* (all tied aspects).
        focus: The judged highlight triplet as ``{aspect, opinion, sentiment}``.
        dominant_sentiments: s* for the focus aspect.
        highlight_triplets: Every triplet of the highlight.
        evidence_triplets: Number of triplets extracted from the evidence.
        label: Free-form identification (system, entity, query, side).
    """

    ar: float | None
    sf: float | None
    of: float | None
    dominant_aspects: list[str] = field(default_factory=list)
    focus: dict[str, Any] | None = None
    dominant_sentiments: list[int] = field(default_factory=list)
    highlight_triplets: list[dict[str, Any]] = field(default_factory=list)
    evidence_triplets: int = 0
    label: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def score_aos(
    evidence: Sequence[Triplet],
    highlight: Sequence[Triplet],
    similarity: OpinionSimilarity,
    *,
    label: dict[str, Any] | None = None,
) -> AOSScore:
    """AR, SF and OF of one highlight together with the intermediate values.

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> s = score_aos([T(aspect="pool", opinion="warm", sentiment=1)],
        ...               [T(aspect="pool", opinion="warm", sentiment=1)],
        ...               lambda a, bs: [0.0] * len(bs))
        >>> (s.ar, s.sf, s.of)
        (1.0, 1.0, 1.0)
    """
    dominant = dominant_aspects(evidence)
    focus = focus_triplet(highlight, dominant)
    stars = dominant_sentiments(_about(evidence, focus, dominant)) if focus is not None else []
    return AOSScore(
        ar=aspect_relevance(evidence, highlight),
        sf=sentiment_factuality(evidence, highlight),
        of=opinion_faithfulness(evidence, highlight, similarity),
        dominant_aspects=dominant,
        focus=focus.model_dump() if focus is not None else None,
        dominant_sentiments=stars,
        highlight_triplets=[t.model_dump() for t in highlight],
        evidence_triplets=len(evidence),
        label=dict(label or {}),
    )


@dataclass
class AOSSummary:
    """E[AR], E[SF], E[OF] over highlights, with how many highlights each is defined for."""

    ar: float | None
    sf: float | None
    of: float | None
    n_highlights: int
    n_ar: int
    n_sf: int
    n_of: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def summarize_aos(scores: Sequence[AOSScore]) -> AOSSummary:
    """Expectations of the defined AR/SF/OF scores over highlights.

    Example:
        >>> summarize_aos([AOSScore(1.0, None, 0.5), AOSScore(0.0, 1.0, None)]).ar
        0.5
    """

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    ars = [s.ar for s in scores if s.ar is not None]
    sfs = [s.sf for s in scores if s.sf is not None]
    ofs = [s.of for s in scores if s.of is not None]
    return AOSSummary(mean(ars), mean(sfs), mean(ofs), len(scores), len(ars), len(sfs), len(ofs))
