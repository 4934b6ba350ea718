"""Key-point selection (synthesis/selection.py) on tiny inline fixtures: no model is loaded."""

from __future__ import annotations

import numpy as np
import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.models import Evidence, Highlight, Polarity, QueryEvidence, Sentence, Support
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.synthesis.extractive import ExtractiveSynthesizer
from opinio_agents.synthesis.selection import (
    SelectionWeights,
    SummaryItem,
    compose_summary,
    expand_pool,
    genericity,
    lead_scores,
    lexical_centrality,
    own_word_share,
    score_candidates,
    select_points,
    support_pool,
)
from opinio_agents.text.preprocess import tokenize_for_bm25
from tests.selection_support import one_cluster_aspect, stored, unit


class FakeEncoder:
    """Bag-of-keywords vectors: enough to test wiring without MiniLM."""

    dims = ("staff", "friendly", "room", "bed", "wifi", "night")

    def encode(self, texts):  # noqa: ANN001, ANN201
        rows = []
        for text in texts:
            low = text.lower()
            rows.append([1.0 + low.count(w) if w in low else 0.05 for w in self.dims])
        return unit(rows)


def test_genericity_prefers_general_statements() -> None:
    general = genericity("The staff were friendly and helpful.")
    anecdote = genericity("On our second night we asked Mike at reception for 2 extra towels.")
    assert general > anecdote
    assert genericity("") == 0.0
    assert genericity("Good.") < general  # too short to state an opinion well
    long = " ".join(["the room was nice and the view was lovely"] * 5)
    assert genericity(long) < general


def test_lexical_centrality_rewards_shared_wording() -> None:
    scores = lexical_centrality([["clean", "room"], ["clean", "room", "big"], ["rude", "staff"]])
    assert scores[0] == pytest.approx(scores[1])
    assert scores[2] == 0.0
    assert lexical_centrality([["one"]]).tolist() == [0.0]


def test_score_candidates_picks_the_shared_general_opinion() -> None:
    texts = [
        "The staff were friendly and helpful.",
        "Staff were very friendly.",
        "Friendly and helpful staff at the front desk.",
        "On our 2nd night I asked Steve for a late checkout and he said no.",
    ]
    vectors = unit([[1, 0.1], [0.95, 0.2], [0.9, 0.25], [0.4, 0.9]])
    scores = score_candidates(texts, vectors, sentiments=[0.7, 0.6, 0.6, -0.1])
    assert int(np.argmax(scores)) in (0, 2)
    assert int(np.argmin(scores)) == 3
    with pytest.raises(ConfigError):
        score_candidates(texts, vectors[:2])


def test_own_words_prefer_the_shared_claim_to_one_guests_detail() -> None:
    texts = [
        "The bathroom had marble floors, a rainhead shower and heated towel rails.",
        "The bathroom was clean and modern.",
        "Modern and clean bathroom.",
        "Clean modern bathroom.",
    ]
    tokens = [tokenize_for_bm25(t) for t in texts]
    assert own_word_share(tokens).round(2).tolist()[1:] == [0.0, 0.0, 0.0]
    assert own_word_share(tokens)[0] > 0.5
    vectors = unit([[1, 0.3], [1, 0.1], [1, 0.1], [1, 0.1]])
    off = SelectionWeights(centrality=0, lexical=0, sentiment=0, genericity=0)
    on = SelectionWeights(centrality=0, lexical=0, sentiment=0, genericity=0, own_words=0.1)
    assert len(set(score_candidates(texts, vectors, weights=off).tolist())) == 1  # the rule off: no preference
    scores = score_candidates(texts, vectors, weights=on)
    assert int(np.argmin(scores)) == 0


def test_query_vector_weighs_relevance() -> None:
    texts = ["Comfortable beds.", "Comfortable lobby chairs."]
    vectors = unit([[1, 0], [0, 1]])
    only_query = SelectionWeights(centrality=0, lexical=0, relevance=1, sentiment=0, genericity=0)
    scores = score_candidates(texts, vectors, query_vector=np.array([0.0, 1.0]), weights=only_query)
    assert scores[1] > scores[0]


def test_select_points_mmr_skips_paraphrases_and_respects_budget() -> None:
    texts = ["Friendly staff.", "Very friendly staff.", "Rooms were spotless.", "Great breakfast buffet."]
    vectors = unit([[1, 0, 0], [0.99, 0.05, 0], [0, 1, 0], [0, 0, 1]])
    scores = np.array([0.9, 0.85, 0.6, 0.5])
    assert select_points(texts, vectors, scores, max_points=2, budget_words=20) == [0, 2]
    assert select_points(texts, vectors, scores, max_points=3, budget_words=2) == [0]
    assert select_points([], np.zeros((0, 3)), np.zeros(0)) == []
    with pytest.raises(ConfigError):
        select_points(texts, vectors, scores, max_points=0)


def test_expand_pool_adds_neighbours_of_the_mentions_only() -> None:
    emb = unit([[1, 0], [0.9, 0.44], [0, 1], [0.95, 0.3]])
    mask = np.array([True, False, False, False])
    grown = expand_pool(mask, emb, threshold=0.85, max_share=1.0)
    assert grown.tolist() == [True, True, False, True]
    assert expand_pool(np.zeros(4, dtype=bool), emb).tolist() == [False] * 4
    capped = expand_pool(mask, emb, threshold=0.85, max_share=0.5)  # at most 2 of 4 sentences
    assert capped.sum() == 2 and capped[3]  # the nearest neighbour wins the one free slot


def test_support_pool_expands_rooms_to_beds() -> None:
    encoder = FakeEncoder()
    rows = [
        stored(0, "The room was large.", 0.5),
        stored(1, "The bed and the room were comfortable.", 0.6),
        stored(2, "Wifi was slow.", -0.5),
        stored(3, "The bed was comfortable.", 0.6),  # "bed" also names the rooms (aspect_forms)
        stored(4, "The bedding was comfortable.", 0.6),
    ]
    emb = encoder.encode([r.sentence.text for r in rows])
    qv = encoder.encode(["rooms"])[0]
    base = support_pool("rooms", rows, emb, qv, expand=False).tolist()
    grown = support_pool("rooms", rows, emb, qv, expand_threshold=0.25, expand_share=1.0).tolist()
    assert base == [0, 1, 3]
    assert 4 in grown and 2 not in grown


def test_extractive_uses_the_support_pool_and_cites_real_ids() -> None:
    encoder = FakeEncoder()
    pool_texts = [
        ("The staff were friendly and helpful.", 0.7),
        ("Friendly staff everywhere.", 0.6),
        ("The staff were very friendly.", 0.65),
        ("On our first night the night manager Bob lost our booking.", -0.6),
        ("Staff at the desk were rude.", -0.6),
    ]
    pool = [
        Evidence(sentence_id=f"5:{i}:0", text=t, score=0.0, sentiment=s) for i, (t, s) in enumerate(pool_texts)
    ]
    evidence = [
        pool[3].model_copy(update={"score": 2.5}),
        pool[1].model_copy(update={"score": 1.0}),
        pool[4].model_copy(update={"score": 0.5}),
    ]
    item = QueryEvidence(
        query="staff",
        evidence=evidence,
        support=Support(reviews=5, positive=3, negative=2, total_reviews=10),
        pool=pool,
        pool_vectors=encoder.encode([t for t, _ in pool_texts]),
        query_vector=encoder.encode(["staff"])[0],
    )
    highlights = ExtractiveSynthesizer(encoder).synthesize(item)
    sides = [h.polarity for h in highlights]
    assert sides == [Polarity.PROS, Polarity.CONS]
    pro, con = highlights
    assert "Bob" not in pro.text and "friendly" in pro.text.lower()
    ids = {e.sentence_id for e in pool}
    assert all(e.sentence_id in ids for h in highlights for e in h.evidence)
    assert all(e.sentiment and e.sentiment > 0 for e in pro.evidence)
    assert all(e.sentiment and e.sentiment < 0 for e in con.evidence)
    assert pro.support.reviews == 5  # the entity-wide counts are passed through untouched
    retrieved = next(e for e in pro.evidence if e.sentence_id == "5:1:0")
    assert retrieved.score == 1.0  # a retrieved sentence keeps its retrieval score


def test_compose_summary_follows_mentions_and_budget() -> None:
    items = [
        SummaryItem("Great location near the station.", "location", 60),
        SummaryItem("Close to many restaurants.", "location", 60, rank=1),
        SummaryItem("Friendly staff.", "staff", 40),
        SummaryItem("Rooms were small.", "rooms", 10),
        SummaryItem("Friendly staff!", "staff", 40, rank=1),  # a repeat: never used twice
    ]
    short = compose_summary(items, budget_words=7)
    assert [i.group for i in short] == ["location", "staff"]
    full = compose_summary(items, budget_words=100)
    texts = [i.text for i in full]
    assert texts.index("Close to many restaurants.") == 1  # kept with its aspect
    assert "Friendly staff!" not in texts
    assert [i.group for i in full] == ["location", "location", "staff", "rooms"]
    with pytest.raises(ConfigError):
        compose_summary(items, budget_words=0)


def test_query_free_aspect_highlights_pick_general_points_and_cite_the_cluster() -> None:
    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import aspect_highlights
    from opinio_agents.hiro.retriever import HiroCluster

    rows = [
        stored(0, "The staff were friendly and helpful.", 0.7),
        stored(1, "Friendly and helpful staff.", 0.6),
        stored(2, "On our 2nd night Bob at the desk gave us a free upgrade.", 0.5),
        stored(3, "The staff were friendly.", 0.6),
        stored(4, "Staff at the front desk were rude.", -0.6),
    ]
    embeddings = FakeEncoder().encode([r.sentence.text for r in rows])
    aspect = DiscoveredAspect(
        aspect="staff",
        mentions=5,
        positive=4,
        negative=1,
        neutral=0,
        total_reviews=5,
        score=2.0,
        sentence_indices=[0, 1, 2, 3, 4],
        term_indices=[0, 1, 2, 3, 4],
        clusters=[HiroCluster(subpaths=[(3, 1)], indices=[0, 1, 2, 3, 4], score=2.0)],
    )
    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2)
    assert pro.polarity is Polarity.PROS
    assert "Bob" not in pro.text.split(".")[0]  # the main point is a general statement
    assert {e.sentence_id for e in pro.evidence} <= {r.sentence.sentence_id for r in rows[:4]}
    assert any("HIRO clusters [[3, 1]]" in note for note in pro.notes)
    assert pro.support.reviews == 5 and pro.support.negative == 1
    legacy = aspect_highlights(aspect, rows)  # without embeddings: HIRO's mean ROUGE-2 order
    assert legacy and legacy[0].text.count(".") == 1


def test_critical_complaints_in_the_pool_never_back_a_pro() -> None:
    encoder = FakeEncoder()
    texts = [
        ("Loved the staff, but we found bed bugs in the room.", 0.6),
        ("The staff were friendly.", 0.7),
        ("Friendly staff.", 0.6),
    ]
    pool = [Evidence(sentence_id=f"6:{i}:0", text=t, score=0.0, sentiment=s) for i, (t, s) in enumerate(texts)]
    item = QueryEvidence(
        query="staff",
        evidence=[pool[1].model_copy(update={"score": 1.0})],
        support=Support(reviews=3, positive=3, total_reviews=3),
        pool=pool,
        pool_vectors=encoder.encode([t for t, _ in texts]),
        query_vector=encoder.encode(["staff"])[0],
    )
    (pro,) = ExtractiveSynthesizer(encoder).synthesize(item)
    assert "6:0:0" not in pro.sentence_ids and "bed bugs" not in pro.text


def test_summary_paragraph_is_composed_after_post_processing() -> None:
    from opinio_agents.synthesis.base import SynthesisOutcome
    from opinio_agents.synthesis.selection import summary_of
    from opinio_agents.synthesis.summarizer import Draft, Summarizer

    def hl(query: str, side: Polarity, text: str, reviews: int, sid: str, sentiment: float):  # noqa: ANN202
        ev = Evidence(sentence_id=sid, text=text, score=1.0, sentiment=sentiment)
        return Highlight(query=query, polarity=side, text=text, evidence=[ev], support=Support(reviews=reviews))

    staff = hl("staff", Polarity.PROS, "Friendly staff.", 40, "1:1:0", 0.6)
    bugs = hl("room", Polarity.PROS, "Loved the room despite the bed bugs.", 70, "1:2:0", 0.4)
    view = hl("view", Polarity.PROS, "Lovely views of the harbour.", 20, "1:3:0", 0.7)
    assert summary_of([]) is None
    expected = "Loved the room despite the bed bugs. Friendly staff. Lovely views of the harbour."
    assert summary_of([staff, bugs, view]) == expected

    class Store:
        def require_entity(self, key: str) -> str:
            return key

        def sentences(self, key: str) -> list:
            return []

    class Fixed(Summarizer):
        query_free = True  # it finds its own aspects, as HIRO's does

        def draft(self, request):  # noqa: ANN001, ANN201
            entity_key = request.entity_key
            outcomes = [
                SynthesisOutcome(item=QueryEvidence(query=h.query, evidence=list(h.evidence)), highlights=[h])
                for h in (staff, bugs, view)
            ]
            return Draft(entity_id=entity_key, entity_name="", queries=[], outcomes=outcomes, summary_words=75)

    result = Fixed(Store()).summarize("1")  # type: ignore[arg-type]
    summary = result.summary or ""
    assert "Loved the room" not in summary  # the guard dropped that PRO: the paragraph follows
    assert "Guests report bed bugs." in summary  # ... and carries the guard's CON instead
    assert summary.startswith("Friendly staff.") and "Lovely views of the harbour." in summary
    assert all(part + "." in {h.text for h in result.highlights} for part in summary.rstrip(".").split(". "))


def _rows(texts_by_review: dict[str, list[str]]) -> list[StoredSentence]:
    rows = []
    for review, texts in texts_by_review.items():
        for i, text in enumerate(texts):
            sentence = Sentence(
                sentence_id=f"1:{review}:{i}", entity_id="1", review_id=review, index=i, text=text,
                start=0, end=len(text),
            )
            rows.append(StoredSentence(sentence, tuple(tokenize_for_bm25(text)), 0.5))
    return rows


def test_summary_orders_aspects_by_review_position_and_weights_names_down() -> None:
    from opinio_agents.synthesis.selection import summary_of

    def hl(query: str, text: str, reviews: int) -> Highlight:
        return Highlight(query=query, polarity=Polarity.PROS, text=text, support=Support(reviews=reviews))

    city = hl("paris", "We loved Paris.", 90)
    room = hl("room", "The rooms were clean.", 70)
    staff = hl("staff", "Friendly staff.", 40)
    # by mentions, the city first; by position, as reviews order them
    assert summary_of([city, room, staff]) == "We loved Paris. The rooms were clean. Friendly staff."
    ordered = summary_of([city, room, staff], positions={"staff": 0.1, "room": 0.5, "paris": 0.9})
    assert ordered == "Friendly staff. The rooms were clean. We loved Paris."
    # a name weighted 0 loses its place when the budget is short; without the weight it wins it
    assert summary_of([city, room, staff], budget_words=6, weights={"paris": 0.0}) == (
        "The rooms were clean. Friendly staff."
    )
    assert "Paris" in (summary_of([city, room, staff], budget_words=6) or "")


def test_summary_states_the_most_shared_complaint(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import opinio_agents.synthesis.selection as selection
    from opinio_agents.synthesis.selection import complaint_point, summary_of

    def hl(query: str, side: Polarity, text: str, reviews: int, positive: int, negative: int) -> Highlight:
        support = Support(reviews=reviews, positive=positive, negative=negative)
        return Highlight(query=query, polarity=side, text=text, support=support)

    welcome = "The staff were friendly and helpful. The staff were always welcoming."
    staff = hl("staff", Polarity.PROS, welcome, 50, 45, 2)
    rooms = hl("rooms", Polarity.PROS, "The rooms were clean and comfortable.", 40, 35, 3)
    pool = hl("pool", Polarity.PROS, "The pool was lovely.", 30, 28, 0)
    slow = "The elevators were very slow and one was constantly being repaired. The elevators are very slow."
    lifts = hl("elevators", Polarity.CONS, slow, 20, 3, 15)  # 75% of the reviews that mention them complain
    positions = {"staff": 0.3, "rooms": 0.4, "pool": 0.6, "elevators": 0.5}
    praise = f"{welcome} The rooms were clean and comfortable."
    # the complaint's shortest point takes the words of the last praise sentence, in its aspect's place
    assert summary_of([staff, rooms, pool, lifts], budget_words=22, positions=positions) == (
        f"{praise} The elevators are very slow."
    )
    assert complaint_point(slow) == "The elevators are very slow."
    assert complaint_point("Parking is available for $15.00 a day.") == ""  # a price, no complaint word
    # a complaint half the mentioning reviews make is not shared widely enough; nor is any with the setting at 0
    mild = lifts.model_copy(update={"support": Support(reviews=20, positive=8, negative=10)})
    assert summary_of([staff, rooms, pool, mild], budget_words=22, positions=positions) == (
        f"{praise} The pool was lovely."
    )
    off = dataclasses.replace(selection.SELECTION_SETTINGS, complaint_share=0.0)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert summary_of([staff, rooms, pool, lifts], budget_words=22, positions=positions) == (
        f"{praise} The pool was lovely."
    )


def test_ordered_summary_states_the_staff_first_and_the_surroundings_late(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import opinio_agents.synthesis.selection as selection
    from opinio_agents.synthesis.selection import summary_of, summary_topic

    def hl(query: str, text: str, reviews: int) -> Highlight:
        return Highlight(query=query, polarity=Polarity.PROS, text=text, support=Support(reviews=reviews))

    location = hl("location", "Great location near the metro.", 60)
    room = hl("room", "The rooms were clean.", 70)
    desk = hl("front desk", "The front desk was helpful.", 30)
    tasting = hl("wine tasting", "Free wine in the evening.", 20)
    bed = hl("bed", "Comfortable beds.", 40)
    # reviews raise the location first, the staff late; human summaries state them the other way round
    positions = {"location": 0.2, "room": 0.4, "front desk": 0.6, "wine tasting": 0.5, "bed": 0.45}
    assert summary_of([location, room, desk, tasting, bed], positions=positions) == (
        "The front desk was helpful. The rooms were clean. Comfortable beds. Free wine in the evening. "
        "Great location near the metro."
    )  # within the rooms' tier the more mentioned aspect first; the wine tasting (no summary topic) after them
    no_pros = dataclasses.replace(selection.SELECTION_SETTINGS, other_topic_pros=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", no_pros)
    assert summary_of([location, room, desk, tasting, bed], positions=positions) == (
        "The front desk was helpful. The rooms were clean. Comfortable beds. Great location near the metro."
    )  # off: the wine tasting in its highlight only
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", dataclasses.replace(no_pros, other_topic_pros=True))
    assert [summary_topic(a) for a in ("staff", "housekeeping", "sofa bed", "breakfast buffet", "pool")] == [
        0.0, 1.0, 2.0, 3.0, 6.0
    ]
    assert summary_topic("") == selection.SELECTION_SETTINGS.other_topic_tier
    off = dataclasses.replace(selection.SELECTION_SETTINGS, topic_order=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert summary_of([location, room, desk, tasting, bed], positions=positions) == (
        "Great location near the metro. The rooms were clean. Comfortable beds. Free wine in the evening. "
        "The front desk was helpful."
    )


def test_a_hotel_like_entity_states_only_the_topics_human_summaries_state(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import opinio_agents.synthesis.selection as selection
    from opinio_agents.synthesis.selection import is_topic_entity, summary_of

    def hl(query: str, text: str, reviews: int, side: Polarity = Polarity.PROS) -> Highlight:
        return Highlight(query=query, polarity=side, text=text, support=Support(reviews=reviews))

    topics = [
        hl("staff", "Friendly staff.", 60),
        hl("cleanliness", "Very clean.", 50),
        hl("room", "The rooms were big.", 70),
        hl("breakfast", "Good breakfast.", 40),
        hl("location", "Great location.", 55),
    ]
    tasting = hl("wine tasting", "They have complimentary wine tasting most nights.", 30)
    positions = {h.query: 0.5 for h in [*topics, tasting]}
    assert is_topic_entity(topics) and not is_topic_entity(topics[:4])
    # five summary-topic tiers: a hotel, whose paragraph leaves the wine tasting to its highlight
    text = summary_of([*topics, tasting], budget_words=75, positions=positions) or ""
    assert "wine" not in text and "Friendly staff." in text and "Great location." in text
    # a CON of such an aspect still gets the words left
    con = hl("wine tasting", "The wine costs extra.", 30, Polarity.CONS)
    assert "The wine costs extra." in (summary_of([*topics, con], budget_words=75, positions=positions) or "")
    # four tiers (a restaurant's food, service and surroundings): every PRO may be a sentence
    assert "wine" in (summary_of([*topics[:4], tasting], budget_words=75, positions=positions) or "")
    # not ordered by topic (no positions): unchanged
    assert "wine" in (summary_of([*topics, tasting], budget_words=75) or "")
    off = dataclasses.replace(selection.SELECTION_SETTINGS, topic_entity_tiers=0)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert not is_topic_entity(topics)
    assert "wine" in (summary_of([*topics, tasting], budget_words=75, positions=positions) or "")


def test_ordered_summary_gives_its_words_to_the_topics_human_summaries_state_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    import opinio_agents.synthesis.selection as selection
    from opinio_agents.synthesis.selection import names_summary_topic, summary_of

    def hl(query: str, text: str, reviews: int) -> Highlight:
        return Highlight(query=query, polarity=Polarity.PROS, text=text, support=Support(reviews=reviews))

    tasting = hl("wine tasting", "Free wine in the evening.", 60)
    staff = hl("staff", "Friendly staff.", 40)
    location = hl("location", "Great location near the metro.", 30)
    positions = {"wine tasting": 0.5, "staff": 0.3, "location": 0.2}
    assert [names_summary_topic(a) for a in ("staff", "front desk", "location", "wine tasting", "internet")] == [
        True, True, True, False, False
    ]
    # the wine tasting is mentioned more, but human summaries state the staff and the location
    assert summary_of([tasting, staff, location], budget_words=7, positions=positions) == (
        "Friendly staff. Great location near the metro."
    )
    # it gets the words left
    assert "Free wine" in (summary_of([tasting, staff, location], budget_words=12, positions=positions) or "")
    # with other_topic_pros off a PRO of it is left to its highlight, whatever the words left; a CON of it gets them
    no_pros = dataclasses.replace(selection.SELECTION_SETTINGS, other_topic_pros=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", no_pros)
    assert "Free wine" not in (summary_of([tasting, staff, location], budget_words=12, positions=positions) or "")
    con = tasting.model_copy(update={"polarity": Polarity.CONS, "text": "The wine costs extra."})
    assert "The wine costs extra." in (summary_of([con, staff, location], budget_words=12, positions=positions) or "")
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", dataclasses.replace(no_pros, other_topic_pros=True))
    assert "Free wine" in (summary_of([tasting, staff, location], budget_words=7) or "")  # not ordered: by mentions
    # an entity none of whose aspects is such a topic keeps them in order of mentions (not alphabetical)
    speaker = hl("speaker", "The speaker sounds rich.", 90)
    apps = hl("apps", "Handy apps.", 10)
    assert summary_of([apps, speaker], budget_words=5, positions={"apps": 0.5, "speaker": 0.5}) == (
        "The speaker sounds rich."
    )
    off = dataclasses.replace(selection.SELECTION_SETTINGS, other_topic_weight=1.0)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert summary_of([tasting, staff, location], budget_words=7, positions=positions) == (
        "Friendly staff. Free wine in the evening."
    )


def test_summary_budget_is_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import opinio_agents.synthesis.selection as selection
    from opinio_agents.synthesis.selection import select_summary

    items = [
        SummaryItem("Great location.", "location", 50),
        SummaryItem("Small rooms.", "rooms", 20),
        SummaryItem("Close to the metro.", "location", 50, rank=1),
    ]
    assert [i.text for i in compose_summary(items, budget_words=7)] == ["Great location.", "Small rooms."]
    assert len(select_summary(SMALL_TEXTS, SMALL_VECTORS, SMALL_SENTIMENTS, budget_words=10)) == 1
    # a sentence may run past the budget only with an overshoot
    loose = dataclasses.replace(selection.SELECTION_SETTINGS, summary_overshoot=1.25)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", loose)
    assert len(compose_summary(items, budget_words=7)) == 3
    assert len(select_summary(SMALL_TEXTS, SMALL_VECTORS, SMALL_SENTIMENTS, budget_words=10)) == 2


def test_is_proper_name_and_aspect_positions() -> None:
    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import aspect_positions, is_proper_name

    rows = _rows(
        {
            "a": ["The staff were kind.", "We loved Venice and the room.", "Venice is magic."],
            "b": ["Staff were great.", "Rooms are small.", "Lovely room, walking distance to Venice sights."],
        }
    )
    assert is_proper_name("venice", rows)
    assert not is_proper_name("room", rows)
    assert not is_proper_name("staff", rows)  # capitalised only as a sentence's first word
    assert not is_proper_name("", rows) and not is_proper_name("pool", rows)
    staff = DiscoveredAspect("staff", 2, 2, 0, 0, 2, 1.0, term_indices=[0, 3])
    room = DiscoveredAspect("room", 2, 1, 1, 0, 2, 1.0, term_indices=[1, 4, 5])
    none = DiscoveredAspect("view", 0, 0, 0, 0, 2, 0.0)
    positions = aspect_positions([staff, room, none], rows)
    assert positions["staff"] == 0.0
    assert positions["room"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert "view" not in positions


def test_summarizer_recomposes_the_summary_with_the_drafts_layout() -> None:
    from opinio_agents.synthesis.base import SynthesisOutcome
    from opinio_agents.synthesis.selection import SummaryLayout
    from opinio_agents.synthesis.summarizer import Draft, Summarizer

    def hl(query: str, text: str, reviews: int, sid: str) -> Highlight:
        ev = Evidence(sentence_id=sid, text=text, score=1.0, sentiment=0.6)
        support = Support(reviews=reviews)
        return Highlight(query=query, polarity=Polarity.PROS, text=text, evidence=[ev], support=support)

    city = hl("rome", "We loved Rome.", 90, "1:1:0")
    staff = hl("staff", "Friendly staff.", 40, "1:2:0")
    room = hl("room", "Clean rooms.", 60, "1:3:0")

    class Store:
        def require_entity(self, key: str) -> str:
            return key

        def sentences(self, key: str) -> list:
            return []

    class Fixed(Summarizer):
        layout: SummaryLayout | None = None
        query_free = True  # it finds its own aspects, as HIRO's does

        def draft(self, request):  # noqa: ANN001, ANN201
            entity_key = request.entity_key
            outcomes = [
                SynthesisOutcome(item=QueryEvidence(query=h.query, evidence=list(h.evidence)), highlights=[h])
                for h in (city, staff, room)
            ]
            return Draft(
                entity_id=entity_key, entity_name="", queries=[], outcomes=outcomes, summary_words=75,
                summary_layout=self.layout,
            )

    summarizer = Fixed(Store())  # type: ignore[arg-type]
    assert summarizer.summarize("1").summary == "We loved Rome. Clean rooms. Friendly staff."
    summarizer.layout = SummaryLayout(positions={"staff": 0.2, "room": 0.4, "rome": 0.9}, weights={"rome": 0.0})
    assert summarizer.summarize("1").summary == "Friendly staff. Clean rooms. We loved Rome."


def test_supported_points_keeps_a_second_point_only_with_its_own_support() -> None:
    from opinio_agents.synthesis.selection import supported_points

    v = unit([[1, 0], [0, 1], [1, 0.05], [1, 0.1], [0.1, 1], [0.05, 1]])
    assert supported_points(v, [0, 1], min_share=0.3) == [0, 1]  # 3 of 6 sit nearer the second point
    lone = unit([[1, 0], [0, 1], [1, 0.05], [1, 0.1], [1, 0.02], [1, 0.03]])
    assert supported_points(lone, [0, 1], min_share=0.3) == [0]  # one reviewer's aside
    assert supported_points(v, [], min_share=0.3) == []
    assert supported_points(v, [2], min_share=0.9) == [2]  # the first point always stays
    with pytest.raises(ConfigError):
        ExtractiveSynthesizer(FakeEncoder(), min_point_support=1.0)


# -- small entities: the summary chosen entity-wide --------------------------------------------
SMALL_TEXTS = [
    "The chain is strong and pretty.",  # central, general
    "I gave it to my wife on our anniversary and she loved it.",  # central-ish, first person
    "Pretty and strong chain.",  # a paraphrase of the first
    "It came in a box.",  # neutral: never a candidate
    "The clasp is cheap and broke.",  # the other side
]
SMALL_VECTORS = unit([[1.0, 0.0], [0.95, 0.2], [0.99, 0.14], [0.9, 0.3], [0.7, -0.71]])
SMALL_SENTIMENTS = [0.7, 0.6, 0.7, 0.0, -0.5]


def test_select_summary_prefers_general_central_opinions_and_skips_repeats() -> None:
    from opinio_agents.synthesis.selection import SELECTION_SETTINGS, is_first_person, select_summary

    picked = select_summary(SMALL_TEXTS, SMALL_VECTORS, SMALL_SENTIMENTS, budget_words=12)
    assert picked[0] == 0  # not the first-person anecdote, though it is as central
    assert 2 not in picked and 3 not in picked  # no paraphrase, no neutral sentence
    assert 4 in picked  # MMR reaches the complaint within the budget
    assert is_first_person(SMALL_TEXTS[1]) and not is_first_person(SMALL_TEXTS[0])
    # without the first-person penalty and genericity, the anecdote's centrality can win
    plain = SelectionWeights(centrality=1.0, lexical=0.0, relevance=0.0, sentiment=0.0, genericity=0.0)
    scores = score_candidates(SMALL_TEXTS, SMALL_VECTORS, weights=plain)
    weighted = score_candidates(SMALL_TEXTS, SMALL_VECTORS, weights=SELECTION_SETTINGS.small_entity_weights)
    assert scores[1] - scores[0] > weighted[1] - weighted[0]
    assert select_summary(SMALL_TEXTS[:2], SMALL_VECTORS[:2], SMALL_SENTIMENTS[:2]) == []  # too few opinions
    assert len(select_summary(SMALL_TEXTS, SMALL_VECTORS, SMALL_SENTIMENTS, budget_words=1)) == 1
    with pytest.raises(ConfigError):
        select_summary(SMALL_TEXTS, SMALL_VECTORS[:2], SMALL_SENTIMENTS)
    with pytest.raises(ConfigError):
        select_summary(SMALL_TEXTS, SMALL_VECTORS, SMALL_SENTIMENTS, budget_words=0)


def test_summary_of_with_fixed_sentences_keeps_their_order_and_the_guard_con() -> None:
    from opinio_agents.synthesis.alerts import GUARD_NOTE
    from opinio_agents.synthesis.selection import SummaryLayout, summary_of

    def hl(text: str, query: str, polarity: Polarity = Polarity.PROS, notes: list[str] | None = None) -> Highlight:
        return Highlight(query=query, polarity=polarity, text=text, support=Support(reviews=3), notes=notes or [])

    highlights = [hl("Strong chain.", "chain"), hl("Cheap clasp.", "clasp", Polarity.CONS), hl("Nice box.", "box")]
    layout = SummaryLayout(sentences=("Cheap clasp.", "Strong chain.", "Gone sentence."))
    assert summary_of(highlights, layout=layout) == "Cheap clasp. Strong chain."  # "Nice box." was not chosen
    guard = hl("Guests report bed bugs.", "room", Polarity.CONS, [f"{GUARD_NOTE}: added because the evidence reports"])
    assert summary_of([guard, *highlights[:1]], layout=layout) == "Strong chain. Guests report bed bugs."
    assert summary_of([], layout=layout) is None


def test_sentence_highlights_cite_the_sentence_its_neighbours_and_its_aspect() -> None:
    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import GENERAL_ASPECT, reading_order, sentence_highlights

    rows = [
        StoredSentence(
            Sentence(sentence_id=f"1:r{i % 2}:{i // 2}", entity_id="1", review_id=f"r{i % 2}", index=i // 2,
                     text=t, start=0, end=len(t)),
            tuple(tokenize_for_bm25(t)),
            s,
        )
        for i, (t, s) in enumerate(zip(SMALL_TEXTS, SMALL_SENTIMENTS, strict=True))
    ]
    chain = DiscoveredAspect("chain", 2, 2, 0, 0, 2, 1.0, sentence_indices=[0, 2, 4], term_indices=[0, 2])
    clasp = DiscoveredAspect("clasp", 1, 0, 1, 0, 2, 1.0, sentence_indices=[4], term_indices=[4])
    paths = np.array([[0, 1], [0, 2], [0, 1], [1, 0], [1, 1]])
    out = sentence_highlights([0, 4, 1], [chain, clasp], rows, SMALL_VECTORS, paths=paths, max_cited=3)
    assert [(h.query, h.polarity) for h in out] == [
        ("chain", Polarity.PROS), ("clasp", Polarity.CONS), (GENERAL_ASPECT, Polarity.PROS)
    ]
    first = out[0]
    assert [e.sentence_id for e in first.evidence] == ["1:r0:0", "1:r0:1", "1:r1:0"]  # itself, then nearest
    assert first.support.reviews == 2 and "HIRO cluster path [0, 1]" in first.notes
    assert all(e.sentiment is not None and e.sentiment < 0 for e in out[1].evidence)  # same side only
    assert out[2].support.total_reviews == 2 and out[2].text == SMALL_TEXTS[1]
    assert reading_order([4, 1, 0], rows) == [0, 1, 4]
    # praise first: a review's opening complaint after the praise, each in reading order
    opening = [
        StoredSentence(
            Sentence(sentence_id=f"2:r:{i}", entity_id="2", review_id="r", index=i, text=t, start=0, end=len(t)),
            (),
            s,
        )
        for i, (t, s) in enumerate([("The clasp broke.", -0.5), ("Pretty chain.", 0.6), ("Strong too.", 0.4)])
    ]
    assert reading_order([2, 0, 1], opening) == [0, 1, 2]
    assert reading_order([2, 0, 1], opening, praise_first=True) == [1, 2, 0]


def test_query_free_key_points_name_their_aspect() -> None:
    from opinio_agents.hiro.aspects import DiscoveredAspect, HiroCluster
    from opinio_agents.hiro.highlights import aspect_highlights

    long_story = (
        "As some of the other reviews had mentioned some of the bathrooms do have glass doors and we asked to be "
        "in another room before we got there so the whole stay was quiet."
    )
    rows = [
        stored(0, long_story, 0.7),
        stored(1, long_story.replace("glass doors", "glass walls"), 0.7),
        stored(2, "Our room was quiet at night.", 0.5),
        stored(3, "The glass doors of the bathroom were a surprise.", 0.6),
    ]
    embeddings = np.tile(np.array([[1.0, 0.0]]), (4, 1))
    aspect = DiscoveredAspect(
        "noise", 4, 4, 0, 0, 4, 1.0, sentence_indices=[0, 1, 2, 3], term_indices=[0, 1, 2],
        clusters=[HiroCluster(subpaths=[(1, 2)], indices=[0, 1, 2, 3], score=1.0)], forms=["noise", "quiet"],
    )
    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2)
    assert pro.text == "The room was quiet at night."  # the long stories' key points lost the word that names it
    assert {e.sentence_id for e in pro.evidence} >= {"9:0:0", "9:2:0"}  # they stay evidence
    only_doors = DiscoveredAspect(
        "noise", 2, 2, 0, 0, 2, 1.0, sentence_indices=[0, 3], term_indices=[0], forms=["noise", "quiet"]
    )
    assert aspect_highlights(only_doors, rows, embeddings=embeddings) == []


def test_multi_aspect_key_point_is_cut_to_the_query() -> None:
    from opinio_agents.synthesis.keypoint import subject_clauses

    class Topics:
        """Cosine by topic words: 'staff' and 'room' are orthogonal."""

        def encode(self, texts):  # noqa: ANN001, ANN201
            rows = [[float("staff" in t.lower()), float("room" in t.lower()), 0.1] for t in texts]
            out = np.array(rows)
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    text = "The room was spacious and clean, the staff were friendly and helpful."
    parts = ["The room was spacious and clean", "the staff were friendly and helpful"]
    assert subject_clauses(text.rstrip(".")) == parts
    encoder = Topics()
    ev = [Evidence(sentence_id=f"5:{i}:0", text=text, score=1.0, sentiment=0.7) for i in range(3)]
    item = QueryEvidence(
        query="service", evidence=ev, support=Support(reviews=3, positive=3, total_reviews=3),
        vectors=encoder.encode([text] * 3), query_vector=encoder.encode(["staff"])[0],
    )
    (pro,) = ExtractiveSynthesizer(encoder).synthesize(item)  # type: ignore[arg-type]
    assert pro.text == "The staff were friendly and helpful."
    (whole,) = ExtractiveSynthesizer(encoder, clause_margin=None).synthesize(item)  # type: ignore[arg-type]
    assert whole.text == text


def test_select_points_skips_what_the_repeats_rule_calls_a_repeat() -> None:
    texts = ["Friendly staff.", "Helpful staff.", "Rooms were spotless."]
    vectors = unit([[1, 0, 0], [0.5, 0.8, 0], [0, 0, 1]])
    scores = np.array([0.9, 0.85, 0.3])
    assert select_points(texts, vectors, scores, max_points=2, budget_words=20) == [0, 1]
    assert select_points(
        texts, vectors, scores, max_points=2, budget_words=20, repeats=lambda a, b: {a, b} == {0, 1}
    ) == [0, 2]


def test_select_points_takes_the_first_point_by_its_lead_scores() -> None:
    texts = ["Staff very nice.", "The staff were friendly and helpful to guests.", "Rooms were spotless."]
    vectors = unit([[1, 0, 0], [0.5, 0.8, 0], [0, 0, 1]])
    scores = np.array([0.9, 0.8, 0.3])
    assert select_points(texts, vectors, scores, max_points=2, budget_words=20)[0] == 0
    lead = lead_scores(texts, scores, voice=0.2, length=0.1, words=20)
    assert lead[1] > lead[0] > scores[0]
    assert select_points(texts, vectors, scores, max_points=2, budget_words=20, lead=lead)[0] == 1


def test_a_lead_speaks_in_the_third_person_throughout() -> None:
    # Issue 21 items 2-3, reader's audit: "The view from the room was superb and I would recommend this property to
    # anyone looking for a nice place to stay downtown." opened a SPACE building answer on its voice credit.
    texts = [
        "The view from the room was superb and I would recommend this property to anyone.",
        "The room had a nice patio that overlooked the pool.",
    ]
    vectors = unit([[1, 0, 0], [0, 1, 0]])
    scores = np.array([0.6, 0.5])
    lead = lead_scores(texts, scores, voice=0.2, length=0.1, words=20)
    assert select_points(texts, vectors, scores, max_points=1, budget_words=20, lead=lead) == [1]
    lead = lead_scores(texts, scores, voice=0.2, length=0.1, words=20, third_person=False)
    assert select_points(texts, vectors, scores, max_points=1, budget_words=20, lead=lead) == [0]


def test_query_free_further_points_must_not_repeat_an_earlier_points_topics_and_opinions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    from opinio_agents.hiro import highlights
    from opinio_agents.hiro.aspects import DiscoveredAspect, HiroCluster
    from opinio_agents.hiro.highlights import aspect_highlights

    rows = [
        stored(0, "The staff were very friendly and helpful.", 0.7),
        stored(1, "The front desk staff were friendly and helpful.", 0.7),  # a new topic, the same opinion
        stored(2, "The staff were friendly and helpful.", 0.7),  # the same again
        stored(3, "The concierge staff were knowledgeable about restaurants.", 0.4),
    ]
    embeddings = unit([[0.6, 0.8, 0.0], [0.6, -0.8, 0.0], [1.0, 0.0, 0.0], [0.5, 0.0, 0.866]])
    aspect = DiscoveredAspect(
        "staff", 4, 4, 0, 0, 4, 1.0, sentence_indices=[0, 1, 2, 3], term_indices=[0, 1, 2, 3],
        clusters=[HiroCluster(subpaths=[(1, 2)], indices=[0, 1, 2, 3], score=1.0)], forms=["staff"],
    )
    (pro,) = aspect_highlights(
        aspect, rows, embeddings=embeddings, max_points=2, budget_words=40, distinct_topics=True
    )
    first, second = [p.strip() + "." for p in pro.text.split(".") if p.strip()]
    assert "friendly and helpful" in first and second == "The concierge staff were knowledgeable about restaurants."
    (added,) = aspect_highlights(
        aspect, rows, embeddings=embeddings, max_points=2, budget_words=40, distinct_topics=False,
        drop_repeats=False,
    )
    assert added.text.count("friendly and helpful") == 1  # a second such point adds nothing (points_add)
    off = dataclasses.replace(highlights.SELECTION_SETTINGS, points_add=False)
    monkeypatch.setattr(highlights, "SELECTION_SETTINGS", off)
    (plain,) = aspect_highlights(
        aspect, rows, embeddings=embeddings, max_points=2, budget_words=40, distinct_topics=False,
        drop_repeats=False,
    )
    assert plain.text.count("friendly and helpful") == 2  # without any of the rules: the same opinion twice


def test_query_free_key_points_must_be_opinions_about_their_aspect_when_judged() -> None:
    from opinio_agents.hiro.highlights import aspect_highlights

    rows = [
        stored(0, "There is a pharmacy and a cash machine just across the road.", 0.5),
        stored(1, "The road outside was quiet and well lit.", 0.5),
        stored(2, "A pharmacy is across the road.", 0.4),
    ]
    embeddings = unit([[1.0, 0.0], [0.6, 0.8], [0.9, 0.43]])
    aspect = one_cluster_aspect("road", 3)
    calls: list[list[str]] = []

    def judged(forms, texts):  # the opinion targets an extractor would find: only "The road ... quiet"
        calls.append(list(texts))
        return ["quiet" in t for t in texts]

    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, judged=judged)
    assert pro.text == "The road outside was quiet and well lit."
    # one batched call over the best candidates; the pharmacy "across the road" sentences judge nothing
    # about the road and name it only in passing, so they are no candidates at all
    assert calls == [["The road outside was quiet and well lit."]]
    # every point rejected: only those a second signal also puts off the aspect (first person, or the
    # aspect named only after a place preposition: "across the road") go
    (kept,) = aspect_highlights(aspect, rows, embeddings=embeddings, judged=lambda f, t: [False] * len(t))
    assert kept.text == "The road outside was quiet and well lit."
    assert aspect_highlights(aspect, rows, embeddings=embeddings, judged=lambda f, t: None)  # no extractor


def test_same_opinion_is_one_claim_on_one_side() -> None:
    from opinio_agents.synthesis.selection import same_opinion

    assert same_opinion("The location of this hotel was awesome.", "This hotel was in a great location in Rome.")
    assert same_opinion("The staff was friendly and helpful.", "All the staff very helpful and efficient.")
    assert not same_opinion("The room was clean and comfortable.", "The bed was comfortable.")  # other topic
    assert not same_opinion(  # each says where
        "The location is excellent, right on top of the subway.", "The location is excellent for shopping and dining."
    )
    assert not same_opinion("The room was clean.", "The room was not clean.")  # the negation is part of the claim
    assert not same_opinion("Great pool.", "Great staff.")  # praise alone is no shared topic
    assert not same_opinion("The location of this hotel was awesome.", "The hotel has a lovely rooftop bar.")
    assert same_opinion("Great staff.", "Great staff.")


def test_narrative_key_points_tell_what_the_reviewer_did() -> None:
    from opinio_agents.synthesis.selection import is_narrative

    for story in (
        "When we returned, the room was ready and we hung out at the pool for a while.",
        "As some of the other reviews had mentioned some of the bathrooms do have glass doors but we asked to be "
        "in another room before we got there.",
        "We had their breakfast each morning, which was convenient.",
        "We needed a special hotel key for the parking lot elevator.",
    ):
        assert is_narrative(story), story
    for opinion in (
        "We loved the rooftop pool and the friendly staff.",
        "The room was clean.",
        "I would recommend this hotel.",
        "We had a superior room that was beautifully decorated.",
        "When the weather is good, the terrace is lovely.",  # an opener without the reviewer as its subject
    ):
        assert not is_narrative(opinion), opinion


def test_compose_summary_states_an_opinion_once_per_side() -> None:
    items = [
        SummaryItem("This hotel was in a great location in Rome.", "location", 50, side="pros"),
        SummaryItem("The location of this hotel was awesome.", "hotel", 40, side="pros"),
        SummaryItem("Friendly staff.", "staff", 30, side="pros"),
        SummaryItem("The location was not great.", "area", 20, side="cons"),
    ]
    texts = [i.text for i in compose_summary(items, budget_words=40, one_opinion=True)]
    assert texts == [
        "This hotel was in a great location in Rome.", "Friendly staff.", "The location was not great."
    ]
    assert len(compose_summary(items, budget_words=40, one_opinion=False)) == 4


def test_says_again_judges_one_thing_once() -> None:
    from opinio_agents.synthesis.selection import judged_thing, says_again

    assert judged_thing("The hotel staff were kind.")[0] == frozenset({"staff"})  # the hotel itself is no part
    assert judged_thing("This hotel was clean.")[0] == frozenset({"hotel"})
    assert judged_thing("Very clean rooms.") == (frozenset(), frozenset())
    # the thing, and a word of what is said of it, in common; or a claim within the other's, the hotel left out
    assert says_again("The rooms were clean and perfect sized.", "The rooms were clean and well appointed.")
    assert says_again("The pool area is nice.", "The pool was nice as was the pool swim up bar.")
    assert says_again("The location is great for shopping and restaurants.", "This hotel is in a great location.")
    assert says_again("The staff was friendly and helpful.", "All the staff very helpful and efficient.")
    # two things, praise alone in common, the other clause's words, or a negation on one side only
    assert not says_again("The hotel was clean.", "The rooms were clean.")
    assert not says_again("The location is great for shopping.", "The location is great, right by the metro.")
    assert not says_again(
        "The room was very spacious, the bed was comfortable and the service was excellent.",
        "The rooms are huge and so comfortable and clean.",
    )
    assert not says_again("The room was clean.", "The room was not clean.")


def test_compose_summary_leaves_out_a_sentence_an_earlier_one_states(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from opinio_agents.synthesis import selection

    items = [
        SummaryItem("The room was great, spacious and comfortable.", "room", 80, side="pros"),
        SummaryItem("The rooms were clean and perfect sized. The hotel was spotless.", "cleanliness", 40, side="pros"),
        SummaryItem("Great location; easy walking to shopping.", "location", 30, side="pros"),
        SummaryItem("The rooms were clean and comfortable.", "rooms", 20, side="cons"),
    ]
    texts = [i.text for i in compose_summary(items, budget_words=40)]
    # "perfect sized" restates nothing ("great" is praise); the cleanliness highlight keeps both of its points
    assert texts[1] == "The rooms were clean and perfect sized. The hotel was spotless."
    items[1] = SummaryItem(
        "The rooms were clean and comfortable. The hotel was spotless.", "cleanliness", 40, side="pros"
    )
    texts = [i.text for i in compose_summary(items, budget_words=40)]
    assert texts == [  # "comfortable" rooms said again: that sentence goes, its highlight's other one stays
        "The room was great, spacious and comfortable.",
        "The hotel was spotless.",
        "Great location; easy walking to shopping.",
        "The rooms were clean and comfortable.",  # the other side: compared with its own side only
    ]
    whole = dataclasses.replace(selection.SELECTION_SETTINGS, sentence_repeats=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", whole)
    assert len(compose_summary(items, budget_words=40)[1].text.split(". ")) == 2  # whole highlights compared


def test_query_free_highlights_one_opinion_across_aspects_and_no_narrative() -> None:
    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import aspect_highlights

    rows = [
        stored(0, "This hotel was in a great location in Rome.", 0.7),
        stored(1, "The location of this hotel was awesome.", 0.7),
        stored(2, "The hotel has a lovely rooftop bar.", 0.6),
        stored(3, "When we returned, the pool was open and we hung out there for a while.", 0.3),
        stored(4, "After we checked in we swam in the pool.", 0.3),
    ]
    embeddings = np.tile(np.array([[1.0, 0.0]]), (len(rows), 1))
    location = DiscoveredAspect("location", 2, 2, 0, 0, 5, 1.0, sentence_indices=[0, 1], term_indices=[0, 1])
    hotel = DiscoveredAspect("hotel", 3, 3, 0, 0, 5, 1.0, sentence_indices=[0, 1, 2], term_indices=[0, 1, 2])
    pool = DiscoveredAspect("pool", 2, 2, 0, 0, 5, 1.0, sentence_indices=[3, 4], term_indices=[3, 4])
    shown: dict[Polarity, list[str]] = {}
    (first,) = aspect_highlights(location, rows, embeddings=embeddings, max_points=1, shown=shown)
    (second,) = aspect_highlights(hotel, rows, embeddings=embeddings, max_points=1, shown=shown)
    assert "location" in first.text.lower()
    assert second.text == "The hotel has a lovely rooftop bar."  # not the location again
    assert shown[Polarity.PROS] == [first.text, second.text]
    (alone,) = aspect_highlights(hotel, rows, embeddings=embeddings, max_points=1)
    assert "location" in alone.text.lower()  # without the shown points, the central claim leads
    assert aspect_highlights(pool, rows, embeddings=embeddings, drop_narrative=True) == []  # only stories
    assert aspect_highlights(pool, rows, embeddings=embeddings, drop_narrative=False)


def test_select_summary_skips_a_sentence_that_repeats_a_chosen_one() -> None:
    from opinio_agents.synthesis.selection import select_summary

    texts = [
        "The staff was friendly and helpful.",
        "All the staff very helpful and efficient.",
        "The room was spotless.",
        "Great breakfast buffet.",
    ]
    vectors = unit([[1, 0, 0, 0], [0.7, 0.7, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])  # cosine 0.7: MMR alone keeps both
    sentiments = [0.8, 0.7, 0.6, 0.7]
    once = [texts[i] for i in select_summary(texts, vectors, sentiments, budget_words=30, one_opinion=True)]
    assert once.count("All the staff very helpful and efficient.") + once.count(
        "The staff was friendly and helpful."
    ) == 1
    twice = select_summary(texts, vectors, sentiments, budget_words=30, one_opinion=False, drop_narrative=False)
    assert len(twice) > len(once)


def test_a_con_key_point_must_complain() -> None:
    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import aspect_highlights
    from opinio_agents.synthesis.selection import states_complaint

    for complaint in (
        "The rooms are small.", "Parking is super expensive.", "Internet wasn't free.", "Valet parking was over $25.",
        "The staff at the front desk were rude.",
    ):
        assert states_complaint(complaint), complaint
    facts = ("The beach is a short walk away.", "The subway stop is only a few blocks away.", "The noise was muted.")
    for fact in facts:
        assert not states_complaint(fact), fact
    rows = [
        stored(0, "The beach is a short walk away.", -0.4),  # misread: stored negative
        stored(1, "The beach is also two blocks away.", -0.3),
        stored(2, "The beach was lovely.", 0.7),
        stored(3, "The beach was dirty and crowded.", -0.6),
    ]
    embeddings = np.tile(np.array([[1.0, 0.0]]), (len(rows), 1))
    misread = DiscoveredAspect("beach", 3, 1, 2, 0, 4, 1.0, sentence_indices=[0, 1, 2], term_indices=[0, 1, 2])
    sides = {h.polarity: h.text for h in aspect_highlights(misread, rows, embeddings=embeddings)}
    assert Polarity.CONS not in sides  # its sentences read negative, but no key point complains
    kept = {h.polarity for h in aspect_highlights(misread, rows, embeddings=embeddings, cons_complain=False)}
    assert Polarity.CONS in kept
    real = DiscoveredAspect("beach", 4, 1, 3, 0, 4, 1.0, sentence_indices=[0, 1, 2, 3], term_indices=[0, 1, 2, 3])
    cons = [h for h in aspect_highlights(real, rows, embeddings=embeddings) if h.polarity is Polarity.CONS]
    assert [h.text for h in cons] == ["The beach was dirty and crowded."]


def test_extractive_key_points_are_opinions_not_stories() -> None:
    encoder = FakeEncoder()
    texts = [
        ("After we checked in we asked the staff for a late checkout.", 0.4),
        ("When we arrived the staff were there and we asked them for a map.", 0.4),
        ("The staff were friendly.", 0.6),
    ]
    evidence = [
        Evidence(sentence_id=f"1:{i}:0", text=t, score=1.0, sentiment=s) for i, (t, s) in enumerate(texts)
    ]
    item = QueryEvidence(
        query="staff", evidence=evidence, support=Support(reviews=3, positive=3), entity_name="x",
    )
    (told,) = ExtractiveSynthesizer(encoder, drop_narrative=True, max_points=1).synthesize(item)
    assert told.text == "The staff were friendly."
    (stories,) = ExtractiveSynthesizer(encoder, drop_narrative=False, must_judge=False, max_points=1).synthesize(item)
    assert "asked" in stories.text  # the two stories are central without the rule


def test_reads_against_reads_the_shown_text_by_the_lexicon() -> None:
    from opinio_agents.synthesis.selection import reads_against

    assert reads_against(["Taste is good.", "The sound quality is extremely poor."], -1) == [True, False]
    assert reads_against(["Taste is good.", "The sound quality is extremely poor."], 1) == [False, True]
    assert reads_against(["Check-in is at 2."], 1) == [False]


def test_query_key_points_prefer_the_third_person_to_the_reviewers_voice() -> None:
    # Human aspect summaries say "The staff were friendly and helpful.", not "Loved the friendly and helpful staff."
    # (issue 21 items 2-3, SelectionSettings.query_weights.reviewer_voice): the clearer praise of the reviewer's
    # voice outscores the third person without the penalty, and gives way to it with the shipped weights.
    import dataclasses

    from opinio_agents.synthesis.selection import SELECTION_SETTINGS, opens_in_reviewer_voice

    texts = ["Loved the friendly and helpful staff.", "The staff were friendly and helpful."]
    vectors = unit([[1.0, 0.2], [1.0, 0.2]])
    without = dataclasses.replace(SELECTION_SETTINGS.query_weights, reviewer_voice=0.0)
    before = score_candidates(texts, vectors, sentiments=[0.95, 0.3], weights=without)
    after = score_candidates(texts, vectors, sentiments=[0.95, 0.3], weights=SELECTION_SETTINGS.query_weights)
    assert before[0] > before[1] and after[1] > after[0]
    assert opens_in_reviewer_voice("Found the hotel staff very helpful.")
    assert opens_in_reviewer_voice("Had the buffet breakfast in the morning and it was VERY good.")
    assert opens_in_reviewer_voice("Our room was clean.") and opens_in_reviewer_voice("I'm glad we stayed here.")
    assert not opens_in_reviewer_voice("The room we had was clean.") and not opens_in_reviewer_voice("")


def test_compose_summary_takes_the_points_of_a_highlight_that_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import opinio_agents.synthesis.selection as selection
    from opinio_agents.synthesis.selection import points_that_fit

    items = [
        SummaryItem("The staff was friendly and helpful. Staff went out of their way.", "staff", 50),
        SummaryItem("The restaurant food is excellent. We ate there twice and loved it.", "food", 30),
        SummaryItem("The pool area was very pretty and relaxing in the evening. Nice pool.", "pool", 20),
    ]
    texts = [i.text for i in compose_summary(items, budget_words=20, one_opinion=False)]
    assert texts == [
        "The staff was friendly and helpful. Staff went out of their way.",
        "The restaurant food is excellent.",
        "Nice pool.",
    ]
    # a part must fit and stand alone, and the whole text is no part of itself
    assert points_that_fit("Great staff. Very friendly people.", 1) == ""
    assert points_that_fit("Fast. Great staff here.", 5) == "Great staff here."
    assert points_that_fit("Fast. Great staff here.", 1) == ""
    assert points_that_fit("Great staff.", 5) == ""
    off = dataclasses.replace(selection.SELECTION_SETTINGS, split_to_fit=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert [i.group for i in compose_summary(items, budget_words=20, one_opinion=False)] == ["staff"]


def test_typographic_negations_are_negations() -> None:
    from opinio_agents.synthesis.selection import opinion_tokens, states_complaint

    for apostrophe in ("\u2019", "\u00b4"):
        assert opinion_tokens(f"The room wasn{apostrophe}t clean.") == opinion_tokens("The room wasn't clean.")
        assert "not" in opinion_tokens(f"The room wasn{apostrophe}t clean.")
        assert states_complaint(f"Internet wasn{apostrophe}t free.")


def test_a_pro_key_point_may_not_only_complain() -> None:
    from opinio_agents.synthesis.selection import agreeing_points

    points = [
        "The rooms are small.",  # cut from "The rooms are small but ...", or misread positive: no PRO
        "The bathroom is a little small.",
        "The rooms are small but spotless.",
        "The staff were friendly.",
        "The beach is a short walk away.",
    ]
    assert agreeing_points(points, range(len(points)), 1) == [2, 3, 4]
    assert agreeing_points(points, range(len(points)), -1) == [0, 1, 4]  # CONs: the lexicon rule only


def test_an_interjection_goes_with_its_comma() -> None:
    from opinio_agents.synthesis.selection import without_connective

    assert without_connective("Well, with the exception of the bathroom.") == "With the exception of the bathroom."
    assert without_connective("Okay, the room was a bit dated.") == "The room was a bit dated."
    assert without_connective("Well made and sturdy.") == "Well made and sturdy."
    assert without_connective("So good!") == "So good!"


def test_a_pro_that_announces_a_complaint_is_no_pro() -> None:
    from opinio_agents.synthesis.selection import agreeing_points, announces_complaint

    point = "The hotel was clean, modern and the only concern that I had was the limited parking."
    assert announces_complaint(point) and announces_complaint("The only real complaint is the cost of parking.")
    assert not announces_complaint("The only hotel we would stay in.")
    assert agreeing_points([point, "The lobby was clean."], range(2), 1) == [1]
    assert agreeing_points(["The only concern I had was the limited parking."], range(1), -1) == [0]  # a CON may


def test_a_pro_that_says_what_the_reviewer_disliked_is_no_pro() -> None:
    from opinio_agents.synthesis.selection import agreeing_points, announces_complaint

    # SPACE dev 1510471's internet PRO (its sentence stored +0.49): "One thing, I did not like was lack of free WiFi".
    point = "I did not like was lack of free WiFi (it was available at 6 EUR/hr) which one tends to expect."
    assert announces_complaint(point) and announces_complaint("What we didn't like was the noise.")
    assert not announces_complaint("I didn't like to leave.")
    assert agreeing_points([point, "The wifi deal was really worth it."], range(2), 1) == [1]


def test_a_bracketed_aside_does_not_decide_a_points_side() -> None:
    from opinio_agents.synthesis.selection import agreeing_points, side_text

    # SPACE dev 1722910's bed PRO read "The bed was very hard (but better than some we'd stayed in ...)." (+0.8).
    hard = "The bed was very hard (but better than some we'd stayed in like the cheapo backpackers in Naples)."
    assert side_text(hard) == "The bed was very hard."
    assert agreeing_points([hard, "The bed was comfortable.", "Nice pool (heated)."], range(3), 1) == [1, 2]


def test_a_minority_side_needs_a_second_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import aspect_highlights
    from opinio_agents.synthesis import selection

    cons = [
        ("The bathroom was dirty.", -0.7), ("The bathroom was tiny and old.", -0.6), ("The bathroom had mold.", -0.5),
    ]
    misread = [  # PROs of the sentiment head only: sarcasm (weak), a complaint it reads positive
        ("My husband laughed at the conditions of the bathroom.", 0.23),
        ("I don't like the bathroom much and it was easy to use the one in the lobby.", 0.59),
    ]

    def highlights(pros: list[tuple[str, float]]) -> dict[Polarity, str]:
        rows = [stored(i, t, s) for i, (t, s) in enumerate(cons + pros)]
        n = len(rows)
        aspect = DiscoveredAspect(
            "bathroom", 9, 3, 6, 0, 20, 1.0, sentence_indices=list(range(n)), term_indices=list(range(n)),
            forms=["bathroom"],
        )
        return {h.polarity: h.text for h in aspect_highlights(aspect, rows)}

    assert set(highlights(misread)) == {Polarity.CONS}  # the PRO side stays counted, with nothing to show
    good = highlights([*misread, ("The bathroom was spotless.", 0.7)])
    assert good[Polarity.PROS] == "The bathroom was spotless."
    off = dataclasses.replace(selection.SELECTION_SETTINGS, minority_stance=-1.0, minority_pro_plain=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert Polarity.PROS in highlights(misread)


def test_a_minority_side_of_a_query_needs_a_second_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from opinio_agents.synthesis import selection

    encoder = FakeEncoder()
    texts = [
        ("The bathroom was dirty.", -0.7), ("The bathroom was tiny and old.", -0.6), ("The bathroom had mold.", -0.5),
        ("My husband laughed at the conditions of the bathroom.", 0.23),
        ("I don't like the bathroom much and it was easy to use the one in the lobby.", 0.59),
    ]
    pool = [Evidence(sentence_id=f"5:{i}:0", text=t, score=1.0, sentiment=s) for i, (t, s) in enumerate(texts)]
    item = QueryEvidence(
        query="bathroom", evidence=pool, support=Support(reviews=9, positive=3, negative=6, total_reviews=20),
        pool=pool, pool_vectors=encoder.encode([t for t, _ in texts]), query_vector=encoder.encode(["bathroom"])[0],
    )
    assert [h.polarity for h in ExtractiveSynthesizer(encoder).synthesize(item)] == [Polarity.CONS]
    off = dataclasses.replace(selection.SELECTION_SETTINGS, minority_stance=-1.0, minority_pro_plain=False)
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", off)
    assert Polarity.PROS in [h.polarity for h in ExtractiveSynthesizer(encoder).synthesize(item)]


def test_adds_nothing_reads_praise_in_other_words_as_nothing_new() -> None:
    from opinio_agents.synthesis.selection import adding_points, adds_nothing

    # degree words, generic praise and the hotel set aside, nothing is left; or one word of praise on one thing
    assert adds_nothing("The staff was friendly, helpful and efficient.", "The staff was always very friendly.")
    assert adds_nothing("The staff was very friendly and helpful.", "The staff here is great.")
    assert adds_nothing(
        "The staff was incredibly helpful and friendly.", "The hotel staff was very pleasant and helpful."
    )
    assert adds_nothing(["The room was spacious.", "The bed was comfortable."], "The room was very spacious.")
    # a fact, an attribute, praise after bare praise, a negation: something new
    assert not adds_nothing("The room was clean and spacious.", "The room was clean and well lit.")
    assert not adds_nothing("The room was very spacious and clean.", "The room was nice and very comfortable.")
    assert not adds_nothing("The staff was excellent.", "The staff was always friendly and helpful.")
    assert not adds_nothing("The staff was incredibly helpful and friendly.", "They are nice and clean.")
    assert not adds_nothing("The room was clean.", "The room was not clean.")
    texts = ["The staff was friendly and helpful.", "Great staff.", "Close to the metro.", "The staff spoke French."]
    assert adding_points(texts, [0, 1, 2, 3]) == [0, 2, 3]
    assert adding_points(texts, [1, 0]) == [1, 0]  # the first point always stays; specifics after bare praise



def test_a_degree_word_of_its_own_restates_praise() -> None:
    from opinio_agents.synthesis.selection import adds_nothing

    # SPACE dev 182542's view highlight: "simply" is no modifiers word (those also shape keypoint's comma pieces).
    assert adds_nothing("The view was breathtaking.", "The view is simply gorgeous.")
    assert adds_nothing("The staff was friendly and helpful.", "The staff was absolutely friendly.")
    # a fact is new content, whatever degree word comes with it
    assert not adds_nothing(
        "The beds were extremely comfortable as well.", "The bed was king size and very comfortable."
    )
    assert not adds_nothing("The view was breathtaking.", "The view of the harbour is simply gorgeous.")


def test_a_degree_word_makes_no_new_summary_sentence() -> None:
    from opinio_agents.synthesis.selection import says_again

    # SPACE dev 111509 (seed 0): the bed highlight's first point restated the room's bed.
    earlier = "The room was beautiful with a very comfortable bed and roomy bathroom."
    assert says_again(earlier, "The beds were extremely comfortable as well.")
    assert not says_again(earlier, "The bed was king size and very comfortable.")  # a fact is new content
