"""BIO span tags: encoding gold spans and decoding predicted tag sequences.

Tags are integers: ``O=0``, ``B=1``, ``I=2``. Decoding is lenient: an ``I``
that does not continue a span starts a new one (common practice for
independent per-token tagging).

Example:
    >>> decode_bio([0, 1, 2, 0, 2, 1, 1])
    [(1, 2), (4, 4), (5, 5), (6, 6)]
    >>> encode_bio(5, [(1, 2), (4, 4)])
    [0, 1, 2, 0, 1]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["O", "B", "I", "TAG_NAMES", "encode_bio", "decode_bio"]

O, B, I = 0, 1, 2  # noqa: E741
TAG_NAMES = ("O", "B", "I")


def encode_bio(n_tokens: int, spans: Iterable[tuple[int, int]]) -> list[int]:
    """Tag a sentence of ``n_tokens`` tokens given inclusive ``(first, last)`` spans.

    Overlapping spans are merged by tagging order (a later span's ``B`` wins).
    """
    tags = [O] * n_tokens
    for first, last in sorted(set(spans)):
        tags[first] = B
        for i in range(first + 1, last + 1):
            if tags[i] == O:
                tags[i] = I
    return tags


def decode_bio(tags: Sequence[int]) -> list[tuple[int, int]]:
    """Turn a tag sequence into inclusive ``(first, last)`` spans."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for i, tag in enumerate(tags):
        if tag == B or (tag == I and start is None):
            if start is not None:
                spans.append((start, i - 1))
            start = i
        elif tag == O and start is not None:
            spans.append((start, i - 1))
            start = None
    if start is not None:
        spans.append((start, len(tags) - 1))
    return spans
