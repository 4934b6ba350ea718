"""BM25 text preprocessing, following OpinioRAG App. D step by step.

The pipeline (used for BM25 only; dense retrieval and the synthesizer always
see the original sentences):

1. **Lowercase.**
2. **Strip** HTML tags, URLs and e-mail addresses (regular expressions).
3. **Drop non-ASCII** characters, after NFKD accent folding (``café`` ->
   ``cafe`` rather than ``caf``). Typographic apostrophes (``’``) are first
   mapped to ``'`` so that ``can’t`` still expands (a small, documented
   deviation that keeps contractions from being mangled).
4. **Expand contractions** with the ``contractions`` package (``can't`` ->
   ``cannot``, ``we'll`` -> ``we will``); remaining possessive ``'s`` is dropped.
5. **Protect special tokens** that punctuation removal would break, see
   :data:`PROTECTED_TOKENS` (``24-hour`` -> ``twentyfourhour``, ``24/7`` ->
   ``twentyfourseven``, ``wi-fi``/``wi fi``/``wifi`` -> ``wifi``, ``check-in``
   -> ``checkin``, ``a/c`` -> ``aircon`` ...). The replacements are final,
   letters-only words that the lemmatizer leaves alone.
6. **Punctuation and digits** (hyphens and slashes included) become spaces.
7. **Lemmatize.** The paper uses NLTK's WordNet lemmatizer with a POS tagger,
   but WordNet and the tagger models are NLTK *data* downloads, which this
   library must not depend on (offline installs, no hub access). We use
   ``lemminflect``, which ships its lemma tables inside the wheel. Without a
   tagger the part of speech is chosen heuristically: the first lemma for
   NOUN, then VERB, then ADJ, then ADV, then AUX -- except that for words
   ending in ``-ed``/``-ing`` an adjective reading wins over the verb one, so
   ``dated``, ``crowded``, ``amazing`` stay adjectives instead of collapsing
   into ``date``, ``crowd``, ``amaze``. Noun-first keeps review
   nouns intact (``rooms`` -> ``room``, ``options`` -> ``option``,
   ``building`` stays ``building``) while verb-only forms still reduce
   (``stayed`` -> ``stay``, ``was`` -> ``be``). A few gerund nouns that
   lemminflect knows only as verbs are kept (``parking`` would otherwise
   become ``park``), see :data:`KEEP_WORDS`. Irregular past forms that are
   also nouns stay as written (``saw``, ``felt``): a tagger would be needed.
   Words unknown to lemminflect are kept unchanged.
8. **Whitespace normalization.**
9. **Stopwords.** The paper's example drops ``i``, ``it``, ``at`` and ``and``
   but keeps ``our`` and ``out``. By default a small list of function words
   (:data:`STOPWORDS`: articles, ``i``/``it``, conjunctions, common
   prepositions, forms of *be*/*have*/*do*) is dropped; negations (``not``,
   ``no``, ``cannot``) and the other pronouns are kept. BM25's IDF would damp
   these words anyway; dropping them mainly keeps document-length
   normalization from counting them. Pass ``drop_stopwords=False`` to keep all.

Example:
    >>> preprocess_for_bm25("I can't believe it! Visit our website at https://example.com.")
    'cannot believe visit our website'
    >>> tokenize_for_bm25("Free wi-fi, 24/7 front desk")
    ['free', 'wifi', 'twentyfourseven', 'front', 'desk']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from opinio_agents.text.wordlists import lazy_getattr, word_rules, word_set

__all__ = [
    "preprocess_for_bm25",
    "tokenize_for_bm25",
    "lemmatize_word",
    "PROTECTED_TOKENS",  # noqa: F822 - read from package data on first access (module __getattr__)
    "STOPWORDS",  # noqa: F822 - read from package data on first access (module __getattr__)
    "KEEP_WORDS",  # noqa: F822 - read from package data on first access (module __getattr__)
]

# The word lists (:data:`PROTECTED_TOKENS`, :data:`STOPWORDS`, :data:`KEEP_WORDS`) are package
# data, ``resources/words/preprocess.json``, read on first use (see :func:`__getattr__`).


def _protected_tokens() -> tuple[tuple[str, str], ...]:
    """(regex over lowercased text, replacement) applied before punctuation removal."""
    return word_rules("preprocess", "protected_tokens")


def _stopwords() -> frozenset[str]:
    """Function words dropped by default (see module docstring, step 9)."""
    return word_set("preprocess", "stopwords")


@lru_cache(maxsize=1)
def _keep_words() -> frozenset[str]:
    """Words kept exactly as written by the lemmatizer (protected tokens and gerund nouns)."""
    return frozenset({replacement for _, replacement in _protected_tokens()} | word_set("preprocess", "keep_words"))


_PUBLIC_LISTS: dict[str, Callable[[], Any]] = {
    "PROTECTED_TOKENS": _protected_tokens,
    "STOPWORDS": _stopwords,
    "KEEP_WORDS": _keep_words,
}


#: ``PROTECTED_TOKENS``, ``STOPWORDS`` and ``KEEP_WORDS``, read from the package data on first access.
__getattr__ = lazy_getattr(__name__, _PUBLIC_LISTS)


_POS_ORDER = ("NOUN", "VERB", "ADJ", "ADV", "AUX")
_POS_ORDER_PARTICIPLE = ("NOUN", "ADJ", "VERB", "ADV", "AUX")

_CURLY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u00b4": "'", "`": "'"})
_HTML_TAG = re.compile(r"<[^>]{0,500}>")


def plain_apostrophes(text: str) -> str:
    """``text`` with every typographic apostrophe (``’ ‘ ʼ ´ \```) as ``'``: the one mapping of every reader
    of negations and contractions (BM25 preprocessing, the sentiment lexicon, the claim of a key point),
    so "didn’t" and "wasn´t" negate as "didn't" does.

    Example:
        >>> plain_apostrophes("We didn’t like it; it wasn´t clean.")
        "We didn't like it; it wasn't clean."
    """
    return text.translate(_CURLY)

_HTML_ENTITY = re.compile(r"&#?\w{1,8};")
_URL = re.compile(r"(?:https?://|ftp://|www\.)\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|edu|gov|io)(?:/\S*)?")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_COMBINING = re.compile(r"[\u0300-\u036f]+")
_POSSESSIVE = re.compile(r"'s\b")


@lru_cache(maxsize=1)
def _protect() -> tuple[re.Pattern[str], dict[str, str]]:
    """All protected patterns in one alternation (the named group says which matched), and the replacements.

    Every pattern starts with ``\\b`` and a letter or digit; a lookahead on those
    first characters lets the regex engine skip most positions quickly.
    """
    rules = _protected_tokens()
    branches = [f"(?P<p{i}>{pattern[2:]})" for i, (pattern, _) in enumerate(rules)]
    firsts = {m.group(1) for pattern, _ in rules for m in _FIRST.finditer(pattern)}
    pattern = re.compile(rf"(?=[{''.join(sorted(firsts))}])\b(?:{'|'.join(branches)})")
    return pattern, {f"p{i}": f" {repl} " for i, (_, repl) in enumerate(rules)}


_FIRST = re.compile(r"(?:^|\|)\\b(\w)")
_NON_ALPHA = re.compile(r"[^a-z]+")


@lru_cache(maxsize=200_000)
def lemmatize_word(word: str) -> str:
    """Lemmatize one lowercase word with lemminflect's tables (POS order: see the module docstring).

    Example:
        >>> [lemmatize_word(w) for w in ["rooms", "stayed", "parking", "website"]]
        ['room', 'stay', 'parking', 'website']
    """
    if word in _keep_words():
        return word
    from lemminflect import getAllLemmas  # Lazy: loads lemma tables on first use.

    lemmas = getAllLemmas(word)
    for pos in _POS_ORDER_PARTICIPLE if word.endswith(("ed", "ing")) else _POS_ORDER:
        found = lemmas.get(pos)
        if found:
            return str(found[0])
    return word


def _expand_contractions(text: str) -> str:
    try:
        import contractions
    except ImportError as exc:  # pragma: no cover - a core dependency
        from opinio_agents.errors import MissingDependencyError

        raise MissingDependencyError("contractions", purpose="BM25 preprocessing") from exc
    return str(contractions.fix(text))


def _normalize(text: str) -> str:
    """Steps 1-6: everything up to (excluding) lemmatization; returns letters and spaces."""
    text = plain_apostrophes(text.lower())
    if not text.isascii():
        # Fold accents first so that "cafe" survives the non-ASCII drop as "cafe".
        text = _COMBINING.sub("", unicodedata.normalize("NFKD", text))
    text = _HTML_TAG.sub(" ", text)
    if "&" in text:
        text = _HTML_ENTITY.sub(" ", text)
    text = _EMAIL.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _NON_ASCII.sub(" ", text)
    text = _expand_contractions(text)
    text = _POSSESSIVE.sub("", text)
    protect, replacements = _protect()
    text = protect.sub(lambda match: replacements[match.lastgroup or ""], text)
    return _NON_ALPHA.sub(" ", text)


def tokenize_for_bm25(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """The tokens BM25 indexes for ``text`` (used for both queries and sentences).

    Args:
        text: A review sentence or a query.
        drop_stopwords: Drop :data:`STOPWORDS` (after lemmatization).

    Returns:
        Lowercase, lemmatized, letters-only tokens.

    Example:
        >>> tokenize_for_bm25("The rooms were dated; check-in took 2 hours.")
        ['room', 'dated', 'checkin', 'take', 'hour']
    """
    tokens = [lemmatize_word(word) for word in _normalize(text).split()]
    if drop_stopwords:
        stopwords = _stopwords()
        tokens = [token for token in tokens if token not in stopwords]
    return tokens


def preprocess_for_bm25(text: str, *, drop_stopwords: bool = True) -> str:
    """App. D preprocessing as one string (the tokens joined by single spaces).

    Example:
        >>> preprocess_for_bm25("Check out our 24-hour service and wi-fi options!")
        'check out our twentyfourhour service wifi option'
    """
    return " ".join(tokenize_for_bm25(text, drop_stopwords=drop_stopwords))
