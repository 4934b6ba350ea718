"""The query-free summary covers the food and cleanliness when no discovered aspect is about them, and the beds
and the bathroom when no discovered aspect names them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from opinio_agents.hiro import highlights as hl
from opinio_agents.hiro.aspects import DiscoveredAspect, topic_aspect
from opinio_agents.hiro.highlights import QUERY_FREE_SETTINGS, uncovered_parts, uncovered_topics
from opinio_agents.indexing import Indexer
from opinio_agents.models import Highlight, Polarity, Support
from opinio_agents.synthesis.keypoint import mentions_any
from opinio_agents.synthesis.support import aspect_mentions, support_of
from opinio_agents.text.wordlists import word_set
from tests.fake_encoder import HashEncoder


def test_uncovered_topics_are_those_no_highlight_aspect_is_about() -> None:
    topics = ["food", "cleanliness"]
    assert uncovered_topics(["staff", "rooms", "breakfast buffet"], topics) == ["cleanliness"]
    assert uncovered_topics(["restaurant", "cleanliness"], topics) == []
    assert uncovered_topics(["room", "pool", "wi-fi"], topics) == topics
    # the shipped topics: the food and cleanliness, not the location or the building (measured to cost RL)
    assert word_set("selection", "cover_topics") == {"food", "cleanliness"}


def test_uncovered_parts_are_those_no_highlight_aspect_names() -> None:
    parts = ["bathroom", "bed"]
    # the room aspect is about the rooms' tier, but names neither part: both stay to cover
    assert uncovered_parts(["staff", "rooms", "breakfast"], parts) == parts
    assert uncovered_parts(["king beds", "cleanliness"], parts) == ["bathroom"]
    assert uncovered_parts(["bathrooms", "bed"], parts) == []
    assert uncovered_parts(["bedroom"], parts) == parts  # another word
    # the shipped parts: the beds and the bathroom (the restaurant, the food and the service were measured to cost RL)
    assert word_set("selection", "cover_parts") == {"bed", "bathroom"}


def _highlight(query: str) -> Highlight:
    return Highlight(query=query, polarity=Polarity.PROS, text=f"Great {query}.", support=Support(reviews=10))


def test_cover_aspects_asks_the_uncovered_topics_many_reviews_mention(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    shares = {"food": 0.5, "cleanliness": 0.05, "bed": 0.4, "bathroom": 0.1}

    def fake(hiro: object, key: str, name: str, *, namer: object, min_share: float) -> DiscoveredAspect | None:
        asked.append(name)
        assert min_share == QUERY_FREE_SETTINGS.cover_share
        aspect = DiscoveredAspect(name, int(shares[name] * 100), 1, 0, 0, 100, 0.0)
        return aspect if aspect.share >= min_share else None

    monkeypatch.setattr(hl, "topic_aspect", fake)
    found = hl._cover_aspects(object(), "k", [_highlight("staff"), _highlight("room")], namer=None)  # type: ignore[arg-type]
    assert asked == ["cleanliness", "food", "bathroom", "bed"]  # the topics, then the parts the room leaves
    assert [a.aspect for a in found] == ["food", "bed"]  # cleanliness, bathroom: too few reviews mention them
    asked.clear()
    covered = [_highlight("breakfast"), _highlight("cleanliness"), _highlight("beds"), _highlight("bathroom")]
    assert hl._cover_aspects(object(), "k", covered, namer=None) == []  # type: ignore[arg-type]
    assert asked == []  # all covered: nothing counted
    monkeypatch.setattr(hl, "QUERY_FREE_SETTINGS", replace(QUERY_FREE_SETTINGS, cover_parts=False))
    found = hl._cover_aspects(object(), "k", [_highlight("room")], namer=None)  # type: ignore[arg-type]
    assert [a.aspect for a in found] == ["food"]
    assert asked == ["cleanliness", "food"]  # without cover_parts the parts are not asked
    monkeypatch.setattr(hl, "QUERY_FREE_SETTINGS", replace(QUERY_FREE_SETTINGS, cover_topics=False))
    assert hl._cover_aspects(object(), "k", [_highlight("staff")], namer=None) == []  # type: ignore[arg-type]


def test_topic_aspect_is_made_of_the_sentences_that_mention_it(tmp_path) -> None:
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.stores import SentenceStore

    data = generate_dataset(1, 40, seed=3)
    store = SentenceStore(tmp_path / "store")
    Indexer(store, HashEncoder()).index_entities(data.entities[:1])
    key = store.entity_keys()[0]
    stored = store.sentences(key)
    aspect = topic_aspect(store, key, "cleanliness")
    assert aspect is not None
    assert topic_aspect(store, key, "cleanliness", min_share=aspect.share + 0.01) is None
    mentioned = aspect_mentions("cleanliness", stored).tolist()  # the one count (lexical: a hashing store)
    assert mentioned and aspect.sentence_indices == mentioned == aspect.mention_indices
    stance = support_of(stored, mentioned)
    assert (aspect.mentions, aspect.positive, aspect.negative) == (stance.reviews, stance.positive, stance.negative)
    assert {"cleanliness", "clean", "spotless"} <= set(aspect.forms)
    assert set(aspect.term_indices) & set(mentioned)
    assert all(mentions_any(stored[i].sentence.text, aspect.forms) for i in aspect.term_indices)
    assert aspect.clusters == [] and aspect.score == 0.0
    assert aspect.total_reviews == len({s.sentence.review_id for s in stored})
