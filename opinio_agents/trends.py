"""Time and helpfulness: support windows and weights, and trends of an aspect over time.

Pure functions over dated review stances (no store, no model), used by support
counting (:mod:`opinio_agents.synthesis.support`), the post-processing step that
gives every highlight its :class:`~opinio_agents.models.Trend`, the report and the
comparison in time.

**Weighting.** A :class:`Weighting` says which reviews count and how much: only those
published within ``since``/``until`` (inclusive; an undated review is left out of a
window, since nobody can tell it is inside), each weighted by recency
(``0.5 ** (age / half_life)``, the age counted back from the newest review in
the window, so a 2019 dataset is not "old" just because it is read in 2026; an undated
review weighs as much as the oldest dated one) and/or by helpful votes
(``1 + helpful_votes``, so a review nobody voted on still counts once). The default
counts every review once (``"count"``).

**Trend.** The mentions of an aspect are the reviews that mention it, each with its stance
(+1 positive, 0 neutral, -1 negative) and publication date. The trend test is
Mann-Kendall's: Kendall's tau-b between the publication date and the stance over all
dated mentions (ties in both handled, two-sided normal approximation), which is the
Mann-Kendall trend statistic of the time-ordered stance series. A significant tau
(``p < alpha``, default 0.01) whose effect is at least ``min_effect`` (the net stance,
positive share minus negative share, moves by 0.1 or more between the two regimes) is
``improving`` or ``worsening``; otherwise ``stable``. Fewer than ``min_mentions`` (20)
dated mentions, or mentions in a single period, is ``insufficient``. Where the change
happened is Pettitt's change point, taken at a period boundary that leaves at least
``min_segment`` (5) mentions on each side; the summary compares the two regimes
("complaints about wi-fi fell from 40% of mentions in 2015-2019 to 8% in 2020-2024").
Periods are years, or quarters when there are at least ``TrendSettings.quarter_min_mentions`` (10)
dated mentions per quarter on average over at least four quarters.

Example:
    >>> import datetime as dt
    >>> mentions = [(dt.date(2015 + i // 10, 6, 1), -1 if i < 30 else 1) for i in range(60)]
    >>> reviews = [d for d, _ in mentions]
    >>> trend = compute_trend("wi-fi", mentions, reviews)
    >>> trend.label, trend.change_period
    ('improving', '2018')
    >>> trend.summary
    'complaints about wi-fi fell from 100% of mentions in 2015-2017 to 0% in 2018-2020'
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.kinds import Granularity
from opinio_agents.models import Trend, TrendPoint

__all__ = [
    "Weighting",
    "Granularity",
    "review_weight",
    "review_weights",
    "in_window",
    "period_of",
    "period_range",
    "choose_granularity",
    "mann_kendall",
    "pettitt",
    "compute_trend",
    "TrendSettings",
    "TREND_SETTINGS",
]



@dataclass(frozen=True)
class TrendSettings:
    """The settings of the trend step in one place (the values shipped; ``benchmarks/trends.py``
    measures how many planted trends they recover).

    Attributes:
        significance_level: Significance level of the Mann-Kendall test.
        min_mentions: Fewer dated mentions than this: ``insufficient``.
        min_segment: Mentions each side of a change point needs.
        min_effect: Smallest change of the net stance (positive share - negative share) labelled a trend.
        quarter_min_mentions: Mean dated mentions per quarter above which the periods are quarters.
    """

    significance_level: float = 0.01
    min_mentions: int = 20
    min_segment: int = 5
    min_effect: float = 0.1
    quarter_min_mentions: int = 10


#: The settings every trend uses unless a caller passes others.
TREND_SETTINGS = TrendSettings()


@dataclass(frozen=True)
class Weighting:
    """Which reviews a support count takes, and how much each weighs.

    Args:
        since: Count only reviews published on or after this date.
        until: Count only reviews published on or before this date.
        half_life_days: Weight each review by ``0.5 ** (age_days / half_life_days)``.
        helpful: Weight each review by ``1 + helpful_votes``.

    Raises:
        ConfigError: On a non-positive half-life or a window that ends before it starts.

    Example:
        >>> Weighting().label, Weighting(half_life_days=365, helpful=True).label
        ('count', 'recency half-life 365 d x helpful votes')
    """

    since: dt.date | None = None
    until: dt.date | None = None
    half_life_days: float | None = None
    helpful: bool = False

    def __post_init__(self) -> None:
        if self.half_life_days is not None and not (
            math.isfinite(self.half_life_days) and self.half_life_days > 0
        ):
            raise ConfigError(
                f"half_life_days={self.half_life_days!r} must be a positive number of days, e.g. 365"
            )
        if self.since and self.until and self.until < self.since:
            raise ConfigError(
                f"the window ends ({self.until.isoformat()}) before it starts ({self.since.isoformat()}); "
                "give --since earlier than --until"
            )

    @property
    def windowed(self) -> bool:
        """Whether only some publication dates count."""
        return self.since is not None or self.until is not None

    @property
    def weighted(self) -> bool:
        """Whether reviews weigh differently (recency or helpful votes)."""
        return self.half_life_days is not None or self.helpful

    @property
    def needs_dates(self) -> bool:
        """Whether the reviews' publication dates matter."""
        return self.windowed or self.half_life_days is not None

    @property
    def is_default(self) -> bool:
        """Every review counts once (the plain count)."""
        return not (self.windowed or self.weighted)

    @property
    def label(self) -> str:
        """What a support number means under this weighting (``Support.weighting``)."""
        parts = []
        if self.half_life_days is not None:
            parts.append(f"recency half-life {self.half_life_days:g} d")
        if self.helpful:
            parts.append("helpful votes")
        return " x ".join(parts) or "count"


def in_window(date: dt.date | None, since: dt.date | None, until: dt.date | None) -> bool:
    """Whether a review published on ``date`` falls in the window (an undated one only when there is none).

    Example:
        >>> in_window(dt.date(2020, 5, 1), dt.date(2020, 1, 1), None), in_window(None, dt.date(2020, 1, 1), None)
        (True, False)
    """
    if since is None and until is None:
        return True
    if date is None:
        return False
    return (since is None or date >= since) and (until is None or date <= until)


def review_weight(
    date: dt.date | None,
    helpful_votes: int | None,
    weighting: Weighting,
    *,
    reference: dt.date | None,
    oldest: dt.date | None = None,
) -> float:
    """The weight of one review (0 outside the window).

    Args:
        date: Its publication date.
        helpful_votes: Its helpful votes (None counts as 0).
        weighting: The weighting.
        reference: The date ages are counted back from (the newest review in the window).
        oldest: The oldest dated review, whose age an undated review takes.

    Example:
        >>> review_weight(dt.date(2023, 1, 1), 3, Weighting(half_life_days=365, helpful=True),
        ...               reference=dt.date(2024, 1, 1))
        2.0
    """
    if not in_window(date, weighting.since, weighting.until):
        return 0.0
    weight = 1.0
    if weighting.half_life_days is not None and reference is not None:
        when = date if date is not None else oldest
        age = max(0, (reference - when).days) if when is not None else 0
        weight *= 0.5 ** (age / weighting.half_life_days)
    if weighting.helpful:
        weight *= 1 + max(0, helpful_votes or 0)
    return weight


def review_weights(
    dates: Sequence[dt.date | None], helpful_votes: Sequence[int | None], weighting: Weighting
) -> np.ndarray:
    """The weight of each review (one per date), ages counted back from the newest review in the window.

    Raises:
        ConfigError: When the weighting needs dates and no review has one.

    Example:
        >>> review_weights([dt.date(2024, 1, 1), dt.date(2023, 1, 1), None], [0, 0, 0],
        ...                Weighting(half_life_days=365)).round(3).tolist()
        [1.0, 0.5, 0.5]
    """
    if len(dates) != len(helpful_votes):
        raise ConfigError(f"{len(dates)} dates but {len(helpful_votes)} helpful-vote counts; give one per review")
    dated = [d for d in dates if d is not None]
    if weighting.needs_dates and not dated:
        raise ConfigError(
            "no review has a publication_date, so --since/--until/--half-life cannot apply; "
            "drop them, or index reviews that carry publication_date"
        )
    inside = [d for d in dated if in_window(d, weighting.since, weighting.until)]
    reference = max(inside) if inside else None
    oldest = min(inside) if inside else None
    return np.array(
        [
            review_weight(d, h, weighting, reference=reference, oldest=oldest)
            for d, h in zip(dates, helpful_votes)
        ],
        dtype=float,
    )


# -- periods ------------------------------------------------------------------------


def _period_key(date: dt.date, granularity: Granularity) -> int:
    """A sortable integer per period (consecutive periods differ by 1)."""
    if granularity == "year":
        return date.year
    return date.year * 4 + (date.month - 1) // 3


def _period_name(key: int, granularity: Granularity) -> str:
    if granularity == "year":
        return str(key)
    return f"{key // 4}-Q{key % 4 + 1}"


def period_of(date: dt.date, granularity: Granularity) -> str:
    """The period a date falls in: ``"2019"`` or ``"2019-Q3"``.

    Example:
        >>> period_of(dt.date(2019, 8, 2), "year"), period_of(dt.date(2019, 8, 2), "quarter")
        ('2019', '2019-Q3')
    """
    return _period_name(_period_key(date, granularity), granularity)


def period_range(first: dt.date, last: dt.date, granularity: Granularity) -> list[str]:
    """Every period from the one of ``first`` to the one of ``last``, inclusive.

    Example:
        >>> period_range(dt.date(2019, 11, 1), dt.date(2020, 2, 1), "quarter")
        ['2019-Q4', '2020-Q1']
    """
    low, high = _period_key(first, granularity), _period_key(last, granularity)
    return [_period_name(k, granularity) for k in range(low, high + 1)]


def choose_granularity(dates: Sequence[dt.date]) -> Granularity:
    """Quarters when the dated mentions average ``quarter_min_mentions`` (TrendSettings) a quarter over 4+, else years.

    Example:
        >>> choose_granularity([dt.date(2020, 1, 1)] * 30 + [dt.date(2020, 12, 1)] * 30)
        'quarter'
        >>> choose_granularity([dt.date(2015, 1, 1), dt.date(2024, 1, 1)] * 20)
        'year'
    """
    if not dates:
        return "year"
    quarters = _period_key(max(dates), "quarter") - _period_key(min(dates), "quarter") + 1
    return "quarter" if quarters >= 4 and len(dates) / quarters >= TREND_SETTINGS.quarter_min_mentions else "year"


# -- tests --------------------------------------------------------------------------


def mann_kendall(times: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    """Mann-Kendall trend test of ``values`` observed at ``times``: ``(tau_b, two-sided p)``.

    Kendall's tau-b between time and value, with the variance corrected for ties in
    both (several reviews on one day; stances are only -1, 0, 1); the p-value is the
    normal approximation. ``(0.0, 1.0)`` when either side is constant or n < 3.

    Example:
        >>> tau, p = mann_kendall(range(30), [0] * 15 + [1] * 15)
        >>> round(tau, 2), p < 0.001
        (0.72, True)
    """
    x = np.asarray(times, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.shape != y.shape:
        raise ConfigError(f"{x.size} times but {y.size} values; give one time per value")
    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return 0.0, 1.0
    found = _kendall_tau_b(x, y)
    if found is None:  # many distinct values: scipy's own implementation
        from scipy.stats import kendalltau

        result = kendalltau(x, y, variant="b", method="asymptotic")
        found = float(result.statistic), float(result.pvalue)
    tau, p = found
    if not math.isfinite(tau) or not math.isfinite(p):
        return 0.0, 1.0
    return tau, p


#: Distinct values of the second variable up to which :func:`_kendall_tau_b` counts in numpy.
_DENSE_VALUES = 64


def _tie_stats(ranks: np.ndarray) -> tuple[int, int, int]:
    cnt = np.bincount(ranks).astype("int64", copy=False)
    cnt = cnt[cnt > 1]
    return (
        int((cnt * (cnt - 1) // 2).sum()),
        int((cnt * (cnt - 1.0) * (cnt - 2)).sum()),
        int((cnt * (cnt - 1.0) * (2 * cnt + 5)).sum()),
    )


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """``scipy.stats.kendalltau(x, y, variant="b", method="asymptotic")`` without importing scipy.stats.

    The same steps and floating-point operations as SciPy (dense ranks, tie counts, the
    tie-corrected variance, ``2 * ndtr(-|z|)``), so the result is the same to the bit; the
    discordant pairs are counted from cumulative value counts, which needs ``y`` to take
    few distinct values (stances take three). None when it takes more than
    :data:`_DENSE_VALUES`.
    """
    size = x.size
    perm = np.argsort(y)
    x, y = x[perm], y[perm]
    y = np.r_[True, y[1:] != y[:-1]].cumsum(dtype=np.intp)
    values = int(y[-1])
    if values > _DENSE_VALUES:
        return None
    perm = np.argsort(x, kind="mergesort")
    x, y = x[perm], y[perm]
    x = np.r_[True, x[1:] != x[:-1]].cumsum(dtype=np.intp)
    # Discordant pairs: i before j with x_i < x_j (an earlier x group) and y_i > y_j.
    onehot = np.zeros((size + 1, values + 2), dtype=np.int64)
    onehot[np.arange(1, size + 1), y] = 1
    before = onehot.cumsum(axis=0)  # before[s, v]: y == v among the first s
    greater = before[:, ::-1].cumsum(axis=1)[:, ::-1]  # greater[s, v]: y >= v among the first s
    starts = np.r_[0, np.flatnonzero(x[1:] != x[:-1]) + 1]
    group_start = starts[x - 1]
    dis = int(greater[group_start, y + 1].sum())

    obs = np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1]), True]
    cnt = np.diff(np.nonzero(obs)[0]).astype("int64", copy=False)
    ntie = int((cnt * (cnt - 1) // 2).sum())
    xtie, x0, x1 = _tie_stats(x)
    ytie, y0, y1 = _tie_stats(y)
    tot = (size * (size - 1)) // 2
    if xtie == tot or ytie == tot:
        return math.nan, math.nan
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, max(-1.0, tau))
    m = size * (size - 1.0)
    var = (m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2))
    z = con_minus_dis / np.sqrt(var)
    from scipy.special import ndtr

    p = 2 * ndtr(-np.abs(z))
    return float(tau), float(p)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(x)`` (ties get their average rank), computed as SciPy does."""
    sorter = np.argsort(x, kind="mergesort")
    inv = np.empty(sorter.size, dtype=np.intp)
    inv[sorter] = np.arange(sorter.size, dtype=np.intp)
    arr = x[sorter]
    obs = np.r_[True, arr[1:] != arr[:-1]]
    dense = obs.cumsum()[inv]
    count = np.r_[np.nonzero(obs)[0], len(obs)]
    return 0.5 * (count[dense] + count[dense - 1] + 1)


def pettitt(values: Sequence[float], candidates: Sequence[int] | None = None) -> tuple[int, float]:
    """Pettitt's change point of a time-ordered series: ``(k, |U_k|)``, the change between ``k-1`` and ``k``.

    ``U_k = sum_{i<k} sum_{j>=k} sign(x_j - x_i)``, computed from the ranks in
    O(n log n). ``candidates`` restricts the split positions (e.g. to period
    boundaries); by default every ``k`` in ``1 .. n-1``.

    Raises:
        ConfigError: With fewer than two values or no valid candidate.

    Example:
        >>> pettitt([0, 0, 0, 1, 1, 1, 1])
        (3, 12.0)
    """
    x = np.asarray(values, dtype=float)
    n = x.size
    if n < 2:
        raise ConfigError(f"Pettitt's test needs at least 2 values, got {n}")
    ranks = _average_ranks(x)
    # U_k = 2 * sum_{i<k} r_i - k (n + 1)  (the Mann-Whitney form, ties as mid-ranks)
    prefix = np.concatenate([[0.0], np.cumsum(ranks)])
    ks = np.arange(1, n) if candidates is None else np.asarray([k for k in candidates if 0 < k < n], dtype=int)
    if ks.size == 0:
        raise ConfigError("Pettitt's test got no split position inside the series")
    u = np.abs(2 * prefix[ks] - ks * (n + 1))
    best = int(np.argmax(u))
    # Sign convention: U_k > 0 when later values are larger; only |U| matters here.
    return int(ks[best]), float(u[best])


# -- the trend of an aspect ---------------------------------------------------------


def _span(names: Sequence[str], granularity: Granularity) -> str:
    if not names:
        return ""
    if len(names) == 1:
        return names[0]
    joiner = "-" if granularity == "year" else " to "
    return f"{names[0]}{joiner}{names[-1]}"


def _shares(stances: Sequence[int]) -> tuple[float, float]:
    n = len(stances)
    if not n:
        return 0.0, 0.0
    return sum(s > 0 for s in stances) / n, sum(s < 0 for s in stances) / n


def compute_trend(
    aspect: str,
    mentions: Sequence[tuple[dt.date | None, int]],
    review_dates: Sequence[dt.date | None],
    *,
    granularity: Granularity | None = None,
    alpha: float = TREND_SETTINGS.significance_level,
    min_mentions: int = TREND_SETTINGS.min_mentions,
    min_segment: int = TREND_SETTINGS.min_segment,
    min_effect: float = TREND_SETTINGS.min_effect,
) -> Trend:
    """The :class:`~opinio_agents.models.Trend` of one aspect from its dated mentions.

    Args:
        aspect: The aspect (query) name, used in the summary sentence.
        mentions: One ``(publication date, stance)`` per review that mentions the aspect;
            stance is 1, 0 or -1. Undated mentions are left out.
        review_dates: The publication date of every review of the entity (the
            denominator of each period's mention share).
        granularity: ``"year"`` or ``"quarter"``; by default chosen from the mentions
            (:func:`choose_granularity`).
        alpha: Significance level of the Mann-Kendall test.
        min_mentions: Fewer dated mentions than this is ``insufficient``.
        min_segment: Mentions each regime (before and after the change point) needs.
        min_effect: Smallest change of the net stance labelled improving or worsening.

    Raises:
        ConfigError: On an invalid ``alpha``, minimum or granularity.

    Example:
        >>> import datetime as dt
        >>> flat = [(dt.date(2015 + i % 8, 3, 1), (1, -1, 1)[i % 3]) for i in range(48)]
        >>> compute_trend("pool", flat, [d for d, _ in flat]).label
        'stable'
    """
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha={alpha!r} must lie strictly between 0 and 1, e.g. 0.01")
    if min_mentions < 3 or min_segment < 1:
        raise ConfigError(f"min_mentions={min_mentions} must be >= 3 and min_segment={min_segment} >= 1")
    if granularity not in (None, "year", "quarter"):
        raise ConfigError(f"granularity={granularity!r} must be 'year' or 'quarter'")
    for _, stance in mentions:
        if stance not in (-1, 0, 1):
            raise ConfigError(f"stance {stance!r} must be 1, 0 or -1")
    dated = sorted(((d, int(s)) for d, s in mentions if d is not None), key=lambda item: item[0])
    dates = [d for d, _ in dated]
    grain: Granularity = granularity or choose_granularity(dates)
    all_dates = [d for d in review_dates if d is not None] + dates
    points: list[TrendPoint] = []
    if all_dates:
        totals = Counter(period_of(d, grain) for d in review_dates if d is not None)
        by_period: dict[str, list[int]] = {}
        for d, s in dated:
            by_period.setdefault(period_of(d, grain), []).append(s)
        for name in period_range(min(all_dates), max(all_dates), grain):
            stances = by_period.get(name, [])
            total = max(totals.get(name, 0), len(stances))
            points.append(
                TrendPoint(
                    period=name,
                    mentions=len(stances),
                    share=round(len(stances) / total, 4) if total else 0.0,
                    positive=sum(s > 0 for s in stances),
                    negative=sum(s < 0 for s in stances),
                )
            )
    n = len(dated)
    with_mentions = [p.period for p in points if p.mentions]
    if n < min_mentions or len(with_mentions) < 2:
        where = f" in {len(with_mentions)} {grain}{'s' if len(with_mentions) != 1 else ''}" if n else ""
        return Trend(
            granularity=grain,
            points=points,
            label="insufficient",
            test=f"none (needs {min_mentions} dated mentions over 2 or more {grain}s)",
            p_value=None,
            summary=f"too few dated mentions of {aspect} to tell a trend ({n}{where})",
        )

    times = [d.toordinal() for d in dates]
    stances = [s for _, s in dated]
    tau, p = mann_kendall(times, stances)
    test = f"Mann-Kendall tau={tau:+.2f}, n={n}, alpha={alpha:g}"
    pos_all, neg_all = _shares(stances)
    whole = _span(with_mentions, grain)
    stable = Trend(
        granularity=grain,
        points=points,
        label="stable",
        test=test,
        p_value=round(p, 6),
        summary=(
            f"no significant change in what reviewers say about {aspect} over {whole} "
            f"({pos_all:.0%} positive, {neg_all:.0%} negative of {n} dated mentions)"
        ),
    )
    if p >= alpha or tau == 0:
        return stable

    # Pettitt's change point, at a period boundary with min_segment mentions on each side.
    keys = [period_of(d, grain) for d in dates]
    boundaries = [k for k in range(1, n) if keys[k] != keys[k - 1] and min_segment <= k <= n - min_segment]
    if not boundaries:
        return stable
    k, _ = pettitt(stances, boundaries)
    before, after = stances[:k], stances[k:]
    pos_b, neg_b = _shares(before)
    pos_a, neg_a = _shares(after)
    effect = (pos_a - neg_a) - (pos_b - neg_b)
    direction = 1 if tau > 0 else -1
    if direction * effect < min_effect:
        stable.summary += f"; the change ({effect:+.0%} net) is below {min_effect:.0%}"
        return stable
    span_before = _span(list(dict.fromkeys(keys[:k])), grain)
    span_after = _span(list(dict.fromkeys(keys[k:])), grain)
    if direction > 0:
        if neg_b - neg_a >= pos_a - pos_b:
            summary = f"complaints about {aspect} fell from {neg_b:.0%} of mentions in {span_before} to {neg_a:.0%}"
        else:
            summary = f"praise for {aspect} rose from {pos_b:.0%} of mentions in {span_before} to {pos_a:.0%}"
    elif neg_a - neg_b >= pos_b - pos_a:
        summary = f"complaints about {aspect} rose from {neg_b:.0%} of mentions in {span_before} to {neg_a:.0%}"
    else:
        summary = f"praise for {aspect} fell from {pos_b:.0%} of mentions in {span_before} to {pos_a:.0%}"
    return Trend(
        granularity=grain,
        points=points,
        label="improving" if direction > 0 else "worsening",
        test=f"{test}; change point (Pettitt) at {keys[k]}",
        p_value=round(p, 6),
        summary=f"{summary} in {span_after}",
        change_period=keys[k],
    )
