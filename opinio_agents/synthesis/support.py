"""Support counts: how many of an entity's reviews discuss a query, and how.

A sentence *mentions* a query when its App. D tokens include the query's most
specific word (highest IDF over the entity's sentences) or cover at least
``coverage`` (default 60%) of the query's IDF mass, so "decor" alone covers
"room decor" while the common word "room" does not, or when it uses a word that also
names the aspect (:func:`aspect_forms`: reviewers rarely write "cleanliness" or
"service"; they write "spotless" and "friendly staff"). With embeddings, a
paraphrase counts too: cosine similarity with the query of at least
``dense_threshold`` (0.45 for MiniLM catches "the furniture looked tired" for
"room decor") and at least ``GENERIC_MARGIN`` (0.1) above its similarity with
each generic word of the query ("room"), so "the room was spotless" does not.
A review mentions the query when any of its sentences does; its stance is the
mean sentiment of those sentences (positive > 0.05, negative < -0.05).

This module is the one definition of "mentions an aspect": every surface (the
highlight support line, the aspect list and the page's chips, the chat's support
line, the API, MCP and the report) counts through :func:`aspect_mentions` and
:func:`count_support`. The query is first reduced to its aspect
(:func:`aspect_terms`): its App. D tokens ("wi-fi", "Wi-Fi" and "wifi" are all
``wifi``, "rooms" is ``room``) and, for a question ("Is parking easy?", "How is
the wifi?"), without the question's own words and opinion words, so the chat
counts "parking" and "wifi" as the highlight does. The dense match embeds that
aspect text (:func:`aspect_text`), so "wifi" and "wi-fi" count the same sentences.

A :class:`~opinio_agents.trends.Weighting` restricts the count to the reviews
published in a window and/or weights each review by recency or helpful votes;
the :class:`~opinio_agents.models.Support` then says which (``weighting``,
``since``, ``until``). The default is the plain count.

Example:
    >>> support = count_support("wi-fi", stored_sentences)     # doctest: +SKIP
    >>> support.describe()                                      # doctest: +SKIP
    'mentioned in 143 of 1500 reviews, 81% negative'
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.embeddings import Encoder
from opinio_agents.errors import ConfigError
from opinio_agents.models import SENTIMENT_THRESHOLD, Polarity, Support
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.text.compounds import names_word, placed_elsewhere, stands_together
from opinio_agents.text.preprocess import tokenize_for_bm25
from opinio_agents.text.wordlists import word_set, words_file
from opinio_agents.trends import Weighting, review_weights

if TYPE_CHECKING:
    from opinio_agents.text.sentiment import VaderSentimentScorer

__all__ = [
    "aspect_terms",
    "aspect_text",
    "aspect_forms",
    "aspect_parts",
    "uses_any",
    "aspect_mentions",
    "mention_mask",
    "count_support",
    "support_of",
    "mention_indices",
    "review_stances",
    "dated_mentions",
    "generic_terms",
    "shown_sides",
    "SIDE_SHARE",
    "DEFAULT_COVERAGE",
    "DEFAULT_DENSE_THRESHOLD",
]

DEFAULT_COVERAGE = 0.6
DEFAULT_DENSE_THRESHOLD = 0.45
#: How much closer to the whole query than to its generic words a dense match must be.
GENERIC_MARGIN = 0.1
#: Share of the reviews that mention an aspect a side needs for its own highlight: the figure the
#: support line prints ("30% negative"), so a side the reader sees at 25% or more is never "No cons".
SIDE_SHARE = 0.25

# The question words are package data: resources/words/support.json.
_opinion_scorer: VaderSentimentScorer | None = None


def _is_question(query: str) -> bool:
    words = query.strip().lower().split()
    return bool(words) and (query.rstrip().endswith("?") or words[0] in word_set("support", "question_start"))


def _valence(text: str) -> float:
    """The review lexicon's score of a word or phrase alone (VADER with the review additions)."""
    global _opinion_scorer
    if _opinion_scorer is None:
        from opinio_agents.text.sentiment import VaderSentimentScorer

        _opinion_scorer = VaderSentimentScorer()
    return _opinion_scorer.score_one(text)


def _opinion_word(token: str) -> bool:
    """Whether VADER's lexicon (with the review additions) gives ``token`` a valence ("easy", "noisy")."""
    return _valence(token) != 0.0


def aspect_terms(query: str) -> list[str]:
    """The App. D tokens of the aspect ``query`` asks about, in order.

    A plain query keeps all its tokens ("room decor" -> ``room``, ``decor``). A
    question ("...?" or starting with how/what/is ...) loses its question words and
    then its opinion words, unless nothing would be left.

    Example:
        >>> aspect_terms("Wi-Fi"), aspect_terms("How is the wifi?"), aspect_terms("Is parking easy?")
        (['wifi'], ['wifi'], ['parking'])
    """
    terms = list(dict.fromkeys(tokenize_for_bm25(query)))
    if not _is_question(query):
        return terms
    question_words = word_set("support", "question_words")
    kept = [t for t in terms if t not in question_words] or terms
    return [t for t in kept if not _opinion_word(t)] or kept


#: Lists of ``resources/words/support.json`` named ``also_names_<aspect>``: words that also name that aspect.
_ALSO_NAMES = "also_names_"


@cache
def _aspect_lexicon() -> dict[str, Any]:
    """The package's aspect lexicon (``resources/aspect_lexicon.json``), read once."""
    import json
    from importlib import resources

    text = resources.files("opinio_agents").joinpath("resources/aspect_lexicon.json").read_text("utf-8")
    return dict(json.loads(text))


@cache
def _lexicon_forms() -> dict[tuple[str, ...], frozenset[str]]:
    """Aspect (its App. D tokens) -> the words that also name it: the aspect lexicon's attribute words,
    synonyms and parts (``resources/aspect_lexicon.json``) and ``support.json``'s ``also_names_<aspect>`` lists."""
    where = "opinio_agents/resources/aspect_lexicon.json"
    try:
        lexicon = _aspect_lexicon()
        groups: dict[str, set[str]] = defaultdict(set)
        for noun, words in lexicon["attribute_nouns"].items():
            groups[str(noun)].update(str(w) for w in words)
        for noun, parts in lexicon.get("aspect_parts", {}).items():
            groups[str(noun)].update(str(w) for w in parts)
        for group in lexicon["synonyms"]:
            for form in group:
                groups[str(form)].update(str(w) for w in group if w != form)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{where}: cannot read the aspect lexicon ({exc}); reinstall opinio-agents") from exc
    for name in words_file("support"):
        if name.startswith(_ALSO_NAMES):
            groups[name[len(_ALSO_NAMES) :]].update(word_set("support", name))
    out: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for aspect, words in groups.items():
        key = tuple(tokenize_for_bm25(aspect))
        if key:
            out[key].update(w.lower() for w in words)
    return {key: frozenset(words) for key, words in out.items()}


def aspect_forms(query: str) -> tuple[tuple[str, ...], ...]:
    """The App. D token tuples of the words that also name the aspect ``query`` asks about.

    From the aspect lexicon (attribute words: "spotless" for cleanliness; synonyms; parts: "furniture"
    for decor) and ``support.json``'s ``also_names_<aspect>`` lists ("staff" for service), looked up by
    the whole aspect (:func:`aspect_terms`); :func:`mention_mask` looks up each word of a longer query
    too ("room decor": decor's words stand for "decor"). Empty for an aspect neither names.

    Example:
        >>> ("spotless",) in aspect_forms("cleanliness"), ("staff",) in aspect_forms("How is the service?")
        (True, True)
    """
    terms = tuple(aspect_terms(query))
    words = _lexicon_forms().get(terms, frozenset())
    forms = {tuple(tokenize_for_bm25(w)) for w in sorted(words)}
    return tuple(sorted(f for f in forms if f and f != terms))


def aspect_parts(query: str) -> tuple[tuple[str, ...], ...]:
    """The :func:`aspect_forms` of ``query`` that name a thing rather than judge it: the parts and places by
    which reviewers describe the aspect (a room's bed and bathroom, a hotel's lobby and pool, a location's
    station and walking distance), not its attribute words ("spacious", "modern", "friendly") nor a word for
    the whole thing ("property").

    A word judges when it is an attribute adjective (``keypoint.json``'s ``attributes``, the aspect
    lexicon's attribute words) or has a valence by itself (VADER with the review additions): "lobby", which
    VADER lists at +0.1, reads 0.03 alone and stays a part.

    Example:
        >>> parts = aspect_parts("rooms")
        >>> ("bed",) in parts, ("bathroom",) in parts, ("spacious",) in parts
        (True, True, False)
        >>> ("lobby",) in aspect_parts("building"), ("modern",) in aspect_parts("building"), aspect_parts("cleanliness")
        (True, False, ())
    """
    terms = tuple(aspect_terms(query))
    words = _lexicon_forms().get(terms, frozenset())
    forms = {tuple(tokenize_for_bm25(w)) for w in sorted(words) if not _judges(w)}
    return tuple(sorted(f for f in forms if f and f != terms))


@cache
def _attribute_words() -> frozenset[str]:
    """Attribute adjectives: ``keypoint.json``'s ``attributes`` and the aspect lexicon's attribute words."""
    words = {str(w).lower() for group in _aspect_lexicon()["attribute_nouns"].values() for w in group}
    return frozenset(words | word_set("keypoint", "attributes"))


def _judges(word: str) -> bool:
    """Whether a word (or phrase) that names an aspect judges it, or names its thing as a whole
    (``support.json``'s ``whole_words``: "property"), rather than naming a part (:func:`aspect_parts`)."""
    if any(w in _attribute_words() or w in word_set("support", "whole_words") for w in word.lower().split()):
        return True
    return abs(_valence(word)) > SENTIMENT_THRESHOLD


def uses_any(text: str, forms: Sequence[tuple[str, ...]]) -> bool:
    """Whether ``text`` uses one of ``forms`` (App. D token tuples, as :func:`aspect_forms` gives them), as a
    mention does: not inside another aspect's compound, not as a place around the entity, a phrase only where
    its words stand together.

    Example:
        >>> uses_any("The beds were very comfortable.", aspect_parts("rooms")), uses_any("Clean room.", [("bed",)])
        (True, False)
    """
    tokens = tokenize_for_bm25(text)
    held = set(tokens)
    return any(_uses(tokens, held, form) for form in forms)


def _uses(tokens: Sequence[str], held: set[str], form: tuple[str, ...]) -> bool:
    """Whether a sentence's App. D ``tokens`` (``held`` as a set) use ``form``, not inside another aspect's compound
    and not as a place around the entity ("restaurants nearby" do not stand for a hotel's food); a form of several
    words only where they stand together (:func:`~opinio_agents.text.compounds.stands_together`: "Great rooms,
    good service." does not use food's "room service")."""
    if not held.issuperset(form) or (len(form) > 1 and not stands_together(tokens, form)):
        return False
    return all(names_word(tokens, t, form) and not placed_elsewhere(tokens, t) for t in form)


def aspect_text(query: str) -> str:
    """The text the dense match embeds for ``query``: its :func:`aspect_terms` joined ("wi-fi" -> "wifi").

    Example:
        >>> aspect_text("How are the rooms?")
        'room'
    """
    return " ".join(aspect_terms(query)) or query.strip()


def aspect_mentions(
    query: str,
    sentences: Sequence[StoredSentence],
    *,
    embeddings: np.ndarray | None = None,
    encoder: Encoder | None = None,
    coverage: float = DEFAULT_COVERAGE,
    dense_threshold: float = DEFAULT_DENSE_THRESHOLD,
) -> np.ndarray:
    """Indices of the sentences that mention the aspect ``query`` asks about: the one definition.

    Lexical (:func:`mention_mask` over :func:`aspect_terms`) and, with ``embeddings``
    and ``encoder``, dense over the embedding of :func:`aspect_text` with the generic-word
    guard. Every count of an aspect on any surface goes through here.
    """
    if encoder is None or embeddings is None or len(embeddings) != len(sentences):
        return np.flatnonzero(mention_mask(query, sentences, coverage=coverage, named=True))
    text = aspect_text(query)
    return mention_indices(
        text,
        sentences,
        embeddings=embeddings,
        query_embedding=encoder.encode([text])[0],
        encoder=encoder,
        coverage=coverage,
        dense_threshold=dense_threshold,
    )


def mention_mask(
    query: str,
    sentences: Sequence[StoredSentence],
    *,
    embeddings: np.ndarray | None = None,
    query_embedding: np.ndarray | None = None,
    generic_embeddings: np.ndarray | None = None,
    coverage: float = DEFAULT_COVERAGE,
    dense_threshold: float = DEFAULT_DENSE_THRESHOLD,
    named: bool = False,
) -> np.ndarray:
    """Boolean mask over ``sentences``: which ones mention ``query``.

    Args:
        named: Also count the words that also name the aspect (:func:`aspect_forms`), as every count
            of an aspect does (:func:`mention_indices`); False matches the query's own words only (HIRO
            matches each of an aspect's names that way).
        generic_embeddings: Embeddings of the query's generic words (see
            :func:`generic_terms`); a dense match must then be closer to the
            whole query than to any of them (by ``GENERIC_MARGIN``), so "the room was spotless" is not
            taken as a mention of "room decor".
    """
    n = len(sentences)
    mask = np.zeros(n, dtype=bool)
    if not n:
        return mask
    idf, token_sets = _query_idf(query, sentences, named=named)
    total = sum(idf.values())
    head = max(idf, key=lambda t: (idf[t], t)) if idf else None
    for i, present in enumerate(token_sets):
        if present and (head in present or sum(idf[t] for t in present) >= coverage * total - 1e-12):
            mask[i] = True
    if embeddings is not None and query_embedding is not None and len(embeddings) == n:
        similarity = embeddings @ query_embedding
        dense = similarity >= dense_threshold
        if generic_embeddings is not None and len(generic_embeddings):
            dense &= similarity >= (embeddings @ generic_embeddings.T).max(axis=1) + GENERIC_MARGIN
        mask |= dense
    return mask


def _query_idf(
    query: str, sentences: Sequence[StoredSentence], *, named: bool = False
) -> tuple[dict[str, float], list[set[str]]]:
    """IDF of each aspect term of the query over the sentences, and the query terms present in each.

    With ``named``, a sentence using a word that also names the whole aspect (:func:`aspect_forms`) holds
    every term, and one using a word that names one term of a longer query holds that term only beside
    the query's other terms ("comfy" is "comfort" of "bed comfort": "Super comfy beds" holds both, "Bring
    comfortable shoes" neither; "decorated" is "decor" of "room decor": "The corridors were decorated"
    holds neither, whatever the terms' IDFs, so the aspect's most specific word is never stood for by a
    word that also names something broader).
    """
    terms = aspect_terms(query)
    term_set = set(terms)
    whole = aspect_forms(query) if named else ()
    each = {t: aspect_forms(t) for t in terms} if named and len(terms) > 1 else {}
    each = {t: forms for t, forms in each.items() if forms}
    doc_freq: Counter[str] = Counter()
    token_sets: list[set[str]] = []
    for stored in sentences:
        tokens = stored.tokens
        present = used = term_set.intersection(tokens)  # how common a word is counts its every use
        if present:  # "room service" does not mention the room (text/compounds.py)
            present = used = {t for t in present if names_word(tokens, t, term_set)}
            if _only_generic(present, term_set):  # "sound quality" does not mention "picture quality"
                present = set()
        if (whole or each) and len(present) < len(term_set):
            held = set(tokens)
            if any(_uses(tokens, held, form) for form in whole):
                present = set(term_set)
            else:
                stood_for = {t for t, forms in each.items() if any(_uses(tokens, held, f) for f in forms)}
                if present | stood_for == term_set:  # a word naming one term counts only beside the others
                    present = set(term_set)
        token_sets.append(present)
        for term in present | used:  # most sentences share no term: no Counter.update call for them
            doc_freq[term] += 1
    n = len(sentences)
    return {t: math.log(1.0 + n / (1.0 + doc_freq[t])) for t in terms}, token_sets


def _only_generic(present: set[str], terms: set[str]) -> bool:
    """Whether a sentence holds only ``generic_heads`` words (``support.json``) of a query of several ``terms``
    that also has another word: "quality" alone is no mention of "picture quality" ("The sound quality is
    great"), "time" alone none of "waiting time" ("Had a great time"). A query of generic words only ("quality
    time") keeps the usual coverage rule.

    Example:
        >>> _only_generic({"quality"}, {"picture", "quality"}), _only_generic({"picture"}, {"picture", "quality"})
        (True, False)
        >>> _only_generic({"quality"}, {"time", "quality"})
        False
    """
    generic = _generic_heads()
    return len(terms) > 1 and present <= generic and not terms <= generic


@cache
def _generic_heads() -> frozenset[str]:
    """The ``generic_heads`` words of ``support.json`` as App. D tokens (read once)."""
    return frozenset(t for w in word_set("support", "generic_heads") for t in tokenize_for_bm25(w))


def generic_terms(query: str, sentences: Sequence[StoredSentence], *, ratio: float = 0.6) -> list[str]:
    """Words of a multi-word query too common to stand for it alone ("room" in "room decor").

    A word is generic when its IDF over the entity's sentences is at most ``ratio``
    times the IDF of the query's most specific word.
    """
    idf, _ = _query_idf(query, sentences)
    if len(idf) < 2:
        return []
    top = max(idf.values())
    return [t for t, weight in idf.items() if weight <= ratio * top]


def shown_sides(support: Support, *, share: float = SIDE_SHARE) -> list[Polarity]:
    """The sides an aspect's highlights show, majority first: the one rule of every surface.

    The majority side (more positive than negative reviews is PROS, a tie too) when any review
    takes it, and the other side as well when at least ``share`` of the reviews that mention the
    aspect take it: the share the support line prints (:meth:`~opinio_agents.models.Support.describe`),
    counted over all mentioning reviews, neutral ones included.

    Example:
        >>> [p.value for p in shown_sides(Support(reviews=163, positive=92, negative=49, neutral=22))]
        ['pros', 'cons']
        >>> [p.value for p in shown_sides(Support(reviews=26, positive=6, negative=20))]
        ['cons']
    """
    pos, neg = support.positive, support.negative
    if not pos and not neg:
        return []
    majority, minority = (Polarity.PROS, Polarity.CONS) if pos >= neg else (Polarity.CONS, Polarity.PROS)
    sides = [majority]
    if min(pos, neg) > 0 and min(pos, neg) >= share * (support.reviews or pos + neg) - 1e-9:
        sides.append(minority)
    return sides


def count_support(
    query: str,
    sentences: Sequence[StoredSentence],
    *,
    total_reviews: int | None = None,
    embeddings: np.ndarray | None = None,
    query_embedding: np.ndarray | None = None,
    encoder: Encoder | None = None,
    coverage: float = DEFAULT_COVERAGE,
    dense_threshold: float = DEFAULT_DENSE_THRESHOLD,
    weighting: Weighting | None = None,
) -> Support:
    """Count the reviews that mention ``query`` and their positive / negative / neutral stance.

    With ``embeddings`` and ``query_embedding`` paraphrases count too; pass the
    ``encoder`` as well so that generic query words are embedded and guarded
    against (see :func:`mention_mask`). With ``embeddings`` and ``encoder`` and no
    ``query_embedding`` (what the façade does), the mentions are :func:`aspect_mentions`,
    the one definition every surface shares. ``weighting`` counts only a window of
    publication dates and/or weights reviews (see :func:`support_of`).
    """
    if query_embedding is None and encoder is not None and embeddings is not None:
        indices = aspect_mentions(
            query, sentences, embeddings=embeddings, encoder=encoder, coverage=coverage, dense_threshold=dense_threshold
        )
        return support_of(sentences, indices, total_reviews=total_reviews, weighting=weighting)
    indices = mention_indices(
        query,
        sentences,
        embeddings=embeddings,
        query_embedding=query_embedding,
        encoder=encoder,
        coverage=coverage,
        dense_threshold=dense_threshold,
    )
    return support_of(sentences, indices, total_reviews=total_reviews, weighting=weighting)


def mention_indices(
    query: str,
    sentences: Sequence[StoredSentence],
    *,
    embeddings: np.ndarray | None = None,
    query_embedding: np.ndarray | None = None,
    encoder: Encoder | None = None,
    coverage: float = DEFAULT_COVERAGE,
    dense_threshold: float = DEFAULT_DENSE_THRESHOLD,
) -> np.ndarray:
    """Indices of the sentences that mention ``query`` (what :func:`count_support` counts).

    With ``encoder``, the query's generic words are embedded and guarded against
    (see :func:`mention_mask`).
    """
    generic = None
    if encoder is not None and embeddings is not None and query_embedding is not None:
        words = generic_terms(query, sentences)
        generic = encoder.encode(words) if words else None
    mask = mention_mask(
        query,
        sentences,
        embeddings=embeddings,
        query_embedding=query_embedding,
        generic_embeddings=generic,
        coverage=coverage,
        dense_threshold=dense_threshold,
        named=True,
    )
    return np.flatnonzero(mask)


def review_stances(sentences: Sequence[StoredSentence], indices: Iterable[int]) -> dict[str, int]:
    """``{review_id: stance}`` over the sentences at ``indices``: 1, 0 or -1 by their mean sentiment.

    Example:
        >>> review_stances(stored, [0, 3])        # doctest: +SKIP
        {'r1': 1, 'r7': -1}
    """
    per_review: dict[str, list[float]] = defaultdict(list)
    for i in indices:
        stored = sentences[int(i)]
        per_review[stored.sentence.review_id].append(stored.sentiment)
    stances: dict[str, int] = {}
    for review_id, scores in per_review.items():
        mean = sum(scores) / len(scores)
        stances[review_id] = 1 if mean > SENTIMENT_THRESHOLD else -1 if mean < -SENTIMENT_THRESHOLD else 0
    return stances


def dated_mentions(
    sentences: Sequence[StoredSentence], indices: Iterable[int]
) -> tuple[list[tuple[dt.date | None, int]], list[dt.date | None]]:
    """The mentions at ``indices`` as ``(publication date, stance)`` per review, and every review's date.

    The input of :func:`~opinio_agents.trends.compute_trend`.
    """
    dates = _review_meta(sentences)
    stances = review_stances(sentences, indices)
    return [(dates[r][0], stance) for r, stance in stances.items()], [d for d, _ in dates.values()]


def _review_meta(sentences: Sequence[StoredSentence]) -> dict[str, tuple[dt.date | None, int | None]]:
    """``{review_id: (publication_date, helpful_votes)}`` from the sentences (every sentence carries them)."""
    meta: dict[str, tuple[dt.date | None, int | None]] = {}
    for stored in sentences:
        sentence = stored.sentence
        if sentence.review_id not in meta:
            meta[sentence.review_id] = (sentence.publication_date, sentence.helpful_votes)
    return meta


def support_of(
    sentences: Sequence[StoredSentence],
    indices: Iterable[int],
    *,
    total_reviews: int | None = None,
    weighting: Weighting | None = None,
) -> Support:
    """Review-level stance counts over the sentences at ``indices`` (the ones that mention something).

    A review counts once; its stance is the mean sentiment of its listed sentences.
    With a ``weighting`` only the reviews in its window count (``total_reviews`` is
    then the entity's reviews in the window, and the given one is ignored) and each
    review adds its weight (recency, helpful votes) instead of 1.

    Raises:
        ConfigError: When the weighting needs publication dates and no review has one.
    """
    stances = review_stances(sentences, indices)
    if weighting is None or weighting.is_default:
        counts = Counter(stances.values())
        if total_reviews is None:
            total_reviews = len({s.sentence.review_id for s in sentences})
        return Support(
            reviews=len(stances),
            positive=counts[1],
            negative=counts[-1],
            neutral=counts[0],
            total_reviews=total_reviews,
        )
    meta = _review_meta(sentences)
    ids = list(meta)
    weights = review_weights([meta[r][0] for r in ids], [meta[r][1] for r in ids], weighting)
    weight_of = dict(zip(ids, weights.tolist()))
    sums = {1: 0.0, 0: 0.0, -1: 0.0}
    for review_id, stance in stances.items():
        sums[stance] += weight_of[review_id]
    mentioned = sum(sums.values())
    total = float(weights.sum())

    def value(x: float) -> int | float:
        return round(x, 3) if weighting.weighted else int(round(x))

    return Support(
        reviews=value(mentioned),
        positive=value(sums[1]),
        negative=value(sums[-1]),
        neutral=value(sums[0]),
        total_reviews=value(total),
        weighting=weighting.label,
        since=weighting.since,
        until=weighting.until,
    )
