"""Query-free highlights: HIRO clusters as PROS and CONS with evidence and support.

Each discovered aspect (:func:`~opinio_agents.hiro.aspects.discover_aspects`)
becomes a PRO, a CON, or both when its reviews genuinely split: its cluster
sentences are divided by their own sentiment, the majority side always gets
a highlight and the minority side one too when it holds at least
``split_threshold`` of the reviews that mention the aspect (the rule every surface uses:
:func:`~opinio_agents.synthesis.support.shown_sides`). A highlight's text is one or
two key points chosen from the side's cluster sentences by
:mod:`~opinio_agents.synthesis.selection` (central in the cluster, in the
words many reviewers use, stated generally; MMR for a distinct second point),
trimmed to key-point style; its evidence is those sentences and the side's
next most central ones; its notes name the HIRO clusters it comes from; its
support counts the whole entity's reviews.

An entity with fewer than ``QueryFreeSettings.small_entity_sentences`` sentences (a few
reviews) has too little for HIRO's clusters to carry a summary; its paragraph
is chosen entity-wide instead (:func:`~opinio_agents.synthesis.selection.select_summary`:
central, generally stated opinions, MMR, to ``summary_words``), praise before
complaints, each in the order reviews raise them, and each chosen sentence becomes a highlight of its own
(:func:`sentence_highlights`): of the discovered aspect whose clusters hold
it (:data:`GENERAL_ASPECT` when none does), citing the sentence, its nearest
same-side sentences and its HIRO cluster path. That aspect's usual highlight
on that side gives way to it.

Otherwise ``HighlightSet.summary`` joins the highlights into one paragraph: every
aspect's main point, most mentioned aspect first, then further points for the
aspects whose share of the paragraph lags their share of mentions, up to
``summary_words`` (:func:`~opinio_agents.synthesis.selection.compose_summary`),
stated in the order human summaries follow (the staff first, the surroundings late:
:func:`~opinio_agents.synthesis.selection.summary_topic`). A topic human summaries nearly always
state (the food, cleanliness: ``QueryFreeSettings.cover_topics``) that no discovered aspect is about
gets the highlights of the sentences that mention it (:func:`~opinio_agents.hiro.aspects.topic_aspect`), and so
does a part of the rooms they state in its own words (the beds, the bathroom: ``QueryFreeSettings.cover_parts``)
that no discovered aspect names. A highlight gives the paragraph those of its key points that speak of the
hotel in the third person, else its main point alone
(:func:`~opinio_agents.synthesis.selection.in_summary_voice`).
Every summary sentence is a key point of a highlight's text, so it cites that highlight's
cluster and evidence.

Like the aspects they come from, the highlights are kept with the HIRO hierarchy
(:meth:`~opinio_agents.hiro.store.HiroIndex.save_result`), so a later call (in any
process) reads them back until the entity, the baseline, the hierarchy or the code
change; ``cache=False`` always computes.

Example:
    >>> result = query_free_highlights(index, "101")                  # doctest: +SKIP
    >>> [(h.query, h.polarity.value, h.support.reviews) for h in result.highlights][:2]  # doctest: +SKIP
    [('wi-fi', 'cons', 61), ('breakfast buffet', 'pros', 54)]
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from opinio_agents.embeddings import ENCODER_ENV
from opinio_agents.errors import ConfigError
from opinio_agents.hiro.aspects import DiscoveredAspect, central_order, discover_aspects, namer_for, topic_aspect
from opinio_agents.hiro.labels import opinion_words, topic_heads
from opinio_agents.hiro.store import HiroIndex, as_hiro_index
from opinio_agents.models import SENTIMENT_THRESHOLD, Evidence, Highlight, HighlightSet, Polarity, RunMeta, Support
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.synthesis.keypoint import KEY_POINT_SETTINGS, mentions_any, to_key_point
from opinio_agents.synthesis.selection import (
    SELECTION_SETTINGS,
    SelectionWeights,
    SummaryLayout,
    adding_points,
    agreeing_points,
    is_first_person,
    is_narrative,
    minority_points,
    names_only_in_passing,
    opinion_points,
    same_opinion,
    score_candidates,
    select_points,
    select_summary,
    states_complaint,
    summary_of,
    summary_topic,
    without_connective,
    without_repeats,
)
from opinio_agents.synthesis.support import SIDE_SHARE, shown_sides
from opinio_agents.text.duplicates import distinct_indices
from opinio_agents.text.polarity import evidence_polarity
from opinio_agents.text.preprocess import tokenize_for_bm25
from opinio_agents.text.wordlists import word_set

__all__ = [
    "query_free_highlights",
    "query_free_result",
    "QueryFreeResult",
    "summary_layout",
    "aspect_highlights",
    "is_aside",
    "QueryFreeSettings",
    "QUERY_FREE_SETTINGS",
    "aspect_positions",
    "is_proper_name",
    "sentence_highlights",
    "reading_order",
    "GENERAL_ASPECT",
    "summary_point",
    "uncovered_topics",
    "uncovered_parts",
]

@dataclass(frozen=True)
class QueryFreeSettings:
    """The settings of query-free highlights in one place (the values shipped; ``benchmarks/real_reviews.py``
    and ``benchmarks/aspect_fidelity.py`` measure them, the figures are in ``benchmarks/README.md``).

    Attributes:
        own_hierarchy: An entity with at least ``small_entity_sentences`` sentences is clustered by a hierarchy
            fitted on its own sentences (:meth:`~opinio_agents.hiro.store.HiroIndex.own`, the seed and settings
            of the store's), not by the store's, whose codes go to what tells the entities apart. Over
            hierarchy seeds 0-3 of one SPACE dev store (``benchmarks/real_reviews.py --hiro-seeds 0,1,2,3``),
            general RL 26.63 / 28.07 / 26.14 / 26.76 -> 28.67 / 28.39 / 27.04 / 26.63 (mean 26.90 -> 27.68),
            specificity margin 1.95 / 2.79 / 1.70 / 1.79 -> 3.57 / 3.25 / 2.46 / 1.72 (mean 2.06 -> 2.75);
            alternate-hotel halves RL 27.67 / 26.05 -> 28.16 / 27.15, margin 2.25 / 1.84 -> 2.62 / 2.89. The
            store's hierarchy compared with the entity's own split only (its baseline without the other
            entities, alpha 60) gave 26.89 (1.88): the gain is the hierarchy, not the baseline.
        alpha: HIRO smoothing, in reviews, of an entity clustered by the store's hierarchy (a small entity
            beside others, or every entity without ``own_hierarchy``): large, so popular aspects (staff, rooms,
            location) outrank entity-specific names, but not so large that what this entity's reviewers raise
            more often than others' (its pool, its wine hour, the sights it is near) never gets a cluster. 30
            (was 60; the paper's 6 favours names), measured before ``own_hierarchy``: over hierarchy seeds 0-3
            of one SPACE dev store, general RL 26.98 -> 26.95, specificity margin 1.80 -> 2.05 (alternate-hotel
            halves: RL 27.79 / 26.07 -> 27.75 / 26.05, margin 1.95 / 1.63 -> 2.25 / 1.84; margin up for 11
            hotels, down for 4); 15: 26.60 (2.10), 120: 27.01 (1.81), 6: 23.24 (1.58).
        own_alpha: The smoothing of an entity clustered by its own hierarchy (``own_hierarchy``, or alone in
            its store), whose subpaths are compared with an even split of their parent
            (:func:`~opinio_agents.hiro.retriever.hierarchy_baseline`) rather than with other entities: a
            weaker estimate of what is expected anyway, so it is smoothed more. Each SPACE dev hotel alone in
            its store (``benchmarks/single_entity.py``): general RL 28.7 (margin 3.6) at 60, 28.0 (3.5) at 30,
            whose clusters then favour one guest's story ("We were given a free upgraded to a superior room ...").
        clusters_per_aspect: Clusters per aspect of the summary's aspect discovery (discovery's own
            default is 4): at this alpha the popular aspects are already first.
        second_aspects: Whether the summary's aspect discovery ranks second aspects (off: they lowered
            general ROUGE-L).
        weights: Selection weights of query-free key points: centrality counts most, and genericity (0.4, the
            default 0.25) prefers a general statement to one guest's account. ``own_words`` 0.1: a point whose
            words no other point of its side uses (a detail one guest adds to the shared claim) gives way to one
            that states the claim in the side's common words (issue 21 item 1, helper gen14, Dec 4). SPACE dev
            general, HIRO seeds 0-3: RL 29.71 -> 29.91 (margin 3.60 -> 3.69; halves 30.30 / 29.06 -> 30.58 /
            29.18; per seed 29.41 / 29.77 / 29.95 / 29.72 -> 29.15 / 29.89 / 30.61 / 30.00); 0.2: 29.81, 0.05: see
            ``benchmarks/README.md``.
        name_weight: Summary share of aspects that are names (the city, the hotel): none until every
            real aspect has its point.
        distinct_topics: Whether further key points must each raise a topic or an opinion of their own
            (off: it cost the specificity margin, which must stay >= 2.0).
        judge_below: Aspects whose target share is below this get the opinion-target check of every
            key point (checking every aspect cost ROUGE-L and the specificity margin).
        drop_repeats: Whether a key point whose claim another point of its highlight already makes
            gives way to it (:func:`~opinio_agents.synthesis.selection.without_repeats`: one sentence
            per opinion, "The location was great. It is a perfect location." says it once).
        judged_candidates: Best-scored key points per side that the opinion-target check reads.
        small_entity_sentences: Entities with fewer sentences get an entity-wide summary
            (:func:`sentence_highlights`): too few reviews for HIRO's clusters.
        praise_first: The entity-wide summary states its praise before its complaints, each in the order
            reviews raise them (:func:`reading_order`), as human summaries of products do: OpoSum general
            RL 25.9 -> 27.1, FewSum val 19.1 -> 19.1 (SPACE hotels take the HIRO path: unchanged).
        drop_connectives: A query-free key point loses a leading connective that tied it to its review's
            previous sentence (:func:`~opinio_agents.synthesis.selection.without_connective`: "Finally, the
            pool is great." is "The pool is great." in a summary).
        must_judge: A query-free key point states an opinion (:func:`~opinio_agents.synthesis.keypoint.is_opinion`)
            while its side has one, as query key points do (``KeyPointSettings.must_judge``): "The breakfast
            buffet wasn't included in the price.", "FREE: internet, newspaper PARKING: Gated parking" gave way
            to "The breakfast buffet is expensive but worth it.". SPACE dev general RL 28.6 -> 28.7 (margin 2.9
            both). Dropping every PRO that :func:`~opinio_agents.synthesis.selection.states_complaint` instead
            cost 28.6 -> 28.0 (its negations read "not too far from the attractions" as a complaint).
        cover_topics: A summary topic of ``selection.json``'s ``cover_topics`` (the food, cleanliness) that no
            highlight's aspect is about (:func:`uncovered_topics`: no aspect of its
            :func:`~opinio_agents.synthesis.selection.summary_topic` tier) gets the highlights of an aspect made
            of the entity's sentences that mention it (:func:`~opinio_agents.hiro.aspects.topic_aspect`: the
            mentions of :func:`~opinio_agents.synthesis.support.aspect_mentions`, the count every surface
            shows), chosen by :func:`aspect_highlights` like any other, when ``cover_share`` of the reviews
            mention it (issue 21 item 1: SPACE human summaries nearly always state the food and cleanliness;
            HIRO's six or so aspects often leave them to the room highlight or out). HIRO seeds 0-3 of SPACE dev
            general (``benchmarks/real_reviews.py`` on one refitted store per seed): RL 27.95 -> 28.73 (per seed
            28.62 / 28.86 / 27.27 / 27.04 -> 29.09 / 28.94 / 29.28 / 27.61), specificity margin 3.03 -> 3.58;
            alternate-hotel halves RL 28.62 / 27.20 -> 28.93 / 28.51; each hotel alone 28.6 (3.7) -> 29.1 (3.8).
            The food alone 28.41 (3.44), with the building too 28.61 (3.53); the
            location alone 27.66 (2.83): when HIRO finds no location aspect the references mostly say nothing of
            it ("not enough reviews to mention the location"). A topic counted as covered when a highlight's text
            names it (a room point saying "clean"): 28.37. ``cover_share`` 0.1 / 0.35: 28.71 (3.52) / 28.77 (3.65).
        cover_share: Share of the entity's reviews that must mention a ``cover_topics`` topic (or a
            ``cover_parts`` part) for it to be covered.
        cover_parts: A part of the rooms of ``selection.json``'s ``cover_parts`` (the beds, the bathroom) that no
            highlight's aspect names by its word (:func:`uncovered_parts`: "beds" names the beds, "rooms" neither)
            gets the highlights of an aspect made of the entity's sentences that mention it, as a ``cover_topics``
            topic does, when ``cover_share`` of the reviews mention it (issue 21 item 1: SPACE human summaries
            describe the room by its parts, "comfy beds", "the bathroom was small", where the room aspect's key
            points restate "clean and comfortable"; the word counts over the 76 shipped summaries of seeds 0-3,
            scaled to the 57 references: beds 13.5 against their 24, bathrooms 1.5 against 16). HIRO seeds 0-3 of
            SPACE dev general (``benchmarks/real_reviews.py --hiro-seeds 0,1,2,3``: one refitted store per
            seed): RL 29.04 -> 29.34 (per seed 28.65 / 30.12 / 28.76 / 28.64 -> 29.14 / 30.23 / 28.99 / 29.00),
            specificity margin 3.91 -> 4.00; alternate-hotel halves 28.54 / 29.60 -> 28.96 / 29.75; each hotel
            alone 28.90 (3.69) -> 29.25 (3.82). The beds alone 29.24, the bathroom alone 29.25; a part counted as
            covered when a highlight's text names it as well 29.31; the service as a third part 27.42 (margin
            3.11), the restaurant 29.02, the food by its word 27.91.
    """

    own_hierarchy: bool = True
    cover_topics: bool = True
    cover_share: float = 0.2
    cover_parts: bool = True
    alpha: float = 30.0
    own_alpha: float = 60.0
    clusters_per_aspect: float = 2.0
    second_aspects: bool = False
    weights: SelectionWeights = SelectionWeights(centrality=0.8, genericity=0.4, own_words=0.1)
    name_weight: float = 0.0
    distinct_topics: bool = False
    judge_below: float = 0.5
    drop_repeats: bool = True
    judged_candidates: int = 16
    small_entity_sentences: int = 250
    praise_first: bool = True
    drop_connectives: bool = True
    must_judge: bool = True


#: The settings query-free highlights use unless a caller passes others.
QUERY_FREE_SETTINGS = QueryFreeSettings()
#: The highlight query of a summary sentence that no discovered aspect's clusters hold.
GENERAL_ASPECT = "overall"


def summary_point(text: str, query: str = "", *, sign: int = 0, terms: Sequence[str] = ()) -> str:
    """A review sentence as a query-free key point: :func:`~opinio_agents.synthesis.keypoint.to_key_point`,
    without a leading connective (``QueryFreeSettings.drop_connectives``).

    Example:
        >>> summary_point("Finally, the pool was great!!")
        'The pool was great.'
    """
    point = to_key_point(text, query, sign=sign, terms=terms)
    return without_connective(point) if QUERY_FREE_SETTINGS.drop_connectives else point


def _cited_highlight(
    query: str, side: Polarity, text: str, evidence: list[Evidence], support: Support, notes: list[str]
) -> Highlight:
    """A query-free highlight: its text (at most 600 characters) and whether its side agrees with its evidence."""
    leaning = evidence_polarity(evidence)
    return Highlight(
        query=query,
        polarity=side,
        text=text[:600],
        evidence=evidence,
        support=support,
        evidence_polarity=leaning,
        polarity_agrees=None if leaning is None else leaning is side,
        notes=notes,
    )


def _ranked_evidence(stored: Sequence[StoredSentence], cited: Sequence[int]) -> list[Evidence]:
    """The cited sentences (positions into ``stored``, best first) as evidence scored ``1 / rank``."""
    return [
        Evidence(
            sentence_id=stored[i].sentence.sentence_id,
            text=stored[i].sentence.text,
            score=1.0 / (rank + 1),
            sentiment=stored[i].sentiment,
        )
        for rank, i in enumerate(cited)
    ]


def aspect_forms(aspect: DiscoveredAspect) -> list[str]:
    """The words whose use mentions ``aspect``: its mention forms, or its name when it has none recorded.

    Example:
        >>> aspect_forms(DiscoveredAspect("noise", 1, 1, 0, 0, 1, 1.0, forms=["noise", "quiet"]))
        ['noise', 'quiet']
        >>> aspect_forms(DiscoveredAspect("front desk", 1, 1, 0, 0, 1, 1.0))
        ['front desk']
    """
    return list(aspect.forms) or [aspect.aspect]


def _judged_by_point(aspect: DiscoveredAspect) -> bool:
    """Whether each key point of ``aspect`` must itself be an opinion about it: when reviewers judge
    it in fewer than ``QueryFreeSettings.judge_below`` of the sentences naming it (a "road" or "building"
    mostly named in passing), not for the aspects nearly every use judges (staff, location)."""
    return aspect.target_share is not None and aspect.target_share < QUERY_FREE_SETTINGS.judge_below


def is_aside(point: str, forms: Sequence[str]) -> bool:
    """Whether ``point`` names its aspect only in passing (after a place preposition) while telling a
    first-person story or judging nothing (no opinion word): "we spent more time in the room", "there is a
    bit of walking from the entrance to the rooms"; see
    :func:`~opinio_agents.synthesis.selection.names_only_in_passing`."""
    return (is_first_person(point) or not opinion_words(point)) and names_only_in_passing(point, forms)


def _quotes(
    order: Sequence[int],
    n_points: int,
    texts: Sequence[str],
    forms: Sequence[str],
    stances: Sequence[float],
    *,
    limit: int,
) -> list[int]:
    """The quotes of a highlight, best first: its key points' own sentences, then those of the side that name
    the aspect other than in passing (the rule its key points follow: :func:`mentions_any`, not :func:`is_aside`)
    and state the side clearly (``stances``: the sentences' sentiment times the side's sign, at least
    ``KEY_POINT_SETTINGS.quote_sentiment``, the query path's rule), each said once
    (:func:`~opinio_agents.text.duplicates.distinct_indices`).

    A quote is what the reader checks the highlight against, so "Keep in mind it is a big place, so there is a bit
    of walking from the entrance to the rooms" does not back a PRO about the rooms, "Our room was on the fourth
    floor." backs no side, and one guest's sentence copied into three reviews takes one place, not three.

    Example:
        >>> _quotes([0, 1, 2, 3, 4], 1, ["Lovely room.", "Lovely room!", "We slept in the room.", "Big room.",
        ...         "Our room was on the fourth floor."], ["room"], [0.8, 0.8, 0.5, 0.6, 0.1], limit=5)
        [0, 3]
    """
    floor = KEY_POINT_SETTINGS.quote_sentiment
    keep = [
        j
        for k, j in enumerate(order)
        if k < n_points or (stances[j] >= floor and mentions_any(texts[j], forms) and not is_aside(texts[j], forms))
    ]
    firsts = range(min(n_points, len(keep)))
    return [keep[k] for k in distinct_indices([texts[j] for j in keep], limit=limit, keep=firsts)]


def _topic_repeats(
    topics: Sequence[frozenset[str]], opinions: Sequence[frozenset[str]]
) -> Callable[[int, int], bool]:
    """``repeats(a, b)``: point ``a`` raises no topic that point ``b`` does not and says nothing of it
    that ``b`` does not (its opinion words are ``b``'s); see :func:`aspect_highlights`."""
    return lambda a, b: topics[a] <= topics[b] and opinions[a] <= opinions[b]


def aspect_highlights(
    aspect: DiscoveredAspect,
    stored: list[StoredSentence],
    *,
    split_threshold: float = SIDE_SHARE,
    max_cited: int = KEY_POINT_SETTINGS.max_cited,
    embeddings: np.ndarray | None = None,
    max_points: int = 1,
    budget_words: int = 30,
    weights: SelectionWeights = SELECTION_SETTINGS.default_weights,
    distinct_topics: bool = QUERY_FREE_SETTINGS.distinct_topics,
    judged: Callable[[Sequence[str], Sequence[str]], list[bool] | None] | None = None,
    drop_repeats: bool = QUERY_FREE_SETTINGS.drop_repeats,
    shown: dict[Polarity, list[str]] | None = None,
    drop_narrative: bool = SELECTION_SETTINGS.drop_narrative,
    cons_complain: bool = SELECTION_SETTINGS.cons_complain,
) -> list[Highlight]:
    """The PRO and/or CON highlights of one discovered aspect (none when it carries no opinion).

    With ``embeddings`` (one row per stored sentence) a side's key points are chosen by
    :mod:`~opinio_agents.synthesis.selection` (centrality in the cluster, shared wording, genericity; MMR up to
    ``max_points``); without, by mean ROUGE-2 to the side's other sentences (HIRO's extractive generator); the
    key points are scored as they are shown (the trimmed, impersonal clause of :func:`to_key_point`, not the
    whole review sentence). Only key points that name the aspect (one of :func:`aspect_forms`) are shown, and
    not one that names it only in passing while telling a first-person story or judging nothing ("we spent more
    time in the room", "a bit of walking from the entrance to the rooms": :func:`is_aside`); the others stay
    evidence, and a side without one gets no highlight. With ``distinct_topics`` a further point must talk about
    something the earlier ones do not (a noun or attribute of its own,
    :func:`~opinio_agents.hiro.labels.topic_heads`, besides the aspect's words) or say something they do not (an
    opinion word of its own, :func:`~opinio_agents.hiro.labels.opinion_words`): "The front desk staff was
    friendly and helpful" does not follow "The staff was very friendly and helpful". With ``judged``
    (``judged(forms, texts)``: per text, whether its opinion is about one of the aspect's forms, e.g.
    :meth:`~opinio_agents.hiro.labels.ClusterNamer.judged`, the triplet extractor's opinion targets) a key point
    must also be an opinion about the aspect, not a mention of it in passing: a point the check rejects is left
    out when a second signal agrees (it is in the first person, or names the aspect only after a place
    preposition, "a pharmacy just across the road"); the ``QueryFreeSettings.judged_candidates`` best-scored
    points are read. With ``drop_repeats`` a point whose claim another chosen point makes gives way to it
    (:func:`~opinio_agents.synthesis.selection.without_repeats`). With ``shown`` (side -> key points already
    shown by earlier aspects; the points chosen here are added to it) one sentence states one opinion across
    aspects: a candidate that states the opinion of a shown point of its side
    (:func:`~opinio_agents.synthesis.selection.same_opinion`: "This hotel was in a great location in Rome."
    under "hotel" after "The location of this hotel was awesome." under "location") is passed over while
    others are left. With ``drop_narrative`` a candidate that tells what the reviewer did
    (:func:`~opinio_agents.synthesis.selection.is_narrative`: "When we returned, the room was ready and we hung
    out at the pool for a while.") is never a key point; a side with only such candidates gets no highlight.
    With ``cons_complain`` a CON key point must complain
    (:func:`~opinio_agents.synthesis.selection.states_complaint`), not merely come from a sentence stored as
    negative ("The beach is a short walk away.").
    """
    support = Support(
        reviews=aspect.mentions,
        positive=aspect.positive,
        negative=aspect.negative,
        neutral=aspect.neutral,
        total_reviews=aspect.total_reviews,
    )
    named = set(aspect.term_indices)
    pool = [i for i in aspect.sentence_indices if i in named]
    if len(pool) < 2:
        pool = list(aspect.sentence_indices)
    pos_idx = [i for i in pool if stored[i].sentiment > SENTIMENT_THRESHOLD]
    neg_idx = [i for i in pool if stored[i].sentiment < -SENTIMENT_THRESHOLD]
    pos, neg = aspect.positive, aspect.negative
    opinionated = pos + neg
    if opinionated == 0 and not (pos_idx or neg_idx):
        return []
    # The sides are the one rule of every surface (shown_sides): the majority side, and the
    # other one when it holds ``split_threshold`` of the reviews that mention the aspect.
    sides = shown_sides(support, share=split_threshold)
    if not sides:  # no opinionated review, but opinionated sentences: the side with more of them
        sides = [Polarity.PROS if len(pos_idx) >= len(neg_idx) else Polarity.CONS]
    major = sides[0]
    out: list[Highlight] = []
    forms = aspect_forms(aspect)
    for side in sides:
        indices = pos_idx if side is Polarity.PROS else neg_idx
        if len(indices) < (1 if side is major else 2):
            continue
        sign = 1 if side is Polarity.PROS else -1
        texts = [stored[i].sentence.text for i in indices]
        points = [summary_point(t, aspect.aspect, sign=sign, terms=forms) for t in texts]
        # A key point that does not name its aspect is never shown (the clause about it was cut away,
        # or the sentence sits in the cluster for another reason): it stays evidence only.
        about = [
            j for j, point in enumerate(points)
            if mentions_any(point, forms) and not is_aside(point, forms)
        ]
        if not about:
            continue
        if drop_narrative:
            story = SELECTION_SETTINGS.subjectless_story
            about = [j for j in about if not is_narrative(points[j], implied_subject=story)]
        if side is Polarity.CONS and cons_complain:
            about = [j for j in about if states_complaint(points[j])]
        # The key point as shown must not read as the other side, nor its part about the aspect.
        about = agreeing_points(points, about, sign, query=aspect.aspect, terms=forms)
        if side is not major:  # a minority side's point needs a second signal besides the sentiment head
            about = minority_points(points, about, sign, [sign * stored[i].sentiment for i in indices])
        if not about:  # only accounts of what reviewers did, or CONS that complain of nothing: evidence only
            continue
        if QUERY_FREE_SETTINGS.must_judge:  # opinions, not facts ("The breakfast buffet wasn't included ...")
            about = opinion_points(points, about, aspect.aspect)
            if not about:  # only bare phrases ("Waiting time."): nothing to say
                continue
        earlier = [] if shown is None else shown.setdefault(side, [])
        if earlier:
            about = [j for j in about if not any(same_opinion(points[j], p) for p in earlier)] or about
        if embeddings is not None and len(embeddings) == len(stored):
            vectors = embeddings[indices]
            scores = score_candidates(
                points, vectors, sentiments=[stored[i].sentiment for i in indices], weights=weights
            )
            if judged is not None:
                best = sorted(about, key=lambda j: -scores[j])[: QUERY_FREE_SETTINGS.judged_candidates]
                verdicts = judged(forms, [points[j] for j in best])
                if verdicts is not None:
                    about = [
                        j for j, ok in zip(best, verdicts, strict=True)
                        if ok or not (is_first_person(points[j]) or names_only_in_passing(points[j], forms))
                    ]
                    if not about:
                        continue
            repeats = None
            if distinct_topics:
                own = {head for form in forms for head in tokenize_for_bm25(form)[-1:]}
                repeats = _topic_repeats(
                    [topic_heads(points[j]) - own for j in about], [opinion_words(points[j]) for j in about]
                )
            chosen = select_points(
                [points[j] for j in about], vectors[about], scores[about], max_points=max_points,
                budget_words=budget_words, repeats=repeats,
            )
            chosen = [about[j] for j in chosen]
            if SELECTION_SETTINGS.points_add:  # a further point that adds nothing gives its words to the next aspect
                chosen = adding_points(points, chosen)
            if drop_repeats:
                chosen = without_repeats(points, chosen)
            order = chosen + [int(j) for j in np.argsort(-scores, kind="stable") if int(j) not in chosen]
            said = [points[j] for j in chosen]
        else:
            central = central_order(texts)
            first = next(j for j in central if j in set(about))
            chosen = [first]
            order = [first, *(j for j in central if j != first)]
            said = [points[first]]
        text = " ".join(said)
        if shown is not None:
            shown.setdefault(side, []).extend(said)
        stances = [sign * stored[i].sentiment for i in indices]
        quoted = _quotes(order, len(chosen), texts, forms, stances, limit=max(max_cited, max_points))
        cited = [indices[j] for j in quoted]
        evidence = _ranked_evidence(stored, cited)
        notes = [f"HIRO clusters {[list(p) for c in aspect.clusters for p in c.subpaths]}, score {aspect.score}"]
        out.append(
            _cited_highlight(aspect.aspect, side, text, evidence, support, notes)
        )
    return out


def reading_order(indices: list[int], stored: list[StoredSentence], *, praise_first: bool = False) -> list[int]:
    """``indices`` in the order reviews raise them: relative position in the review (0 first, 1 last).

    With ``praise_first`` the praise (sentiment >= 0, the PROS) comes before the complaints, each in that
    order: human summaries state what is good, then what is not ("Nice looking, and well built. ...
    The zipper broke after a month.").

    Example:
        >>> from opinio_agents.models import Sentence
        >>> rows = [StoredSentence(Sentence(sentence_id=f"1:r:{i}", entity_id="1", review_id="r", index=i,
        ...         text=t, start=0, end=len(t)), (), s) for i, (t, s) in enumerate(
        ...         [("Great.", 0.5), ("Broke.", -0.5), ("Nice.", 0.4)])]
        >>> reading_order([2, 0, 1], rows), reading_order([2, 0, 1], rows, praise_first=True)
        ([0, 1, 2], [0, 2, 1])
    """
    length: dict[str, int] = {}
    for row in stored:
        review = row.sentence.review_id
        length[review] = max(length.get(review, 0), row.sentence.index + 1)

    def position(i: int) -> tuple[float, int]:
        sentence = stored[i].sentence
        return sentence.index / max(1, length[sentence.review_id] - 1), i

    ordered = sorted(indices, key=position)
    return sorted(ordered, key=lambda i: stored[i].sentiment < 0) if praise_first else ordered


def sentence_highlights(
    chosen: list[int],
    aspects: list[DiscoveredAspect],
    stored: list[StoredSentence],
    embeddings: np.ndarray,
    *,
    paths: np.ndarray | None = None,
    max_cited: int = KEY_POINT_SETTINGS.max_cited,
) -> list[Highlight]:
    """One highlight per chosen summary sentence (an entity-wide summary), in ``chosen`` order.

    A sentence's highlight belongs to the first discovered aspect whose
    clusters hold it and whose name (one of :func:`aspect_forms`) its key point
    uses (:data:`GENERAL_ASPECT` otherwise) and takes the side of its sentiment. Its text is the sentence
    as a key point; its evidence the sentence, then the entity's sentences
    of the same side nearest to it (up to ``max_cited``); its support the
    aspect's, or for :data:`GENERAL_ASPECT` the reviews of that evidence; its
    notes name its HIRO cluster path (``paths``) and the aspect's clusters.

    Example:
        >>> from opinio_agents.models import Sentence
        >>> rows = [StoredSentence(Sentence(sentence_id=f"1:r{i}:0", entity_id="1", review_id=f"r{i}", index=0,
        ...         text=t, start=0, end=len(t)), (), s) for i, (t, s) in enumerate(
        ...         [("Strong chain.", 0.6), ("The chain is strong.", 0.5), ("Cheap clasp.", -0.4)])]
        >>> v = np.array([[1.0, 0.0], [0.98, 0.2], [0.0, 1.0]])
        >>> [h] = sentence_highlights([0], [], rows, v)
        >>> h.query, h.polarity.value, [e.sentence_id for e in h.evidence]
        ('overall', 'pros', ['1:r0:0', '1:r1:0'])
    """
    vecs = np.asarray(embeddings, dtype=float)
    total_reviews = len({row.sentence.review_id for row in stored})
    out: list[Highlight] = []
    for i in chosen:
        sign = 1 if stored[i].sentiment >= 0 else -1
        point = summary_point(stored[i].sentence.text, sign=sign)
        holders = [a for a in aspects if i in a.sentence_indices and mentions_any(point, aspect_forms(a))]
        aspect = holders[0] if holders else None
        side = Polarity.PROS if sign > 0 else Polarity.CONS
        same = [
            j for j, row in enumerate(stored)
            if j != i and row.sentiment * sign > SENTIMENT_THRESHOLD
        ]
        nearest = sorted(same, key=lambda j: (-float(vecs[j] @ vecs[i]), j))[: max_cited - 1]
        cited = [i, *nearest]
        evidence = _ranked_evidence(stored, cited)
        if aspect is not None:
            support = Support(
                reviews=aspect.mentions,
                positive=aspect.positive,
                negative=aspect.negative,
                neutral=aspect.neutral,
                total_reviews=aspect.total_reviews,
            )
        else:
            reviews = {stored[j].sentence.review_id for j in cited}
            support = Support(
                reviews=len(reviews),
                positive=len(reviews) if sign > 0 else 0,
                negative=0 if sign > 0 else len(reviews),
                total_reviews=total_reviews,
            )
        notes = ["summary sentence chosen entity-wide (small entity)"]
        if paths is not None and len(paths) == len(stored):
            notes.append(f"HIRO cluster path {[int(c) for c in paths[i]]}")
        if aspect is not None:
            notes.append(
                f"HIRO clusters {[list(p) for c in aspect.clusters for p in c.subpaths]}, score {aspect.score}"
            )
        name = aspect.aspect if aspect is not None else GENERAL_ASPECT
        out.append(
            _cited_highlight(
                name, side, point, evidence, support, notes
            )
        )
    return out


def is_proper_name(label: str, stored: list[StoredSentence], *, share: float = 0.6) -> bool:
    """Whether reviewers write ``label`` as a name: a city or the entity itself, not an aspect.

    A label is a name when its head word is capitalised in at least ``share``
    of its occurrences inside sentences (the first word of a sentence does not count).

    Example:
        >>> from opinio_agents.models import Sentence
        >>> rows = [StoredSentence(Sentence(sentence_id=f"1:r:{i}", entity_id="1", review_id="r", index=i,
        ...         text=t, start=0, end=len(t)), (), 0.5) for i, t in enumerate(
        ...         ["We loved Seattle.", "Seattle is great and the room was clean.", "Nice room."])]
        >>> is_proper_name("seattle", rows), is_proper_name("room", rows)
        (True, False)
    """
    words = label.split()
    if not words:
        return False
    head = words[-1].lower()
    capital = lower = 0
    for row in stored:
        for token in row.sentence.text.split()[1:]:
            word = token.strip(".,;:!?()\"'")
            if word.lower() == head:
                if word[:1].isupper():
                    capital += 1
                else:
                    lower += 1
    total = capital + lower
    return total > 0 and capital / total >= share


def aspect_positions(aspects: list[DiscoveredAspect], stored: list[StoredSentence]) -> dict[str, float]:
    """Where reviewers raise each aspect: mean relative position (0 first, 1 last) of its sentences in their reviews.

    The sentences that name the aspect count (all its cluster sentences when none does).

    Example:
        >>> from opinio_agents.models import Sentence
        >>> rows = [StoredSentence(Sentence(sentence_id=f"1:r:{i}", entity_id="1", review_id="r", index=i,
        ...         text=t, start=0, end=len(t)), (), 0.5) for i, t in enumerate(["Great staff.", "Ok.", "Nice pool."])]
        >>> staff = DiscoveredAspect("staff", 1, 1, 0, 0, 1, 1.0, term_indices=[0])
        >>> pool = DiscoveredAspect("pool", 1, 1, 0, 0, 1, 1.0, term_indices=[2])
        >>> aspect_positions([staff, pool], rows)
        {'staff': 0.0, 'pool': 1.0}
    """
    length: dict[str, int] = {}
    for row in stored:
        review = row.sentence.review_id
        length[review] = max(length.get(review, 0), row.sentence.index + 1)
    out: dict[str, float] = {}
    for aspect in aspects:
        rows = aspect.term_indices or aspect.sentence_indices
        relative = [
            stored[i].sentence.index / max(1, length[stored[i].sentence.review_id] - 1) for i in rows
        ]
        if relative:
            out[aspect.aspect] = float(np.mean(relative))
    return out


def query_free_highlights(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = 8,
    alpha: float | None = None,
    split_threshold: float = SIDE_SHARE,
    max_cited: int = KEY_POINT_SETTINGS.max_cited,
    summary_words: int = SELECTION_SETTINGS.summary_words,
    max_points: int = 2,
    weights: SelectionWeights = QUERY_FREE_SETTINGS.weights,
    order_by_position: bool = True,
    name_weight: float = QUERY_FREE_SETTINGS.name_weight,
    small_entity: int = QUERY_FREE_SETTINGS.small_entity_sentences,
    cache: bool = True,
) -> HighlightSet:
    """PROS and CONS of an entity without any query, from its HIRO clusters, with a ``summary`` paragraph.

    The ``highlights`` of :func:`query_free_result` (same arguments).

    Raises:
        ConfigError: On a bad argument.
        StoreError: When the entity is not indexed.
    """
    return query_free_result(
        index,
        entity_id,
        top_k=top_k,
        alpha=alpha,
        split_threshold=split_threshold,
        max_cited=max_cited,
        summary_words=summary_words,
        max_points=max_points,
        weights=weights,
        order_by_position=order_by_position,
        name_weight=name_weight,
        small_entity=small_entity,
        cache=cache,
    ).highlights


@dataclass(frozen=True)
class QueryFreeResult:
    """What :func:`query_free_result` returns.

    Attributes:
        highlights: The highlights, their ``summary`` composed.
        layout: The summary's layout (aspect positions in reviews, name weights), so a
            post-processing step that changes the highlights can compose it again alike.
    """

    highlights: HighlightSet
    layout: SummaryLayout


def summary_layout(
    aspects: list[DiscoveredAspect],
    stored: list[StoredSentence],
    *,
    order_by_position: bool = True,
    name_weight: float = 1.0,
) -> SummaryLayout:
    """The query-free summary's layout: :func:`aspect_positions` and :func:`is_proper_name` weights.

    Example:
        >>> summary_layout([], [], order_by_position=False)
        SummaryLayout(positions=None, weights={}, sentences=None)
    """
    positions = aspect_positions(aspects, stored) if order_by_position else None
    weights = {a.aspect: name_weight for a in aspects if name_weight != 1.0 and is_proper_name(a.aspect, stored)}
    return SummaryLayout(positions=positions, weights=weights)


def query_free_result(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = 8,
    alpha: float | None = None,
    split_threshold: float = SIDE_SHARE,
    max_cited: int = KEY_POINT_SETTINGS.max_cited,
    summary_words: int = SELECTION_SETTINGS.summary_words,
    max_points: int = 2,
    weights: SelectionWeights = QUERY_FREE_SETTINGS.weights,
    order_by_position: bool = True,
    name_weight: float = QUERY_FREE_SETTINGS.name_weight,
    small_entity: int = QUERY_FREE_SETTINGS.small_entity_sentences,
    cache: bool = True,
) -> QueryFreeResult:
    """PROS and CONS of an entity without any query, from its HIRO clusters, and the summary's layout.

    Args:
        index: The sentence store (the HIRO hierarchy is fitted on first use) or a :class:`HiroIndex`.
        entity_id: An indexed entity.
        top_k: Aspects to turn into highlights (paper: 8 clusters).
        alpha: HIRO smoothing constant; None for ``QueryFreeSettings.own_alpha`` (60; ``alpha``, 30, for a
            small entity clustered by the store's hierarchy beside others), which favours what many reviewers
            raise over what is rare elsewhere (the paper's 6 favours specificity: hotel and street names).
        split_threshold: Share of the reviews mentioning the aspect the other side needs for a highlight
            (:func:`~opinio_agents.synthesis.support.shown_sides`, the rule of every surface).
        max_cited: Evidence sentences per highlight.
        summary_words: Word budget of ``HighlightSet.summary`` (human general
            summaries of hotels run 60-90 words).
        max_points: Key points (sentences) per highlight, chosen with MMR.
        weights: Selection weights (:class:`~opinio_agents.synthesis.selection.SelectionWeights`).
        order_by_position: Order the summary's aspects as reviews order them
            (:func:`aspect_positions`) rather than by mentions.
        name_weight: Factor on the mentions of aspects that are names
            (:func:`is_proper_name`: the city, the hotel) when the summary
            shares its budget out; 0 puts them after every real aspect.
        small_entity: Entities with fewer sentences get an entity-wide summary
            (see the module docstring); 0 never.
        cache: Read the result stored with the HIRO hierarchy when it is current, and store
            a computed one (see the module docstring); False always computes.

    Raises:
        ConfigError: On a bad argument.
        StoreError: When the entity is not indexed.
    """
    if not 0.0 < split_threshold <= 0.5:
        raise ConfigError(f"split_threshold={split_threshold} must be in (0, 0.5]")
    if max_cited < 1:
        raise ConfigError(f"max_cited={max_cited} must be >= 1")
    started = time.perf_counter()
    hiro = as_hiro_index(index)
    key = hiro.index.require_entity(entity_id)
    params: dict[str, Any] = {
        "top_k": top_k,
        "alpha": None if alpha is None else float(alpha),  # None: resolved on computing (the store decides)
        "split_threshold": float(split_threshold),
        "max_cited": max_cited,
        "summary_words": summary_words,
        "max_points": max_points,
        "weights": asdict(weights),
        "order_by_position": order_by_position,
        "name_weight": float(name_weight),
        "small_entity": small_entity,
        "encoder": os.environ.get(ENCODER_ENV, ""),
    }
    state = hiro.result_state(key) if cache else ""
    if cache:
        found = _result_from_record(hiro.load_result(key, "query-free", params, state=state))
        if found is not None:
            found.highlights.meta.timings["hiro"] = round(time.perf_counter() - started, 3)
            return found
    computed = _compute_result(
        hiro,
        key,
        top_k=top_k,
        alpha=alpha,
        split_threshold=split_threshold,
        max_cited=max_cited,
        summary_words=summary_words,
        max_points=max_points,
        weights=weights,
        order_by_position=order_by_position,
        name_weight=name_weight,
        small_entity=small_entity,
    )
    if cache:
        hiro.save_result(key, "query-free", params, _result_record(computed), state=state)
    computed.highlights.meta.timings["hiro"] = round(time.perf_counter() - started, 3)
    return computed


def _result_record(result: QueryFreeResult) -> dict[str, Any]:
    layout = result.layout
    return {
        "highlights": result.highlights.model_dump(mode="json"),
        "positions": None if layout.positions is None else dict(layout.positions),
        "weights": None if layout.weights is None else dict(layout.weights),
        "sentences": None if layout.sentences is None else list(layout.sentences),
    }


def _result_from_record(record: Any) -> QueryFreeResult | None:
    if not isinstance(record, dict):
        return None
    try:
        highlights = HighlightSet.model_validate(record["highlights"])
        sentences = record["sentences"]
        layout = SummaryLayout(
            positions=record["positions"],
            weights=record["weights"],
            sentences=None if sentences is None else tuple(str(t) for t in sentences),
        )
    except (KeyError, TypeError, ValueError):  # written by another version: compute again
        return None
    return QueryFreeResult(highlights, layout)


def uncovered_topics(queries: Sequence[str], topics: Sequence[str]) -> list[str]:
    """Those of ``topics`` that none of ``queries`` (the aspects that have a highlight) is about: no query has
    the topic's :func:`~opinio_agents.synthesis.selection.summary_topic` tier ("breakfast" and "restaurant"
    are about the food, "rooms" is not).

    Example:
        >>> uncovered_topics(["staff", "rooms", "restaurant"], ["food", "cleanliness"])
        ['cleanliness']
    """
    tiers = {summary_topic(query) for query in queries}
    return [topic for topic in topics if summary_topic(topic) not in tiers]


def uncovered_parts(queries: Sequence[str], parts: Sequence[str]) -> list[str]:
    """Those of ``parts`` (of the rooms: the beds, the bathroom) that none of ``queries`` (the aspects that have a
    highlight) names by the part's word (stemmed): a part of the rooms is covered by an aspect about it ("beds",
    "king bed"), not by the room aspect, though :func:`~opinio_agents.synthesis.selection.summary_topic` gives
    them one tier.

    Example:
        >>> uncovered_parts(["staff", "rooms", "beds"], ["bathroom", "bed"])
        ['bathroom']
    """
    named = {stem for query in queries for stem in tokenize_for_bm25(query)}
    return [part for part in parts if not set(tokenize_for_bm25(part)) <= named]


def _cover_aspects(
    hiro: HiroIndex, key: str, highlights: Sequence[Highlight], namer: Any
) -> list[DiscoveredAspect]:
    """The ``cover_topics`` that no highlight is about (:func:`uncovered_topics`), then the ``cover_parts`` that no
    highlight names (:func:`uncovered_parts`), that at least ``QueryFreeSettings.cover_share`` of the reviews
    mention, as aspects of the sentences that mention them (:func:`~opinio_agents.hiro.aspects.topic_aspect`)."""
    if not QUERY_FREE_SETTINGS.cover_topics:  # the highlights of the aspects HIRO discovered only
        return []
    queries = [h.query for h in highlights]
    uncovered = uncovered_topics(queries, sorted(word_set("selection", "cover_topics")))
    if QUERY_FREE_SETTINGS.cover_parts:
        uncovered += uncovered_parts(queries, sorted(word_set("selection", "cover_parts")))
    found = [topic_aspect(hiro, key, t, namer=namer, min_share=QUERY_FREE_SETTINGS.cover_share) for t in uncovered]
    return [aspect for aspect in found if aspect is not None]


def _compute_result(
    hiro: HiroIndex,
    key: str,
    *,
    top_k: int,
    alpha: float | None,
    split_threshold: float,
    max_cited: int,
    summary_words: int,
    max_points: int,
    weights: SelectionWeights,
    order_by_position: bool,
    name_weight: float,
    small_entity: int,
) -> QueryFreeResult:
    # An entity with enough sentences for clusters is clustered by a hierarchy of its own sentences.
    stored = hiro.index.sentences(key)
    own = QUERY_FREE_SETTINGS.own_hierarchy and len(stored) >= QUERY_FREE_SETTINGS.small_entity_sentences
    clustered = hiro.own(key) if own else hiro
    if alpha is None:  # subpaths compared with an even split of their parent rather than other entities
        alone = clustered.corpus_baseline(key) is None
        alpha = QUERY_FREE_SETTINGS.own_alpha if alone else QUERY_FREE_SETTINGS.alpha
    aspects = discover_aspects(
        clustered,
        key,
        top_k=top_k,
        alpha=alpha,
        clusters_per_aspect=QUERY_FREE_SETTINGS.clusters_per_aspect,
        second_aspects=QUERY_FREE_SETTINGS.second_aspects,
    )
    # An aspect reviewers only name in passing ("they called us a taxi") has no opinion to highlight.
    aspects = [a for a in aspects if a.evaluated]
    namer = namer_for(hiro.index)
    info = hiro.index.entity_record(key)
    result = HighlightSet(
        entity_id=info.entity_id,
        entity_name=info.entity_name,
        meta=RunMeta(retriever="hiro", top_k=top_k, synthesizer="hiro-extractive", queries=[a.aspect for a in aspects]),
    )
    embeddings = hiro.index.embeddings(key)
    chosen: list[int] = []
    if len(stored) < small_entity and len(embeddings) == len(stored):
        chosen = select_summary(  # scored as shown: the key point each sentence becomes
            [summary_point(s.sentence.text, sign=1 if s.sentiment >= 0 else -1) for s in stored],
            embeddings,
            [s.sentiment for s in stored],
            budget_words=summary_words,
            one_opinion=SELECTION_SETTINGS.one_opinion,
            drop_narrative=SELECTION_SETTINGS.drop_narrative,
            reviews=[s.sentence.review_id for s in stored],
        )
    picked = sentence_highlights(
        reading_order(chosen, stored, praise_first=QUERY_FREE_SETTINGS.praise_first),
        aspects,
        stored,
        embeddings,
        paths=clustered.paths(key),
        max_cited=max_cited,
    ) if chosen else []
    taken = {(h.query, h.polarity) for h in picked}
    shown: dict[Polarity, list[str]] | None = {} if SELECTION_SETTINGS.one_opinion else None
    def highlights_of(aspect: DiscoveredAspect) -> list[Highlight]:
        return aspect_highlights(
            aspect,
            stored,
            split_threshold=split_threshold,
            max_cited=max_cited,
            embeddings=embeddings,
            max_points=max_points,
            weights=weights,
            judged=namer.judged if _judged_by_point(aspect) else None,
            shown=shown,
            drop_narrative=SELECTION_SETTINGS.drop_narrative,
            cons_complain=SELECTION_SETTINGS.cons_complain,
        )

    for aspect in aspects:
        found = highlights_of(aspect)
        for highlight in found:
            if (highlight.query, highlight.polarity) not in taken:
                result.add(highlight)
    if not picked:
        for aspect in _cover_aspects(hiro, key, result.highlights, namer):
            found = highlights_of(aspect)
            if found:
                aspects.append(aspect)
            for highlight in found:
                note = f"summary topic no discovered aspect covers: sentences mentioning {aspect.aspect!r}"
                result.add(highlight.model_copy(update={"notes": [note]}))
    for highlight in picked:
        result.add(highlight)
    if picked:
        layout = SummaryLayout(sentences=tuple(h.text for h in picked))
    else:
        layout = summary_layout(aspects, stored, order_by_position=order_by_position, name_weight=name_weight)
    result.summary = summary_of(result.highlights, budget_words=summary_words, layout=layout)
    return QueryFreeResult(result, layout)
