"""Clause-level relevance of query key points: a sentence about several aspects keeps only its part about the query."""

from __future__ import annotations

import numpy as np
import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.models import Evidence, QueryEvidence, Support
from opinio_agents.synthesis.extractive import ExtractiveSynthesizer
from opinio_agents.synthesis.keypoint import aspect_segments, focused_text, to_key_point

MULTI = "Great hotel, friendly staff, and nice central location."


class Topics:
    """Cosine by topic words: 'hotel', 'staff' and 'location' are orthogonal, the rest shares a small common part."""

    name = "topics"

    def encode(self, texts):  # noqa: ANN001, ANN201
        rows = [[float(w in t.lower()) for w in ("hotel", "staff", "location")] + [0.1] for t in texts]
        out = np.array(rows)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def item_of(texts: list[str], query: str, encoder) -> QueryEvidence:  # noqa: ANN001
    evidence = [Evidence(sentence_id=f"7:{i}:0", text=t, score=1.0, sentiment=0.7) for i, t in enumerate(texts)]
    return QueryEvidence(
        query=query,
        evidence=evidence,
        support=Support(reviews=len(texts), positive=len(texts), total_reviews=len(texts)),
        vectors=np.asarray(encoder.encode(texts)),
        query_vector=np.asarray(encoder.encode([query]))[0],
    )


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        (MULTI, ["Great hotel", "friendly staff", "and nice central location"]),
        ("The staff was friendly, helpful, and prompt.", ["The staff was friendly, helpful, and prompt"]),
        ("The room was great, spacious and comfortable.", ["The room was great, spacious and comfortable"]),
        (
            "Very nice hotel, very very clean, staff was accommodating.",
            ["Very nice hotel, very very clean", "staff was accommodating"],
        ),
        ("The room was clean but the staff were rude.", ["The room was clean", "the staff were rude"]),
        ("Clean rooms.", ["Clean rooms"]),
        ("", []),
    ],
)
def test_aspect_segments(text: str, pieces: list[str]) -> None:
    assert aspect_segments(text) == pieces


def test_focused_text_keeps_the_pieces_near_the_best() -> None:
    pieces = ["Great hotel", "friendly staff", "and nice central location"]
    assert focused_text(pieces, [0.2, 0.1, 0.9], margin=0.2) == "Nice central location."
    assert focused_text(pieces, [0.8, 0.1, 0.9], margin=0.2) == "Great hotel, and nice central location."
    assert focused_text(pieces, [0.9, 0.85, 0.9], margin=0.2) is None  # every piece is about it: nothing to cut
    assert focused_text(["One piece"], [0.9], margin=0.2) is None
    # Every piece loosely related to the query: the margin alone keeps all, the ratio keeps the best.
    loose = ["The rooms are big", "the hotel is in a great location", "the staff is nice"]
    assert focused_text(loose, [0.15, 0.12, 0.3], margin=0.2) is None
    assert focused_text(loose, [0.15, 0.12, 0.3], margin=0.2, ratio=0.6) == "The staff is nice."


def test_a_cut_that_judges_nothing_is_not_made() -> None:
    # "the location" alone names the aspect but carries no opinion: the sentence stays whole.
    pieces = ["We were very pleased at the size of the room", "the price", "and the location"]
    assert focused_text(pieces, [0.2, 0.1, 0.9], margin=0.2) is None
    # An attribute adjective the sentiment lexicon lacks ("central") is a judgement too.
    assert focused_text(["We liked the price", "central location"], [0.2, 0.9], margin=0.2) == "Central location."


def test_attribute_adjectives_still_describe_the_piece_before() -> None:
    assert aspect_segments("The room was large, spacious, and quiet.") == ["The room was large, spacious, and quiet"]


def test_location_key_point_keeps_only_its_location_clause() -> None:
    encoder = Topics()
    item = item_of([MULTI] * 3, "location", encoder)
    (pro,) = ExtractiveSynthesizer(encoder).synthesize(item)  # type: ignore[arg-type]
    assert pro.text == "Nice central location."
    assert {e.text for e in pro.evidence} == {MULTI}  # the quote stays the review's whole sentence
    (whole,) = ExtractiveSynthesizer(encoder, clause_margin=None).synthesize(item)  # type: ignore[arg-type]
    assert whole.text == MULTI


def test_the_clause_kept_is_the_one_that_names_the_aspect_by_its_words() -> None:
    # "food" is in neither clause; "breakfast" also names it (support.aspect_forms), so that clause is the key point.
    text = "The room was tiny but the breakfast was excellent."
    item = item_of([text] * 3, "food", Topics())
    (pro,) = ExtractiveSynthesizer(Topics()).synthesize(item)  # type: ignore[arg-type]
    assert pro.text == "The breakfast was excellent."
    assert {e.text for e in pro.evidence} == {text}  # the quote stays the review's whole sentence
    (whole,) = ExtractiveSynthesizer(Topics(), aspect_clause=False).synthesize(item)  # type: ignore[arg-type]
    assert whole.text == text


def test_a_term_of_several_words_names_a_clause_only_whole() -> None:
    from opinio_agents.synthesis.keypoint import best_clause

    text = "The room was tiny but the room service was excellent"
    assert best_clause(text, "food", terms=["room service"]) == "the room service was excellent"
    assert best_clause("The room was tiny but the dinner was excellent", "food", terms=["room service"]) == (
        "The room was tiny but the dinner was excellent"  # "room" alone names no food clause
    )


def test_clause_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="clause_margin"):
        ExtractiveSynthesizer(Topics(), clause_margin=-0.1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="clause_ratio"):
        ExtractiveSynthesizer(Topics(), clause_ratio=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="focus_candidates"):
        ExtractiveSynthesizer(Topics(), focus_candidates=-1)  # type: ignore[arg-type]


def test_real_encoder_cuts_other_aspects_out_of_a_rooms_point(encoder) -> None:  # noqa: ANN001
    texts = [
        "Very nice hotel, very very clean, staff was accommodating.",
        "The room was spacious, the staff were helpful.",
        "Great location, spacious and quiet rooms, friendly staff.",
    ]
    item = item_of(texts, "rooms", encoder)
    (pro,) = ExtractiveSynthesizer(encoder, max_points=1).synthesize(item)
    assert "staff" not in pro.text.lower()
    assert {e.text for e in pro.evidence} <= set(texts)  # quotes verbatim
    (service,) = ExtractiveSynthesizer(encoder, max_points=1).synthesize(item_of(texts, "staff", encoder))
    assert "staff" in service.text.lower() and "room" not in service.text.lower()


def test_a_third_point_needs_reviewers_who_agree() -> None:
    from opinio_agents.synthesis.selection import supported_points

    # Candidates 0-5 back point 0, 6-8 back point 6 (three of them), only 9 backs point 9.
    rows = [[1.0, 0.0, 0.0]] * 6 + [[0.0, 1.0, 0.0]] * 3 + [[0.0, 0.0, 1.0]]
    vectors = np.array(rows)
    assert supported_points(vectors, [0, 6, 9], min_share=0.1) == [0, 6, 9]  # 1 of 10 is a share of 0.1
    assert supported_points(vectors, [0, 6, 9], min_share=0.1, min_count=3) == [0, 6]  # the third: one sentence
    assert supported_points(vectors, [0, 9, 6], min_share=0.1, min_count=3) == [0, 9, 6]  # the second is free
    assert supported_points(vectors, [0, 9, 6], min_share=0.1, min_count=3, count_from=1) == [0, 6]



@pytest.mark.parametrize(
    ("text", "query", "expected"),
    [
        (
            "The rooms are nice and big, the hotel is in a great location and the staff is nice.",
            "service",
            "The staff is nice.",
        ),
        ("Very nice hotel, very very clean, staff was accommodating.", "service", "Staff was accommodating."),
        (
            "This hotel was very nice and clean and the staff was very nice.",
            "rooms",
            "This hotel was very nice and clean.",
        ),
    ],
)
def test_real_encoder_keeps_the_part_about_the_query(encoder, text: str, query: str, expected: str) -> None:  # noqa: ANN001
    item = item_of([text] * 3, query, encoder)
    (pro,) = ExtractiveSynthesizer(encoder).synthesize(item)
    assert pro.text == expected
    assert {e.text for e in pro.evidence} == {text}  # the quote stays verbatim
    (whole,) = ExtractiveSynthesizer(encoder, clause_margin=None).synthesize(item)
    assert whole.text != expected


def test_oposum_benchmark_shares_count_content_words_by_label() -> None:
    from tests.benchmark_support import load_benchmark

    module = load_benchmark("oposum_aspects")
    own = ["The battery lasts all day."]
    others = ["The screen is dim.", "The battery cover feels cheap."]
    # content words: battery, lasts, screen, dim -> 2 in the battery segments, 2 only in the others
    assert module.shares("The battery lasts, the screen is dim.", own, others) == (0.5, 0.5)
    assert module.shares("The battery lasts all day.", own, others) == (1.0, 0.0)
    assert module.shares("It is.", own, others) is None


def test_a_piece_that_completes_or_describes_the_one_before_is_no_aspect_of_its_own() -> None:
    # SPACE dev aspect answers showed "The restaurant had excellent food and an efficiant." (a misspelt adjective
    # left its noun after the comma), "With the continuous smell of cooking grease in the lobby and elevators."
    # and "With an excellent buffet breakfast and a couple of dinners that were.".
    assert aspect_segments("The restaurant had excellent food and an efficiant, pleasant wait staff.") == [
        "The restaurant had excellent food and an efficiant, pleasant wait staff"
    ]
    assert aspect_segments("The restaurant was good, with a great buffet, and the staff was kind.") == [
        "The restaurant was good, with a great buffet",
        "the staff was kind",
    ]
    assert len(aspect_segments("Good food and dinners that were, once again, superb with fine service.")) == 1
    # Pieces that name something of their own still split.
    assert aspect_segments("Great hotel, friendly staff, and nice central location.") == [
        "Great hotel",
        "friendly staff",
        "and nice central location",
    ]


def test_a_framing_filler_is_no_part_of_a_key_point() -> None:
    # SPACE dev: "Of course, the complimentary wine the lobby was a nice touch." was a building answer's point.
    assert to_key_point("Of course, the wine in the lobby was a nice touch.", "lobby") == (
        "The wine in the lobby was a nice touch."
    )
    assert to_key_point("By the way - the breakfast was great.", "breakfast") == "The breakfast was great."
    assert to_key_point("So-so breakfast.", "breakfast") == "So-so breakfast."


def test_no_key_point_ends_inside_a_phrase() -> None:
    # SPACE dev 197424's cleanliness answer read "This is a nice clean." (the clause before ", but not too fancy,
    # Hotel located ..."), 182542's food answer "... a couple of dinners that were, once again.".
    sentence = "This is a nice clean, but not too fancy, Hotel located close to all attractions."
    assert to_key_point(sentence, "clean") == sentence
    assert focused_text(["This is a nice clean", "Hotel located close to the sights"], [0.6, 0.1], margin=0.1) is None
