"""The trend step of post-processing: give every highlight the :class:`~opinio_agents.models.Trend` of its aspect.

Run once per result by :meth:`~opinio_agents.synthesis.summarizer.Summarizer.stream`,
after synthesis. The trend is computed from every review that mentions the
highlight's query (the mentions the support count used, when the summarizer
recorded them; else the lexical mentions of :func:`~opinio_agents.synthesis.support.mention_mask`),
not from the two or three cited quotes, and only over the run's publication window.

Example:
    >>> attach_trends(result.highlights, store.sentences("101"))     # doctest: +SKIP
    >>> result.cons[0].trend.summary                                 # doctest: +SKIP
    'complaints about wi-fi fell from 63% of mentions in 2015-2019 to 21% in 2020-2024'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from opinio_agents.models import Highlight, Trend
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.synthesis.support import dated_mentions, mention_mask
from opinio_agents.trends import Weighting, compute_trend, in_window

__all__ = ["attach_trends", "trend_of"]


def trend_of(
    query: str,
    sentences: Sequence[StoredSentence],
    indices: np.ndarray | None = None,
    *,
    weighting: Weighting | None = None,
) -> Trend:
    """The trend of ``query`` over the entity's ``sentences`` (mentions at ``indices``, else lexical ones).

    Only reviews inside the weighting's window count; the weights themselves do not
    (a trend shows what was said when, each review once).
    """
    if indices is None:
        indices = np.flatnonzero(mention_mask(query, sentences, named=True))
    mentions, dates = dated_mentions(sentences, indices)
    since, until = (weighting.since, weighting.until) if weighting else (None, None)
    if since or until:
        mentions = [(d, s) for d, s in mentions if in_window(d, since, until)]
        dates = [d for d in dates if in_window(d, since, until)]
    return compute_trend(query, mentions, dates)


def attach_trends(
    highlights: Sequence[Highlight],
    sentences: Sequence[StoredSentence],
    mentions: Mapping[str, np.ndarray] | None = None,
    *,
    weighting: Weighting | None = None,
) -> None:
    """Set ``trend`` on each highlight (one computation per query; highlights of a query share it)."""
    cache: dict[str, Trend] = {}
    for highlight in highlights:
        query = highlight.query
        if query not in cache:
            cache[query] = trend_of(query, sentences, (mentions or {}).get(query), weighting=weighting)
        highlight.trend = cache[query].model_copy(deep=True)
