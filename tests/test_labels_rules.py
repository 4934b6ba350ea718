"""Rules of the noun-phrase cluster namer (``opinio_agents.hiro.labels``) on tiny inline fixtures.

No model is loaded: the namer runs without an encoder, or with a fake extractor that records its calls.
"""

from __future__ import annotations

import json

import pytest

from opinio_agents.errors import ConfigError


class CountingExtractor:
    """Fake triplet extractor: the listed words are opinion targets; records every call."""

    def __init__(self, targets):
        self.targets = targets
        self.calls: list[list[str]] = []

    def extract(self, sentences):
        from opinio_agents.triplets.base import Triplet

        self.calls.append(list(sentences))
        return [
            [Triplet(aspect=t, opinion="good", sentiment=1) for t in self.targets if t in s.lower()]
            for s in sentences
        ]


def _namer(**kwargs):
    from opinio_agents.hiro.labels import PhraseNamer

    kwargs.setdefault("extractor", None)
    kwargs.setdefault("encoder", None)
    return PhraseNamer(**kwargs)


def _tokens(texts):
    from opinio_agents.text.preprocess import tokenize_for_bm25

    return [tokenize_for_bm25(t) for t in texts]


def test_lexicon_file_loads_and_bad_files_fail_with_the_expected_shape(tmp_path):
    from opinio_agents.hiro.labels import ATTRIBUTE_NOUNS, SYNONYMS, load_lexicon

    assert ATTRIBUTE_NOUNS["spotless"] == "cleanliness" and ATTRIBUTE_NOUNS["noisy"] == "noise"
    assert any({"wifi", "internet"} <= group for group in SYNONYMS)
    path = tmp_path / "lexicon.json"
    path.write_text(json.dumps({"attribute_nouns": {"Price": ["Pricey"]}, "synonyms": [["tv", "television"]]}))
    nouns, synonyms = load_lexicon(path)
    assert nouns == {"pricey": "price"} and synonyms == (frozenset({"tv", "television"}),)
    path.write_text(json.dumps({"synonyms": []}))
    with pytest.raises(ConfigError, match="attribute_nouns"):
        load_lexicon(path)
    with pytest.raises(ConfigError, match="unreadable"):
        load_lexicon(tmp_path / "missing.json")


def test_verbs_before_not_and_infinitives_are_not_noun_phrases():
    from opinio_agents.hiro.labels import noun_phrases

    def surfaces(text):
        return [s for _, s in noun_phrases(text)]

    assert surfaces("The bathroom does not have a tub.") == ["bathroom", "tub"]
    assert surfaces("It was easy to find the hotel.") == []
    assert surfaces("We had to stand in line.") == ["line"]
    # "to" alone does not make a verb: places after "close to" stay nouns.
    assert surfaces("Close to the beach and shops.") == ["beach", "shops"]
    assert surfaces("We went down to breakfast.") == ["breakfast"]
    # "check in" written apart is the noun check-in (never "check"), unless it is a verb
    assert surfaces("Check in was quick and easy.") == ["check-in"]
    assert surfaces("The check out process was slow.") == ["check-out process", "process"]
    assert surfaces("We had to check in at 3pm.") == [] and surfaces("We could check out late.") == []


def test_building_attribute_words_name_a_decor_aspect():
    # Reviewers call the building "the hotel" (too generic to name anything) and describe it with
    # adjectives: those count as mentions of its decor, as "spotless" counts for cleanliness.
    from opinio_agents.hiro.labels import AspectLabel

    texts = [
        "The hotel is modern and stylish.", "Dated but charming.", "It was recently renovated.",
        "A beautifully decorated hotel.", "Breakfast was good.",
    ]
    labels = _namer().name([[0, 1, 2, 3]], _tokens(texts), texts)
    assert labels[0] is not None and labels[0].text == "decor"
    forms = _namer().mention_forms(AspectLabel(("decor",), "decor", 1.0, 1.0))
    assert {"renovated", "dated", "modern"} <= set(forms)
    # Words with many other objects ("beautiful view", "old TV") are no decor mentions.
    assert "beautiful" not in forms and "old" not in forms


def test_a_use_of_a_part_mentions_the_broader_aspect_and_the_part_keeps_its_name(tmp_path):
    # The lobby, the furniture and the building are part of the decor: their uses mention "decor"
    # (with decor's attribute words), but "lobby" stays its own aspect and mentions only itself.
    from opinio_agents.hiro.labels import AspectLabel, load_aspect_parts

    namer = _namer()
    lobby = AspectLabel(("lobby",), "lobby", 1.0, 1.0)
    decor = AspectLabel(("decor",), "decor", 1.0, 1.0)
    assert {"decor", "lobby", "furniture", "building", "renovated"} <= set(namer.mention_forms(decor))
    room_decor = AspectLabel(("room", "decor"), "room decor", 1.0, 1.0)
    assert {"room decor", "lobby", "furniture"} <= set(namer.mention_forms(room_decor))
    assert set(namer.mention_forms(lobby)) == {"lobby"}
    assert not namer.same_aspect(lobby, decor)
    path = tmp_path / "lexicon.json"
    path.write_text(json.dumps({"attribute_nouns": {}, "synonyms": [], "aspect_parts": {"Decor": ["Lobby"]}}))
    assert load_aspect_parts(path) == {"decor": frozenset({"lobby"})}
    path.write_text(json.dumps({"attribute_nouns": {}, "synonyms": []}))
    assert load_aspect_parts(path) == {}
    path.write_text(json.dumps({"aspect_parts": 3}))
    with pytest.raises(ConfigError, match="aspect_parts"):
        load_aspect_parts(path)


def test_a_repeated_name_gives_way_to_the_attribute_the_cluster_is_about():
    texts = [
        "Our room was lovely.", "The room was big.", "Nice room with a view.", "The room was quiet.",
        "The room was spotless.", "Room very clean.", "Clean room, clean sheets.", "The room smelled.",
        "Breakfast was good.",
    ]
    clusters = [[0, 1, 2, 3], [4, 5, 6, 7]]
    labels = _namer().name(clusters, _tokens(texts), texts)
    assert labels[0].text == "room"
    assert labels[1].text == "cleanliness" and labels[1].coverage == 0.75
    # name_aspects agrees with name on each cluster's first name.
    aspects = _namer().name_aspects(clusters, _tokens(texts), texts)
    assert [names[0][0].text for names in aspects] == ["room", "cleanliness"]
    # Alone, the clean-room cluster keeps the object's name (no other cluster is called "room").
    assert _namer().name([[4, 5, 6, 7]], _tokens(texts), texts)[0].text == "room"
    # A runner-up that is no attribute noun does not move: the second cluster joins the first.
    texts2 = texts[:4] + ["The room bed was soft.", "Room and bed fine.", "The bed in the room.", "Room bed ok."]
    labels = _namer().name(clusters, _tokens(texts2), texts2)
    assert labels[1].text in {"room", "room bed"}


def test_diversify_can_be_switched_off(monkeypatch):
    import opinio_agents.hiro.labels as labels_module

    texts = ["The room was nice.", "Big room.", "Spotless room.", "Clean room.", "Room ok."]
    from dataclasses import replace

    monkeypatch.setattr(labels_module, "NAMING_SETTINGS", replace(labels_module.NAMING_SETTINGS, diversify=False))
    labels = _namer().name([[0, 1], [2, 3, 4]], _tokens(texts), texts)
    assert [label.text for label in labels] == ["room", "room"]


def test_opinion_targets_are_extracted_in_one_batch_only_where_they_can_change_the_name():
    texts = [
        "The view from the terrace was superb.", "Views from the terrace.", "Great view, tiny terrace.",
        "The pool was cold.", "Pool too small.", "The pool bar.", "Big pool.",
    ]
    extractor = CountingExtractor(["view", "pool"])
    namer = _namer(extractor=extractor, max_target_sentences=8)
    labels = namer.name([[0, 1, 2], [3, 4, 5, 6], [0, 1]], _tokens(texts), texts)
    # "terrace" and "view" tie on coverage: the extractor decides (one batch, each text once).
    assert labels[0].text == "view" and labels[2].text == "view"
    assert _namer().name([[0, 1, 2]], _tokens(texts), texts)[0].text == "terrace"  # no extractor: a tie
    assert len(extractor.calls) == 1 and sorted(extractor.calls[0]) == sorted(texts[:3])
    # "pool" covers every sentence of its cluster, "bar" a quarter: no boost can change that, so
    # the pool cluster's sentences never reach the extractor.
    assert labels[1].text == "pool"
    # A second call over the same sentences reads the cache.
    namer.name([[0, 1, 2]], _tokens(texts), texts)
    assert len(extractor.calls) == 1


def test_a_name_few_sentences_of_the_entity_use_still_names_its_cluster():
    # No minimum number of the entity's sentences per name (one was tried, see benchmarks/README.md).
    texts = ["The accolades were framed.", "Accolades on the wall."] + [f"The pool was nice {i}." for i in range(8)]
    clusters = [[0, 1], [2, 3, 4]]
    assert [label.text for label in _namer().name(clusters, _tokens(texts), texts)] == ["accolades", "pool"]


def test_a_lone_incidental_noun_names_nothing_but_a_longer_name_keeps_it():
    # hiro_labels.json "incidental_nouns": "a deposit on your card", "the photos online", "the taxi
    # from the airport" name no aspect (issue 21); "the key card" still names the key card.
    from opinio_agents.hiro.labels import noun_phrases

    def surfaces(text):
        return [s for _, s in noun_phrases(text)]

    assert surfaces("They take a deposit on your card.") == ["deposit"]
    assert surfaces("The photos online are accurate and the weather was great.") == []
    assert surfaces("The key card was lost.") == ["key card"]
    texts = [
        "They take a deposit on your card.", "Card payments only.", "Bring your card.",
        "The card was charged twice.", "The pool was nice.", "Nice pool.",
    ]
    labels = _namer().name([[0, 1, 2, 3], [4, 5]], _tokens(texts), texts)
    assert all(label is None or "card" not in label.text.split() for label in labels)


def test_word_use_reads_part_of_speech_evidence_from_the_context():
    from opinio_agents.hiro.labels import word_use

    assert word_use("walked") == "verb"  # a verb-only inflection
    assert word_use("sleep", "to") == "verb"  # an infinitive
    assert word_use("sleep", "we") == "verb"  # after a subject
    assert word_use("walk", "the") == "noun"  # after a determiner
    assert word_use("walk", "short") == "noun"  # after an adjective
    assert word_use("walk", "just") is None  # "just" is also an adverb: no evidence
    assert word_use("pool", "the") == "noun"
    assert word_use("area", "the") is None  # no verb reading: never a verb
    assert word_use("parking", "and") is None  # a gerund outside a determiner's phrase


def test_a_word_reviewers_use_mostly_as_a_verb_names_no_cluster():
    # "walk" and "sleep" topped SPACE dev clusters whose sentences say "we walked", "to sleep" (issue 21).
    verbs = [
        "We walked to the beach every day.", "You can walk to the beach.", "We walked along the beach.",
        "Easy to walk to the beach.", "The kids walked to the beach alone.", "The walk to the beach was nice.",
    ]
    nouns = [
        "The walk to the beach was short.", "A short walk to the beach.", "The walk to the beach is lovely.",
        "Our walk to the beach took a minute.", "A nice walk to the beach.", "The beach walk was lovely.",
    ]
    for texts, expected in ((verbs, "beach"), (nouns, "walk")):
        table = _namer()._phrases(texts)
        assert table.not_a_name("walk") is (expected != "walk")
        label = _namer().name([list(range(len(texts)))], _tokens(texts), texts)[0]
        assert label is not None and label.text == expected


def test_a_word_used_mostly_as_a_modifier_names_no_cluster_on_its_own():
    # "air" of "air conditioning" named a cluster of "Strong air con" sentences (issue 21 seeds).
    texts = [f"The air conditioning was {w}." for w in ("great", "quiet", "strong", "weak", "new")] + [
        "Strong air con.", "Air con was good.", "Good air con, easy to control.",
    ]
    table = _namer()._phrases(texts)
    assert table.modifier_share("air") >= 0.6 and table.not_a_name("air")
    assert not table.not_a_name("conditioning")
    labels = _namer().name([[5, 6, 7], [0, 1, 2, 3, 4]], _tokens(texts), texts)
    assert labels[0] is None or "air" != labels[0].text
    assert labels[1] is not None and labels[1].text == "air conditioning"
    # without the longer phrase, "air" is the head of its phrases and names the cluster
    alone = texts[5:] + ["The air was fresh.", "Fresh air."]
    assert not _namer()._phrases(alone).not_a_name("air")


def test_an_adjective_does_not_change_the_aspect_a_name_names():
    # "modern elevators" and "lift", "little gym" and "gym" took two top-15 places each (issue 21 seeds).
    from opinio_agents.hiro.labels import AspectLabel, label_core

    def label(text):
        return AspectLabel(tuple(text.split()), text, 1.0, 1.0)

    assert label_core("single beds") == "beds" and label_core("front room") == "room"
    assert label_core("sea views") == "sea views" and label_core("room service") == "room service"
    namer = _namer()
    assert namer.same_aspect(label("modern elevators"), label("lift"))  # a synonym once the adjective goes
    assert namer.same_aspect(label("little gym"), label("gym"))
    assert namer.same_aspect(label("single beds"), label("bed"))  # plural-insensitive
    assert not namer.same_aspect(label("room service"), label("room"))  # a noun modifier stays
    assert not namer.same_aspect(label("sea views"), label("beach"))


def test_a_region_noun_names_nothing_and_its_modifier_keeps_the_name():
    # hiro_labels.json "region_nouns": "the area" named SPACE dev aspects whose sentences were about the pool
    # area, the dining area and the neighbourhood at once (issue 21).
    from opinio_agents.hiro.labels import noun_phrases

    found = [s for _, s in noun_phrases("The pool area was nice and the area around the hotel is safe.")]
    assert found == ["pool"]
    assert [s for _, s in noun_phrases("Part of the room was dirty.")] == ["room"]
