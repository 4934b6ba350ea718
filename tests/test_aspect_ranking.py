"""Aspect discovery's ranking: review share blended with HIRO's specificity (tiny inline fixtures)."""

from __future__ import annotations

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.aspects import DiscoveredAspect, aspect_rank, aspects_from_clusters
from opinio_agents.hiro.labels import AspectLabel, ClusterNamer, PhraseNamer
from opinio_agents.hiro.retriever import HiroCluster
from opinio_agents.models import Sentence
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.synthesis.support import aspect_mentions
from opinio_agents.text.preprocess import tokenize_for_bm25


def stored(review: int, text: str, sentiment: float = 0.5) -> StoredSentence:
    sentence = Sentence(
        sentence_id=f"9:{review}:{len(text)}", entity_id="9", review_id=str(review), index=0, text=text,
        start=0, end=len(text),
    )
    return StoredSentence(sentence, tuple(tokenize_for_bm25(text)), sentiment)


class FirstWordNamer(ClusterNamer):
    """Names a cluster after the first word of its first sentence (no model)."""

    def name(self, clusters, tokens, texts):
        out = []
        for cluster in clusters:
            word = texts[cluster[0]].split()[0].lower().strip(".")
            out.append(AspectLabel((word,), word, 1.0, 1.0))
        return out


def _hotel() -> list[StoredSentence]:
    """Ten reviews: every one mentions the staff, two a wine tasting."""
    rows = [stored(r, "Staff were friendly.") for r in range(10)]
    rows += [stored(0, "Wine tasting was fun."), stored(1, "Wine tasting every evening.")]
    return rows


def test_aspect_rank_blends_share_and_specificity():
    common = DiscoveredAspect("staff", 60, 50, 5, 5, 100, 0.8)
    rare = DiscoveredAspect("wine tasting", 12, 11, 0, 1, 100, 3.2)
    assert aspect_rank(common, 0.0) == 0.8 and aspect_rank(rare, 0.0) == 3.2  # HIRO's score alone
    assert aspect_rank(common, 1.0) == 0.6 and aspect_rank(rare, 1.0) == 0.12  # the review share alone
    assert aspect_rank(common, 0.5) == pytest.approx((0.6 * 0.8) ** 0.5)
    assert aspect_rank(common) > aspect_rank(rare)  # by default popularity weighs most
    assert aspect_rank(DiscoveredAspect("x", 0, 0, 0, 0, 0, 1.0), 0.5) == 0.0  # no reviews: nothing to share


def test_popular_aspect_outranks_a_more_specific_rare_one():
    rows = _hotel()
    clusters = [HiroCluster([(1,)], [10, 11], score=3.0), HiroCluster([(2,)], list(range(10)), score=0.9)]
    found = aspects_from_clusters(clusters, rows, namer=FirstWordNamer())
    assert [a.aspect for a in found] == ["staff", "wine"]
    assert [a.mentions for a in found] == [10, 2]
    assert found[0].score == 0.9  # the field is still HIRO's score of its best cluster
    # Ranked by HIRO's score alone, the distinctive aspect comes first (the earlier order).
    by_score = aspects_from_clusters(clusters, rows, namer=FirstWordNamer(), popularity=0.0)
    assert [a.aspect for a in by_score] == ["wine", "staff"]
    with pytest.raises(ConfigError):
        aspects_from_clusters(clusters, rows, namer=FirstWordNamer(), popularity=1.5)


def test_attribute_words_count_as_mentions_of_their_noun():
    namer = PhraseNamer(extractor=None, encoder=None)
    label = AspectLabel(("cleanli",), "cleanliness", 1.0, 1.0)
    forms = namer.mention_forms(label)
    assert forms[0] == "cleanliness" and {"clean", "spotless", "dirty"} <= set(forms)
    assert namer.mention_forms(AspectLabel(("pool",), "pool", 1.0, 1.0)) == ("pool",)
    assert ClusterNamer().mention_forms(AspectLabel(("wifi",), "wi-fi", 1.0, 1.0, ("internet",))) == (
        "wi-fi",
        "internet",
    )

    class Cleanliness(FirstWordNamer):
        def name(self, clusters, tokens, texts):
            return [AspectLabel(("cleanli",), "cleanliness", 1.0, 1.0) for _ in clusters]

        def mention_forms(self, label):
            return namer.mention_forms(label)

    rows = [stored(0, "Cleanliness was perfect."), stored(1, "Cleanliness matters."), stored(2, "So clean!"),
            stored(3, "A spotless room."), stored(4, "Dirty towels."), stored(5, "Great pool.")]
    found = aspects_from_clusters([HiroCluster([(1,)], [0, 1], score=1.0)], rows, namer=Cleanliness())
    # The sentences saying clean, spotless or dirty are the aspect's terms (its focus and examples) ...
    assert found[0].term_indices == [0, 1, 2, 3, 4]
    # ... and its count is the one every surface shows for "cleanliness" (synthesis/support.py
    # aspect_mentions: here lexical, with the words that also name it, aspect_forms).
    assert found[0].mentions == 5 == len(aspect_mentions("cleanliness", rows))


def _room_hotel() -> list[StoredSentence]:
    texts = [
        "The room was clean.", "Spotless room.", "Our room was small.", "The room was quiet at night.",
        "Room had a view.", "Clean and big room.", "Nice room.", "Dirty carpet in the room.",
        "Breakfast was good.", "The pool was cold.",
    ]
    return [stored(r, t) for r, t in enumerate(texts)]


def test_attribute_second_aspect_of_a_cluster_is_ranked():
    rows = _room_hotel()
    namer = PhraseNamer(extractor=None, encoder=None)
    clusters = [HiroCluster([(1,)], list(range(8)), score=1.0, reviews=8)]
    found = aspects_from_clusters(clusters, rows, namer=namer)
    assert [a.aspect for a in found] == ["room", "cleanliness"]
    clean = found[1]
    assert clean.sentence_indices == [0, 1, 5, 7]  # the room sentences that say clean / spotless / dirty
    assert clean.clusters[0].indices == [0, 1, 5, 7] and clean.clusters[0].reviews == 4
    assert clean.clusters[0].subpaths == [(1,)] and clean.score == 1.0
    alone = aspects_from_clusters(clusters, rows, namer=namer, second_aspects=False)
    assert [a.aspect for a in alone] == ["room"]


def test_only_attribute_nouns_are_second_aspects():
    texts = [
        "The room had a view.", "Room view of the sea.", "Our room was small.", "The room had a view of the park.",
        "Room was fine.", "Nice room.",
    ]
    rows = [stored(r, t) for r, t in enumerate(texts)]
    namer = PhraseNamer(extractor=None, encoder=None)
    every = namer.name_aspects([list(range(6))], [r.tokens for r in rows], texts)[0]
    assert [label.text for label, _ in every] == ["room", "view"]  # "view" is a second aspect ...
    found = aspects_from_clusters([HiroCluster([(1,)], list(range(6)), score=1.0)], rows, namer=namer)
    assert [a.aspect for a in found] == ["room"]  # ... but no attribute: discovery leaves it in the room
    assert ClusterNamer.name_aspects(namer, [[0, 1], []], [r.tokens for r in rows], texts) == [
        [(namer.name([[0, 1]], [r.tokens for r in rows], texts)[0], [0, 1])],
        [],
    ]


class TargetNamer(FirstWordNamer):
    """FirstWordNamer whose opinion targets are the listed words (a fake extractor's answer)."""

    def __init__(self, targets: set[str]) -> None:
        self.targets = targets

    def target_share(self, forms, texts):
        hits = [any(form in self.targets and form in text.lower() for form in forms) for text in texts]
        return sum(hits) / len(hits) if hits else None


def test_an_aspect_named_only_in_passing_ranks_after_every_evaluated_one():
    # "card" is in every review but never judged ("a deposit on your card"); the pool is judged in 4
    rows = [stored(r, "Card deposit taken at arrival.") for r in range(10)]
    rows += [stored(r, "Pool was lovely.") for r in range(4)]
    clusters = [
        HiroCluster([(1,)], list(range(10)), score=1.0, reviews=10),
        HiroCluster([(2,)], list(range(10, 14)), score=1.0, reviews=4),
    ]
    ranked = aspects_from_clusters(clusters, rows, namer=FirstWordNamer())
    assert [a.aspect for a in ranked] == ["card", "pool"]  # no target extractor: every aspect counts as judged
    assert all(a.evaluated for a in ranked)
    ranked = aspects_from_clusters(clusters, rows, namer=TargetNamer({"pool"}))
    assert [(a.aspect, a.evaluated) for a in ranked] == [("pool", True), ("card", False)]


def test_target_share_reads_the_extractor_and_attribute_nouns_always_count():
    from tests.test_labels_rules import CountingExtractor

    namer = PhraseNamer(extractor=CountingExtractor(["pool"]), encoder=None)
    assert namer.target_share(["pool"], ["The pool was cold.", "Loved the pool."]) == 1.0
    assert namer.target_share(["card"], ["They take a deposit on your card.", "Card payment only."]) == 0.0
    assert namer.target_share(["front desk"], ["The front desk was slow."]) == 0.0
    assert namer.target_share(["cleanliness", "clean"], ["Clean rooms."]) == 1.0  # judged through "clean"
    assert namer.target_share(["pool"], []) is None
    assert PhraseNamer(extractor=None, encoder=None).target_share(["pool"], ["The pool was cold."]) is None


def test_an_aspect_whose_sentences_use_another_aspects_name_joins_it():
    # "pods" took a top-10 place of a seed entity whose "coffee machine pods" sentences are about the
    # coffee maker (issue 21); "kettle" names the coffee maker through the synonym list.
    rows = [stored(r, "Kettle was fine.") for r in range(6)]
    rows += [stored(r, "Pods for the coffee machine ran out.") for r in range(6, 9)]
    rows += [stored(r, "Room service was slow.") for r in range(9, 13)]
    rows += [stored(r, "Room was big.") for r in range(13, 20)]
    clusters = [
        HiroCluster([(1,)], list(range(6)), score=1.0),
        HiroCluster([(2,)], list(range(6, 9)), score=1.0),
        HiroCluster([(3,)], list(range(13, 20)), score=1.0),
        HiroCluster([(4,)], list(range(9, 13)), score=1.0),
    ]

    class Namer(FirstWordNamer):
        def name(self, clusters, tokens, texts):
            labels = super().name(clusters, tokens, texts)
            service = AspectLabel(("room", "servic"), "room service", 1.0, 1.0)
            return [
                service if label.text == "room" and "service" in texts[cluster[0]] else label
                for label, cluster in zip(labels, clusters)
            ]

    found = aspects_from_clusters(clusters, rows, namer=Namer())
    names = [a.aspect for a in found]
    assert "pods" not in names and "kettle" in names
    kettle = next(a for a in found if a.aspect == "kettle")
    assert "pods" in kettle.forms and set(range(6, 9)) <= set(kettle.sentence_indices)
    # "room" inside "room service" is no use of the room: room service stays an aspect
    assert "room service" in names and "room" in names


def test_an_attribute_word_of_another_aspect_does_not_join_an_aspect_to_it():
    # "The lobby is modern": "modern" says the decor, but the sentence is about the lobby (a planted aspect).
    rows = [stored(r, "Decor is dated.") for r in range(6)] + [stored(r, "Lobby is modern.") for r in range(6, 9)]
    clusters = [HiroCluster([(1,)], list(range(6)), score=1.0), HiroCluster([(2,)], list(range(6, 9)), score=1.0)]

    class Namer(FirstWordNamer):
        def mention_forms(self, label):
            return PhraseNamer(extractor=None, encoder=None).mention_forms(label)

    found = aspects_from_clusters(clusters, rows, namer=Namer())
    assert [a.aspect for a in found] == ["decor", "lobby"]


def test_product_aspects_are_mentioned_by_the_words_that_name_them():
    # support.json's also_names lists for product aspects: "easy to use" is about ease of use,
    # "pairs with my phone" about connectivity, "fell apart" about durability; not "the last time".
    rows = [
        stored(0, "Very easy to use."), stored(1, "It pairs with my phone in seconds."),
        stored(2, "The strap fell apart after a week."), stored(3, "The last time I ordered it was fine."),
        stored(4, "Customer support sent a replacement."), stored(5, "Nice color."),
    ]
    aspects = ("ease of use", "connectivity", "durability", "customer service")
    found = {a: aspect_mentions(a, rows).tolist() for a in aspects}
    assert found == {"ease of use": [0], "connectivity": [1], "durability": [2], "customer service": [4]}


def test_a_form_of_several_words_is_a_phrase_not_a_bag_of_its_words():
    # food's "room service": "Great rooms, good service." holds both words but no room service, so it is no
    # mention of a hotel's food (it was a food key point); "The room service was fast." is one.
    from opinio_agents.text.compounds import stands_together

    rows = [
        stored(0, "Top notch hotel, great rooms, good service."),
        stored(1, "The room service was fast."),
        stored(2, "Nice room, friendly service and staff."),
    ]
    assert aspect_mentions("food", rows).tolist() == [1]
    assert stands_together(("front", "desk", "staff"), ("front", "desk"))
    assert not stands_together(("desk", "front"), ("front", "desk"))
