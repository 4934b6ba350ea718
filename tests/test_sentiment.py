"""Tests for opinio_agents.text.sentiment."""

from __future__ import annotations

import threading

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.text.sentiment import (
    SentimentScorer,
    VaderSentimentScorer,
    default_sentiment_scorer,
    sentiment_label,
)

POSITIVE = [
    "The room was spotless and the staff were so helpful.",
    "Great location, walkable to everything.",
    "Complimentary breakfast every morning!",
    "Spacious, comfy beds and a quiet room.",
    # Issue 25: read as complaints (stored -0.15) before "fast" was a review word.
    "The elevators were fast, we never waited more than a minute.",
    "Fast and reliable wi-fi everywhere.",
    # A nuisance that did not happen (positive_phrases): plain VADER reads the "no" as a complaint.
    "Plenty of lifts so no queues even at checkout time.",
    "No problems at all with check-in.",
    # Reader's audit: "The prices are low." was no price PRO, "Never had problems ..." a CON.
    "The prices are low.",
    "Low prices and quick service.",
    "Never had any issues with this speaker.",
    # Reader's audit: OpoSum's "It's very lightweight." (humans: +0.66) was shown as a CON; VADER had no valence.
    "It's very lightweight.",
    "A small, light-weight appliance.",
]
NEGATIVE = [
    "The decor is dated and the carpet was stained.",
    "Overpriced, noisy and cramped.",
    "We found bedbugs in the mattress.",
    "The bathroom was filthy and moldy.",
    "The AC didn't work.",
    "We had to wait 40 minutes for our room.",
    "The elevator was out of order.",
    "There was no hot water.",
    "Would never stay here again.",
    "Rude front desk clerk.",
    # Issue 25: paying for what should be free, and "free" that is not.
    "The so-called free wi-fi was limited to one device per room.",
    "Nice hotel but in the rooms you have to pay for wi-fi.",
    "Stained carpet and furniture that has seen better days.",
    "Check-in took over an hour, there was one person working.",
    "Check-in is at 4pm and they would not budge.",
    # Reader's audit: wishes in praise words were PROS ("Would be nice to take it outside ..." under battery).
    "Would be nice to take it outside and operate on battery.",
    "Wish it had a battery.",
    "I would still have expected better quality.",
    "Sound could be better.",
    "The way they pack it for delivery needs to improve.",
    "Its okay but keeps dropping wifi.",
]


@pytest.fixture(scope="module")
def scorer() -> VaderSentimentScorer:
    return VaderSentimentScorer()


@pytest.mark.parametrize("text", POSITIVE)
def test_positive_review_sentences(scorer: VaderSentimentScorer, text: str) -> None:
    assert sentiment_label(scorer.score([text])[0]) == 1


@pytest.mark.parametrize("text", NEGATIVE)
def test_negative_review_sentences(scorer: VaderSentimentScorer, text: str) -> None:
    assert sentiment_label(scorer.score([text])[0]) == -1


def test_neutral_and_empty(scorer: VaderSentimentScorer) -> None:
    scores = scorer.score(["", "Breakfast is served from 7 to 10."])
    assert [sentiment_label(s) for s in scores] == [0, 0]


def test_review_rules_change_plain_vader() -> None:
    plain = VaderSentimentScorer(use_review_rules=False)
    tuned = VaderSentimentScorer()
    text = "The elevator was out of order."
    assert plain.score([text])[0] == 0.0
    assert tuned.score([text])[0] < 0


def test_super_intensifies_the_word_after_it(scorer: VaderSentimentScorer) -> None:
    # SPACE dev hotel 1029276's parking PRO read "Parking is super expensive." (VADER: "super" is +2.9 praise).
    plain = VaderSentimentScorer(use_review_rules=False)
    assert plain.score(["Parking is super expensive."])[0] > 0
    labels = [sentiment_label(s) for s in scorer.score(["Parking is super expensive.", "Pricy too!"])]
    assert labels == [-1, -1]
    praise = scorer.score(["The staff were super friendly.", "Super!", "A super hotel."])
    assert [sentiment_label(s) for s in praise] == [1, 1, 1]


def test_scores_in_range_and_protocol(scorer: VaderSentimentScorer) -> None:
    scores = scorer.score(POSITIVE + NEGATIVE + ["GREAT!!! BEST HOTEL EVER!!!"])
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert isinstance(scorer, SentimentScorer)


def test_extra_lexicon_and_validation() -> None:
    custom = VaderSentimentScorer(extra_lexicon={"zorbly": 3.0})
    assert custom.score(["The room was zorbly."])[0] > 0
    with pytest.raises(ConfigError, match="extra_lexicon"):
        VaderSentimentScorer(extra_lexicon={"bad": 9})
    with pytest.raises(ConfigError, match="sequence of texts"):
        custom.score("one string")  # type: ignore[arg-type]


def test_sentiment_label_threshold() -> None:
    assert [sentiment_label(s) for s in (-0.5, -0.05, -0.01, 0.0, 0.04, 0.05, 0.9)] == [
        -1,
        -1,
        0,
        0,
        0,
        1,
        1,
    ]
    assert sentiment_label(0.2, threshold=0.3) == 0
    with pytest.raises(ConfigError, match="threshold"):
        sentiment_label(0.1, threshold=-1)


def test_default_scorer_is_cached_and_thread_safe() -> None:
    assert default_sentiment_scorer() is default_sentiment_scorer()
    fresh = VaderSentimentScorer()
    results: list[list[float]] = []

    def work() -> None:
        results.append(fresh.score(NEGATIVE))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(r == results[0] for r in results)


@pytest.mark.parametrize("apostrophe", ["\u2019", "\u00b4", "\u02bc", "`"])
def test_typographic_apostrophes_negate_as_the_plain_one(scorer: VaderSentimentScorer, apostrophe: str) -> None:
    # VADER's negation list holds "wasn't" and "didn't": "didn’t like" read as praise before.
    for text in ("The room wasn't clean.", "We didn't like the breakfast.", "It isn't worth the price."):
        typed = text.replace("'", apostrophe)
        assert scorer.score_one(typed) == scorer.score_one(text) < 0, typed
