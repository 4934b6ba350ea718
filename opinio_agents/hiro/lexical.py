"""Lexical similarity over App. D tokens: tf-idf vectors, ROUGE-2 and noun-ish filters.

HIRO's retriever filters and merges clusters by *lexical* similarity, the
extractive generator picks the sentence with the highest mean ROUGE-2, and the
representation-quality metric (purity minus colocation) is measured with tf-idf
similarity as in the paper. Everything here works on the BM25 tokens the
catalog already stores, so no text is re-processed.

Example:
    >>> model = TfidfModel.fit([["wifi", "slow"], ["wifi", "fast"], ["pool", "cold"]])
    >>> matrix = model.transform([["wifi", "slow"], ["wifi", "fast"]])
    >>> round(float(matrix[0].multiply(matrix[1]).sum()), 2)
    0.37
    >>> rouge2_f1(["the", "wifi", "was", "slow"], ["the", "wifi", "was", "fast"])
    0.6667
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from opinio_agents.text.wordlists import lazy_getattr, word_set

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

__all__ = [
    "TfidfModel",
    "rouge_tokens",
    "rouge2_f1",
    "mean_pairwise_rouge2",
    "is_aspect_token",
    "generic_tokens",
    "function_words",
    "GENERIC_TOKENS",  # noqa: F822 - read from package data on first access (module __getattr__)
    "FUNCTION_WORDS",  # noqa: F822 - read from package data on first access (module __getattr__)
]

_WORD = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*")

# The word lists are package data, ``resources/words/hiro_lexical.json``, read on first use.


def generic_tokens() -> frozenset[str]:
    """Frequent review nouns that name no aspect on their own (:data:`GENERIC_TOKENS`)."""
    return word_set("hiro_lexical", "generic_tokens")


def function_words() -> frozenset[str]:
    """Closed-class words (pronouns, determiners, quantifiers, numbers...) that are never aspects."""
    return word_set("hiro_lexical", "function_words")


_PUBLIC_LISTS = {"GENERIC_TOKENS": generic_tokens, "FUNCTION_WORDS": function_words}


#: ``GENERIC_TOKENS`` and ``FUNCTION_WORDS``, read from the package data on first access.
__getattr__ = lazy_getattr(__name__, _PUBLIC_LISTS)


def _sparse():  # noqa: ANN202 - scipy.sparse module, imported lazily
    from scipy import sparse

    return sparse


@dataclass
class TfidfModel:
    """A small tf-idf model over pre-tokenized documents (sublinear tf, smooth idf, L2 rows).

    Attributes:
        vocabulary: ``token -> column``.
        idf: Inverse document frequency per column.
        doc_freq: Document frequency per column.
        n_docs: Number of documents the model was fitted on.
    """

    vocabulary: dict[str, int] = field(default_factory=dict)
    idf: np.ndarray = field(default_factory=lambda: np.zeros(0))
    doc_freq: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_docs: int = 0

    @classmethod
    def fit(cls, documents: Iterable[Sequence[str]]) -> TfidfModel:
        """Fit the vocabulary and idf on tokenized documents.

        Example:
            >>> TfidfModel.fit([["a", "b"], ["a"]]).n_docs
            2
        """
        counts: Counter[str] = Counter()
        n = 0
        for doc in documents:
            counts.update(set(doc))
            n += 1
        vocabulary = {token: i for i, token in enumerate(sorted(counts))}
        doc_freq = np.array([counts[t] for t in sorted(counts)], dtype=np.float64)
        idf = np.log((1.0 + n) / (1.0 + doc_freq)) + 1.0
        return cls(vocabulary=vocabulary, idf=idf, doc_freq=doc_freq, n_docs=n)

    def transform(self, documents: Sequence[Sequence[str]]) -> csr_matrix:
        """L2-normalised tf-idf rows (unknown tokens ignored; empty rows stay zero)."""
        sparse = _sparse()
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for r, doc in enumerate(documents):
            tf = Counter(self.vocabulary[t] for t in doc if t in self.vocabulary)
            if not tf:
                continue
            weights = {c: (1.0 + math.log(k)) * self.idf[c] for c, k in tf.items()}
            norm = math.sqrt(sum(w * w for w in weights.values()))
            for c, w in weights.items():
                rows.append(r)
                cols.append(c)
                vals.append(w / norm)
        return sparse.csr_matrix(
            (np.asarray(vals, dtype=np.float64), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(len(documents), len(self.vocabulary)),
        )


def rouge_tokens(text: str) -> list[str]:
    """Lower-cased word tokens for ROUGE (punctuation dropped, no stemming).

    Example:
        >>> rouge_tokens("Wi-fi was SLOW!")
        ['wi-fi', 'was', 'slow']
    """
    return _WORD.findall(text.lower())


def _bigrams(tokens: Sequence[str]) -> Counter[tuple[str, str]]:
    return Counter(zip(tokens, tokens[1:]))


def rouge2_f1(a: Sequence[str], b: Sequence[str]) -> float:
    """ROUGE-2 F1 between two token lists (clipped bigram counts), rounded to 4 places."""
    ba, bb = _bigrams(a), _bigrams(b)
    if not ba or not bb:
        return 0.0
    overlap = sum((ba & bb).values())
    if not overlap:
        return 0.0
    p, r = overlap / sum(bb.values()), overlap / sum(ba.values())
    return round(2 * p * r / (p + r), 4)


def mean_pairwise_rouge2(token_lists: Sequence[Sequence[str]]) -> np.ndarray:
    """For each item, its mean ROUGE-2 F1 to every other item (binary bigram sets, vectorised).

    Bigram multiplicity inside one sentence is ignored (a set), which makes the
    all-pairs computation one sparse product; for sentences that is almost
    always identical to clipped counts.

    Example:
        >>> mean_pairwise_rouge2([["a", "b", "c"], ["a", "b", "d"], ["x", "y"]]).round(2).tolist()
        [0.25, 0.25, 0.0]
    """
    n = len(token_lists)
    if n < 2:
        return np.zeros(n)
    sparse = _sparse()
    vocab: dict[tuple[str, str], int] = {}
    rows, cols = [], []
    for r, tokens in enumerate(token_lists):
        for bigram in set(zip(tokens, tokens[1:])):
            rows.append(r)
            cols.append(vocab.setdefault(bigram, len(vocab)))
    if not vocab:
        return np.zeros(n)
    matrix = sparse.csr_matrix((np.ones(len(rows)), (np.asarray(rows), np.asarray(cols))), shape=(n, len(vocab)))
    overlap = (matrix @ matrix.T).toarray()
    sizes = np.asarray(matrix.sum(axis=1)).ravel()
    denom = sizes[:, None] + sizes[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(denom > 0, 2.0 * overlap / denom, 0.0)
    np.fill_diagonal(f1, 0.0)
    return f1.sum(axis=1) / (n - 1)


@lru_cache(maxsize=1)
def _sentiment_words() -> frozenset[str]:
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    except ImportError:  # pragma: no cover - core dependency
        return frozenset()
    return frozenset(word for word, valence in SentimentIntensityAnalyzer().lexicon.items() if abs(valence) >= 0.5)


@lru_cache(maxsize=50_000)
def is_aspect_token(token: str) -> bool:
    """Whether an App. D token can name an aspect: noun-ish, not a sentiment word, not generic.

    A token qualifies when lemminflect knows it as a noun, or does not know it at
    all (protected tokens such as ``wifi``, ``checkin``), and VADER gives it no
    clear valence.

    Example:
        >>> is_aspect_token("breakfast"), is_aspect_token("great"), is_aspect_token("wifi")
        (True, False, True)
    """
    if len(token) < 3 or token in generic_tokens() or token in function_words() or not token.isalpha():
        return False
    if token in _sentiment_words():
        return False
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(token)
    return not lemmas or "NOUN" in lemmas
