"""Tests for opinio_agents.text.segment."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opinio_agents.models import Entity, Review
from opinio_agents.text.segment import MAX_WORDS, segment_entity, segment_review, split_sentences


def texts(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Great stay!  Will return.", ["Great stay!", "Will return."]),
        ("Room was clean.Staff rude!!! Fine.", ["Room was clean.", "Staff rude!!!", "Fine."]),
        (
            "We stayed on St. Charles Ave. for 3.5 nights. Mr. Smith and Dr. Lee were great.",
            ["We stayed on St. Charles Ave. for 3.5 nights.", "Mr. Smith and Dr. Lee were great."],
        ),
        ("Coffee was $4.50 each. Rated 3.5 stars.", ["Coffee was $4.50 each.", "Rated 3.5 stars."]),
        ("Desk open 24/7. Free wi-fi.", ["Desk open 24/7.", "Free wi-fi."]),
        (
            "Check-in at 3 p.m. was smooth. We arrived at 10 a.m. The room was ready.",
            ["Check-in at 3 p.m. was smooth.", "We arrived at 10 a.m.", "The room was ready."],
        ),
        (
            "Great views e.g. the bay and i.e. the bridge. Nice.",
            ["Great views e.g. the bay and i.e. the bridge.", "Nice."],
        ),
        (
            "See https://Example.com/Path.Html for info. Or mail john.doe@mail.com. Thanks!",
            [
                "See https://Example.com/Path.Html for info.",
                "Or mail john.doe@mail.com.",
                "Thanks!",
            ],
        ),
        (
            "Wow?! Really?! ok... but not great... Whatever.",
            ["Wow?!", "Really?!", "ok... but not great...", "Whatever."],
        ),
        (
            "Loved it \U0001f600 Will come back \U0001f60d\U0001f60d",
            ["Loved it \U0001f600", "Will come back \U0001f60d\U0001f60d"],
        ),
        (
            "it was good. the staff were nice. i liked it",
            ["it was good.", "the staff were nice.", "i liked it"],
        ),
        (
            "Room no. 5 was fine. Would I return? No. The bed was bad.",
            ["Room no. 5 was fine.", "Would I return?", "No.", "The bed was bad."],
        ),
        ("Thanks J. Smith for the help.", ["Thanks J. Smith for the help."]),
        ('I said "Great hotel!" She agreed.', ['I said "Great hotel!"', "She agreed."]),
        ("Towels, soap etc. The pool was warm.", ["Towels, soap etc.", "The pool was warm."]),
        ("Towels, soap etc. and more", ["Towels, soap etc. and more"]),
    ],
)
def test_split_cases(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_line_breaks_and_paragraphs() -> None:
    text = "Line one\nline continues here.\nNew line here\n\n  New para"
    assert texts(text) == ["Line one\nline continues here.", "New line here", "New para"]


def test_bullets_are_split_and_markers_stripped() -> None:
    text = "Pros:\n- great location\n- friendly staff\n* cheap\n\u2022 quiet\n"
    text += "1. clean rooms\n2) big bed"
    assert texts(text) == [
        "Pros:",
        "great location",
        "friendly staff",
        "cheap",
        "quiet",
        "clean rooms",
        "big bed",
    ]


def test_html_remnants_keep_original_offsets() -> None:
    text = "Nice room<br/>Bad food<br />great pool &amp; spa.<p>Done</p>"
    spans = split_sentences(text)
    assert spans == [(0, 9), (14, 22), (28, 49), (52, 56)]
    assert [text[s:e] for s, e in spans] == [
        "Nice room",
        "Bad food",
        "great pool &amp; spa.",
        "Done",
    ]


def test_exact_offsets_and_whitespace_stripping() -> None:
    text = "  Great stay!\t\n\n Will return.  "
    assert split_sentences(text) == [(2, 13), (17, 29)]


@pytest.mark.parametrize(
    "text", ["", "   ", "...  !!! <br/> &nbsp; ", "\U0001f600\U0001f600", "- \n* \n"]
)
def test_no_sentence_without_alphanumerics(text: str) -> None:
    assert split_sentences(text) == []


def test_every_span_is_stripped_and_alphanumeric() -> None:
    text = "A.  b!!  \n\n - c?\n<br>d 24/7.e.Fine \U0001f600 Yes"
    for start, end in split_sentences(text):
        piece = text[start:end]
        assert piece == piece.strip() and any(ch.isalnum() for ch in piece)


def test_run_on_sentence_split_at_semicolon_and_but() -> None:
    first = " ".join(["room"] * (MAX_WORDS - 5))
    second = " ".join(["bed"] * 30)
    third = " ".join(["bath"] * 40)
    text = f"{first}; {second} but {third}"
    pieces = texts(text)
    # The second piece has 71 words (> MAX_WORDS), so it is split before "but".
    assert pieces == [f"{first};", second, "but " + third]


def test_long_sentence_without_clause_boundary_is_kept() -> None:
    text = " ".join(["word"] * (MAX_WORDS + 20)) + "."
    assert texts(text) == [text]


def test_segment_review_builds_sentences_with_metadata() -> None:
    review = Review(
        review_id=3,
        text="Spotless room. Rude staff!",
        rating=4,
        helpful_votes=2,
        publication_date="2020-05-06",
        user_review_posted=11,
        user_cities_visited=5,
        user_helpful_votes=9,
    )
    sentences = segment_review(7, review)
    assert [s.sentence_id for s in sentences] == ["7:3:0", "7:3:1"]
    second = sentences[1]
    assert (second.text, second.start, second.end, second.index) == ("Rude staff!", 15, 26, 1)
    assert review.text[second.start : second.end] == second.text
    assert second.entity_id == "7" and second.review_id == "3"
    assert second.rating == 4.0 and second.helpful_votes == 2 and second.user_reviews_posted == 11
    assert second.user_cities_visited == 5 and second.user_helpful_votes == 9
    assert (
        second.publication_date is not None and second.publication_date.isoformat() == "2020-05-06"
    )


def test_segment_entity_keeps_review_order() -> None:
    entity = Entity(
        entity_id="h1",
        user_reviews=[{"review_id": "a", "text": "One. Two."}, {"review_id": "b", "text": "Three"}],
    )
    assert [(s.sentence_id, s.text) for s in segment_entity(entity)] == [
        ("h1:a:0", "One."),
        ("h1:a:1", "Two."),
        ("h1:b:0", "Three"),
    ]


def test_a_terminator_inside_a_short_aside_ends_no_sentence() -> None:
    # SPACE dev: "... espresso bar (delicious breakfast! ), sports bar and wine shop ..." was cut in two at the "!".
    def texts(text: str) -> list[str]:
        return [text[a:b] for a, b in split_sentences(text)]

    aside = "The bar (delicious breakfast! ), sports bar and wine shop are classy. The staff (so kind!) helped us."
    assert texts(aside) == [
        "The bar (delicious breakfast! ), sports bar and wine shop are classy.",
        "The staff (so kind!) helped us.",
    ]
    # An aside that ends its sentence, or holds a sentence of its own, still splits.
    assert texts("A creperie for breakfast (yum!) The pool was great.") == [
        "A creperie for breakfast (yum!)",
        "The pool was great.",
    ]
    assert texts("Great (loved it! The staff were nice) ok.")[0] == "Great (loved it!"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Zomato: the key point "Ample parking.coordination between serving boys / service has scope ..." was one
        # "sentence" of two.
        (
            "Awesome food, ample parking....coordination between serving boys has scope for improvement.",
            ["Awesome food, ample parking....", "coordination between serving boys has scope for improvement."],
        ),
        ("The food was good.we loved the biryani", ["The food was good.", "we loved the biryani"]),
        (
            "Food tasts good.. satisfactory.... good ambience",
            ["Food tasts good..", "satisfactory....", "good ambience"],
        ),
        # Carried on: a continuation word, a spaced three-dot ellipsis, a name with a dot, abbreviations.
        ("It was ok... but not great.", ["It was ok... but not great."]),
        ("Nice..and clean room.", ["Nice..and clean room."]),
        ("In hindsight... size isn't everything.", ["In hindsight... size isn't everything."]),
        ("Healthy food calls for eat.fit.. good packing", ["Healthy food calls for eat.fit..", "good packing"]),
        ("Starters e.g.the kebabs and Mr.khan served us", ["Starters e.g.the kebabs and Mr.khan served us"]),
        ("Version v1.2 works.", ["Version v1.2 works."]),
    ],
)
def test_informal_full_stops_end_a_sentence_before_a_lower_case_word(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Issue 21: a single period glued to the next word is a full stop that lost its space, even before a word
        # that carries a sentence on after "..": SPACE dev "roof top pool and terrace.with stunning views", Zomato
        # "food arrives.but food taste was too good", Alexa "front door, etc.the video chat".
        (
            "Amazing roof top pool and terrace.with stunning views over the port.",
            ["Amazing roof top pool and terrace.", "with stunning views over the port."],
        ),
        (
            "It takes time when the food arrives.but food taste was too good.",
            ["It takes time when the food arrives.", "but food taste was too good."],
        ),
        (
            "Front yard, front door, etc.the video chat is cool.",
            ["Front yard, front door, etc.", "the video chat is cool."],
        ),
        # Still one sentence: two dots before a continuation, a spaced "etc." before lower case.
        ("Nice..and clean room.", ["Nice..and clean room."]),
        ("Towels, soap etc. and more", ["Towels, soap etc. and more"]),
    ],
)
def test_a_glued_single_period_ends_a_sentence_before_any_lower_case_word(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I feel good eating from eat.fit bc I can see the calories.",  # a brand written with a dot (dotted_names)
        "Dont waste money. No.of varieties is small.",  # before_number abbreviations glued to a word
        "For mocktails there is no.proper details.",
        "We booked on wotif.nz and it was cheap.",  # a web address (tlds)
        "They sent the menu.pdf with prices.",  # a file name (file_extensions)
        "See www.x.co.uk for more. Or mail john.doe@mail.com now.",
        "Starters e.g.the kebabs and Mr.khan and mr.salim served us at 10 a.m.the next day.",
        "We reached St.louis at 5.30pm and rated it 4.5 stars.",
        "A coffee shop in.every.corner of the street.",
    ],
)
def test_traps_keep_their_glued_period(text: str) -> None:
    spans = split_sentences(text)
    dots = [m.start() + 1 for m in re.finditer(r"[A-Za-z]\.[a-z]", text)]
    assert not {end for _, end in spans} & {dot + 1 for dot in dots}, texts(text)


_PIECES = st.sampled_from(
    [
        "good", "food", "but", "and", "with", "etc", "no", "eat", "fit", "Mr", "e.g", "a.m", "com", "pdf", "St",
        "Staff", "The", "4", "5.30pm", "3.5", "www", "@", "(", ")", "...", "..", ".", "!", "?", "!!", ";", ",",
        " ", " ", " ", "\n", "\n\n", "<br/>", "- ", "\U0001f600", "&amp;", "'", '"',
    ]
)
_REVIEW_TEXT = st.one_of(st.lists(_PIECES, max_size=40).map("".join), st.text(max_size=120))


@settings(max_examples=400, deadline=None)
@given(_REVIEW_TEXT)
def test_spans_always_slice_the_original_text(text: str) -> None:
    spans = split_sentences(text)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        piece = text[start:end]
        assert piece == piece.strip() and any(ch.isalnum() for ch in piece)
        previous_end = end


#: Plain review words of two letters or more, continuation words among them: no abbreviation, name or web address.
_PLAIN_WORDS = st.sampled_from(
    ["good", "food", "but", "and", "with", "especially", "from", "the", "staff", "was", "nice", "room", "very", "to"]
)
_PLAIN_SENTENCES = st.lists(st.lists(_PLAIN_WORDS, min_size=2, max_size=8).map(" ".join), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(_PLAIN_SENTENCES, st.lists(st.booleans(), min_size=4, max_size=4))
def test_a_stop_that_lost_its_space_ends_its_sentence(sentences: list[str], glued: list[bool]) -> None:
    """Sentences of plain words end at each full stop, whether or not its space was typed."""
    text = "".join(
        sentence + "." + ("" if index < len(glued) and glued[index] else " ")
        for index, sentence in enumerate(sentences)
    ).rstrip()
    assert texts(text) == [sentence + "." for sentence in sentences]
