"""Trends over time and support weighting: the pure functions, on inline fixtures, and a planted trend end to end."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math

import numpy as np
import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.models import Sentence, Support
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.synthesis.support import dated_mentions, support_of
from opinio_agents.trends import (
    Weighting,
    choose_granularity,
    compute_trend,
    in_window,
    mann_kendall,
    period_of,
    period_range,
    pettitt,
    review_weights,
)

D = dt.date


# -- Mann-Kendall ---------------------------------------------------------------------


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def test_mann_kendall_matches_the_textbook_statistic_without_ties() -> None:
    values = [3.1, 2.0, 4.4, 5.0, 4.9, 6.2, 7.7, 6.0, 8.8, 9.1, 8.0, 10.5]
    n = len(values)
    s = sum(_sign(values[j] - values[i]) for i, j in itertools.combinations(range(n), 2))
    var = n * (n - 1) * (2 * n + 5) / 18
    z = s / math.sqrt(var)
    p = math.erfc(abs(z) / math.sqrt(2))
    tau, p_got = mann_kendall(range(n), values)
    assert tau == pytest.approx(s / (n * (n - 1) / 2))
    assert p_got == pytest.approx(p, rel=1e-9)
    assert tau > 0 and p_got < 0.001


def test_mann_kendall_corrects_for_ties_in_stances_and_dates() -> None:
    # Two reviews a day, stances -1/0/1: ties on both sides.
    times = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    values = [-1, -1, -1, 0, -1, 0, 0, 1, 1, 0, 1, 1]
    n = len(values)
    pairs = list(itertools.combinations(range(n), 2))
    s = sum(_sign(times[j] - times[i]) * _sign(values[j] - values[i]) for i, j in pairs)
    n0 = n * (n - 1) / 2
    ties_t = sum(c * (c - 1) / 2 for c in np.unique(times, return_counts=True)[1])
    ties_v = sum(c * (c - 1) / 2 for c in np.unique(values, return_counts=True)[1])
    tau_b = s / math.sqrt((n0 - ties_t) * (n0 - ties_v))
    tau, p = mann_kendall(times, values)
    assert tau == pytest.approx(tau_b)
    assert p < 0.01
    # The untied variance would understate the evidence: the tie-corrected p is smaller.
    p_untied = math.erfc(abs(s / math.sqrt(n * (n - 1) * (2 * n + 5) / 18)) / math.sqrt(2))
    assert p < p_untied


def test_mann_kendall_of_a_constant_or_shuffled_series_finds_nothing() -> None:
    assert mann_kendall(range(10), [1] * 10) == (0.0, 1.0)
    assert mann_kendall([5] * 10, range(10)) == (0.0, 1.0)
    tau, p = mann_kendall(range(12), [1, -1, 1, -1, 1, -1, -1, 1, -1, 1, -1, 1])
    assert abs(tau) < 0.2 and p > 0.3
    with pytest.raises(ConfigError, match="one time per value"):
        mann_kendall([1, 2], [1, 2, 3])


def test_pettitt_finds_the_step_and_honours_candidates() -> None:
    series = [0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1]
    k, u = pettitt(series)
    brute = {
        t: abs(sum(_sign(series[j] - series[i]) for i in range(t) for j in range(t, len(series))))
        for t in range(1, len(series))
    }
    assert u == pytest.approx(max(brute.values()))
    assert brute[k] == pytest.approx(u) and k == 5
    k2, _ = pettitt(series, candidates=[2, 8])
    assert k2 == max((2, 8), key=lambda t: brute[t])
    with pytest.raises(ConfigError):
        pettitt([1])


# -- periods --------------------------------------------------------------------------


def test_periods_and_granularity() -> None:
    assert period_of(D(2019, 1, 1), "quarter") == "2019-Q1"
    assert period_of(D(2019, 12, 31), "quarter") == "2019-Q4"
    assert period_range(D(2018, 5, 1), D(2020, 1, 1), "year") == ["2018", "2019", "2020"]
    assert period_range(D(2019, 8, 1), D(2020, 4, 1), "quarter") == ["2019-Q3", "2019-Q4", "2020-Q1", "2020-Q2"]
    dense = [D(2020, 1, 1) + dt.timedelta(days=3 * i) for i in range(120)]  # ~1 year, 120 mentions
    assert choose_granularity(dense) == "quarter"
    sparse = [D(2015, 1, 1) + dt.timedelta(days=30 * i) for i in range(120)]  # 10 years
    assert choose_granularity(sparse) == "year"
    assert choose_granularity([]) == "year"


# -- compute_trend ----------------------------------------------------------------------


def _series(stance_by_year: dict[int, list[int]]) -> list[tuple[dt.date, int]]:
    return [(D(year, 1 + (i % 12), 10), s) for year, stances in stance_by_year.items() for i, s in enumerate(stances)]


def test_improving_trend_has_the_change_point_and_a_readable_summary() -> None:
    mentions = _series(
        {
            2019: [-1] * 8 + [1] * 2,
            2020: [-1] * 7 + [1] * 3,
            2021: [1] * 8 + [-1] * 1 + [0],
            2022: [1] * 9 + [-1] * 1,
        }
    )
    reviews = [d for d, _ in mentions] + [D(2019, 6, 1)] * 10 + [D(2022, 6, 1)] * 30
    trend = compute_trend("wi-fi", mentions, reviews)
    assert trend.granularity == "year"
    assert trend.label == "improving"
    assert trend.change_period == "2021"
    assert trend.p_value is not None and trend.p_value < 0.01
    assert trend.test.startswith("Mann-Kendall tau=+")
    assert trend.summary == "complaints about wi-fi fell from 75% of mentions in 2019-2020 to 10% in 2021-2022"
    points = {p.period: p for p in trend.points}
    assert [p.period for p in trend.points] == ["2019", "2020", "2021", "2022"]
    assert (points["2019"].mentions, points["2019"].positive, points["2019"].negative) == (10, 2, 8)
    assert points["2019"].share == pytest.approx(10 / 20)
    assert points["2022"].share == pytest.approx(10 / 40)


def test_worsening_trend_praise_falls() -> None:
    mentions = _series({2016: [1] * 12, 2017: [1] * 11 + [0], 2018: [0] * 6 + [1] * 4 + [-1] * 2, 2019: [0] * 9 + [1]})
    trend = compute_trend("pool", mentions, [d for d, _ in mentions])
    assert trend.label == "worsening"
    assert trend.change_period == "2018"
    assert trend.summary.startswith("praise for pool fell from 96% of mentions in 2016-2017 to ")


def test_stable_and_insufficient_labels() -> None:
    flat = _series({y: [1, -1, 1, 0, 1, -1, 1, 1] for y in range(2015, 2021)})
    stable = compute_trend("parking", flat, [d for d, _ in flat])
    assert stable.label == "stable" and stable.change_period is None
    assert stable.p_value is not None and stable.p_value > 0.05
    assert "no significant change" in stable.summary and "2015-2020" in stable.summary

    few = _series({2019: [-1] * 5, 2023: [1] * 5})
    thin = compute_trend("spa", few, [d for d, _ in few])
    assert thin.label == "insufficient" and thin.p_value is None
    assert thin.summary == "too few dated mentions of spa to tell a trend (10 in 2 years)"
    one_year = _series({2019: [-1] * 30})
    assert compute_trend("spa", one_year, []).label == "insufficient"
    undated = [(None, -1)] * 40
    assert compute_trend("spa", undated, [None] * 40).summary.endswith("(0)")


def test_a_significant_but_tiny_change_stays_stable() -> None:
    # 5000 mentions a year; the positive share moves 50% -> 54% (net +0.08): significant, below min_effect.
    mentions = _series({2018: [1] * 2500 + [-1] * 2500, 2019: [1] * 2700 + [-1] * 2300})
    trend = compute_trend("bar", mentions, [d for d, _ in mentions], granularity="year")
    assert trend.p_value is not None and trend.p_value < 0.01
    assert trend.label == "stable" and "below 10%" in trend.summary


def test_quarters_when_mentions_are_dense() -> None:
    mentions = [(D(2021, 1, 1) + dt.timedelta(days=2 * i), -1 if i < 91 else 1) for i in range(180)]
    trend = compute_trend("check-in", mentions, [d for d, _ in mentions])
    assert trend.granularity == "quarter"
    assert trend.label == "improving"
    assert trend.change_period == period_of(mentions[91][0], "quarter") == "2021-Q3"
    assert " to " in trend.summary and "-Q" in trend.summary


def test_compute_trend_refuses_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="alpha"):
        compute_trend("x", [], [], alpha=1.5)
    with pytest.raises(ConfigError, match="stance"):
        compute_trend("x", [(D(2020, 1, 1), 2)], [])


# -- weighting --------------------------------------------------------------------------


def test_weighting_labels_and_validation() -> None:
    assert Weighting().label == "count" and Weighting().is_default
    assert Weighting(half_life_days=180).label == "recency half-life 180 d"
    assert Weighting(helpful=True).label == "helpful votes"
    assert Weighting(since=D(2020, 1, 1)).label == "count" and not Weighting(since=D(2020, 1, 1)).is_default
    with pytest.raises(ConfigError, match="positive number of days"):
        Weighting(half_life_days=0)
    with pytest.raises(ConfigError, match="before it starts"):
        Weighting(since=D(2021, 1, 1), until=D(2020, 1, 1))


def test_review_weights_recency_helpful_and_window() -> None:
    dates = [D(2024, 1, 1), D(2023, 1, 1), D(2022, 1, 1), None]
    votes = [0, 3, None, 1]
    recency = review_weights(dates, votes, Weighting(half_life_days=365))
    assert recency == pytest.approx([1.0, 0.5, 0.25, 0.25])  # undated: as old as the oldest
    helpful = review_weights(dates, votes, Weighting(helpful=True))
    assert helpful.tolist() == [1.0, 4.0, 1.0, 2.0]
    window = review_weights(dates, votes, Weighting(since=D(2022, 6, 1), until=D(2023, 6, 1)))
    assert window.tolist() == [0.0, 1.0, 0.0, 0.0]
    both = review_weights(dates, votes, Weighting(until=D(2023, 1, 1), half_life_days=365, helpful=True))
    assert both == pytest.approx([0.0, 4.0, 0.5, 0.0])  # the newest review in the window is the reference
    assert in_window(None, None, None) and not in_window(None, None, D(2020, 1, 1))
    with pytest.raises(ConfigError, match="no review has a publication_date"):
        review_weights([None, None], [1, 2], Weighting(since=D(2020, 1, 1)))


def _stored(review: str, text: str, sentiment: float, date: dt.date | None, votes: int | None) -> StoredSentence:
    sentence = Sentence(
        sentence_id=f"e:{review}:0",
        entity_id="e",
        review_id=review,
        index=0,
        text=text,
        start=0,
        end=len(text),
        publication_date=date,
        helpful_votes=votes,
    )
    return StoredSentence(sentence=sentence, tokens=tuple(text.lower().split()), sentiment=sentiment)


STORED = [
    _stored("r1", "wifi was slow", -0.6, D(2019, 3, 1), 0),
    _stored("r2", "wifi was great", 0.7, D(2023, 3, 1), 4),
    _stored("r3", "wifi fine", 0.0, D(2023, 6, 1), None),
    _stored("r4", "nice pool", 0.8, D(2023, 9, 1), 1),
    _stored("r5", "wifi awful", -0.7, None, 9),
]


def test_support_of_plain_count_is_unchanged() -> None:
    support = support_of(STORED, [0, 1, 2, 4])
    assert support == Support(reviews=4, positive=1, negative=2, neutral=1, total_reviews=5)
    assert support.describe() == "mentioned in 4 of 5 reviews, 50% negative"


def test_support_of_in_a_window_counts_dated_reviews_inside_it() -> None:
    support = support_of(STORED, [0, 1, 2, 4], total_reviews=99, weighting=Weighting(since=D(2022, 1, 1)))
    assert (support.reviews, support.positive, support.negative, support.neutral) == (2, 1, 0, 1)
    assert support.total_reviews == 3 and isinstance(support.reviews, int)
    assert support.since == D(2022, 1, 1) and support.weighting == "count"
    assert support.describe() == "mentioned in 2 of 3 reviews since 2022-01-01, 50% positive"


def test_support_of_weighted_by_helpful_votes_says_so() -> None:
    support = support_of(STORED, [0, 1, 2, 4], weighting=Weighting(helpful=True))
    # r1: 1, r2: 5, r3: 1, r5: 10 (mentioning); r4: 2 more in the total.
    assert (support.positive, support.negative, support.neutral) == (5.0, 11.0, 1.0)
    assert support.total_reviews == 19.0
    assert support.describe() == "mentioned in 17 of 19 reviews (weighted by helpful votes), 65% negative"
    assert json.loads(support.model_dump_json())["weighting"] == "helpful votes"


def test_dated_mentions_feed_the_trend() -> None:
    mentions, dates = dated_mentions(STORED, [0, 1, 2, 4])
    assert sorted(mentions, key=str) == sorted(
        [(D(2019, 3, 1), -1), (D(2023, 3, 1), 1), (D(2023, 6, 1), 0), (None, -1)], key=str
    )
    assert len(dates) == 5 and dates.count(None) == 1


# -- planted trend, end to end (HashEncoder: no model) -------------------------------------


def test_a_planted_trend_is_found_on_the_right_side_at_the_right_time(tmp_path) -> None:
    from fake_encoder import HashEncoder

    from opinio_agents.api import OpinioRAG
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.datasets.synthetic import PlantedTrend

    planted = PlantedTrend("wi-fi", D(2019, 7, 1), "improving")
    data = generate_dataset(
        1, 160, seed=5, trends=[planted], prevalence=(0.6, 0.6), strength=(0.9, 0.9),
        aspects_per_entity=(2, 2), sentences_per_review=(1, 6), mean_sentences=3.0,
    )  # fmt: skip
    assert data.truth["1"]["trends"] == [planted.to_dict()]
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder(), top_k=5)
    rag.index(data.entities, fit_hiro=False)
    result = rag.highlights("1")
    trends = {h.query: h.trend for h in result.highlights}
    found = trends["wi-fi"]
    assert found is not None and found.label == "improving", found
    assert found.change_period is not None and abs(int(found.change_period) - 2019) <= 1
    assert found.summary.startswith(("complaints about wi-fi fell", "praise for wi-fi rose")), found.summary
    others = [t for q, t in trends.items() if q != "wi-fi" and t is not None]
    assert others and all(t.label in ("stable", "insufficient") for t in others)
    assert "trends" in result.meta.timings

    recent = rag.highlights("1", ["wi-fi"], since=D(2021, 1, 1), half_life_days=365)
    support = recent.highlights[0].support
    assert support.since == D(2021, 1, 1) and support.weighting == "recency half-life 365 d"
    assert isinstance(support.reviews, float) and "weighted by recency half-life 365 d" in support.describe()
    recent_trend = recent.highlights[0].trend
    assert recent_trend is not None and all(p.period >= "2021" for p in recent_trend.points)
    everything = rag.highlights("1", ["wi-fi"]).highlights[0].support
    assert everything.weighting == "count" and isinstance(everything.reviews, int)
    # After the change, mentions are mostly positive: the recent window leans far more positive.
    assert support.share_positive > everything.share_positive + 0.15
    assert support.share_negative < everything.share_negative - 0.15
