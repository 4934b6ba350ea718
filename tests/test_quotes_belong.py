"""Quotes that belong (issue 25 item 2): on the aspect, on the side, each saying something new.

Fast tier: hand-made evidence and the hashing encoder (no model).
"""

from __future__ import annotations

import numpy as np
from fake_encoder import HashEncoder

from opinio_agents.models import Evidence, Polarity, QueryEvidence, Support
from opinio_agents.synthesis.extractive import ExtractiveSynthesizer
from opinio_agents.synthesis.support import shown_sides
from opinio_agents.text.duplicates import distinct_indices, same_statement, statement_tokens

ENCODER = HashEncoder()


def ev(i: int, text: str, sentiment: float) -> Evidence:
    return Evidence(sentence_id=f"101:{i}:0", text=text, score=0.0, sentiment=sentiment)


def item(
    query: str, evidence: list[Evidence], pool: list[Evidence], support: Support, **extra: object
) -> QueryEvidence:
    return QueryEvidence(
        query=query,
        evidence=evidence,
        support=support,
        pool=pool,
        pool_vectors=ENCODER.encode([e.text for e in pool]),
        vectors=ENCODER.encode([e.text for e in evidence]),
        query_vector=ENCODER.encode([query])[0],
        **extra,  # type: ignore[arg-type]
    )


def no_repeats(texts: list[str]) -> bool:
    tokens = [statement_tokens(t) for t in texts]
    return not any(same_statement(a, b) for i, a in enumerate(tokens) for b in tokens[i + 1 :])


WIFI_NEG = [
    ev(0, "They charge for wifi, which in this day and age is just ridiculous.", -0.4),
    ev(1, "Wi-fi only worked in the corridor on our floor, not in the room itself.", -0.3),
    ev(2, "Wi-fi only worked in corridor on our floor, not in the room itself.", -0.3),
    ev(3, "Sadly, the wi-fi was painfully slow and kept dropping every few minutes.", -0.5),
    ev(4, "Sadly, they charge for wifi, which in this day and age is just ridiculous.", -0.4),
]
WIFI_POS = [
    ev(10, "The wifi was fast and free everywhere in the hotel.", 0.6),
    ev(11, "Free wifi that actually worked well in our room.", 0.5),
    ev(12, "Good wifi speed, I could stream movies.", 0.5),
]


def test_a_minority_side_past_the_threshold_gets_its_highlight() -> None:
    # 15 positive and 26 negative reviews: 37% positive passes split_threshold (35%), so the
    # panel shows a PRO too, even though the top-K holds no positive sentence.
    query = item("wi-fi", WIFI_NEG, WIFI_NEG + WIFI_POS, Support(reviews=49, positive=15, negative=26, neutral=8))
    sides = [h.polarity for h in ExtractiveSynthesizer(ENCODER).synthesize(query)]
    assert sides == [Polarity.CONS, Polarity.PROS]


def test_below_the_threshold_one_side() -> None:
    query = item("wi-fi", WIFI_NEG, WIFI_NEG + WIFI_POS, Support(reviews=49, positive=8, negative=34, neutral=7))
    assert [h.polarity for h in ExtractiveSynthesizer(ENCODER).synthesize(query)] == [Polarity.CONS]


def test_no_two_quotes_say_the_same_thing() -> None:
    query = item("wi-fi", WIFI_NEG, WIFI_NEG, Support(reviews=20, positive=0, negative=20))
    (con,) = ExtractiveSynthesizer(ENCODER).synthesize(query)
    texts = [e.text for e in con.evidence]
    assert len(texts) >= 2 and no_repeats(texts), texts
    assert no_repeats([p for p in con.text.split(". ") if p])


def test_quotes_are_mentions_of_the_aspect() -> None:
    on_aspect = [
        ev(0, "The breakfast buffet was amazing, fresh fruit and eggs made to order.", 0.9),
        ev(1, "Great breakfast buffet with local specialities.", 0.8),
        ev(2, "The buffet at breakfast was constantly refilled.", 0.5),
    ]
    off_aspect = [
        ev(3, "There is a supermarket around the corner for snacks and water.", 0.3),
        ev(4, "The bar serves snacks until late, great cocktails.", 0.6),
    ]
    query = item(
        "breakfast buffet",
        on_aspect,
        on_aspect + off_aspect,
        Support(reviews=40, positive=30, negative=4, neutral=6),
        mentions=frozenset(e.sentence_id for e in on_aspect),
    )
    (pro,) = ExtractiveSynthesizer(ENCODER).synthesize(query)
    assert {e.sentence_id for e in pro.evidence} <= {e.sentence_id for e in on_aspect}
    assert "supermarket" not in pro.text and "bar serves" not in pro.text


def test_distinct_indices() -> None:
    texts = [
        "The breakfast buffet was amazing, fresh fruit, eggs made to order.",
        "The big plus for us: the breakfast buffet was amazing, fresh fruit, eggs made to order.",
        "There is a supermarket around the corner for snacks &amp; water.",
        "There is a supermarket around the corner for snacks and water!",
        "Breakfast was cold.",
    ]
    assert distinct_indices(texts) == [0, 2, 4]
    assert distinct_indices(texts, limit=2) == [0, 2]
    assert distinct_indices(texts, keep=[1]) == [1, 2, 4]
    assert ENCODER is not None and np.isfinite(ENCODER.encode(["x"])).all()


def test_one_threshold_on_the_share_the_support_line_prints() -> None:
    # The room of entity 101: "mentioned in 163 of 240 reviews, 56% positive" with 48 negative
    # reviews (29%): its panel said "No cons" (48 of 140 opinionated, under the old 35%).
    room = Support(reviews=163, positive=92, negative=48, neutral=23, total_reviews=240)
    assert shown_sides(room) == [Polarity.PROS, Polarity.CONS]
    assert shown_sides(Support(reviews=26, positive=6, negative=20)) == [Polarity.CONS]
    assert shown_sides(Support(reviews=10, positive=0, negative=0, neutral=10)) == []
    neg = [ev(20 + i, f"The room was dirty and the carpet stained, visit {i}.", -0.5) for i in range(4)]
    pos = [ev(30 + i, f"The room was spacious and bright, visit {i}.", 0.6) for i in range(4)]
    query = item("room", pos[:2] + neg[:2], pos + neg, room)
    assert [h.polarity for h in ExtractiveSynthesizer(ENCODER).synthesize(query)] == shown_sides(room)


def test_a_sentence_the_lexicon_reads_the_other_way_is_no_quote() -> None:
    # Stored at -0.07 (the embedding head reads "noise" as a complaint), a praise in words.
    praise = ev(40, "The noise level was low even on a Saturday night, which we appreciated.", -0.07)
    noisy = [
        ev(41, "Very noisy rooms, the soundproofing is basically non existent.", -0.65),
        ev(42, "Bring earplugs, the noise level is unbearable if you face the street.", -0.32),
        ev(43, "The noise from the trams started at 5am.", -0.39),
    ]
    query = item("noise level", [praise, *noisy], [praise, *noisy], Support(reviews=23, positive=0, negative=23))
    (con,) = ExtractiveSynthesizer(ENCODER).synthesize(query)
    assert praise.sentence_id not in {e.sentence_id for e in con.evidence}
    assert "appreciated" not in con.text


def test_quotes_after_a_lead_in_are_the_same_statement() -> None:
    a = "What let it down: seriously, charging for wifi in a city hotel in 2023?"
    b = "My biggest gripe: seriously, charging for wifi in a city hotel in 2023?"
    assert same_statement(statement_tokens(a), statement_tokens(b))
    assert not same_statement(statement_tokens("Breakfast: great."), statement_tokens("Pool: great."))
    assert distinct_indices([a, b, "Breakfast was cold."]) == [0, 2]


def test_a_fact_read_slightly_positive_is_no_quote_of_a_pro() -> None:
    praise = [
        ev(50, "We were upgraded to a slightly larger room on arrival, which was nice.", 0.54),
        ev(51, "Spacious room with a separate seating area.", 0.43),
        ev(52, "The room was bright and spotless.", 0.7),
    ]
    fact = ev(53, "Our room was on the fourth floor at the end of the corridor.", 0.12)
    query = item("room", [*praise, fact], [*praise, fact], Support(reviews=40, positive=30, negative=2, neutral=8))
    (pro,) = ExtractiveSynthesizer(ENCODER, max_points=1).synthesize(query)
    assert "fourth floor" not in pro.text
    assert fact.sentence_id not in {e.sentence_id for e in pro.evidence}, pro.evidence
