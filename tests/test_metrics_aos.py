"""AR/SF/OF formulas (OpinioRAG Sec. 4.1) on hand-made triplets."""

from __future__ import annotations

import pytest

from opinio_agents.evaluation.aos import (
    AOSScore,
    aspect_relevance,
    dominant_aspects,
    dominant_sentiments,
    opinion_faithfulness,
    score_aos,
    sentiment_factuality,
    summarize_aos,
)
from opinio_agents.evaluation.aspects import aspects_match, normalize_aspect
from opinio_agents.evaluation.verify import AOSVerifier
from opinio_agents.triplets.base import Triplet, TripletExtractor


def T(aspect: str, opinion: str, sentiment: int) -> Triplet:  # noqa: N802 - short fixture helper
    return Triplet(aspect=aspect, opinion=opinion, sentiment=sentiment)


def zero_sim(opinion, others):
    return [0.0] * len(others)


def test_aspect_normalisation_tolerates_surface_variation():
    assert normalize_aspect("The Wi-Fi") == normalize_aspect("wifi") == "wifi"
    assert aspects_match("Beds", "bed")
    assert aspects_match("front desk staff", "staff")
    assert not aspects_match("pool", "pool bar")
    assert not aspects_match("", "")
    assert not aspects_match("room", "")
    assert not aspects_match("hotel staff", "staff", head_match=False)


def test_dominant_aspect_counts_normalised_triplets_and_skips_implicit():
    evidence = [
        T("Pool", "big", 1),
        T("pools", "cold", -1),
        T("", "great", 1),
        T("", "nice", 1),
        T("", "ok", 0),
    ]
    assert dominant_aspects(evidence) == ["Pool"]


def test_ar_tie_counts_every_tied_aspect():
    evidence = [T("pool", "big", 1), T("bar", "loud", -1)]
    assert dominant_aspects(evidence) == ["pool", "bar"]
    assert aspect_relevance(evidence, [T("bar", "noisy", -1)]) == 1.0
    assert aspect_relevance(evidence, [T("pool", "warm", 1)]) == 1.0
    assert aspect_relevance(evidence, [T("spa", "warm", 1)]) == 0.0


def test_ar_any_highlight_triplet_and_undefined_on_empty_evidence():
    evidence = [T("breakfast", "varied", 1), T("breakfast", "fresh", 1), T("coffee", "cold", -1)]
    assert aspect_relevance(evidence, [T("staff", "nice", 1), T("Breakfasts", "great", 1)]) == 1.0
    assert aspect_relevance(evidence, []) == 0.0
    assert aspect_relevance([], [T("breakfast", "good", 1)]) is None
    assert aspect_relevance([T("", "good", 1)], [T("breakfast", "good", 1)]) is None


def test_ar_implicit_highlight_aspect_is_a_miss():
    # App. E.1: "Amazing ocean views" vs "The location offers beautiful views" style mismatch.
    evidence = [T("ocean views", "amazing", 1)]
    assert aspect_relevance(evidence, [T("", "beautiful", 1)]) == 0.0
    assert aspect_relevance(evidence, [T("location", "beautiful", 1)]) == 0.0


def test_sf_excludes_neutral_and_uses_dominant_polarity():
    evidence = [
        T("wifi", "ok", 0),
        T("wifi", "average", 0),
        T("wifi", "average", 0),
        T("wifi", "terrible", -1),
    ]
    assert dominant_sentiments(evidence) == [-1]
    # App. E.2 positive bias: "The Wi-Fi was a bit slow" generated as positive.
    assert sentiment_factuality(evidence, [T("Wi-Fi", "a bit slow", 1)]) == 0.0
    assert sentiment_factuality(evidence, [T("Wi-Fi", "bad", -1)]) == 1.0
    assert sentiment_factuality(evidence, [T("Wi-Fi", "fine", 0)]) == 0.0


def test_sf_only_counts_evidence_about_the_highlight_aspect():
    evidence = [
        T("room", "spacious", 1),
        T("room", "noisy", -1),
        T("room", "dark", -1),
        T("view", "great", 1),
    ]
    assert sentiment_factuality(evidence, [T("rooms", "spacious", 1)]) == 0.0
    assert sentiment_factuality(evidence, [T("view", "great", 1)]) == 1.0


def test_sf_tie_and_undefined_cases():
    tie = [T("room", "spacious", 1), T("room", "noisy", -1)]
    assert dominant_sentiments(tie) == [-1, 1]
    assert sentiment_factuality(tie, [T("room", "comfortable", 1)]) == 1.0
    assert sentiment_factuality([T("room", "ok", 0)], [T("room", "good", 1)]) is None
    assert sentiment_factuality([], [T("room", "good", 1)]) is None
    assert sentiment_factuality(tie, []) is None
    assert sentiment_factuality(tie, [T("spa", "good", 1)]) is None


def test_sf_implicit_highlight_refers_to_dominant_aspect():
    evidence = [T("staff", "rude", -1), T("staff", "slow", -1), T("lobby", "nice", 1)]
    assert sentiment_factuality(evidence, [T("", "unhelpful", -1)]) == 1.0
    assert sentiment_factuality(evidence, [T("", "lovely", 1)]) == 0.0


def test_of_exact_match_scores_one_and_mean_over_same_aspect_and_sentiment():
    evidence = [
        T("beds", "comfortable", 1),
        T("bed", "soft", 1),
        T("beds", "squeaky", -1),
        T("pool", "comfortable", 1),
    ]
    calls = []

    def sim(opinion, others):
        calls.append((opinion, list(others)))
        return [0.5 for _ in others]

    assert opinion_faithfulness(evidence, [T("Bed", "Comfortable!", 1)], sim) == pytest.approx(0.75)
    assert calls == [("Comfortable!", ["soft"])]
    # App. E.3 overstatement: graded by similarity, clipped to [0, 1].
    assert (
        opinion_faithfulness(evidence, [T("bed", "luxurious", 1)], lambda a, b: [-0.2, 1.4]) == 0.5
    )


def test_of_unsupported_sentiment_and_undefined():
    evidence = [T("staff", "rude", -1)]
    assert opinion_faithfulness(evidence, [T("staff", "friendly", 1)], zero_sim) == 0.0
    assert opinion_faithfulness(evidence, [T("spa", "relaxing", 1)], zero_sim) is None
    assert opinion_faithfulness([], [T("spa", "relaxing", 1)], zero_sim) is None
    assert opinion_faithfulness(evidence, [], zero_sim) is None


def test_score_and_summary_keep_breakdown():
    evidence = [T("pool", "warm", 1), T("pool", "clean", 1)]
    score = score_aos(evidence, [T("pool", "warm", 1)], zero_sim, label={"query": "pool"})
    assert (score.ar, score.sf, score.of) == (1.0, 1.0, 0.5)
    assert score.focus == {"aspect": "pool", "opinion": "warm", "sentiment": 1}
    assert score.to_dict()["label"] == {"query": "pool"}
    summary = summarize_aos([score, AOSScore(0.0, None, None), AOSScore(None, 0.0, 0.0)])
    assert summary.ar == 0.5 and summary.n_ar == 2
    assert summary.sf == 0.5 and summary.of == 0.25
    assert summary.n_highlights == 3
    assert summarize_aos([]).ar is None


class FirstLastWord(TripletExtractor):
    """'aspect ... opinion' sentences -> one triplet; sentiment from a '-' prefix."""

    def __init__(self):
        self.calls = 0

    def extract(self, sentences):
        self.calls += 1
        out = []
        for s in sentences:
            words = s.split()
            neg = s.startswith("-")
            out.append(
                [
                    Triplet(
                        aspect=words[0].lstrip("-"), opinion=words[-1], sentiment=-1 if neg else 1
                    )
                ]
                if words
                else []
            )
        return out


def test_verifier_batches_extraction_and_scores():
    extractor = FirstLastWord()
    verifier = AOSVerifier(extractor, similarity=zero_sim)
    scores = verifier.verify(
        [
            ("wifi fast", ["wifi fast", "wifi quick", "-wifi slow"]),
            ("-pool cold", ["pool warm", "pool warm"]),
        ],
        labels=[{"q": "wifi"}, {"q": "pool"}],
    )
    assert extractor.calls == 1
    assert [(s.ar, s.sf) for s in scores] == [(1.0, 1.0), (1.0, 0.0)]
    assert scores[0].of == pytest.approx(0.5)
    assert scores[1].of == 0.0
    assert scores[1].label == {"q": "pool"}
