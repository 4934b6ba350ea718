"""What greedy decoding of a local model can know without the model: forced tokens and drafts to verify.

The ``hf:`` chat model (:mod:`opinio_agents.llm.local`) decodes greedily, and most of an
answer's tokens need no forward pass of their own:

* **Forced tokens.** Where the JSON-schema grammar allows exactly one token (the stop token
  after the closing brace, the one way to continue a key), greedy decoding picks it whatever
  the logits say: it is appended without asking the model (:func:`single_allowed_token`).
* **Drafts.** Where the answer repeats a run of tokens already in the prompt or the answer
  (an excerpt of the evidence quoted, the JSON keys of the exemplars, the second highlight's
  keys), the tokens that followed that run earlier are a guess of what comes next
  (:class:`NgramDraft`, "prompt lookup decoding"). The model scores the guess in one forward
  pass of several tokens; greedy decoding keeps the guessed tokens up to the first one it would
  not have picked, plus the token it picks there. The answer is the one token-by-token greedy
  decoding gives; only the number of forward passes changes.

Nothing here imports torch: bitmasks are read as ``int`` words.

Example:
    >>> draft = NgramDraft([5, 6, 7, 8, 9, 5, 6], max_ngram=2)
    >>> draft.propose(3)
    [7, 8, 9]
    >>> single_allowed_token([0, 1 << 3, 0]), single_allowed_token([0, 0b11, 0])
    (35, None)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["NgramDraft", "single_allowed_token", "DRAFT_TOKENS", "DRAFT_NGRAM"]

#: Most tokens guessed ahead in one forward pass: a pass over 1 + 8 tokens of SmolLM2-135M on one CPU
#: thread costs about twice a pass over one, so a longer guess that fails wastes more than it saves.
DRAFT_TOKENS = 8
#: Longest run of tokens looked up in the text so far (then shorter ones, down to :data:`MIN_DRAFT_NGRAM`).
DRAFT_NGRAM = 3
#: Shortest run looked up: one token alone matches too often to guess well.
MIN_DRAFT_NGRAM = 2


def single_allowed_token(words: Iterable[int]) -> int | None:
    """The one token a grammar bitmask row allows (bit ``i % 32`` of word ``i // 32``), or None.

    ``words`` are the row's 32-bit words as ints (signed or not); None when the row allows
    no token or more than one.
    """
    found: int | None = None
    for index, word in enumerate(words):
        word &= 0xFFFFFFFF
        if not word:
            continue
        if found is not None or word & (word - 1):
            return None
        found = index * 32 + word.bit_length() - 1
    return found


class NgramDraft:
    """A guess of the next tokens: what followed the latest earlier occurrence of the last few tokens.

    Feed it the prompt at construction and every token of the answer with :meth:`add`; each
    run of ``n`` tokens (``min_ngram <= n <= max_ngram``) is indexed by where it last ended.

    Args:
        tokens: The prompt's tokens.
        max_ngram: Longest run looked up (tried first).
        min_ngram: Shortest run looked up.
    """

    def __init__(self, tokens: Sequence[int], *, max_ngram: int = DRAFT_NGRAM, min_ngram: int = MIN_DRAFT_NGRAM):
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError(f"need 1 <= min_ngram ({min_ngram}) <= max_ngram ({max_ngram})")
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram
        self.tokens: list[int] = []
        self._after: dict[tuple[int, ...], int] = {}  # run -> index of the token that followed its latest occurrence
        for token in tokens:
            self.add(token)

    def add(self, token: int) -> None:
        """Append ``token``; the runs ending just before it now point at it."""
        tokens = self.tokens
        end = len(tokens)
        for n in range(self.min_ngram, self.max_ngram + 1):
            if end >= n:
                self._after[tuple(tokens[end - n : end])] = end
        tokens.append(token)

    def propose(self, limit: int = DRAFT_TOKENS) -> list[int]:
        """Up to ``limit`` tokens that followed the longest run matching the end of the text, else []."""
        tokens = self.tokens
        for n in range(self.max_ngram, self.min_ngram - 1, -1):
            if len(tokens) < n:
                continue
            start = self._after.get(tuple(tokens[-n:]))
            if start is not None:
                return tokens[start : start + limit]
        return []
