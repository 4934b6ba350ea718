"""ROUGE-1/2/L/Lsum (Lin, 2004) without the ``rouge_score`` package.

Scores equal those of Google's ``rouge_score`` (tested for parity): the same
tokenisation (lower-case, every non-alphanumeric run is a separator, the NLTK
Porter stemmer on tokens longer than three characters when ``use_stemmer``),
n-gram overlap with clipped counts, ROUGE-L from the longest common
subsequence and ROUGE-Lsum from the union LCS over newline-separated sentences.
NLTK comes with llama-index-core, a core dependency.

Example:
    >>> scores = rouge_scores("The wifi was fast.", "Fast wifi everywhere.")
    >>> round(scores["rouge1"].fmeasure, 3), round(scores["rougeL"].fmeasure, 3)
    (0.571, 0.286)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from opinio_agents.errors import ConfigError, MissingDependencyError

__all__ = ["RougeScore", "ROUGE_TYPES", "rouge_tokenize", "rouge_scores", "rouge_f1", "lcs_length"]

ROUGE_TYPES: tuple[str, ...] = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class RougeScore:
    """Precision, recall and F1 of one ROUGE variant."""

    precision: float
    recall: float
    fmeasure: float


@lru_cache(maxsize=1)
def _stemmer():  # noqa: ANN202 - nltk's PorterStemmer
    try:
        from nltk.stem import porter
    except ImportError as exc:  # pragma: no cover - nltk comes with llama-index-core
        raise MissingDependencyError("nltk", purpose="ROUGE with stemming") from exc
    return porter.PorterStemmer()


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    return _stemmer().stem(token)


def rouge_tokenize(text: str, *, use_stemmer: bool = True) -> list[str]:
    """ROUGE tokens of a text.

    Example:
        >>> rouge_tokenize("Rooms were spotless!")
        ['room', 'were', 'spotless']
    """
    tokens = _NON_ALNUM.sub(" ", text.lower()).split()
    if use_stemmer:
        tokens = [_stem(t) if len(t) > 3 else t for t in tokens]
    return [t for t in tokens if t]


def _score(hits: int, n_pred: int, n_ref: int) -> RougeScore:
    precision = hits / n_pred if n_pred else 0.0
    recall = hits / n_ref if n_ref else 0.0
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return RougeScore(precision, recall, f)


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _lcs_table(ref: Sequence[str], pred: Sequence[str]) -> list[list[int]]:
    rows, cols = len(ref), len(pred)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        row, prev, r = table[i], table[i - 1], ref[i - 1]
        for j in range(1, cols + 1):
            row[j] = prev[j - 1] + 1 if r == pred[j - 1] else max(prev[j], row[j - 1])
    return table


def lcs_length(ref: Sequence[str], pred: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Example:
        >>> lcs_length("a b c d".split(), "a c d e".split())
        3
    """
    if not ref or not pred:
        return 0
    return _lcs_table(ref, pred)[-1][-1]


def _lcs_ref_indices(ref: Sequence[str], pred: Sequence[str]) -> list[int]:
    """Indices in ``ref`` of one LCS (walking back, preferring to drop a ref token on ties)."""
    table = _lcs_table(ref, pred)
    i, j = len(ref), len(pred)
    found: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == pred[j - 1]:
            found.append(i - 1)
            i, j = i - 1, j - 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return found[::-1]


def _summary_lcs(ref_sents: list[list[str]], pred_sents: list[list[str]]) -> RougeScore:
    n_ref = sum(map(len, ref_sents))
    n_pred = sum(map(len, pred_sents))
    if not n_ref or not n_pred:
        return RougeScore(0.0, 0.0, 0.0)
    left_ref: Counter[str] = Counter(t for s in ref_sents for t in s)
    left_pred: Counter[str] = Counter(t for s in pred_sents for t in s)
    hits = 0
    for ref in ref_sents:
        union = sorted({i for pred in pred_sents for i in _lcs_ref_indices(ref, pred)})
        for token in (ref[i] for i in union):
            if left_ref[token] > 0 and left_pred[token] > 0:
                hits += 1
                left_ref[token] -= 1
                left_pred[token] -= 1
    return _score(hits, n_pred, n_ref)


def rouge_scores(
    prediction: str,
    reference: str,
    *,
    rouge_types: Sequence[str] = ("rouge1", "rouge2", "rougeL"),
    use_stemmer: bool = True,
) -> dict[str, RougeScore]:
    """ROUGE scores of a prediction against one reference.

    Args:
        prediction: System text.
        reference: Reference text.
        rouge_types: Any of ``rouge1``..``rouge9``, ``rougeL``, ``rougeLsum``
            (``rougeLsum`` splits sentences on newlines; split them yourself).
        use_stemmer: Porter-stem tokens longer than three characters.

    Raises:
        ConfigError: For an unknown ROUGE type.
    """
    pred = rouge_tokenize(prediction, use_stemmer=use_stemmer)
    ref = rouge_tokenize(reference, use_stemmer=use_stemmer)
    out: dict[str, RougeScore] = {}
    for kind in rouge_types:
        if kind == "rougeL":
            out[kind] = _score(lcs_length(ref, pred), len(pred), len(ref))
        elif kind == "rougeLsum":
            split = lambda text: [  # noqa: E731
                t
                for t in (
                    rouge_tokenize(line, use_stemmer=use_stemmer) for line in text.split("\n")
                )
                if t
            ]
            out[kind] = _summary_lcs(split(reference), split(prediction))
        elif re.fullmatch(r"rouge[1-9]", kind):
            n = int(kind[5:])
            pred_grams, ref_grams = _ngrams(pred, n), _ngrams(ref, n)
            hits = sum((pred_grams & ref_grams).values())
            out[kind] = _score(hits, sum(pred_grams.values()), sum(ref_grams.values()))
        else:
            raise ConfigError(
                f"rouge type {kind!r} is not one of rouge1..rouge9, rougeL, rougeLsum"
            )
    return out


def rouge_f1(
    prediction: str, reference: str, kind: str = "rougeL", *, use_stemmer: bool = True
) -> float:
    """F1 of a single ROUGE variant.

    Example:
        >>> rouge_f1("clean rooms", "the rooms are clean", "rouge1")
        0.6666666666666666
    """
    return rouge_scores(prediction, reference, rouge_types=(kind,), use_stemmer=use_stemmer)[
        kind
    ].fmeasure
