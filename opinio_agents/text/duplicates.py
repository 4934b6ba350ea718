"""Quotes that say the same thing: one definition for the highlights' quotes and the chat's citations.

Two sentences *say the same thing* when the App. D tokens (lemmas, no stopwords, HTML
entities and punctuation aside) of the shorter one are, to at least
:data:`SAME_STATEMENT_SHARE`, among the other's: "Wi-fi only worked in corridor on our
floor." repeats "Wi-fi only worked in the corridor on our floor.", and "The big plus for
us: the breakfast buffet was amazing, fresh fruit ..." repeats "The breakfast buffet was
amazing, fresh fruit ...". A short lead-in before a colon ("What let it down:", "My biggest
gripe:") is set aside when at least :data:`MIN_BODY_TOKENS` tokens follow it, so "What let it
down: seriously, charging for wifi ...?" repeats "My biggest gripe: seriously, charging for wifi
...?". Reviews copied across a data set, or one guest's sentence with a lead-in, are then quoted once.

Example:
    >>> distinct_indices(["Great pool!", "GREAT POOL.", "The staff were rude."])
    [0, 2]
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = ["SAME_STATEMENT_SHARE", "MIN_BODY_TOKENS", "statement_tokens", "same_statement", "distinct_indices"]

#: Share of the shorter sentence's tokens the longer one must hold for the two to say the same thing.
SAME_STATEMENT_SHARE = 0.8
#: Tokens a sentence must keep after its lead-in for the lead-in to be set aside.
MIN_BODY_TOKENS = 4
#: A lead-in: up to five words before a colon at the start ("The only real downside:").
_LEAD_IN = re.compile(r"^\s*(?:[^\s:.!?]+\s+){0,4}[^\s:.!?]+\s*:\s+")


def statement_tokens(text: str) -> frozenset[str]:
    """The App. D token set a sentence is compared by (HTML entities decoded first, a lead-in set aside).

    Example:
        >>> sorted(statement_tokens("My biggest gripe: charging for wifi in a city hotel!"))
        ['charge', 'city', 'hotel', 'wifi']
    """
    text = html.unescape(html.unescape(text))
    body = _LEAD_IN.sub("", text, count=1)
    if body != text:
        tokens = tokenize_for_bm25(body)
        if len(set(tokens)) >= MIN_BODY_TOKENS:
            return frozenset(tokens)
    tokens = tokenize_for_bm25(text)
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
