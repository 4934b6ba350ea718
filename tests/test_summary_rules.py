"""Query-free summary rules of issue 21 item 1 (tiny inline fixtures, no model loaded): a review sentence whose
"I" was left out still tells a story, a summary sentence must say something by itself, and a key point loses
the connective that tied it to its review's previous sentence. Each test also shows the rule switched off."""

from __future__ import annotations

import dataclasses

import pytest

import opinio_agents.hiro.highlights as highlights
import opinio_agents.synthesis.selection as selection
from opinio_agents.hiro.highlights import aspect_highlights, summary_point
from opinio_agents.models import Highlight, Polarity, Support
from opinio_agents.synthesis.selection import is_narrative, select_summary, stands_alone, without_connective
from tests.selection_support import one_cluster_aspect, stored, unit


def pro(query: str, text: str, reviews: int) -> Highlight:
    """A PRO highlight of ``query`` backed by ``reviews`` reviews."""
    return Highlight(query=query, polarity=Polarity.PROS, text=text, support=Support(reviews=reviews))


def selection_settings(monkeypatch: pytest.MonkeyPatch, **changes: object) -> None:
    patched = dataclasses.replace(selection.SELECTION_SETTINGS, **changes)  # type: ignore[arg-type]
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", patched)
    monkeypatch.setattr(highlights, "SELECTION_SETTINGS", patched)


def test_a_sentence_without_its_i_still_tells_a_story() -> None:
    for story in (
        "Had to return them.",
        "Been here twice and found the food to be just ok.",
        "Bought this item for the Lenovo Yoga laptop.",
        "Had the jumbo char dog with slaw, grilled onions, and mustard.",
    ):
        assert is_narrative(story, implied_subject=True), story
        assert not is_narrative(story), story  # no I or we: the rule reads the left-out subject
    for opinion in (
        "Had a great time and the food was amazing.",  # it judges
        "Great service and friendly staff.",
        "The room was clean.",
    ):
        assert not is_narrative(opinion, implied_subject=True), opinion


# The story is the most central sentence: only the rule keeps it out of the summary.
STORY_TEXTS = [
    "Had to return them after a week.",
    "The boots are warm and comfortable.",
    "The sole is stiff and slippery.",
    "Nice color and a good fit.",
]
STORY_VECTORS = unit([[1.0, 0.3, 0.3, 0.3], [0.3, 1.0, 0.0, 0.0], [0.3, 0.0, 1.0, 0.0], [0.3, 0.0, 0.0, 1.0]])
STORY_SENTIMENTS = [-0.4, 0.7, -0.5, 0.6]


def test_select_summary_leaves_out_a_subjectless_story(monkeypatch: pytest.MonkeyPatch) -> None:
    picked = select_summary(STORY_TEXTS, STORY_VECTORS, STORY_SENTIMENTS, budget_words=30)
    assert 0 not in picked and picked
    selection_settings(monkeypatch, subjectless_story=False)
    assert 0 in select_summary(STORY_TEXTS, STORY_VECTORS, STORY_SENTIMENTS, budget_words=30)


def test_query_free_key_point_is_no_subjectless_story(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [
        stored(0, "Had the pool to ourselves every morning.", 0.3),
        stored(1, "Had the pool to ourselves most days.", 0.3),
        stored(2, "The pool is lovely and warm.", 0.6),
    ]
    embeddings = unit([[1.0, 0.0], [0.99, 0.1], [0.7, 0.7]])
    pool = one_cluster_aspect("pool", 3)
    (pro,) = aspect_highlights(pool, rows, embeddings=embeddings, max_points=1)
    assert pro.text == "The pool is lovely and warm."
    selection_settings(monkeypatch, subjectless_story=False)
    from opinio_agents.hiro import highlights  # and without must_judge, which leaves the story out too

    monkeypatch.setattr(
        highlights, "QUERY_FREE_SETTINGS", dataclasses.replace(highlights.QUERY_FREE_SETTINGS, must_judge=False)
    )
    (told,) = aspect_highlights(pool, rows, embeddings=embeddings, max_points=1)
    assert told.text.startswith("Had the pool")


def test_a_summary_sentence_says_something_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    assert stands_alone("Great price.") and stands_alone("The staff is friendly.")
    for fragment in ("Fast.", "Mike.", "Wow.", "Thanks.", "00 for junk.", "0 ports.", "unusual since I wear a B."):
        assert not stands_alone(fragment), fragment
    # a review's sign-off says nothing of the thing reviewed; a sentence that goes on does
    for sign_off in ("Good Luck.", "Thanks, enjoy!", "Hope this helps."):
        assert not stands_alone(sign_off), sign_off
    assert stands_alone("Good luck getting a phone call back.") and stands_alone("Happy with this purchase.")
    texts = ["Fast.", "The food is fresh and tasty.", "Friendly staff and good prices.", "Mike.", "Slow service."]
    vectors = unit([[1, 0.3, 0.3, 0.3, 0], [0.3, 1, 0, 0, 0], [0.3, 0, 1, 0, 0], [0.3, 0, 0, 0, 1], [0.3, 0, 0, 1, 0]])
    sentiments = [0.6, 0.7, 0.6, 0.5, -0.5]
    picked = [texts[i] for i in select_summary(texts, vectors, sentiments, budget_words=30)]
    assert "Fast." not in picked and "Mike." not in picked and "The food is fresh and tasty." in picked
    selection_settings(monkeypatch, min_content_words=0)
    assert "Fast." in [texts[i] for i in select_summary(texts, vectors, sentiments, budget_words=30)]


def test_key_point_loses_a_leading_connective(monkeypatch: pytest.MonkeyPatch) -> None:
    assert summary_point("Finally, the pool was great!!") == "The pool was great."
    assert summary_point("Additionally the breakfast is included.") == "The breakfast is included."
    assert without_connective("Last but not least, the staff was lovely.") == "The staff was lovely."
    # SPACE dev: "Other than that the staff were friendly and helpful." opened a summary.
    assert without_connective("Other than that the staff were kind.") == "The staff were kind."
    assert without_connective("Also, the pool is great.") == "The pool is great."
    for kept in ("Well made and sturdy.", "Besides the noise, the room was fine.", "Finally."):
        assert without_connective(kept) == kept, kept
    monkeypatch.setattr(
        highlights, "QUERY_FREE_SETTINGS", dataclasses.replace(highlights.QUERY_FREE_SETTINGS, drop_connectives=False)
    )
    assert summary_point("Finally, the pool was great!!") == "Finally, the pool was great."


def test_small_entity_summary_prefers_the_thing_as_subject() -> None:
    from opinio_agents.synthesis.selection import SELECTION_SETTINGS, SelectionWeights, states_the_thing

    assert states_the_thing("This place is a small family owned Thai restaurant.")
    assert states_the_thing("It fits well.") and not states_the_thing("Love this place!")
    texts = ["Love this little kettle, so cute.", "The kettle is cute and pours well.", "Handle melted fast."]
    vectors = unit([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # the first two as central
    sentiments = [0.7, 0.7, -0.5]
    weights = SELECTION_SETTINGS.small_entity_weights
    assert weights.thing_subject > 0
    picked = select_summary(texts, vectors, sentiments, budget_words=8, weights=weights)
    assert picked[0] == 1  # the kettle as the subject, not the reviewer's exclamation
    plain = SelectionWeights(**{**dataclasses.asdict(weights), "thing_subject": 0.0})
    assert select_summary(texts, vectors, sentiments, budget_words=8, weights=plain)[0] == 0


def test_small_entity_summary_prefers_the_clearer_opinion() -> None:
    from opinio_agents.synthesis.selection import SELECTION_SETTINGS, SelectionWeights

    # two sentences alike in every other respect (OpoSum: a mild "Sound quality is selective." gave way to
    # "Sound is terrible."); the clearer opinion is chosen, and without the weight the order decides
    texts = ["The sound quality is selective.", "The sound quality is terrible.", "The case is nice."]
    vectors = unit([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    sentiments = [-0.2, -0.8, 0.5]
    weights = SELECTION_SETTINGS.small_entity_weights
    assert weights.sentiment > 0
    picked = select_summary(texts, vectors, sentiments, budget_words=5, weights=weights)
    assert picked == [1], picked
    plain = SelectionWeights(**{**dataclasses.asdict(weights), "sentiment": 0.0})
    assert select_summary(texts, vectors, sentiments, budget_words=5, weights=plain) == [0]


def test_a_query_free_key_point_never_reads_as_the_other_side(monkeypatch: pytest.MonkeyPatch) -> None:
    # OpoSum: "The item is well made, the fit is comfortable but the sound quality is extremely poor" (a positive
    # sentence) gave the sound quality PRO its clause about sound quality, a complaint.
    rows = [
        stored(0, "The item is well made, the fit is comfortable but the sound quality is extremely poor.", 0.6),
        stored(1, "The item is well made, the case is lovely but the sound quality is very poor.", 0.6),
        stored(2, "The sound quality is clear and loud.", 0.5),
    ]
    embeddings = unit([[1.0, 0.0], [0.99, 0.1], [0.7, 0.7]])
    sound = one_cluster_aspect("sound quality", 3)
    (pro,) = aspect_highlights(sound, rows, embeddings=embeddings, max_points=1)
    assert pro.text == "The sound quality is clear and loud.", pro.text
    selection_settings(monkeypatch, points_agree=False)
    (told,) = aspect_highlights(sound, rows, embeddings=embeddings, max_points=1)
    assert "poor" in told.text


def test_a_query_free_side_of_bare_phrases_gets_no_highlight() -> None:
    rows = [stored(0, "Waiting time.", 0.3), stored(1, "Waiting time!", 0.3), stored(2, "Waiting time...", 0.3)]
    embeddings = unit([[1.0, 0.0], [0.99, 0.1], [0.98, 0.2]])
    wait = one_cluster_aspect("waiting time", 3)
    assert aspect_highlights(wait, rows, embeddings=embeddings, max_points=1) == []


def test_a_summary_never_says_one_sentence_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    # Reader's audit: two highlights sharing a key point ("Food was tasty." under food and under taste) put it
    # twice in one summary; the other sentences of each stay, and paraphrases are not this rule's business.
    from opinio_agents.synthesis.selection import SummaryLayout, summary_of

    selection_settings(monkeypatch, summary_voice=False)  # every point of a highlight text is a candidate here

    shown = [
        pro("food", "Food was tasty. Good portions.", 40),
        pro("taste", "Food was tasty! Spicy curries. ? ? ?.", 30),
        pro("staff", "Food was tasty.", 20),
    ]
    assert summary_of(shown) == "Food was tasty. Good portions. Spicy curries."
    layout = SummaryLayout(sentences=[h.text for h in shown])
    assert summary_of(shown, layout=layout) == "Food was tasty. Good portions. Spicy curries."


def test_a_summary_paragraph_states_a_highlight_in_the_summaries_voice(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 21 item 1: a highlight gives the paragraph its key points that speak of the hotel in the third person,
    # else its main point alone; a reviewer's shorthand stays in the highlight and its words go to the next aspect.
    from opinio_agents.synthesis.selection import in_summary_voice, summary_of

    shown = [
        pro("staff", "The staff were friendly and helpful. All the staff very helpful and efficient.", 60),
        pro("location", "Great location for venturing downtown. The location is central.", 50),
        pro("room", "Very clean rooms. We had a superior room that was beautifully decorated.", 40),
        pro("breakfast", "The breakfast buffet is very good.", 30),
    ]
    assert summary_of(shown, budget_words=25) == (
        "The staff were friendly and helpful. The location is central. Very clean rooms. "
        "The breakfast buffet is very good."
    )
    assert in_summary_voice("Loved it. Great staff.") == "Loved it."
    assert in_summary_voice("It was clean. The beds were comfy.") == "It was clean. The beds were comfy."
    selection_settings(monkeypatch, summary_voice=False)
    assert summary_of(shown, budget_words=25) == (
        "The staff were friendly and helpful. All the staff very helpful and efficient. "
        "Great location for venturing downtown. The location is central. Very clean rooms."
    )  # the breakfast does not fit


def test_an_abbreviation_inside_a_key_point_does_not_end_it() -> None:
    # SPACE dev 1064610's summary read "The location is great, close to old town, shopping on st." once the
    # paragraph took a highlight's points apart at every full stop ("shopping on st. catherine").
    from opinio_agents.synthesis.selection import in_summary_voice, key_points_of, points_that_fit

    text = "The location is great, close to old town, shopping on st. catherine and the metro. Great location."
    assert key_points_of(text) == [
        "The location is great, close to old town, shopping on st. catherine and the metro.",
        "Great location.",
    ]
    assert in_summary_voice(text) == key_points_of(text)[0]
    assert points_that_fit(text, 16) == key_points_of(text)[0]


SIDE_TEXTS = ["The bag looks great.", "The bag is well made.", "The bag is nice.", "The strap is short.",
              "The zipper broke.", "The zipper snapped."]
SIDE_VECTORS = unit([[1, 0.1, 0], [1, 0, 0.1], [1, 0.05, 0.05], [0.7, 0, 0.7], [0, 1, 0.3], [0.1, 1, 0.2]])
SIDE_SENTIMENTS = [0.7, 0.6, 0.6, -0.6, -0.6, -0.6]


def test_centrality_within_a_side_favours_the_shared_complaint() -> None:
    from opinio_agents.synthesis.selection import SELECTION_SETTINGS, score_candidates

    weights = SELECTION_SETTINGS.small_entity_weights
    whole = score_candidates(SIDE_TEXTS, SIDE_VECTORS, sentiments=SIDE_SENTIMENTS, weights=weights)
    sides = [s > 0 for s in SIDE_SENTIMENTS]
    by_side = score_candidates(SIDE_TEXTS, SIDE_VECTORS, sentiments=SIDE_SENTIMENTS, weights=weights, sides=sides)
    # entity-wide, the lone strap complaint sits near the praise; among the complaints the two zipper ones agree
    assert whole[3] > max(whole[4], whole[5])
    assert by_side[3] < min(by_side[4], by_side[5])


def test_small_entity_scores_sides_apart_only_where_most_reviews_complain(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    real = selection.score_candidates

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("sides"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(selection, "score_candidates", spy)
    every = ["a", "b", "c", "a", "b", "c"]  # all three reviews complain
    select_summary(SIDE_TEXTS, SIDE_VECTORS, SIDE_SENTIMENTS, budget_words=8, reviews=every)
    few = ["a", "b", "c", "a", "a", "a"]  # one of three
    select_summary(SIDE_TEXTS, SIDE_VECTORS, SIDE_SENTIMENTS, budget_words=8, reviews=few)
    assert seen[0] == [s > 0 for s in SIDE_SENTIMENTS] and seen[1] is None
    selection_settings(monkeypatch, side_centrality_share=1.1)
    select_summary(SIDE_TEXTS, SIDE_VECTORS, SIDE_SENTIMENTS, budget_words=8, reviews=every)
    assert seen[2] is None


def test_small_entity_summary_says_an_opinion_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # same_opinion misses the pair ("perfectly sized" / "well padded"), says_again reads one judged thing
    texts = ["The bag is sturdy and perfectly sized.", "The bag is sturdy and well padded.", "The zipper broke."]
    vectors = unit([[1, 0, 0], [0.6, 0.8, 0], [0, 0, 1]])
    sentiments = [0.7, 0.6, -0.6]
    assert select_summary(texts, vectors, sentiments, budget_words=30) == [0, 2]
    selection_settings(monkeypatch, summary_repeats=False)
    assert 1 in select_summary(texts, vectors, sentiments, budget_words=30)
