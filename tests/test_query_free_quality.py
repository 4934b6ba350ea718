"""Query-free key points: one sentence per opinion, and never a first-person aside that only names the aspect."""

from __future__ import annotations

from dataclasses import replace

import pytest

from opinio_agents.hiro.aspects import DiscoveredAspect, HiroCluster
from opinio_agents.hiro.highlights import aspect_highlights
from opinio_agents.synthesis.selection import names_only_in_passing, without_repeats
from tests.selection_support import stored, unit


def aspect_of(name: str, n: int, forms: list[str], *, positive: int | None = None) -> DiscoveredAspect:
    pos = n if positive is None else positive
    return DiscoveredAspect(
        name, n, pos, n - pos, 0, n, 1.0, sentence_indices=list(range(n)), term_indices=list(range(n)),
        clusters=[HiroCluster(subpaths=[(1,)], indices=list(range(n)), score=1.0)], forms=forms,
    )


def test_without_repeats_keeps_one_sentence_per_opinion() -> None:
    # issue 21: "The location of this hotel was awesome. This hotel was in a great location in Rome."
    texts = [
        "The location of this hotel was awesome.",
        "This hotel was in a great location in Rome.",
        "The rooms were small.",
        "The staff was friendly and helpful.",
        "The staff go out of their way to be friendly and helpful.",
    ]
    assert without_repeats(texts, [0, 1, 2, 3, 4]) == [1, 2, 4]  # the fuller one, in the first one's place
    assert without_repeats(texts, [2, 3]) == [2, 3]  # different claims stay
    assert without_repeats(["The location was great.", "The location was noisy."], [0, 1]) == [0, 1]


def test_query_free_highlight_states_an_opinion_once() -> None:
    rows = [
        stored(0, "The location of this hotel was awesome.", 0.7),
        stored(1, "This hotel was in a great location in Rome.", 0.7),
        stored(2, "The location is close to the metro and the old town.", 0.5),
    ]
    embeddings = unit([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])
    aspect = aspect_of("location", 3, ["location"])
    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, budget_words=40)
    assert "awesome" not in pro.text and pro.text.count("location") == 1, pro.text
    assert pro.text == "This hotel was in a great location in Rome."
    assert [e.text for e in pro.evidence][:1] == ["This hotel was in a great location in Rome."]
    (both,) = aspect_highlights(
        aspect, rows, embeddings=embeddings, max_points=2, budget_words=40, drop_repeats=False
    )
    assert both.text.count("location") == 2  # the rule, not the selection, removed the repeat


def test_names_only_in_passing() -> None:
    assert names_only_in_passing("My partner had a cold so we spent more time in the room than planned.", ["room"])
    assert names_only_in_passing("There is a pharmacy and a cash machine just across the road.", ["road", "street"])
    assert names_only_in_passing("I would suggest asking for a room on a higher floor.", ["room"])
    assert not names_only_in_passing("The room was spotless.", ["room"])
    assert not names_only_in_passing("We loved the room, it was spotless.", ["room"])
    assert not names_only_in_passing("We stayed in the room and the room was tiny.", ["room"])  # one use judges it
    assert not names_only_in_passing("Quiet and relaxing.", ["room"])  # no use at all


def test_query_free_highlight_never_shows_a_first_person_aside_about_its_aspect() -> None:
    # The sample's room CON: the most central sentence names the room only as where the story happens.
    rows = [
        stored(0, "My partner had a cold for two days so we spent more time in the room than planned.", -0.5),
        stored(1, "We spent the whole afternoon in the room because of the rain.", -0.4),
        stored(2, "Very noisy rooms, the soundproofing is basically non existent.", -0.6),
        stored(3, "The room was tiny and dark.", -0.5),
    ]
    embeddings = unit([[1.0, 0.0, 0.0], [0.98, 0.2, 0.0], [0.7, 0.0, 0.71], [0.75, 0.1, 0.65]])
    aspect = aspect_of("room", 4, ["room"], positive=0)
    (con,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, budget_words=40)
    assert "cold" not in con.text and "afternoon" not in con.text, con.text
    assert "noisy rooms" in con.text.lower() or "tiny and dark" in con.text
    # nor are they quoted: a quote is what the reader checks the CON against
    assert not any("cold" in e.text or "afternoon" in e.text for e in con.evidence), con.evidence


def test_query_free_quotes_name_the_aspect_state_the_side_and_are_said_once() -> None:
    # The sample's room PRO quoted "Keep in mind it is a big place, ..." three times, and "OUR ROOM WAS ON THE
    # FOURTH FLOOR" (no side): the verifier read its evidence as about "place" (aspect relevance 0).
    rows = [
        stored(0, "The rooms are spacious and bright.", 0.6),
        stored(1, "Keep in mind it is a big place, so there is a bit of walking from the entrance to the rooms.", 0.3),
        stored(2, "Keep in mind it is a big place, so there is a bit of walking from the entrance to the rooms!", 0.3),
        stored(3, "Our room was on the fourth floor.", 0.12),
        stored(4, "Lovely big room with a balcony.", 0.7),
        stored(5, "Lovely big room with a balcony!!", 0.7),
        stored(6, "The hotel restaurant was superb.", 0.8),
    ]
    embeddings = unit([[1.0, 0.0], [0.99, 0.1], [0.99, 0.1], [0.98, 0.2], [0.9, 0.4], [0.9, 0.4], [0.2, 1.0]])
    aspect = aspect_of("room", 7, ["room"])
    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=1, budget_words=40)
    quoted = [e.text for e in pro.evidence]
    assert quoted[0] in pro.text or pro.text in quoted[0]  # its key point's own sentence first
    assert not any("big place" in q or "fourth floor" in q or "restaurant" in q for q in quoted), quoted
    assert sum("balcony" in q for q in quoted) == 1, quoted


def test_query_free_highlight_never_shows_a_point_that_only_passes_by_its_aspect() -> None:
    # The sample's room PRO: advice about walking to the rooms judges nothing about them.
    rows = [
        stored(0, "Keep in mind it is a big place, so there is a bit of walking from the entrance to the rooms.", 0.2),
        stored(1, "There is a long walk from the lift to the rooms.", 0.1),
        stored(2, "The rooms are spacious and bright.", 0.6),
    ]
    embeddings = unit([[1.0, 0.0], [0.98, 0.2], [0.8, 0.6]])
    aspect = aspect_of("room", 3, ["room"])
    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, budget_words=40)
    assert pro.text == "The rooms are spacious and bright.", pro.text


def test_judged_point_rejection_needs_a_second_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    # The opinion-target check reads neither point as an opinion about noise. "Quiet and relaxing." has
    # no second signal against it (not first person, not a place), so it stays; the first-person
    # account goes. (Without must_judge, which would leave the account out before the check.)
    from opinio_agents.hiro import highlights

    monkeypatch.setattr(highlights, "QUERY_FREE_SETTINGS", replace(highlights.QUERY_FREE_SETTINGS, must_judge=False))
    rows = [
        # (Not "... another room with less noise ...": a PRO naming a nuisance must praise, pro_problem_praises.)
        stored(0, "We asked for another room that was quiet before we got there.", 0.3),
        stored(1, "Quiet and relaxing.", 0.6),
    ]
    embeddings = unit([[1.0, 0.0], [0.6, 0.8]])
    aspect = aspect_of("noise", 2, ["noise", "quiet"])
    unchecked = aspect_highlights(
        aspect, rows, embeddings=embeddings, max_points=2, budget_words=40, drop_narrative=False
    )
    assert "another room" in unchecked[0].text  # the account is central without the check
    (pro,) = aspect_highlights(
        aspect, rows, embeddings=embeddings, max_points=2, budget_words=40, judged=lambda f, t: [False] * len(t),
        drop_narrative=False,
    )
    assert pro.text == "Quiet and relaxing.", pro.text
    (told,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, budget_words=40)
    assert told.text == "Quiet and relaxing."  # the account is narrative (is_narrative): never a key point


def test_query_free_key_points_state_opinions_while_the_side_has_one() -> None:
    # SPACE dev: "The breakfast buffet wasn't included in the price." (a fact) led a breakfast highlight over
    # "The breakfast buffet is expensive but worth it."; with no opinion on the side, the fact stays. (That
    # sentence itself now reads as praise to the lexicon, so no CON point: SelectionSettings.points_agree.)
    rows = [
        stored(0, "The breakfast buffet wasn't included in the price.", -0.3),
        stored(1, "The breakfast buffet was not included in our rate.", -0.3),
        stored(2, "The breakfast buffet is overpriced for what you get.", -0.2),
    ]
    embeddings = unit([[1.0, 0.0], [0.99, 0.1], [0.8, 0.6]])
    aspect = aspect_of("breakfast buffet", 3, ["breakfast buffet"], positive=0)
    (con,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=1, budget_words=40)
    assert con.text == "The breakfast buffet is overpriced for what you get.", con.text
    (fact,) = aspect_highlights(aspect_of("breakfast buffet", 2, ["breakfast buffet"], positive=0), rows[:2],
                                embeddings=embeddings[:2], max_points=1, budget_words=40)
    assert "not included" in fact.text or "wasn't included" in fact.text
