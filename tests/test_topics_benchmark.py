"""The Opinosis-style topic benchmark builds its topics from the sentences that name an aspect."""

from __future__ import annotations

import pytest

from tests.benchmark_support import load_benchmark


@pytest.fixture(scope="module")
def topics():  # type: ignore[no-untyped-def]
    return load_benchmark("topics")


def test_names_topic_matches_whole_lemmatized_words_and_phrases(topics) -> None:  # type: ignore[no-untyped-def]
    bed, desk = topics.lexicon_phrases({"bed"}), topics.lexicon_phrases({"front desk"})
    assert topics.names_topic(topics.lemmas("The beds were comfy."), bed)
    assert topics.names_topic(topics.lemmas("Ask the front desk."), desk)
    assert not topics.names_topic(topics.lemmas("A bedspread."), bed)
    assert not topics.names_topic(topics.lemmas("The desk was in front."), desk)


def test_topic_entities_one_per_aspect_with_its_sentences_and_references(topics) -> None:  # type: ignore[no-untyped-def]
    hotel = {
        "entity_id": 7,
        "entity_name": "Hotel",
        "user_reviews": [
            {"review_id": "a", "text": "The staff were lovely. The bed was hard."},
            {"review_id": "b", "text": "Reception was slow. Nice view from the window."},
            {"review_id": "c", "text": "We walked a lot."},
        ],
    }
    refs = {
        "7": {"split": "dev", "aspects": {"service": ["Friendly staff."], "rooms": ["Hard beds."], "food": ["Ok."]}},
    }
    entities, references = topics.topic_entities([hotel], refs, min_sentences=2)
    by_id = {e.entity_id: [r.text for r in e.user_reviews] for e in entities}
    assert by_id == {
        "7:rooms": ["The bed was hard.", "Nice view from the window."],
        "7:service": ["The staff were lovely.", "Reception was slow."],
    }
    assert references["7:service"].aspects == {"service": ["Friendly staff."]}
    held_out = {"7": {**refs["7"], "split": "test"}}
    assert topics.topic_entities([hotel], held_out, min_sentences=1) == ([], {})


def test_topic_entities_read_the_reviews_as_the_loaders_do(topics) -> None:  # type: ignore[no-untyped-def]
    # UTF-8 saved as Windows-1252 and HTML references are re-read once, as io.loaders' decoded_entity does.
    hotel = {
        "entity_id": 8,
        "entity_name": "Hotel",
        "user_reviews": [
            {
                "review_id": "a",
                "text": "You don\u00e2\u20ac\u2122t walk in to a fancy lobby. The lobby &amp; bar were nice.",
            },
        ],
    }
    refs = {"8": {"split": "dev", "aspects": {"building": ["A nice lobby."]}}}
    entities, _ = topics.topic_entities([hotel], refs, min_sentences=1)
    assert [r.text for r in entities[0].user_reviews] == [
        "You don\u2019t walk in to a fancy lobby.",
        "The lobby & bar were nice.",
    ]
