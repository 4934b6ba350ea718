"""Critical-complaint detection (negation-aware) and the highlight guard."""

from __future__ import annotations

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.models import Evidence, Highlight, Polarity, QueryEvidence, Sentence
from opinio_agents.synthesis.alerts import CRITICAL_CATEGORIES, detect_alerts, find_critical, guard_highlights


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We found bed bugs on the second night.", ["bed bugs"]),
        ("Woke up with bug bites all over my arms.", ["bed bugs"]),
        ("There were cockroaches in the bathroom.", ["hygiene"]),
        ("Black mould around the shower and stained sheets.", ["hygiene"]),
        ("Two of us got food poisoning from the buffet.", ["food poisoning"]),
        ("I got violently sick after eating the seafood.", ["food poisoning"]),
        ("My laptop was stolen from the room!", ["theft"]),
        ("At the restaurant my purse was stolen.", ["theft"]),
        ("The night manager harassed my daughter.", ["harassment"]),
        ("The doorman was openly racist to us.", ["discrimination"]),
        ("The door wouldn't lock and the area felt unsafe.", ["safety"]),
        ("We didn't feel safe walking back at night.", ["safety"]),
    ],
)
def test_critical_complaints_are_found(text: str, expected: list[str]) -> None:
    assert find_critical(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "No bed bugs, and the room was spotless.",
        "The hotel is bedbug-free.",
        "I was worried about bed bugs but found none.",
        "I read about bed bugs in other reviews, but our room was fine.",
        "Never felt unsafe walking at night.",
        "Nothing was stolen even though we left bags out.",
        "Didnt see any cockroaches.",
        "The staff were not racist at all, whatever others say.",
        "Great breakfast and a friendly, helpful team.",
    ],
)
def test_negated_or_hypothetical_mentions_are_not_alerts(text: str) -> None:
    assert find_critical(text) == []


def test_categories_are_the_seven_required() -> None:
    assert {c.name for c in CRITICAL_CATEGORIES} == {
        "safety", "hygiene", "bed bugs", "food poisoning", "theft", "harassment", "discrimination"
    }


def _sentence(review: str, index: int, text: str) -> Sentence:
    return Sentence(
        sentence_id=Sentence.make_id(1, review, index), entity_id="1", review_id=review, index=index,
        text=text, start=0, end=len(text),
    )


def test_detect_alerts_counts_distinct_reviews() -> None:
    sentences = [
        _sentence("a", 0, "Bed bugs in room 12."),
        _sentence("a", 1, "The bed bugs bit my son too."),
        _sentence("b", 0, "We found bedbugs under the mattress."),
        _sentence("c", 0, "No bed bugs at all."),
        _sentence("d", 0, "Our camera was stolen."),
    ]
    alerts = detect_alerts(sentences, [-0.5, -0.4, -0.2, 0.3, -0.6])
    assert [(a.category, a.support) for a in alerts] == [("bed bugs", 2), ("theft", 1)]
    assert alerts[0].description == "Bed bugs reported in 2 reviews"
    assert [e.sentence_id for e in alerts[0].evidence] == ["1:a:0", "1:a:1", "1:b:0"]
    assert alerts[0].evidence[0].sentiment == -0.5
    assert [a.category for a in detect_alerts(sentences, min_support=2)] == ["bed bugs"]
    with pytest.raises(ConfigError):
        detect_alerts(sentences, min_support=0)
    with pytest.raises(ConfigError, match="one per sentence"):
        detect_alerts(sentences, [0.1])


ITEM = QueryEvidence(
    query="room cleanliness",
    evidence=[
        Evidence(sentence_id="1:a:0", text="Spotless room, cleaned daily.", sentiment=0.6),
        Evidence(sentence_id="1:b:0", text="We found bed bugs in the mattress.", sentiment=-0.3),
    ],
)


def _h(polarity: Polarity, ids: list[str], text: str = "x") -> Highlight:
    by_id = {e.sentence_id: e for e in ITEM.evidence}
    return Highlight(query=ITEM.query, polarity=polarity, text=text, evidence=[by_id[i] for i in ids])


def test_guard_adds_a_con_when_a_critical_complaint_was_dropped() -> None:
    out = guard_highlights(ITEM, [_h(Polarity.PROS, ["1:a:0"], "Spotless rooms.")])
    assert [h.polarity for h in out] == [Polarity.PROS, Polarity.CONS]
    assert out[1].text == "Guests report bed bugs." and out[1].sentence_ids == ["1:b:0"]
    assert out[1].polarity_agrees is True and "critical-complaint guard" in out[1].notes[0]


def test_guard_removes_critical_evidence_from_a_pro_and_drops_a_pro_resting_on_it() -> None:
    softened = _h(Polarity.PROS, ["1:a:0", "1:b:0"], "Clean rooms.")
    out = guard_highlights(ITEM, [softened])
    assert out[0].sentence_ids == ["1:a:0"] and "removed" in out[0].notes[0]
    assert out[1].polarity is Polarity.CONS
    assert softened.sentence_ids == ["1:a:0", "1:b:0"]  # input not modified
    only = guard_highlights(ITEM, [_h(Polarity.PROS, ["1:b:0"], "Cozy beds.")])
    assert [h.polarity for h in only] == [Polarity.CONS]


def test_guard_extends_an_existing_con_and_leaves_clean_evidence_alone() -> None:
    con = _h(Polarity.CONS, ["1:a:0"], "Rooms need attention.")
    out = guard_highlights(ITEM, [con])
    assert len(out) == 1 and out[0].sentence_ids == ["1:a:0", "1:b:0"]
    assert "added 1 critical" in out[0].notes[0]
    clean = QueryEvidence(query="q", evidence=[ITEM.evidence[0]])
    pro = _h(Polarity.PROS, ["1:a:0"])
    assert guard_highlights(clean, [pro]) == [pro]
