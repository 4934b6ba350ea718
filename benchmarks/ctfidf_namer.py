"""The earlier c-TF-IDF cluster namer, kept only to compare against :class:`PhraseNamer` (``aspect_labels.py``).

c-TF-IDF (:func:`label_cluster`): a candidate term is an aspect-like App. D token (noun-ish, no sentiment,
not generic; see :func:`opinio_agents.hiro.lexical.is_aspect_token`) or a
bigram of adjacent tokens ending in one. Its weight in a cluster is the share
of the cluster's sentences containing it times ``log(1 + N / df)`` over the
entity's sentences (class-based tf-idf). A bigram replaces its head unigram
when it covers at least half as many sentences (``front desk`` rather than
``desk``). The winning term is mapped back to its most frequent surface form
in the cluster's text (``wifi`` -> ``wi-fi``, ``kid club`` -> ``kids club``).

Example:
    >>> tokens = [["wifi", "slow"], ["wifi", "fast", "free"], ["pool", "cold"], ["pool", "big"]]
    >>> texts = ["Wi-fi slow.", "The wi-fi was fast and free.", "Cold pool.", "Big pool."]
    >>> label_cluster([0, 1], tokens, texts).text
    'wi-fi'
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from opinio_agents.hiro.labels import _WORD, AspectLabel, ClusterNamer, _word_tokens
from opinio_agents.hiro.lexical import is_aspect_token

__all__ = ["CtfidfNamer", "label_cluster", "term_frequencies", "MIN_COVERAGE"]

#: A label must occur in at least this share of the cluster's sentences.
MIN_COVERAGE = 0.3


def _bigram_ok(first: str, second: str) -> bool:
    """Both words noun-ish (the first may also be an adjective, checked later against the corpus)."""
    return first != second and is_aspect_token(first) and is_aspect_token(second)


def _can_be_adjective(token: str) -> bool:
    from lemminflect import getAllLemmas

    return "ADJ" in getAllLemmas(token)


def _word_pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent words of the original text that are one App. D token each."""
    toks = [_word_tokens(w) for w in _WORD.findall(text)]
    return {(a[0], b[0]) for a, b in zip(toks, toks[1:]) if len(a) == 1 and len(b) == 1}


def _verb_form(term: str, texts: Sequence[str]) -> bool:
    """Whether the term mostly occurs as an inflected form with no noun reading (``booked``, ``kept``)."""
    forms: Counter[str] = Counter()
    for text in texts:
        for word in _WORD.findall(text):
            if _word_tokens(word) == (term,):
                forms[word.lower()] += 1
    if not forms:
        return False
    from lemminflect import getAllLemmas

    inflected = sum(c for w, c in forms.items() if w != term and "NOUN" not in getAllLemmas(w))
    return inflected > 0.5 * sum(forms.values())


def _pure_noun(token: str) -> bool:
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(token)
    return bool(lemmas) and "NOUN" in lemmas and not {"ADJ", "ADV"} & set(lemmas)


def _surface(terms: tuple[str, ...], texts: Sequence[str]) -> str:
    found: Counter[str] = Counter()
    for text in texts:
        words = _WORD.findall(text)
        toks = [_word_tokens(w) for w in words]
        for i in range(len(words) - len(terms) + 1):
            if all(toks[i + j] == (terms[j],) for j in range(len(terms))):
                found[" ".join(w.lower() for w in words[i : i + len(terms)])] += 1
    if found:
        return found.most_common(1)[0][0]
    return " ".join(terms)


def label_cluster(
    indices: Sequence[int],
    tokens: Sequence[Sequence[str]],
    texts: Sequence[str],
    *,
    doc_freq: Counter[str] | None = None,
    min_coverage: float = MIN_COVERAGE,
) -> AspectLabel | None:
    """The aspect label of the cluster ``indices`` (positions into ``tokens``/``texts``), or None.

    Args:
        indices: The cluster's sentences.
        tokens: App. D tokens of every sentence of the entity.
        texts: Original text of every sentence (for the surface form).
        doc_freq: Sentence frequency of each term (unigrams and ``"a b"``
            bigrams) over ``tokens``; computed when not given.
        min_coverage: Minimum share of the cluster's sentences a label must cover.
    """
    if not indices:
        return None
    n = len(tokens)
    if doc_freq is None:
        doc_freq = term_frequencies(tokens, texts)
    uni: Counter[str] = Counter()
    bi: Counter[tuple[str, str]] = Counter()
    for i in indices:
        uni.update({t for t in tokens[i] if is_aspect_token(t)})
        bi.update({pair for pair in _word_pairs(texts[i]) if _bigram_ok(*pair)})
    size = len(indices)
    members = [texts[i] for i in indices]
    best: AspectLabel | None = None
    for term, count in uni.items():
        coverage = count / size
        if coverage < min_coverage or _verb_form(term, members):
            continue
        weight = coverage * math.log(1.0 + n / max(doc_freq.get(term, 1), 1))
        if best is None or weight > best.weight:
            best = AspectLabel((term,), term, round(coverage, 3), weight)
    if best is None:
        return None
    head = best.terms[0]
    pairs = [
        (pair, c)
        for pair, c in bi.items()
        if (pair[1] == head or (pair[0] == head and _pure_noun(pair[1])))
        and c >= 0.5 * uni[head]
        and c / size >= min_coverage / 2
        and not any(_verb_form(t, members) for t in pair)
        and (not _can_be_adjective(pair[0]) or doc_freq.get(" ".join(pair), c) >= 0.5 * doc_freq.get(pair[0], c))
    ]
    if pairs:
        pair, count = max(pairs, key=lambda item: (item[1], -doc_freq.get(" ".join(item[0]), 0)))
        best = AspectLabel(pair, " ".join(pair), round(count / size, 3), best.weight)
    return AspectLabel(best.terms, _surface(best.terms, members), best.coverage, round(best.weight, 4))


def term_frequencies(tokens: Sequence[Sequence[str]], texts: Sequence[str] | None = None) -> Counter[str]:
    """Sentence frequency of every unigram and of adjacent-word bigrams (``"a b"``, from ``texts``)."""
    freq: Counter[str] = Counter()
    for i, seq in enumerate(tokens):
        freq.update(set(seq))
        if texts is not None:
            freq.update({f"{a} {b}" for a, b in _word_pairs(texts[i])})
    return freq


class CtfidfNamer(ClusterNamer):
    """The c-TF-IDF token namer (:func:`label_cluster`), kept for comparison.

    Example:
        >>> tokens = [["wifi", "slow"], ["wifi", "fast"], ["pool", "cold"]]
        >>> CtfidfNamer().name([[0, 1]], tokens, ["Wi-fi slow.", "Wi-fi fast.", "Cold pool."])[0].text
        'wi-fi'
    """

    def __init__(self, min_coverage: float = MIN_COVERAGE) -> None:
        self.min_coverage = min_coverage

    def name(
        self, clusters: Sequence[Sequence[int]], tokens: Sequence[Sequence[str]], texts: Sequence[str]
    ) -> list[AspectLabel | None]:
        """c-TF-IDF label of each cluster."""
        freq = term_frequencies(tokens, texts)
        return [
            label_cluster(c, tokens, texts, doc_freq=freq, min_coverage=self.min_coverage) for c in clusters
        ]
