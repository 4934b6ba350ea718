"""Deterministic stand-ins for the heavy parts, for the fast unit tier."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = ["HashEncoder"]


class HashEncoder:
    """Bag-of-words hashing encoder (384 dimensions): instant, deterministic, lexical.

    Good enough for synthetic reviews, where the same aspect words recur; no model is loaded.
    """

    name = "test-hash-bow"
    dimension = 384
    batch_size = 64

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: Sequence[str], **_: object) -> np.ndarray:
        from opinio_agents.text.preprocess import tokenize_for_bm25

        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in tokenize_for_bm25(text):
                out[i, int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
