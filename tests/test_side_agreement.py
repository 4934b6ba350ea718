"""Side agreement (evaluation/side.py): matching evidence sentences to human segments, on inline fixtures."""

from __future__ import annotations

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.side import (
    Segment,
    human_side,
    locate,
    matched_segments,
    sentence_polarity,
    span_overlap,
)
from opinio_agents.models import Polarity
from tests.benchmark_support import load_benchmark

REVIEW = "The battery lasts all day. The screen is dim, and the speaker crackles. Shipping was fast."
SENTENCES = [(0, 26), (27, 71), (72, 90)]  # as the segmenter stores them (start, end)


def test_locate_finds_exact_span_or_none() -> None:
    assert REVIEW[slice(*locate("The screen is dim,", REVIEW))] == "The screen is dim,"  # type: ignore[misc]
    assert locate("  Shipping was fast.  ", REVIEW) == (72, 90)
    assert locate("not in the review", REVIEW) is None
    assert locate("   ", REVIEW) is None


def test_span_overlap_uses_shorter_span() -> None:
    assert span_overlap((0, 10), (0, 10)) == 1.0
    assert span_overlap((0, 100), (10, 20)) == 1.0  # clause inside a sentence
    assert span_overlap((0, 10), (5, 30)) == 0.5
    assert span_overlap((0, 10), (10, 20)) == 0.0  # adjacent, no shared character
    assert span_overlap((0, 10), (3, 3)) == 0.0  # empty span


def test_clauses_match_their_sentence_only() -> None:
    segs = [
        Segment(locate("The battery lasts all day.", REVIEW), 0.9),  # type: ignore[arg-type]
        Segment(locate("The screen is dim,", REVIEW), -0.5),  # type: ignore[arg-type]
        Segment(locate("and the speaker crackles.", REVIEW), -0.7),  # type: ignore[arg-type]
    ]
    first, second, third = (matched_segments(s, segs) for s in SENTENCES)
    assert [s.polarity for s in first] == [0.9]
    assert [s.polarity for s in second] == [-0.5, -0.7]
    assert third == []
    assert sentence_polarity(second) == pytest.approx(-0.6)
    assert sentence_polarity(third) is None


def test_segment_straddling_two_sentences_goes_to_the_one_holding_most_of_it() -> None:
    straddle = Segment(locate("all day. The screen", REVIEW), 0.4)  # type: ignore[arg-type]
    assert straddle.span[1] - straddle.span[0] == 19
    # 8 chars in sentence 1 ("all day."), 10 in sentence 2 ("The screen"): 8/19 and 10/19
    assert matched_segments(SENTENCES[0], [straddle]) == []
    assert matched_segments(SENTENCES[1], [straddle]) == [straddle]
    assert matched_segments(SENTENCES[0], [straddle], min_overlap=0.4) == [straddle]


def test_min_overlap_is_checked() -> None:
    with pytest.raises(ConfigError, match="min_overlap"):
        matched_segments((0, 1), [], min_overlap=0)
    with pytest.raises(ConfigError, match="min_overlap"):
        matched_segments((0, 1), [], min_overlap=1.5)


def test_human_side_majority_excludes_neutral_and_ties() -> None:
    assert human_side([0.5, 0.3, -0.9]) is Polarity.PROS
    assert human_side([-0.5, 0.19, None, 0.1]) is Polarity.CONS
    assert human_side([0.5, -0.5]) is None
    assert human_side([0.1, -0.19, None]) is None
    assert human_side([]) is None
    assert human_side([0.2]) is Polarity.PROS  # the band's edge counts
    assert human_side([0.3], band=0.5) is None


def test_benchmark_review_segments_locates_and_dedups() -> None:
    module = load_benchmark("side_agreement")
    entity = {"user_reviews": [{"review_id": "r1", "text": REVIEW}, {"review_id": "r2", "text": "Meh."}]}
    refs = {
        "aspect_segments": {
            "battery": [{"review_id": "r1", "text": "The battery lasts all day.", "polarity": 0.9}],
            "screen": [
                {"review_id": "r1", "text": "The screen is dim,", "polarity": -0.5},
                {"review_id": "r1", "text": "Shipping was fast.", "polarity": None},  # unlabelled: dropped
            ],
            "quality": [
                {"review_id": "r1", "text": "The screen is dim,", "polarity": -0.5},  # same segment, 2nd aspect
                {"review_id": "r2", "text": "not there", "polarity": 1.0},  # not in its review: dropped
            ],
        }
    }
    out = module.review_segments(entity, refs)
    assert sorted(out) == ["r1"]
    assert sorted((s.span, s.polarity) for s in out["r1"]) == [((0, 26), 0.9), ((27, 45), -0.5)]
