"""Side agreement: does a highlight's side match the human polarity of its evidence?

Pure functions, no model. Used by ``benchmarks/side_agreement.py`` on OpoSum, whose
review segments carry a human polarity in [-1, 1].

Matching rule (character overlap). A human-labelled segment and a stored evidence
sentence *match* when they come from the same review and their character spans in
that review's text overlap by at least ``min_overlap`` (default 0.5) of the
**shorter** of the two spans. Spans are exact: a stored sentence carries its
``start``/``end`` offsets into the original review, and a segment's span is found
with :func:`locate` (its first exact occurrence in the review text). The shorter
span is the denominator because human segments are clauses (EDUs) while stored
sentences are whole sentences: a clause lying wholly inside a sentence is a match,
a sentence merely touching a long segment's edge is not.

Side of the human evidence (:func:`human_side`): each matched evidence sentence
gets the mean polarity of its matched segments; sentences whose mean has
``|p| < band`` (default 0.2, the neutral band of ``benchmarks/sentiment_real.py``)
are left out; the side is the majority sign of the rest, ``None`` on a tie or when
nothing is left.

Example:
    >>> review = "Great battery. The screen is dim, sadly."
    >>> segs = [Segment(locate("Great battery.", review), 0.8),
    ...         Segment(locate("The screen is dim,", review), -0.6)]
    >>> [s.polarity for s in matched_segments((0, 14), segs)]
    [0.8]
    >>> human_side([0.8, 0.5, -0.6])
    <Polarity.PROS: 'pros'>
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from opinio_agents.errors import ConfigError
from opinio_agents.models import Polarity

Span = tuple[int, int]
NEUTRAL_BAND = 0.2
MIN_OVERLAP = 0.5


@dataclass(frozen=True)
class Segment:
    """A human-labelled segment: its character span in the review and its polarity.

    Attributes:
        span: ``(start, end)`` offsets into the review text, ``end`` exclusive.
        polarity: The human polarity in [-1, 1].
    """

    span: Span
    polarity: float


def locate(segment: str, review: str) -> Span | None:
    """The span of the first exact occurrence of ``segment`` in ``review`` (``None`` if absent).

    Example:
        >>> locate("dim", "The screen is dim.")
        (14, 17)
    """
    text = segment.strip()
    if not text:
        return None
    start = review.find(text)
    return None if start < 0 else (start, start + len(text))


def span_overlap(a: Span, b: Span) -> float:
    """Shared characters of two spans over the length of the shorter one (0 for an empty span).

    Example:
        >>> span_overlap((0, 10), (5, 30))
        0.5
    """
    shorter = min(a[1] - a[0], b[1] - b[0])
    if shorter <= 0:
        return 0.0
    shared = min(a[1], b[1]) - max(a[0], b[0])
    return max(shared, 0) / shorter


def matched_segments(sentence: Span, segments: Iterable[Segment], *, min_overlap: float = MIN_OVERLAP) -> list[Segment]:
    """The segments (of the sentence's own review) whose span overlaps ``sentence`` enough.

    Args:
        sentence: The sentence's ``(start, end)`` in its review.
        segments: The labelled segments of the same review.
        min_overlap: Minimum :func:`span_overlap`, in (0, 1].

    Raises:
        ConfigError: When ``min_overlap`` is outside (0, 1].

    Example:
        >>> len(matched_segments((0, 20), [Segment((15, 40), 1.0)]))  # 5 of 20 shared chars
        0
    """
    if not 0 < min_overlap <= 1:
        raise ConfigError(f"min_overlap={min_overlap} must be in (0, 1]")
    return [seg for seg in segments if span_overlap(sentence, seg.span) >= min_overlap]


def sentence_polarity(matches: Sequence[Segment]) -> float | None:
    """Mean human polarity of a sentence's matched segments (``None`` when it has none).

    Example:
        >>> sentence_polarity([Segment((0, 1), 1.0), Segment((1, 2), 0.0)])
        0.5
    """
    if not matches:
        return None
    return sum(seg.polarity for seg in matches) / len(matches)


def human_side(polarities: Iterable[float | None], *, band: float = NEUTRAL_BAND) -> Polarity | None:
    """Majority sign of per-sentence polarities, ignoring ``None`` and ``|p| < band``; ``None`` on a tie.

    Example:
        >>> human_side([-0.5, 0.1, None]), human_side([0.5, -0.5]), human_side([0.1])
        (<Polarity.CONS: 'cons'>, None, None)
    """
    pos = neg = 0
    for value in polarities:
        if value is None or abs(value) < band:
            continue
        if value > 0:
            pos += 1
        else:
            neg += 1
    if pos == neg:
        return None
    return Polarity.PROS if pos > neg else Polarity.CONS


__all__ = [
    "MIN_OVERLAP",
    "NEUTRAL_BAND",
    "Segment",
    "Span",
    "human_side",
    "locate",
    "matched_segments",
    "sentence_polarity",
    "span_overlap",
]
