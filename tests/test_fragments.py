"""Summary sentences that read as statements: no broken fragments, no cut that ends open (issue 21, OpoSum/FewSum)."""

from __future__ import annotations

import numpy as np
import pytest

from opinio_agents.hiro.highlights import summary_point
from opinio_agents.synthesis.keypoint import _open_condition, finite_verbs, has_verb, to_key_point
from opinio_agents.synthesis.selection import decimal_splits, reads_whole, select_summary


def test_a_noun_after_a_determiner_or_an_adjective_is_no_verb() -> None:
    # "feel" is a verb by the lemma tables, but "the cheap feel of the keyboard" names a thing.
    assert finite_verbs("the key noise and the cheap feel of the keyboard") == 0
    assert finite_verbs("the feel is cheap") == 1
    assert finite_verbs("The remote is cheap.") == 1  # "remote" can only be an adjective: "is" is still a verb


@pytest.mark.parametrize(
    ("sentence", "fragment"),
    [
        # OpoSum B0009VU7RG: the reviewer's "I do not like" went, the objects were left as the point.
        ("I do not like the key action, the key noise and the cheap feel of the keyboard.", "The key noise"),
        # OpoSum B000BXKIE4: "used" can be an adjective, so no verb is left after "disappointed in ... and".
        (
            "I have had this not even a week, and already I am disappointed in both the design and the materials "
            "used in construction.",
            "The materials used",
        ),
        # OpoSum B000GUDPDI: "the fact that ..." is the object of "like", no clause of its own.
        ("I do like the design of it and the fact that you get to choose how you place it in your ear.", "The fact"),
    ],
)
def test_the_reviewers_account_stays_when_what_follows_it_is_no_clause(sentence: str, fragment: str) -> None:
    assert not to_key_point(sentence, "").startswith(fragment)


def test_a_verb_that_can_be_a_noun_counts_after_its_subject() -> None:
    # OpoSum B002MUYP3E, B0009RF824: "glide" and "breaks" are nouns too, but follow a noun or an adverb here.
    assert has_verb("The fingers glide over the keys.")
    assert has_verb("The handle even breaks down.")
    assert not has_verb("Avi files.")
    assert reads_whole("The fingers glide over the keys.")


def test_either_as_an_adverb_ends_a_statement() -> None:
    assert reads_whole("The remote doesn't work very well either.")
    assert reads_whole("The earpiece is comfortable and battery life is not bad either.")


def test_the_reviewers_account_goes_when_a_clause_follows_it() -> None:
    assert to_key_point("We stayed three nights and the room was spotless.", "") == "The room was spotless."


def test_a_teaser_that_points_to_the_next_sentence_goes() -> None:
    # OpoSum B0009VU7RG: "This keyboard is indeed noisy, but you know what? I like that."
    assert summary_point("This keyboard is indeed noisy, but you know what?", sign=-1) == (
        "This keyboard is indeed noisy."
    )


def test_a_word_cap_does_not_end_on_a_verb_that_needs_its_infinitive_nor_inside_a_condition() -> None:
    # OpoSum B006B9GRM4: the 28-word cap ended "... so if you're using these while working out you may want."
    sentence = (
        "It's been a long known issue with all Motorola wireless headphones that they can't handle sweat so if "
        "you're using these while working out you may want to look else where."
    )
    point = to_key_point(sentence, "")
    assert point == "It's been a long known issue with all Motorola wireless headphones that they can't handle sweat."


def test_a_word_cap_does_not_end_inside_a_word_written_in_two() -> None:
    # SPACE 183645 (food answer, 24-word cap): "... you were able to bring home left." of "left overs".
    sentence = (
        "The hotel is in a great location to walk to restaurants for dinner and with the kitchenette you were able "
        "to bring home left overs if necessary."
    )
    point = to_key_point(sentence, "food", sign=1, max_words=24)
    assert point == "The hotel is in a great location to walk to restaurants for dinner."


@pytest.mark.parametrize(
    "text",
    ["Speedy delivery.", "Decent appearance.", "Great boots for the money.", "Highly recommended.", "Fits well.",
     "Love it.", "The perfect gift.", "It's a keeper.",
     # Zomato: a negation judges, an auxiliary that can be a noun is a verb, "both" after "and" counts a pair.
     "Not for the weight watchers.", "A must visit place.", "AC does not work properly.",
     "I keep asking for the kimchi.", "We had a fantastic time and loved the service and food both."],
)
def test_a_statement_or_a_judging_note_reads_whole(text: str) -> None:
    assert reads_whole(text)


@pytest.mark.parametrize(
    "text",
    [
        "Avi files.",  # OpoSum B004HYG9V4, of "you can't play. avi files."
        "The biggest issue with the image quality.",  # OpoSum B001TA6CAM: a subject with no verb
        "Or this a problem with the tv.",  # OpoSum B001TA6CAM
        "Power button, and keypad.",  # OpoSum B0009VU7RG: the tail of a list the segmenter split
        "These boots have both.",  # points to what the sentence before named
        "It's probably only worth that much.",
    ],
)
def test_a_broken_fragment_does_not_read_whole(text: str) -> None:
    assert not reads_whole(text)


def test_an_entity_wide_summary_takes_no_fragment() -> None:
    texts = [
        "The biggest issue with the image quality.", "The picture is sharp and bright.", "The remote is cheap.",
        "Setup was very easy.",
    ]
    vectors = np.array([[0.7, 0.7], [0.9, 0.44], [0.44, 0.9], [0.8, 0.6]])  # the fragment is the most central
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    chosen = select_summary(texts, vectors, [-0.6, 0.7, -0.5, 0.6], budget_words=40)
    assert 0 not in chosen
    assert chosen


def test_that_much_as_a_degree_ends_a_statement() -> None:
    assert reads_whole("The strip came off very quickly, but I didn't really care that much.")


def test_a_cut_that_opens_with_its_condition_keeps_it() -> None:
    # Backing off would leave the condition alone ("When the canister is about half full.").
    assert not _open_condition("When the canister is about half full dirt starts to build up in the path")
    assert not _open_condition("So if you have a tight budget")
    assert _open_condition("They can't handle sweat so if you're using these while working out")


def test_a_sentence_cut_inside_its_decimal_is_no_summary_candidate() -> None:
    # OpoSum B0009VU7RG "It has 2 USB 2. 0 ports", B009PJ2CQC "... for other 13. 3 inch laptop".
    texts = ["The keyboard has 2 USB 2.", "0 ports.", "The keys are quiet and firm.", "The case is sturdy and light."]
    vectors = np.array([[0.7, 0.7], [0.0, 1.0], [0.9, 0.44], [0.44, 0.9]])  # the split one is the most central
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert decimal_splits(texts) == {0}
    assert 0 not in select_summary(texts, vectors, [0.6, 0.0, 0.7, 0.6], budget_words=40, min_candidates=1)


def test_a_condition_that_has_its_main_clause_stays_in_a_cut() -> None:
    # Zomato: "... and when I came out of there I really felt hungry" has both clauses.
    assert not _open_condition("I went to the Himagiri Hospital and when I came out of there I really felt hungry")
    assert _open_condition("The service is amazing but when it's crowded")


def test_a_phrase_opener_stays_before_a_clause_with_an_auxiliary() -> None:
    # Zomato: "can" is a noun too, but here the phrase leads to "you can definitely count on the quality".
    text = "With the trusted name of Karachi sweets as the backers, you can definitely count on the quality."
    assert to_key_point(text, "").startswith("With the trusted name")


def test_a_bracketed_aside_is_one_piece() -> None:
    from opinio_agents.synthesis.keypoint import aspect_segments

    # SPACE dev: the comma pieces of an aside were aspects of their own ("coffee-maker").
    assert aspect_segments("The room was ordinary (2 queen-size beds, TV, fridge, microwave, small bathroom).") == [
        "The room was ordinary (2 queen-size beds, TV, fridge, microwave, small bathroom)"
    ]
    # SPACE dev: "and the bed" inside an aside made a subject clause of its own, "The bed wasn't like this."
    sentence = "I'm sure not all rooms were like this (in fact, I've stayed here before and the bed wasn't like this)."
    assert to_key_point(sentence, "room") != "The bed wasn't like this."


def test_a_word_cap_cuts_outside_an_aside_or_after_it() -> None:
    # SPACE dev: the cap cut at the aside's last comma, closed it and lost what came before the cut.
    sentence = (
        "We had two rooms on the same floor (one for us, one for kids age 7, 12 and 15) and they could not "
        "accomodate a move of both rooms to the same floor, so we were stuck."
    )
    assert to_key_point(sentence, "", max_words=24) == (
        "We had two rooms on the same floor (one for us, one for kids age 7, 12 and 15)."
    )
