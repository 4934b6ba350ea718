"""ASTE-compatible word tokenization with character offsets.

The ASTE v2 data is whitespace-tokenized in Penn-Treebank style: punctuation is
split off words, clitics are separate tokens (``could n't``, ``it 's``) and
hyphenated words stay whole (``multi-touch``). :func:`tokenize_words` applies
the same conventions to raw text and keeps each token's character span, so that
spans predicted over tokens map back to the exact surface string of the
original sentence (:func:`surface`).

Example:
    >>> toks = tokenize_words("The wi-fi couldn't connect.")
    >>> [t.text for t in toks]
    ['The', 'wi-fi', 'could', "n't", 'connect', '.']
    >>> surface("The wi-fi couldn't connect.", toks, 1, 1)
    'wi-fi'
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Token", "tokenize_words", "surface"]

_TOKEN_RE = re.compile(
    r"\w+(?=n['’]t\b)"  # word before a negative clitic: "could" in "couldn't"
    r"|n['’]t\b"  # the clitic itself
    r"|['’](?:s|re|ve|d|m|ll)\b"  # other clitics: 's 're 've 'd 'm 'll
    r"|\d+(?::\d+)+"  # clock times: 9:30
    r"|\w+(?:[-./&]\w+)*"  # words, numbers, hyphenated words, 9.95, AT&T
    r"|\.{2,}|[!?]{2,}|-{2,}"  # ellipses and repeated punctuation
    r"|\S",  # any other single character (punctuation, symbols)
    re.IGNORECASE,
)


class Token(NamedTuple):
    """A token and its ``[start, end)`` character span in the original text."""

    text: str
    start: int
    end: int


def tokenize_words(text: str) -> list[Token]:
    """Split ``text`` into ASTE-style tokens with character offsets.

    Args:
        text: A raw sentence.

    Returns:
        The tokens, in order.

    Example:
        >>> [t.text for t in tokenize_words("Room ($99) was ok!")]
        ['Room', '(', '$', '99', ')', 'was', 'ok', '!']
    """
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


def surface(text: str, tokens: list[Token], first: int, last: int) -> str:
    """Return the original substring covering tokens ``first..last`` (inclusive).

    Example:
        >>> s = "Check in  was fast"
        >>> surface(s, tokenize_words(s), 0, 1)
        'Check in'
    """
    return text[tokens[first].start : tokens[last].end]
