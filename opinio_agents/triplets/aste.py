"""Reader for the ASTE v2 triplet format (Xu et al., 2020).

One sentence a line: ``tokenized sentence####[([aspect idx], [opinion idx],
'POS'|'NEG'|'NEU'), ...]`` with 0-based indices into the whitespace-split
sentence. Used for training and evaluation only; no ASTE data ships with the
package.

Example:
    >>> ex = parse_aste_line("The staff was rude .####[([1], [3], 'NEG')]")
    >>> ex.tokens[1], ex.triplets[0].aspect, ex.triplets[0].sentiment
    ('staff', (1, 1), -1)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from opinio_agents.errors import DataError
from opinio_agents.triplets.base import SENTIMENT_FROM_LABEL, Sentiment, Triplet

__all__ = ["SpanTriplet", "AsteExample", "parse_aste_line", "read_aste_file"]


@dataclass(frozen=True)
class SpanTriplet:
    """A triplet over token indices: inclusive ``(first, last)`` spans."""

    aspect: tuple[int, int]
    opinion: tuple[int, int]
    sentiment: Sentiment


@dataclass
class AsteExample:
    """A tokenized sentence with its gold span triplets."""

    tokens: list[str]
    triplets: list[SpanTriplet] = field(default_factory=list)

    def to_triplets(self) -> list[Triplet]:
        """The triplets as surface strings (tokens joined by single spaces)."""
        return [
            Triplet(
                aspect=" ".join(self.tokens[t.aspect[0] : t.aspect[1] + 1]),
                opinion=" ".join(self.tokens[t.opinion[0] : t.opinion[1] + 1]),
                sentiment=t.sentiment,
            )
            for t in self.triplets
        ]


def _span(
    indices: object, n_tokens: int, what: str, source: str | None, line: int | None
) -> tuple[int, int]:
    if not isinstance(indices, list) or not indices or not all(isinstance(i, int) for i in indices):
        raise DataError(
            f"{what} indices must be a non-empty list of ints, got {indices!r}",
            source=source,
            line=line,
        )
    first, last = min(indices), max(indices)
    if first < 0 or last >= n_tokens:
        raise DataError(
            f"{what} indices {indices} out of range for a {n_tokens}-token sentence",
            source=source,
            line=line,
        )
    if sorted(indices) != list(range(first, last + 1)):
        raise DataError(f"{what} indices {indices} are not contiguous", source=source, line=line)
    return first, last


def parse_aste_line(
    text: str, *, source: str | None = None, line: int | None = None
) -> AsteExample:
    """Parse one ASTE line.

    Args:
        text: The line (trailing newline allowed).
        source: File name, for error messages.
        line: 1-based line number, for error messages.

    Raises:
        DataError: When the line is malformed (no ``####``, bad literal,
            unknown polarity, indices out of range or not contiguous).
    """
    sentence, sep, labels = text.rstrip("\n").partition("####")
    if not sep:
        raise DataError(
            "missing '####' separator between sentence and triplets", source=source, line=line
        )
    tokens = sentence.split()
    if not tokens:
        raise DataError("empty sentence", source=source, line=line)
    try:
        raw = ast.literal_eval(labels.strip())
    except (ValueError, SyntaxError) as exc:
        raise DataError(
            f"triplet list is not a valid Python literal: {exc}", source=source, line=line
        ) from exc
    if not isinstance(raw, list):
        raise DataError(
            f"expected a list of triplets, got {type(raw).__name__}", source=source, line=line
        )
    triplets: list[SpanTriplet] = []
    for item in raw:
        if not isinstance(item, tuple | list) or len(item) != 3:
            raise DataError(
                f"each triplet must be (aspect, opinion, polarity), got {item!r}",
                source=source,
                line=line,
            )
        label = item[2]
        if label not in SENTIMENT_FROM_LABEL:
            raise DataError(
                f"polarity must be one of POS/NEG/NEU, got {label!r}", source=source, line=line
            )
        triplets.append(
            SpanTriplet(
                aspect=_span(item[0], len(tokens), "aspect", source, line),
                opinion=_span(item[1], len(tokens), "opinion", source, line),
                sentiment=SENTIMENT_FROM_LABEL[label],
            )
        )
    return AsteExample(tokens=tokens, triplets=triplets)


def read_aste_file(path: str | Path) -> list[AsteExample]:
    """Read every non-blank line of an ASTE file.

    Example:
        >>> import tempfile, os
        >>> tmp = tempfile.TemporaryDirectory(); p = os.path.join(tmp.name, "t.txt")
        >>> _ = open(p, "w").write("Nice view .####[([1], [0], 'POS')]\\n")
        >>> read_aste_file(p)[0].to_triplets()[0].aspect
        'view'
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("ASTE file not found", source=str(path))
    examples = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                examples.append(parse_aste_line(text, source=str(path), line=number))
    return examples
