"""A deterministic, instant stand-in for the sentence encoder (fast-tier tests load no model)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


class HashEncoder:
    """Bag-of-words hashing into ``dimension`` buckets, L2-normalised: lexical, deterministic, no model.

    Counts what it encodes and can simulate a kill after ``fail_after_calls`` calls.
    """

    def __init__(self, name: str = "test-hash-bow", dimension: int = 64, fail_after_calls: int | None = None) -> None:
        self.name = name
        self.dimension = dimension
        self.batch_size = 32
        self.fail_after_calls = fail_after_calls
        self.calls = 0
        self.encoded = 0

    def encode(self, texts: Sequence[str], **_: object) -> np.ndarray:
        from opinio_agents.text.preprocess import tokenize_for_bm25

        if self.fail_after_calls is not None and self.calls >= self.fail_after_calls:
            raise KeyboardInterrupt("simulated kill")
        self.calls += 1
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            tokens = tokenize_for_bm25(text) or [text.lower()]
            for token in tokens:
                out[i, int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
