"""Quotes that say the same thing: one definition for the highlights' quotes and the chat's citations.

Two sentences *say the same thing* when the App. D tokens (lemmas, no stopwords, HTML
entities and punctuation aside) of the shorter one are, to at least
:data:`SAME_STATEMENT_SHARE`, among the other's: "Wi-fi only worked in corridor on our
floor." repeats "Wi-fi only worked in the corridor on our floor.", and "The big plus for
us: the breakfast buffet was amazing, fresh fruit ..." repeats "The breakfast buffet was
amazing, fresh fruit ...". Reviews copied across a data set, or one guest's sentence with a
lead-in, are then quoted once.

Example:
    >>> distinct_indices(["Great pool!", "GREAT POOL.", "The staff were rude."])
    [0, 2]
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = ["SAME_STATEMENT_SHARE", "statement_tokens", "same_statement", "distinct_indices"]

#: Share of the shorter sentence's tokens the longer one must hold for the two to say the same thing.
SAME_STATEMENT_SHARE = 0.8


def statement_tokens(text: str) -> frozenset[str]:
    """The App. D token set a sentence is compared by (HTML entities decoded first)."""
    tokens = tokenize_for_bm25(html.unescape(html.unescape(text)))
    return frozenset(tokens) if tokens else frozenset(text.lower().split())


def same_statement(a: frozenset[str], b: frozenset[str], share: float = SAME_STATEMENT_SHARE) -> bool:
    """Whether two token sets (:func:`statement_tokens`) say the same thing.

    Example:
        >>> same_statement(statement_tokens("Wi-fi only worked in corridor."),
        ...                statement_tokens("The wi-fi only worked in the corridor!"))
        True
    """
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if not small:
        return not large
    return len(small & large) >= share * len(small)


def distinct_indices(texts: Sequence[str], *, limit: int | None = None, keep: Sequence[int] = ()) -> list[int]:
    """Indices of ``texts`` in order, leaving out each one that says the same as an earlier kept one.

    Args:
        texts: The sentences, best first.
        limit: Stop after this many.
        keep: Indices that stay whatever they repeat (checked first, in their order).
    """
    kept: list[int] = []
    seen: list[frozenset[str]] = []
    order = list(dict.fromkeys([*keep, *range(len(texts))]))
    forced = set(keep)
    for i in order:
        if limit is not None and len(kept) >= limit:
            break
        tokens = statement_tokens(texts[i])
        if i not in forced and any(same_statement(tokens, other) for other in seen):
            continue
        kept.append(i)
        seen.append(tokens)
    return kept
