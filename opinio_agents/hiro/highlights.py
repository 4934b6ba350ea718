"""Query-free highlights: HIRO clusters as PROS and CONS with evidence and support.

Each discovered aspect (:func:`~opinio_agents.hiro.aspects.discover_aspects`)
becomes a PRO, a CON, or both when its reviews genuinely split: its cluster
sentences are divided by their own sentiment, the majority side always gets
a highlight and the minority side one too when it holds at least
``split_threshold`` of the opinionated reviews. A highlight's text is the
side's most central sentence (highest mean ROUGE-2 to the others, the HIRO
extractive generator) trimmed to a key point; its evidence is the side's most
central sentences; its support counts the whole entity's reviews.

Example:
    >>> result = query_free_highlights(index, "101")                  # doctest: +SKIP
    >>> [(h.query, h.polarity.value, h.support.reviews) for h in result.highlights][:2]  # doctest: +SKIP
    [('wi-fi', 'cons', 61), ('breakfast buffet', 'pros', 54)]
"""

from __future__ import annotations

import time

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.aspects import DiscoveredAspect, central_order, discover_aspects
from opinio_agents.hiro.retriever import DEFAULT_ALPHA
from opinio_agents.hiro.store import HiroIndex
from opinio_agents.models import SENTIMENT_THRESHOLD, Evidence, Highlight, HighlightSet, Polarity, RunMeta, Support
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.synthesis.keypoint import to_key_point
from opinio_agents.synthesis.polarity import evidence_polarity

__all__ = ["query_free_highlights", "aspect_highlights"]


def aspect_highlights(
    aspect: DiscoveredAspect,
    stored: list[StoredSentence],
    *,
    split_threshold: float = 0.35,
    max_cited: int = 5,
) -> list[Highlight]:
    """The PRO and/or CON highlights of one discovered aspect (none when it carries no opinion)."""
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
    if pos == neg:
        major = Polarity.PROS if len(pos_idx) >= len(neg_idx) else Polarity.CONS
    else:
        major = Polarity.PROS if pos > neg else Polarity.CONS
    sides = [major]
    minority = neg if major is Polarity.PROS else pos
    if opinionated and minority / opinionated >= split_threshold:
        sides.append(Polarity.CONS if major is Polarity.PROS else Polarity.PROS)
    out: list[Highlight] = []
    for side in sides:
        indices = pos_idx if side is Polarity.PROS else neg_idx
        if len(indices) < (1 if side is major else 2):
            continue
        order = central_order([stored[i].sentence.text for i in indices])
        cited = [indices[j] for j in order[:max_cited]]
        evidence = [
            Evidence(sentence_id=stored[i].sentence.sentence_id, text=stored[i].sentence.text, score=1.0 / (rank + 1),
                     sentiment=stored[i].sentiment)
            for rank, i in enumerate(cited)
        ]
        sign = 1 if side is Polarity.PROS else -1
        leaning = evidence_polarity(evidence)
        notes = [f"HIRO clusters {[list(p) for c in aspect.clusters for p in c.subpaths]}, score {aspect.score}"]
        out.append(
            Highlight(
                query=aspect.aspect,
                polarity=side,
                text=to_key_point(evidence[0].text, aspect.aspect, sign=sign)[:600],
                evidence=evidence,
                support=support,
                evidence_polarity=leaning,
                polarity_agrees=None if leaning is None else leaning is side,
                notes=notes,
            )
        )
    return out


def query_free_highlights(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    top_k: int = 8,
    alpha: float = DEFAULT_ALPHA,
    split_threshold: float = 0.35,
    max_cited: int = 5,
) -> HighlightSet:
    """PROS and CONS of an entity without any query, from its HIRO clusters.

    Args:
        index: The sentence store (the HIRO hierarchy is fitted on first use) or a :class:`HiroIndex`.
        entity_id: An indexed entity.
        top_k: Aspects to turn into highlights (paper: 8 clusters).
        alpha: HIRO smoothing constant (paper: 6).
        split_threshold: Minority share of opinionated reviews that earns the other side a highlight.
        max_cited: Evidence sentences per highlight.

    Raises:
        ConfigError: On a bad argument.
        StoreError: When the entity is not indexed.
    """
    if not 0.0 < split_threshold <= 0.5:
        raise ConfigError(f"split_threshold={split_threshold} must be in (0, 0.5]")
    if max_cited < 1:
        raise ConfigError(f"max_cited={max_cited} must be >= 1")
    started = time.perf_counter()
    hiro = index if isinstance(index, HiroIndex) else HiroIndex(index)
    key = hiro.index.require_entity(entity_id)
    aspects = discover_aspects(hiro, key, top_k=top_k, alpha=alpha)
    stored = hiro.index.sentences(key)
    info = hiro.index.entity_record(key)
    result = HighlightSet(
        entity_id=info.entity_id,
        entity_name=info.entity_name,
        meta=RunMeta(retriever="hiro", top_k=top_k, synthesizer="hiro-extractive", queries=[a.aspect for a in aspects]),
    )
    for aspect in aspects:
        for highlight in aspect_highlights(aspect, stored, split_threshold=split_threshold, max_cited=max_cited):
            result.add(highlight)
    result.meta.timings["hiro"] = round(time.perf_counter() - started, 3)
    return result
