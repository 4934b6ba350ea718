"""Query-free aspect discovery: what an entity's reviews discuss most, weighed with how distinctive it is.

HIRO's retriever finds the subpath clusters that are both prevalent in this
entity's reviews and specific to it (``clusters_per_aspect`` of them per requested
aspect); each cluster is named with a short
noun phrase (:class:`~opinio_agents.hiro.labels.PhraseNamer`), clusters
with the same name (or synonymous names) are joined (a PRO and a CON cluster about the wi-fi become
one ``wi-fi`` aspect; an attribute a cluster holds besides its name, such as the
``cleanliness`` of a ``room`` cluster whose sentences say clean or dirty, is an aspect too),
and each aspect gets entity-wide counts: the reviews
that mention it (a sentence in its clusters or a lexical mention of its name, its
synonyms or, for an attribute noun such as ``cleanliness``, its attribute words
``clean``/``dirty``) and how many of those lean positive or negative. Aspects are
ranked by :func:`aspect_rank`, mostly by the share of reviews that mention them and
partly by HIRO's specificity score, so the aspects every hotel shares (staff,
location, cleanliness) are not pushed out by a distinctive one a few reviews raise;
an aspect reviewers only name in passing (its name is an opinion target of the
namer's triplet extractor in under :data:`MIN_TARGET_SHARE` of the sentences using
it: "a deposit on your card", "they called us a taxi") ranks after every judged one.
The names are usable as OpinioRAG queries as they are.

Naming runs the triplet extractor and the phrase encoder over every cluster, which takes
seconds to tens of seconds on a paper-sized entity, so :func:`discover_aspects` keeps its
result with the HIRO hierarchy (:meth:`~opinio_agents.hiro.store.HiroIndex.save_result`):
a later call, in this process or another one, reads it back in milliseconds until the
entity, the baseline entities, the hierarchy or the code change. A call with a custom
``namer`` is never cached.

Example:
    >>> aspects = discover_aspects(index, "101", top_k=8)           # doctest: +SKIP
    >>> [(a.aspect, a.mentions, a.positive, a.negative) for a in aspects][:2]  # doctest: +SKIP
    [('wi-fi', 61, 12, 45), ('breakfast buffet', 54, 47, 4)]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from opinio_agents.embeddings import ENCODER_ENV, Encoder
from opinio_agents.errors import ConfigError
from opinio_agents.hiro.labels import (
    NAMING_SETTINGS,
    AspectLabel,
    ClusterNamer,
    PhraseNamer,
    aspect_parts,
    attribute_nouns,
    synonyms,
)
from opinio_agents.hiro.lexical import mean_pairwise_rouge2, rouge_tokens
from opinio_agents.hiro.retriever import DEFAULT_ALPHA, HiroCluster, retrieve_clusters
from opinio_agents.hiro.store import HiroIndex, as_hiro_index
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.synthesis.support import aspect_forms as lexicon_forms
from opinio_agents.synthesis.support import aspect_mentions, mention_mask, support_of
from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = [
    "DiscoveredAspect",
    "discover_aspects",
    "aspects_from_clusters",
    "central_order",
    "aspect_rank",
    "default_namer",
    "namer_for",
    "aspect_record",
    "aspect_from_record",
    "topic_aspect",
]


@dataclass
class DiscoveredAspect:
    """An aspect found without queries.

    Attributes:
        aspect: Query-like name (``"front desk"``).
        mentions: Reviews mentioning it (entity-wide).
        positive: Of those, reviews whose mentioning sentences lean positive.
        negative: Reviews leaning negative.
        neutral: The rest.
        total_reviews: Reviews of the entity.
        score: HIRO specificity-adjusted popularity of its best cluster.
        example_sentence_ids: The most central sentences of its clusters.
        sentence_indices: Every sentence of its clusters (positions in ``index.sentences``).
        mention_indices: Every sentence counted as a mention.
        term_indices: The sentences that name the aspect (lexical mentions).
        clusters: The HIRO clusters it was built from (of a second aspect, the sentences of the cluster that use it).
        forms: The words whose use mentions it (its name, merged synonyms, attribute words, parts:
            :meth:`~opinio_agents.hiro.labels.ClusterNamer.mention_forms`); ``term_indices`` are the
            sentences using one of them.
        target_share: Share of the cluster sentences using its name in which the namer's triplet
            extractor sees it as an opinion target (:meth:`~opinio_agents.hiro.labels.ClusterNamer.target_share`);
            None when the namer has no extractor.
    """

    aspect: str
    mentions: int
    positive: int
    negative: int
    neutral: int
    total_reviews: int
    score: float
    example_sentence_ids: list[str] = field(default_factory=list)
    sentence_indices: list[int] = field(default_factory=list)
    mention_indices: list[int] = field(default_factory=list)
    term_indices: list[int] = field(default_factory=list)
    clusters: list[HiroCluster] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    target_share: float | None = None

    @property
    def evaluated(self) -> bool:
        """Whether reviewers judge it rather than only name it in passing: its :attr:`target_share`
        is at least ``NamingSettings.min_target_share`` (or unknown). Aspects that are not rank after every
        evaluated one and get no query-free highlight."""
        return self.target_share is None or self.target_share >= NAMING_SETTINGS.min_target_share

    @property
    def share(self) -> float:
        """Share of the entity's reviews that mention it."""
        return self.mentions / self.total_reviews if self.total_reviews else 0.0

    @property
    def balance(self) -> float:
        """``(positive - negative) / mentions`` in [-1, 1]."""
        return (self.positive - self.negative) / self.mentions if self.mentions else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ``opinio aspects --format json`` record."""
        return {
            "aspect": self.aspect,
            "mentions": self.mentions,
            "positive": self.positive,
            "negative": self.negative,
            "example_sentence_ids": list(self.example_sentence_ids),
        }


def aspect_record(aspect: DiscoveredAspect) -> dict[str, Any]:
    """Every field of ``aspect`` (and of its clusters) as JSON-ready data; :func:`aspect_from_record` reverses it.

    Example:
        >>> a = DiscoveredAspect("pool", 3, 2, 1, 0, 10, 0.5, clusters=[HiroCluster([(1, 2)], [4, 7], 0.5)])
        >>> aspect_from_record(aspect_record(a)) == a
        True
    """
    return {
        "aspect": aspect.aspect,
        "mentions": aspect.mentions,
        "positive": aspect.positive,
        "negative": aspect.negative,
        "neutral": aspect.neutral,
        "total_reviews": aspect.total_reviews,
        "score": aspect.score,
        "example_sentence_ids": list(aspect.example_sentence_ids),
        "sentence_indices": list(aspect.sentence_indices),
        "mention_indices": list(aspect.mention_indices),
        "term_indices": list(aspect.term_indices),
        "clusters": [
            {
                "subpaths": [list(p) for p in c.subpaths],
                "indices": list(c.indices),
                "score": c.score,
                "reviews": c.reviews,
                "expected": c.expected,
                "dropped": c.dropped,
                "sentence_ids": list(c.sentence_ids),
            }
            for c in aspect.clusters
        ],
        "forms": list(aspect.forms),
        "target_share": aspect.target_share,
    }


def aspect_from_record(record: dict[str, Any]) -> DiscoveredAspect:
    """The :class:`DiscoveredAspect` of an :func:`aspect_record` (equal to the original)."""
    clusters = [
        HiroCluster(
            subpaths=[tuple(int(x) for x in p) for p in c["subpaths"]],
            indices=[int(i) for i in c["indices"]],
            score=c["score"],
            reviews=int(c["reviews"]),
            expected=c["expected"],
            dropped=int(c["dropped"]),
            sentence_ids=[str(x) for x in c["sentence_ids"]],
        )
        for c in record["clusters"]
    ]
    return DiscoveredAspect(
        aspect=str(record["aspect"]),
        mentions=int(record["mentions"]),
        positive=int(record["positive"]),
        negative=int(record["negative"]),
        neutral=int(record["neutral"]),
        total_reviews=int(record["total_reviews"]),
        score=record["score"],
        example_sentence_ids=[str(x) for x in record["example_sentence_ids"]],
        sentence_indices=[int(i) for i in record["sentence_indices"]],
        mention_indices=[int(i) for i in record["mention_indices"]],
        term_indices=[int(i) for i in record["term_indices"]],
        clusters=clusters,
        forms=[str(f) for f in record.get("forms", [])],
        target_share=record.get("target_share"),
    )


def central_order(texts: Sequence[str]) -> list[int]:
    """Positions of ``texts`` by decreasing mean ROUGE-2 to the others (duplicates kept once)."""
    scores = mean_pairwise_rouge2([rouge_tokens(t) for t in texts])
    seen: set[str] = set()
    order: list[int] = []
    for i in np.argsort(-scores, kind="stable").tolist():
        key = " ".join(rouge_tokens(texts[i]))
        if key not in seen:
            seen.add(key)
            order.append(i)
    return order





def aspect_rank(aspect: DiscoveredAspect, popularity: float = NAMING_SETTINGS.popularity_weight) -> float:
    """Ranking score of an aspect: ``share ** popularity * score ** (1 - popularity)``.

    ``share`` is the share of the entity's reviews mentioning it, ``score`` the HIRO
    specificity-adjusted popularity of its best cluster; ``popularity=0`` ranks by HIRO's
    score alone, ``1`` by mentions alone.

    Example:
        >>> common = DiscoveredAspect("staff", 60, 50, 5, 5, 100, 0.8)
        >>> rare = DiscoveredAspect("wine tasting", 12, 11, 0, 1, 100, 3.2)
        >>> aspect_rank(common) > aspect_rank(rare), aspect_rank(common, 0.0) > aspect_rank(rare, 0.0)
        (True, False)
    """
    share = aspect.share
    score = max(float(aspect.score), 0.0)
    if popularity <= 0.0:
        return score
    if popularity >= 1.0:
        return share
    return float(share**popularity * score ** (1.0 - popularity))




_NAMERS: dict[bool, ClusterNamer] = {}


def default_namer(minilm: bool = True) -> ClusterNamer:
    """The shared :class:`~opinio_agents.hiro.labels.PhraseNamer` for a store (one per kind).

    Args:
        minilm: The store was embedded with the package's MiniLM (its recorded
            embedding model): synonyms are merged with MiniLM phrase vectors and
            opinion targets come from the embedded triplet extractor (which runs on
            the same model). A store built with another encoder (a custom model, a
            test double) is named from noun phrases and :data:`~opinio_agents.hiro.labels.SYNONYMS`
            alone, without loading any model.
    """
    namer = _NAMERS.get(minilm)
    if namer is None:
        namer = PhraseNamer() if minilm else PhraseNamer(extractor=None, encoder=None)
        _NAMERS[minilm] = namer
    return namer


def namer_for(store: Any) -> ClusterNamer:
    """The :func:`default_namer` of ``store``'s embedding model (the one aspect discovery names it with)."""
    return default_namer(_store_uses_minilm(store))


def _store_uses_minilm(store: Any) -> bool:
    from opinio_agents.embeddings import DEFAULT_MODEL_NAME

    try:
        embedding = store.models().embedding
    except AttributeError:  # a store-like object without recorded models
        return False
    return embedding is not None and embedding.name == DEFAULT_MODEL_NAME


def _mention_counter(
    store: Any, key: str, stored: Sequence[StoredSentence], encoder: Encoder | None
) -> Callable[[str], np.ndarray] | None:
    """The one definition of an aspect's mentions over ``store``'s embeddings of the entity (None: lexical)."""
    if encoder is None:
        return None
    embeddings = store.embeddings(key, persist=True)
    return lambda name: aspect_mentions(name, stored, embeddings=embeddings, encoder=encoder)


def aspects_from_clusters(
    clusters: Sequence[HiroCluster],
    stored: Sequence[StoredSentence],
    *,
    total_reviews: int | None = None,
    examples: int = 3,
    namer: ClusterNamer | None = None,
    popularity: float = NAMING_SETTINGS.popularity_weight,
    second_aspects: bool = NAMING_SETTINGS.second_aspects,
    mentions: Callable[[str], np.ndarray] | None = None,
) -> list[DiscoveredAspect]:
    """Name, join and count clusters (clusters with no aspect-like name are left out), best first.

    Aspects are ranked by :func:`aspect_rank`: mostly by the share of the entity's reviews
    that mention them, partly by how specific to the entity HIRO found them. An aspect most of
    whose sentences also use the name of a more used aspect is a detail of it and joins it
    (``_join_parts``: "the coffee machine pods" join the coffee maker).

    Args:
        clusters: HIRO clusters of one entity, best first.
        stored: The entity's sentences (cluster indices point into it).
        total_reviews: Reviews of the entity (counted from ``stored`` when not given).
        examples: Example sentence ids per aspect.
        namer: Names clusters and says which names are one aspect; defaults to
            :func:`default_namer` (noun phrases, triplet aspects, synonym merging).
        popularity: Weight of the review share in the ranking (:func:`aspect_rank`).
        second_aspects: Also rank the attribute aspects a cluster holds besides its name
            (:meth:`~opinio_agents.hiro.labels.ClusterNamer.name_aspects` with ``attributes_only``:
            the "cleanliness" of a "room" cluster whose sentences say clean or dirty), each with
            the cluster's sentences that use it.
        mentions: The sentences that mention an aspect name, as every surface counts them
            (:func:`~opinio_agents.synthesis.support.aspect_mentions` with the store's embeddings
            and encoder); lexical :func:`~opinio_agents.synthesis.support.aspect_mentions` when not given.
            An aspect's ``mentions``/``positive``/``negative`` are these reviews, so the aspect list
            says what the highlight of that name says.

    Raises:
        ConfigError: When ``popularity`` is outside [0, 1].
    """
    if not 0.0 <= popularity <= 1.0:
        raise ConfigError(f"popularity={popularity!r} must be in [0, 1]")
    tokens = [s.tokens for s in stored]
    texts = [s.sentence.text for s in stored]
    namer = namer or default_namer()
    per_cluster = namer.name_aspects([c.indices for c in clusters], tokens, texts, attributes_only=True)
    labelled = [(c, found[0][0]) for c, found in zip(clusters, per_cluster, strict=True) if found]
    if second_aspects:
        for cluster, found in zip(clusters, per_cluster, strict=True):
            for label, covered in found[1:]:
                part = sorted(covered)
                labelled.append(
                    (
                        replace(
                            cluster,
                            indices=part,
                            reviews=len({stored[i].sentence.review_id for i in part}),
                            sentence_ids=[stored[i].sentence.sentence_id for i in part],
                        ),
                        label,
                    )
                )
    grouped: list[tuple[AspectLabel, list[tuple[HiroCluster, AspectLabel]]]] = []
    for cluster, label in labelled:  # a cluster's own name first, second aspects after every own name
        for first, members in grouped:
            if namer.same_aspect(first, label):
                members.append((cluster, label))
                break
        else:
            grouped.append((label, [(cluster, label)]))
    if total_reviews is None:
        total_reviews = len({s.sentence.review_id for s in stored})
    masks: dict[str, np.ndarray] = {}

    def form_mask(form: str) -> np.ndarray:
        if form not in masks:
            masks[form] = mention_mask(form, stored)
        return masks[form]

    groups = [
        (first, members, dict.fromkeys(form for _, label in members for form in namer.mention_forms(label)))
        for first, members in grouped
    ]
    groups = _join_parts(groups, form_mask, len(stored))
    out = [
        _counted_aspect(
            first.text,
            sorted({i for cluster, _ in members for i in cluster.indices}),
            list(names),
            stored,
            mentioned=[int(i) for i in (mentions(first.text) if mentions else aspect_mentions(first.text, stored))],
            form_mask=form_mask,
            total_reviews=total_reviews,
            score=round(max(c.score for c, _ in members), 4),
            clusters=[c for c, _ in members],
            examples=examples,
        )
        for first, members, names in groups
    ]
    out = [replace(a, target_share=_target_share(a, texts, namer)) for a in out]
    out.sort(key=lambda a: (not a.evaluated, -aspect_rank(a, popularity), -a.mentions, a.aspect))
    return out


def _counted_aspect(
    name: str,
    indices: list[int],
    forms: list[str],
    stored: Sequence[StoredSentence],
    *,
    mentioned: list[int],
    form_mask: Callable[[str], np.ndarray],
    total_reviews: int,
    score: float = 0.0,
    clusters: list[HiroCluster] | None = None,
    examples: int = 3,
) -> DiscoveredAspect:
    """The one construction of a :class:`DiscoveredAspect` from its sentences and its mentions.

    ``mentioned`` are the sentences every surface counts for ``name``
    (:func:`~opinio_agents.synthesis.support.aspect_mentions`); its counts and sides are their reviews.
    ``term_indices`` are the sentences that use one of ``forms``; the examples are the most central of
    ``indices`` among those (all of ``indices`` when none uses a form). ``target_share`` is left to the caller.
    """
    lexical_mask = np.zeros(len(stored), dtype=bool)
    for form in forms:
        lexical_mask |= form_mask(form)
    lexical = np.flatnonzero(lexical_mask).tolist()
    stance = support_of(stored, mentioned)
    named = set(lexical)
    focus = [i for i in indices if i in named] or indices
    order = central_order([stored[i].sentence.text for i in focus])
    return DiscoveredAspect(
        aspect=name,
        mentions=int(stance.reviews),
        positive=int(stance.positive),
        negative=int(stance.negative),
        neutral=int(stance.neutral),
        total_reviews=total_reviews,
        score=score,
        example_sentence_ids=[stored[focus[j]].sentence.sentence_id for j in order[:examples]],
        sentence_indices=indices,
        mention_indices=mentioned,
        term_indices=lexical,
        clusters=list(clusters or []),
        forms=forms,
    )


_Group = tuple[AspectLabel, list[tuple[HiroCluster, AspectLabel]], dict[str, None]]


def _contains_words(outer: str, inner: str) -> bool:
    """Whether ``inner``'s tokens are a run of ``outer``'s ("lobbies" in "the lobby", "room" in "room service")."""
    a, b = tokenize_for_bm25(outer), tokenize_for_bm25(inner)
    return bool(b) and any(a[i : i + len(b)] == b for i in range(len(a) - len(b) + 1))


def _join_parts(groups: list[_Group], form_mask: Callable[[str], np.ndarray], n: int) -> list[_Group]:
    """Join an aspect into another whose name most of its sentences also use ("pods" into "coffee maker").

    An aspect ``a`` is a detail of ``b`` when at least ``NamingSettings.part_share`` of the
    sentences using ``a``'s forms also use one of ``b``'s forms or synonyms, ``b``'s forms are used by
    more sentences than ``a``'s, ``a`` is no attribute aspect (reviewers write "the room was clean":
    cleanliness stays an aspect) and not one of ``b``'s parts
    (:func:`~opinio_agents.hiro.labels.aspect_parts`: "the lobby is modern" uses a decor word, but the
    lobby keeps its name), and the form of ``b`` is no part of a form of ``a`` ("room" of "room
    service" says nothing). ``a``'s clusters and forms then join ``b``, which keeps its name and place.
    """
    share = NAMING_SETTINGS.part_share
    if share > 1.0 or len(groups) < 2:
        return groups
    attributes = set(attribute_nouns().values())

    def widened(names: dict[str, None]) -> list[str]:
        """The names with their synonyms ("kettle" is the coffee maker)."""
        extra = [form for group in synonyms() if any(name.lower() in group for name in names) for form in group]
        return list(dict.fromkeys([*names, *sorted(extra)]))

    def part_of(a: AspectLabel, b: AspectLabel) -> bool:
        """Whether the lexicon lists ``a`` as a part of ``b`` (the lobby of the decor): parts keep their names."""
        words = b.text.split()
        parts = aspect_parts().get(b.text) or (aspect_parts().get(words[-1]) if words else None) or frozenset()
        return a.text in parts

    forms = [widened(names) for _, _, names in groups]
    uses = []
    for group_forms in forms:
        mask = np.zeros(n, dtype=bool)
        for form in group_forms:
            mask |= form_mask(form)
        uses.append(mask)
    out = [(first, list(members), dict(names)) for first, members, names in groups]
    alive = [True] * len(out)
    for i in range(len(out) - 1, -1, -1):
        first, members, names = out[i]
        count = int(uses[i].sum())
        if not count or first.text in attributes:
            continue
        best, best_share = -1, 0.0
        for j in range(len(out)):
            if j == i or not alive[j] or int(uses[j].sum()) <= count or part_of(first, out[j][0]):
                continue
            other = np.zeros(n, dtype=bool)
            for form in forms[j]:
                if not any(_contains_words(mine, form) for mine in forms[i]):
                    other |= form_mask(form)
            both = float((uses[i] & other).sum()) / count
            if both >= share and both > best_share:
                best, best_share = j, both
        if best >= 0:
            out[best][1].extend(members)
            out[best][2].update(names)
            forms[best] = list(dict.fromkeys([*forms[best], *forms[i]]))
            uses[best] = uses[best] | uses[i]
            alive[i] = False
    return [group for group, keep in zip(out, alive, strict=True) if keep]


def _target_share(aspect: DiscoveredAspect, texts: Sequence[str], namer: ClusterNamer) -> float | None:
    """How often reviewers give opinions about ``aspect`` rather than only name it in passing.

    The namer's opinion-target extractor reads the aspect's cluster sentences that use its name
    (:meth:`~opinio_agents.hiro.labels.ClusterNamer.target_share`); an aspect whose name is the
    target of an opinion in fewer than ``NamingSettings.min_target_share`` of them ("a deposit on your card
    at arrival", "they called us a taxi", "which worked well") is not evaluated. None when the
    namer has no extractor.
    """
    named = set(aspect.term_indices)
    uses = [texts[i] for i in aspect.sentence_indices if i in named]
    share = namer.target_share(aspect.forms or [aspect.aspect], uses)
    return None if share is None else round(float(share), 4)


def discover_aspects(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = 10,
    alpha: float = DEFAULT_ALPHA,
    clusters_per_aspect: float = 4.0,
    examples: int = 3,
    namer: ClusterNamer | None = None,
    popularity: float = NAMING_SETTINGS.popularity_weight,
    second_aspects: bool = NAMING_SETTINGS.second_aspects,
    cache: bool = True,
    encoder: Encoder | None = None,
) -> list[DiscoveredAspect]:
    """The entity's most discussed aspects, weighed with how distinctive they are, best first.

    Args:
        index: The sentence store (its HIRO hierarchy is fitted on first use) or a :class:`HiroIndex`.
        entity_id: An indexed entity.
        top_k: Aspects to return.
        alpha: HIRO smoothing constant.
        clusters_per_aspect: Clusters retrieved per requested aspect (some go
            unnamed, some join under one name; the ranking chooses among the rest).
        examples: Example sentence ids per aspect.
        namer: Cluster namer (default: :func:`default_namer` for the store's embedding model).
        popularity: Weight of the review share in the ranking (:func:`aspect_rank`).
        second_aspects: Also rank the attribute aspects clusters hold besides their names
            (see :func:`aspects_from_clusters`).
        cache: With the default namer, read the result stored with the hierarchy when it is
            current, and store a computed one (see the module docstring); False always computes.
        encoder: The store's query encoder, for counting each aspect's mentions as every surface
            does (:func:`~opinio_agents.synthesis.support.aspect_mentions`); default: the shared
            MiniLM when the store was embedded with it, else lexical mentions only.

    Raises:
        ConfigError: When ``top_k < 1`` or ``popularity`` is outside [0, 1].
        StoreError: When the entity is not indexed.
    """
    if top_k < 1:
        raise ConfigError(f"top_k={top_k} must be >= 1")
    if not 0.0 <= popularity <= 1.0:
        raise ConfigError(f"popularity={popularity!r} must be in [0, 1]")
    hiro = as_hiro_index(index)
    key = hiro.index.require_entity(entity_id)
    if encoder is None and _store_uses_minilm(hiro.index):
        from opinio_agents.embeddings import get_encoder

        encoder = get_encoder()
    params: dict[str, Any] | None = None
    state = ""
    if namer is None and cache:
        minilm = _store_uses_minilm(hiro.index)
        params = {
            "top_k": top_k,
            "alpha": float(alpha),
            "clusters_per_aspect": float(clusters_per_aspect),
            "examples": examples,
            "popularity": float(popularity),
            "second_aspects": bool(second_aspects),
            "namer": "phrase-minilm" if minilm else "phrase",
            "encoder": os.environ.get(ENCODER_ENV, "") if minilm else "",
            "mentions": "aspect_mentions:" + ("dense" if encoder is not None else "lexical"),
        }
        state = hiro.result_state(key)
        stored_result = hiro.load_result(key, "aspects", params, state=state)
        if isinstance(stored_result, list):
            return [aspect_from_record(record) for record in stored_result]
    info = hiro.index.entity_record(key)
    stored = hiro.index.sentences(key)
    total = len({s.sentence.review_id for s in stored}) or info.n_reviews
    namer = namer or default_namer(_store_uses_minilm(hiro.index))
    mentions = _mention_counter(hiro.index, key, stored, encoder)
    wanted = max(8, int(round(top_k * clusters_per_aspect)))
    for _ in range(1 + NAMING_SETTINGS.widen_rounds):
        clusters = retrieve_clusters(hiro, key, top_k=wanted, alpha=alpha)
        found = aspects_from_clusters(
            clusters,
            stored,
            total_reviews=total,
            examples=examples,
            namer=namer,
            popularity=popularity,
            second_aspects=second_aspects,
            mentions=mentions,
        )
        # Too few named: the clusters were mostly unnamed or joined under few names (a store of one
        # large entity, whose hierarchy's best clusters are broad praise). Look further down the list.
        if 2 * len(found) >= top_k or len(clusters) < wanted:
            break
        wanted *= 2
    found = found[:top_k]
    if params is not None:
        hiro.save_result(key, "aspects", params, [aspect_record(a) for a in found], state=state)
    return found


def topic_aspect(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    name: str,
    *,
    namer: ClusterNamer | None = None,
    encoder: Encoder | None = None,
    min_share: float = 0.0,
) -> DiscoveredAspect | None:
    """The aspect ``name`` ("location") made of the entity's sentences that mention it, not of HIRO clusters.

    Its sentences and counts are the mentions every surface counts
    (:func:`~opinio_agents.synthesis.support.aspect_mentions`, dense with the store's MiniLM), its
    ``term_indices`` those that use one of its forms (its name, the namer's forms and the words that also
    name it: :func:`~opinio_agents.synthesis.support.aspect_forms`, "walking distance" for the location),
    its ``target_share`` the namer's as for a discovered aspect; ``clusters`` is empty and ``score`` 0.
    The query-free summary takes a topic human summaries state from here when no discovered aspect
    covers it (``QueryFreeSettings.cover_topics``). None when fewer than ``min_share`` of the entity's reviews
    mention it: the namer's target share (the triplet extractor over its sentences) is then not read.

    Raises:
        StoreError: When the entity is not indexed.
    """
    hiro = as_hiro_index(index)
    key = hiro.index.require_entity(entity_id)
    stored = hiro.index.sentences(key)
    minilm = _store_uses_minilm(hiro.index)
    if encoder is None and minilm:
        from opinio_agents.embeddings import get_encoder

        encoder = get_encoder()
    namer = namer or default_namer(minilm)
    mentions = _mention_counter(hiro.index, key, stored, encoder)
    mentioned = [int(i) for i in (mentions(name) if mentions else aspect_mentions(name, stored))]
    label = AspectLabel(tuple(tokenize_for_bm25(name)), name, 1.0, 1.0)
    forms = list(dict.fromkeys([*namer.mention_forms(label), *(" ".join(f) for f in lexicon_forms(name))]))
    aspect = _counted_aspect(
        name,
        mentioned,
        forms,
        stored,
        mentioned=mentioned,
        form_mask=lambda form: mention_mask(form, stored),
        total_reviews=len({s.sentence.review_id for s in stored}),
    )
    if aspect.share < min_share:
        return None
    return replace(aspect, target_share=_target_share(aspect, [s.sentence.text for s in stored], namer))
