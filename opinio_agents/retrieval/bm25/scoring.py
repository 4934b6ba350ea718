"""Okapi BM25 scoring over pre-tokenized documents, as a sparse matrix.

The formula is the one of ``rank_bm25.BM25Okapi`` (the library the OpinioRAG
paper used), including its IDF floor: a term whose IDF
``log(N - n + 0.5) - log(n + 0.5)`` is negative gets ``epsilon * mean_idf``.
Scoring is a sparse matrix-vector product, so a query costs milliseconds even
on 50K sentences; results are identical to ``rank_bm25`` (see the parity test).

Example:
    >>> index = BM25Index.build([["clean", "room"], ["noisy", "room"], ["great", "pool"]])
    >>> [round(float(s), 3) for s in index.scores(["noisy"])]
    [0.0, 0.511, 0.0]
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from opinio_agents.errors import ConfigError, StoreError

__all__ = ["BM25Params", "BM25Index"]


@dataclass(frozen=True)
class BM25Params:
    """BM25 Okapi parameters (``rank_bm25`` defaults)."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25

    def __post_init__(self) -> None:
        if self.k1 < 0:
            raise ConfigError(f"k1={self.k1} must be >= 0 (typical values 1.2-2.0)")
        if not 0.0 <= self.b <= 1.0:
            raise ConfigError(f"b={self.b} must be within [0, 1] (typical value 0.75)")


class BM25Index:
    """A BM25 Okapi index: document-term weight matrix plus vocabulary.

    Build with :meth:`build`; score with :meth:`scores`; persist with
    :meth:`save` / :meth:`load`.
    """

    _MATRIX = "bm25_weights.npz"
    _META = "bm25_meta.json"

    def __init__(self, weights: sparse.csc_matrix, vocabulary: dict[str, int], params: BM25Params) -> None:
        self.weights = weights
        self.vocabulary = vocabulary
        self.params = params

    @property
    def num_docs(self) -> int:
        """Number of indexed documents."""
        return int(self.weights.shape[0])

    @classmethod
    def build(cls, corpus_tokens: Sequence[Sequence[str]], params: BM25Params | None = None) -> BM25Index:
        """Index tokenized documents (one token list per document)."""
        params = params or BM25Params()
        n_docs = len(corpus_tokens)
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        doc_len = np.zeros(n_docs, dtype=np.float64)
        for doc_index, tokens in enumerate(corpus_tokens):
            doc_len[doc_index] = len(tokens)
            for token, count in Counter(tokens).items():
                col = vocabulary.setdefault(token, len(vocabulary))
                rows.append(doc_index)
                cols.append(col)
                tfs.append(count)
        n_terms = len(vocabulary)
        if n_docs == 0 or n_terms == 0:
            empty = sparse.csc_matrix((n_docs, n_terms), dtype=np.float64)
            return cls(empty, vocabulary, params)

        row_arr = np.asarray(rows, dtype=np.int64)
        col_arr = np.asarray(cols, dtype=np.int64)
        tf = np.asarray(tfs, dtype=np.float64)
        doc_freq = np.bincount(col_arr, minlength=n_terms).astype(np.float64)
        idf = np.log(n_docs - doc_freq + 0.5) - np.log(doc_freq + 0.5)
        mean_idf = float(idf.mean())
        idf = np.where(idf < 0, params.epsilon * mean_idf, idf)

        avgdl = float(doc_len.sum()) / n_docs
        norm = params.k1 * (1.0 - params.b + params.b * doc_len[row_arr] / avgdl) if avgdl else params.k1
        values = idf[col_arr] * tf * (params.k1 + 1.0) / (tf + norm)
        weights = sparse.csc_matrix((values, (row_arr, col_arr)), shape=(n_docs, n_terms))
        return cls(weights, vocabulary, params)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for a tokenized query (repeated tokens count again)."""
        counts = Counter(token for token in query_tokens if token in self.vocabulary)
        if not counts or self.num_docs == 0:
            return np.zeros(self.num_docs, dtype=np.float64)
        cols = np.fromiter((self.vocabulary[t] for t in counts), dtype=np.int64, count=len(counts))
        mult = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        return np.asarray(self.weights[:, cols] @ mult, dtype=np.float64).ravel()

    def save(self, directory: str | Path) -> None:
        """Write the index to ``directory`` (created if needed)."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        sparse.save_npz(path / self._MATRIX, self.weights.tocsc())
        meta = {"vocabulary": self.vocabulary, "params": self.params.__dict__}
        tmp = path / (self._META + ".tmp")
        tmp.write_text(json.dumps(meta), encoding="utf-8")
        tmp.replace(path / self._META)

    @classmethod
    def load(cls, directory: str | Path) -> BM25Index:
        """Read an index written by :meth:`save`."""
        path = Path(directory)
        try:
            weights = sparse.load_npz(path / cls._MATRIX).tocsc()
            meta = json.loads((path / cls._META).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise StoreError(
                f"cannot read the BM25 index in {str(path)!r} ({exc}); re-run `opinio index` to rebuild it"
            ) from exc
        return cls(weights, meta["vocabulary"], BM25Params(**meta["params"]))


