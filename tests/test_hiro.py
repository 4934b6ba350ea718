"""HIRO: indexer, retriever, aspects, highlights, comparison, generators and attribution."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from opinio_agents.errors import ConfigError, LLMError, StoreError
from opinio_agents.indexing import Indexer


class HashEncoder:
    """Deterministic bag-of-words hashing encoder: instant, lexical, good enough for synthetic text."""

    name = "test-hash-bow"

    def encode(self, texts, **_: object) -> np.ndarray:
        from opinio_agents.text.preprocess import tokenize_for_bm25

        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in tokenize_for_bm25(text):
                out[i, int(hashlib.md5(token.encode()).hexdigest(), 16) % 384] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


@pytest.fixture(scope="module")
def hash_data():
    from opinio_agents.datasets import generate_dataset

    return generate_dataset(5, 50, seed=11)


@pytest.fixture(scope="module")
def hash_store(tmp_path_factory, hash_data):
    """Four entities indexed with the hashing encoder (the fifth is added by a test)."""
    from opinio_agents.stores import SentenceStore

    index = SentenceStore(tmp_path_factory.mktemp("hiro-store"))
    Indexer(index, HashEncoder()).index_entities(hash_data.entities[:4])
    return index


# -- k-means and the indexer ----------------------------------------------------------
def _blobs(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, 16)) * 4
    return np.vstack([c + rng.normal(scale=0.2, size=(40, 16)) for c in centres]).astype(np.float32)


def test_kmeans_recovers_blobs_and_is_seeded():
    from opinio_agents.hiro.kmeans import kmeans

    points = _blobs()
    first, second = kmeans(points, 4, seed=3), kmeans(points, 4, seed=3)
    assert np.array_equal(first.labels, second.labels)
    assert sorted(np.bincount(first.labels).tolist()) == [40, 40, 40, 40]
    for block in range(4):
        assert len(set(first.labels[block * 40 : (block + 1) * 40].tolist())) == 1
    with pytest.raises(ConfigError):
        kmeans(points[:3], 4)


def test_kmeans_restarts_keep_the_lowest_inertia_and_depend_less_on_the_seed():
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer
    from opinio_agents.hiro.kmeans import kmeans

    rng = np.random.default_rng(7)
    points = rng.normal(size=(400, 8)).astype(np.float32)  # no blobs: the clusters hang on the initialisation
    single = [kmeans(points, 6, seed=s).inertia for s in range(8)]
    best = [kmeans(points, 6, seed=s, restarts=4).inertia for s in range(8)]
    assert all(b <= s + 1e-3 for b, s in zip(best, single))  # the seed's own run is one of the restarts
    assert max(best) - min(best) < max(single) - min(single)
    with pytest.raises(ConfigError, match="restarts"):
        kmeans(points, 6, restarts=0)
    with pytest.raises(ConfigError, match="restarts"):
        ResidualKMeansIndexer(restarts=0)


@pytest.mark.parametrize("tree", [True, False])
def test_indexer_is_deterministic_for_a_seed(tree):
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    points = _blobs(1)
    a = ResidualKMeansIndexer(n_codes=4, depth=3, seed=5, tree=tree).fit(points)
    b = ResidualKMeansIndexer(n_codes=4, depth=3, seed=5, tree=tree).fit(points)
    c = ResidualKMeansIndexer(n_codes=4, depth=3, seed=6, tree=tree).fit(points)
    assert a.fingerprint == b.fingerprint
    assert np.array_equal(a.encode(points), b.encode(points))
    assert a.fingerprint != c.fingerprint
    paths = a.encode(points)
    assert paths.shape == (160, 3) and paths.max() < 4
    # The first level separates the four blobs.
    assert len({tuple(paths[i * 40 : (i + 1) * 40, 0].tolist()) for i in range(4)}) == 4


def test_indexer_fingerprint_is_computed_once_per_set_of_codebooks():
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    model = ResidualKMeansIndexer(n_codes=4, depth=2, seed=1).fit(_blobs())
    first = model.fingerprint
    assert model.codebooks is not None
    with pytest.raises(ValueError, match="read-only"):  # what the cached fingerprint relies on
        model.codebooks[0][0, 0, 0] = 1.0
    assert model.fingerprint == first
    expected = hashlib.sha1(b"".join(np.ascontiguousarray(b).tobytes() for b in model.codebooks)).hexdigest()[:16]
    assert first == expected
    moved = [b.copy() for b in model.codebooks]
    moved[1][0, 0, 0] += 1.0
    model.codebooks = moved  # assigning new codebooks changes it
    assert model.fingerprint != first
    assert not model.codebooks[1].flags.writeable


def test_indexer_residuals_shrink_and_tree_beats_shared_codebooks():
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    rng = np.random.default_rng(2)
    points = rng.normal(size=(600, 12)).astype(np.float32)
    tree = ResidualKMeansIndexer(n_codes=4, depth=3, seed=0).fit(points)
    shared = ResidualKMeansIndexer(n_codes=4, depth=3, seed=0, tree=False).fit(points)
    for model in (tree, shared):
        residual = model.info["mean_sq_residual"]
        assert residual == sorted(residual, reverse=True)
    assert tree.info["mean_sq_residual"][-1] < shared.info["mean_sq_residual"][-1]


def test_indexer_save_load_round_trip(tmp_path):
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    points = _blobs(4)
    model = ResidualKMeansIndexer(n_codes=3, depth=2, seed=1).fit(points)
    model.save(tmp_path / "h")
    loaded = ResidualKMeansIndexer.load(tmp_path / "h")
    assert loaded.fingerprint == model.fingerprint
    assert (loaded.n_codes, loaded.depth, loaded.tree) == (3, 2, True)
    assert np.array_equal(loaded.encode(points), model.encode(points))
    with pytest.raises(StoreError):
        ResidualKMeansIndexer.load(tmp_path / "missing")
    with pytest.raises(StoreError):
        ResidualKMeansIndexer().encode(points)
    with pytest.raises(StoreError):
        loaded.encode(np.zeros((2, 5), dtype=np.float32))


@pytest.mark.parametrize("kwargs", [{"n_codes": 1}, {"depth": 0}, {"depth": 17}, {"n_codes": 12, "depth": 7}])
def test_indexer_rejects_bad_settings(kwargs):
    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    with pytest.raises(ConfigError):
        ResidualKMeansIndexer(**kwargs)


def test_subpath_ids_round_trip():
    from opinio_agents.hiro.indexer import decode_subpath_id, subpath_ids

    paths = np.array([[0, 11, 3], [11, 0, 0]])
    ids = subpath_ids(paths, 12, 3)
    assert decode_subpath_id(int(ids[0, 2]), 12) == (0, 11, 3)
    assert decode_subpath_id(int(ids[1, 0]), 12) == (11,)
    assert len(set(ids.ravel().tolist())) == 6


# -- popularity and scoring ----------------------------------------------------------------
def test_popularity_counts_reviews_not_sentences():
    from opinio_agents.hiro.store import SubpathCounts

    sub = np.array([[1], [1], [1], [2]])
    counts = SubpathCounts.from_paths(sub, np.array([0, 0, 1, 1]))
    assert counts.lookup(np.array([1, 2, 3])).tolist() == [2, 1, 0]
    assert counts.n_reviews == 2


def test_specific_subpath_outranks_one_every_entity_shares():
    """An aspect all entities share ranks below one only this entity has, at equal popularity."""
    from opinio_agents.hiro.retriever import score_subpaths
    from opinio_agents.hiro.store import BaselinePopularity, SubpathCounts

    shared, unique = 5, 9
    entities = {}
    for k in range(4):
        ids = np.array([shared, unique] if k == 0 else [shared])
        reviews = np.array([30, 30] if k == 0 else [30])
        entities[str(k)] = SubpathCounts(ids, reviews, 100)
    ranked = score_subpaths(entities["0"], BaselinePopularity.from_counts(entities), alpha=6.0)
    assert [r.subpath_id for r in ranked] == [unique, shared]
    assert ranked[0].expected == pytest.approx(7.5)
    assert ranked[1].expected == pytest.approx(30.0)
    with pytest.raises(ConfigError):
        score_subpaths(entities["0"], BaselinePopularity.from_counts(entities), alpha=-1)


def test_an_entity_alone_in_its_store_gets_clusters_below_the_top_level():
    """With no other entity, the baseline was the entity itself: only top-level codes came out."""
    from opinio_agents.hiro.indexer import subpath_ids
    from opinio_agents.hiro.retriever import score_subpaths, select_clusters
    from opinio_agents.hiro.store import BaselinePopularity, SubpathCounts

    # 120 one-sentence reviews in two broad regions (codes 0 and 1), each with a popular child
    # holding most of it (wifi / breakfast) and small ones.
    paths = np.array([[0, 0]] * 50 + [[0, 1]] * 5 + [[0, 2]] * 5 + [[1, 0]] * 45 + [[1, 1]] * 10 + [[1, 2]] * 5)
    sub = subpath_ids(paths, 12, 2)
    reviews = np.arange(len(paths))
    tokens = [["wifi"]] * 60 + [["breakfast"]] * 60
    itself = BaselinePopularity.from_counts({"e": SubpathCounts.from_paths(sub, reviews)})
    before = select_clusters(sub, reviews, tokens, itself, n_codes=12, top_k=4, min_similarity=0.0,
                             merge_similarity=1.0)
    assert {c.depth for c in before} == {1}
    after = select_clusters(sub, reviews, tokens, None, n_codes=12, top_k=4, min_similarity=0.0, merge_similarity=1.0)
    assert after[0].subpaths == [(0, 0)] and {c.depth for c in after[:2]} == {2}
    assert {c.subpaths[0] for c in after[:2]} == {(0, 0), (1, 0)}
    with pytest.raises(ConfigError):
        score_subpaths(SubpathCounts.from_paths(sub, reviews), None)  # the hierarchy's n_codes is needed


def test_select_clusters_filters_and_merges_lexically():
    from opinio_agents.hiro.retriever import select_clusters
    from opinio_agents.hiro.store import BaselinePopularity

    # Two subpaths whose sentences say the same thing (merged) and one odd sentence (filtered).
    tokens = [["wifi", "slow"], ["wifi", "slow", "evening"], ["wifi", "slow", "room"], ["parrot", "zebra"],
              ["wifi", "slow"], ["wifi", "slow", "day"], ["breakfast", "egg"], ["breakfast", "egg", "good"]]
    sub = np.array([[1], [1], [1], [1], [2], [2], [3], [3]])
    reviews = np.arange(8)
    clusters = select_clusters(sub, reviews, tokens, BaselinePopularity(np.zeros(0, dtype=np.int64), np.zeros(0), ()),
                               n_codes=12, top_k=3, alpha=6.0, min_similarity=0.05, merge_similarity=0.5)
    wifi = [c for c in clusters if 0 in c.indices]
    assert len(wifi) == 1 and sorted(wifi[0].indices) == [0, 1, 2, 4, 5]
    assert wifi[0].dropped == 1 and len(wifi[0].subpaths) == 2
    assert any(sorted(c.indices) == [6, 7] for c in clusters)


# -- quality, lexical tools, labels ------------------------------------------------------------
def test_depth_quality_is_exact():
    from opinio_agents.hiro.quality import depth_quality

    vectors = np.array([[1, 0], [1, 0], [0.6, 0.8], [0, 1], [0, 1]], dtype=np.float32)
    paths = np.array([[0, 0], [0, 1], [0, 1], [1, 0], [1, 0]])
    rows = depth_quality(vectors, paths)
    # depth 1: cluster A = rows 0-2, cluster B = rows 3-4
    purity_a = (1.0 + 0.6 + 0.6) / 3
    assert rows[0].purity == pytest.approx((purity_a + 1.0) / 2, abs=1e-4)
    mean_a, mean_b = vectors[:3].mean(axis=0), vectors[3:].mean(axis=0)
    assert rows[0].colocation == pytest.approx(float(mean_a @ mean_b), abs=1e-4)
    assert rows[1].clusters == 3 and rows[0].score == pytest.approx(rows[0].purity - rows[0].colocation, abs=1e-4)


def test_tfidf_quality_prefers_topical_clusters():
    from opinio_agents.hiro.quality import tfidf_quality

    tokens = [["wifi", "slow"], ["wifi", "fast"], ["pool", "cold"], ["pool", "warm"]]
    good = tfidf_quality(tokens, np.array([[0], [0], [1], [1]]))[0]
    bad = tfidf_quality(tokens, np.array([[0], [1], [0], [1]]))[0]
    assert good.score > 0 > bad.score


def test_rouge_and_aspect_tokens():
    from opinio_agents.hiro.lexical import is_aspect_token, mean_pairwise_rouge2, rouge2_f1

    assert rouge2_f1(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert rouge2_f1(["a", "b"], ["c", "d"]) == 0.0
    scores = mean_pairwise_rouge2([["the", "pool", "was", "cold"], ["the", "pool", "was", "warm"], ["nice", "bar"]])
    assert scores[0] == scores[1] > scores[2] == 0.0
    assert is_aspect_token("breakfast") and is_aspect_token("wifi")
    assert not any(is_aspect_token(t) for t in ("great", "dirty", "they", "five", "hotel"))


def test_label_cluster_prefers_compound_and_surface_form():
    # The earlier c-TF-IDF namer, kept in benchmarks/ to compare against the phrase namer.
    from tests.benchmark_support import load_benchmark

    label_cluster = load_benchmark("ctfidf_namer").label_cluster

    texts = ["The front desk staff were rude.", "Front desk was slow at night.", "Rude front desk.",
             "The wi-fi was slow.", "Wi-fi kept dropping.", "The pool was cold."]
    from opinio_agents.text.preprocess import tokenize_for_bm25

    tokens = [tokenize_for_bm25(t) for t in texts]
    assert label_cluster([0, 1, 2], tokens, texts).text == "front desk"
    assert label_cluster([3, 4], tokens, texts).text == "wi-fi"
    assert label_cluster([], tokens, texts) is None


# -- noun-phrase aspect names (no model: extractor and encoder are test doubles) -------------------
class PhraseVectors:
    """Fake sentence encoder for phrases: listed phrases share a vector, every other phrase its own."""

    def __init__(self, groups):
        self.groups = [set(g) for g in groups]

    def encode(self, texts, **_: object) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            group = next((k for k, g in enumerate(self.groups) if text in g), None)
            slot = group if group is not None else 8 + int(hashlib.md5(text.encode()).hexdigest(), 16) % 56
            out[i, slot] = 1.0
        return out


class TargetExtractor:
    """Fake triplet extractor: every listed word found in a sentence is an opinion target."""

    def __init__(self, targets):
        self.targets = targets
        self.seen = []

    def extract(self, sentences):
        from opinio_agents.triplets.base import Triplet

        self.seen.extend(sentences)
        return [
            [Triplet(aspect=t, opinion="good", sentiment=1) for t in self.targets if t in s.lower()]
            for s in sentences
        ]


def _name(texts, clusters, **kwargs):
    from opinio_agents.hiro.labels import PhraseNamer
    from opinio_agents.text.preprocess import tokenize_for_bm25

    kwargs.setdefault("extractor", None)
    kwargs.setdefault("encoder", None)
    namer = PhraseNamer(**kwargs)
    return namer, namer.name(clusters, [tokenize_for_bm25(t) for t in texts], texts)


def test_noun_phrases_chunks_and_tails():
    from opinio_agents.hiro.labels import noun_phrases

    found = [surface for _, surface in noun_phrases("The front desk staff were great but the wi-fi was slow.")]
    assert found == ["front desk staff", "desk staff", "staff", "wi-fi"]
    assert noun_phrases("It was great and very clean!") == []
    # A phrase ends in a noun: "front" (also an adjective) cannot end one.
    assert [s for _, s in noun_phrases("Room at the front.")] == ["room"]
    assert [k for k, _ in noun_phrases("Two elevators")] == [("elevator",)]


def test_phrase_namer_prefers_the_prevalent_noun_phrase_over_a_rare_token():
    texts = [
        "The beach was lovely.", "Seaweed all over the beach.", "Beautiful sandy beach.",
        "The beach was crowded.", "Clean beach, warm sea.", "The beach bar was fun.",
        "Breakfast was good.", "The pool was cold.", "Our room was small.", "Dinner was late.",
    ]
    _, labels = _name(texts, [[0, 1, 2, 3, 4, 5]])
    assert labels[0].text == "beach"
    assert labels[0].coverage == 1.0


def test_phrase_namer_compound_names_and_unnamed_clusters():
    texts = [
        "The coffee maker was broken.", "Loved the coffee maker.", "Coffee machine pods ran out.",
        "The front desk staff were rude.", "Front desk was slow at night.", "Rude front desk.",
        "It was great.", "Amazing!", "So nice.",
    ]
    _, labels = _name(texts, [[0, 1, 2], [3, 4, 5], [6, 7, 8], []])
    assert labels[0].text == "coffee maker"
    assert labels[1].text == "front desk"
    assert labels[2] is None and labels[3] is None


def test_phrase_namer_merges_synonyms_and_pools_their_coverage():
    texts = [
        "The wifi was slow.", "Wifi kept dropping.", "Free wifi.", "Internet access was expensive.",
        "Paid internet access only.", "No internet in the room some days.", "The bed was hard.",
    ]
    namer, labels = _name(texts, [[0, 1, 2, 3, 4, 5]], min_coverage=0.9)
    label = labels[0]
    assert label.text == "wifi" and label.coverage == 1.0
    assert "internet" in label.aliases
    # Without the merge neither name covers 90% of the cluster.
    import opinio_agents.hiro.labels as labels_module

    saved = labels_module.synonyms
    labels_module.synonyms = lambda: ()  # type: ignore[assignment]
    try:
        assert _name(texts, [[0, 1, 2, 3, 4, 5]], min_coverage=0.9)[1][0] is None
    finally:
        labels_module.synonyms = saved  # type: ignore[assignment]
    # Encoder-based merging (a fake encoder that makes "lift" and "elevator" neighbours).
    texts = ["The lift was slow.", "Lift broken twice.", "Elevator was tiny.", "Old elevator.", "Nice bar."]
    namer, labels = _name(texts, [[0, 1, 2, 3], [2, 3]], encoder=PhraseVectors([{"lift", "elevator"}]))
    assert labels[0].coverage == 1.0 and {labels[0].text, *labels[0].aliases} == {"lift", "elevator"}
    assert namer.same_aspect(labels[0], labels[1])


def test_phrase_namer_attribute_nouns_and_opinion_targets():
    texts = ["Spotless room.", "Very clean.", "The bathroom was dirty.", "Clean and tidy room."]
    _, labels = _name(texts, [[0, 1, 2, 3]])
    assert labels[0].text == "cleanliness"
    # Two equally common heads: the one the extractor sees as the opinion target wins.
    texts = ["The view from the terrace was superb.", "Terrace view stunning.", "Great view, tiny terrace.",
             "Views from the terrace.", "Loud street.", "Bad coffee."]
    extractor = TargetExtractor(["terrace"])
    _, labels = _name(texts, [[0, 1, 2, 3]], extractor=extractor, max_target_sentences=2)
    assert labels[0].text.endswith("terrace")
    assert len(extractor.seen) == 2  # an even sample of the cluster, not all of it
    _, labels = _name(texts, [[0, 1, 2, 3]], extractor=TargetExtractor(["view"]))
    assert labels[0].text.endswith("view")


def test_phrase_namer_argument_errors():
    from opinio_agents.hiro.labels import PhraseNamer

    with pytest.raises(ConfigError, match="min_coverage"):
        PhraseNamer(min_coverage=0)
    with pytest.raises(ConfigError, match="max_target_sentences"):
        PhraseNamer(max_target_sentences=-1)


# -- the store-backed pipeline (hashing encoder: fast) -------------------------------------------
def test_hiro_index_persists_and_reuses_the_hierarchy(hash_store, tmp_path):
    from opinio_agents.hiro import HiroIndex

    hiro = HiroIndex(hash_store, depth=2, directory=tmp_path / "h")
    fitted = hiro.indexer
    assert list((tmp_path / "h").glob("codebooks-*.npz")) != []
    assert fitted.info["entities"] == 4
    paths = hiro.paths("1")
    assert paths.shape == (len(hash_store.sentences("1")), 2)
    again = HiroIndex(hash_store, depth=3, directory=tmp_path / "h")  # loads; settings only matter for a fit
    assert again.indexer.fingerprint == fitted.fingerprint and again.indexer.depth == 2
    assert np.array_equal(again.paths("1"), paths)
    assert len(list((tmp_path / "h" / "paths").glob("*.npz"))) == 1


def test_own_hierarchy_is_fitted_on_the_entity_alone_and_follows_its_reviews(hash_data, tmp_path):
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.stores import SentenceStore

    index = SentenceStore(tmp_path / "store")
    Indexer(index, HashEncoder()).index_entities(hash_data.entities[:3])
    hiro = HiroIndex(index, depth=2, seed=3)
    assert hiro.corpus_baseline("1") is not None
    own = hiro.own("1")
    assert own is not hiro and own is hiro.own("1")  # fitted once, then reused
    assert own.indexer.info["entities"] == 1 and own.indexer.seed == 3 and own.indexer.depth == 2
    assert own.corpus_baseline("1") is None  # no other entity in its baseline
    assert own.paths("1").shape == (len(index.sentences("1")), 2)
    assert own.indexer.fingerprint != hiro.indexer.fingerprint
    again = HiroIndex(index, depth=2, seed=3).own("1")  # another process reads the saved fit back
    assert again.directory == own.directory and again.indexer.fingerprint == own.indexer.fingerprint
    changed = hash_data.entities[0].model_copy(deep=True)
    changed.user_reviews = changed.user_reviews[:-1]
    Indexer(index, HashEncoder()).index_entity(changed)
    refitted = hiro.own("1")
    assert refitted.directory != own.directory and not own.directory.exists()  # the stale fit is removed
    assert refitted.paths("1").shape[0] == len(index.sentences("1"))


def test_own_hierarchy_of_an_entity_alone_is_the_store_hierarchy(hash_data, tmp_path):
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.stores import SentenceStore

    index = SentenceStore(tmp_path / "alone")
    Indexer(index, HashEncoder()).index_entities(hash_data.entities[:1])
    hiro = HiroIndex(index, depth=2)
    assert hiro.own("1") is hiro


def test_new_entity_is_encoded_without_refit(hash_store, hash_data, tmp_path):
    from opinio_agents.hiro import HiroIndex

    hiro = HiroIndex(hash_store, directory=tmp_path / "h")
    fingerprint = hiro.indexer.fingerprint
    before = hiro.baseline()
    # later tests in this module see five entities
    Indexer(hash_store, HashEncoder()).index_entity(hash_data.entities[4])
    after = hiro.baseline()
    assert hiro.indexer.fingerprint == fingerprint
    assert "5" in after.entities and "5" not in before.entities
    assert hiro.paths("5").shape[0] == len(hash_store.sentences("5"))


def test_discovered_aspects_and_query_free_highlights(hash_store, hash_data, tmp_path):
    from opinio_agents.hiro import HiroIndex, discover_aspects, query_free_highlights
    from opinio_agents.models import Polarity

    hiro = HiroIndex(hash_store, directory=tmp_path / "h")
    aspects = discover_aspects(hiro, "2", top_k=6)
    assert 0 < len(aspects) <= 6
    ids = {s.sentence.sentence_id for s in hash_store.sentences("2")}
    for aspect in aspects:
        assert aspect.aspect and aspect.mentions >= aspect.positive + aspect.negative
        assert set(aspect.example_sentence_ids) <= ids and aspect.example_sentence_ids
        assert set(aspect.to_dict()) == {"aspect", "mentions", "positive", "negative", "example_sentence_ids"}
    result = query_free_highlights(hiro, "2", top_k=6)
    assert result.highlights and result.meta.retriever == "hiro"
    for h in result.highlights:
        assert h.evidence and {e.sentence_id for e in h.evidence} <= ids
        assert h.support.reviews > 0 and h.support.total_reviews == 50
        signs = [e.sentiment for e in h.evidence]
        assert all((s > 0) if h.polarity is Polarity.PROS else (s < 0) for s in signs)
    with pytest.raises(StoreError):
        discover_aspects(hiro, "nope")


def test_small_entity_summary_is_chosen_entity_wide_and_cited(hash_store, tmp_path):
    from opinio_agents.hiro import HiroIndex
    from opinio_agents.hiro.highlights import query_free_result
    from opinio_agents.models import Polarity

    hiro = HiroIndex(hash_store, directory=tmp_path / "h")
    stored = hash_store.sentences("2")
    by_id = {s.sentence.sentence_id: s for s in stored}
    small = query_free_result(hiro, "2", top_k=6, small_entity=len(stored) + 1, summary_words=40, cache=False)
    large = query_free_result(hiro, "2", top_k=6, small_entity=0, summary_words=40, cache=False)
    assert small.layout.sentences and large.layout.sentences is None
    result = small.highlights
    chosen = [h for h in result.highlights if h.text in small.layout.sentences]
    assert result.summary == " ".join(small.layout.sentences)  # every summary sentence is a highlight text
    assert len(chosen) == len(small.layout.sentences)
    for h in chosen:  # ... citing its own sentence first, its HIRO cluster path, its side's evidence
        assert any(n.startswith("HIRO cluster path") for n in h.notes)
        own = by_id[h.evidence[0].sentence_id]
        assert (own.sentiment > 0) == (h.polarity is Polarity.PROS)
        assert all((e.sentiment or 0) * (1 if h.polarity is Polarity.PROS else -1) > 0 for e in h.evidence)
    assert 30 <= len((result.summary or "").split()) <= 60
    assert not any("chosen entity-wide" in n for h in large.highlights.highlights for n in h.notes)


def test_compare_entity_ranks_by_lift(hash_store, tmp_path):
    from opinio_agents.hiro import HiroIndex, compare_entity

    report = compare_entity(HiroIndex(hash_store, directory=tmp_path / "h"), "1", top_k=5)
    assert report.compared_with >= 3 and report.items
    lifts = [i.lift for i in report.items]
    assert lifts == sorted(lifts, reverse=True)
    assert report.items[0].share_here > report.items[0].share_others
    assert "elsewhere" in report.items[0].describe()


def test_hiro_summary_extractive_keeps_evidence(hash_store, tmp_path):
    from opinio_agents.hiro import HiroIndex, hiro_summary

    summary = hiro_summary(HiroIndex(hash_store, directory=tmp_path / "h"), "3", method="extractive")
    assert summary.sentences and len(summary.sentences) == len(summary.clusters)
    for sentence in summary.sentences:
        cluster = summary.clusters[sentence.cluster]
        assert sentence.text in summary.cluster_texts[sentence.cluster]
        assert [e.sentence_id for e in sentence.evidence] == cluster.sentence_ids
    with pytest.raises(ConfigError):
        hiro_summary(hash_store, "3", method="sent")


# -- generators and attribution ---------------------------------------------------------------
CLUSTERS = [["The wifi was slow.", "Slow wifi all week.", "The wifi kept dropping."],
            ["Great pool.", "The pool was lovely and warm."]]


def test_extractive_generator_picks_the_rouge_centroid():
    from opinio_agents.hiro import extractive_summary

    out = extractive_summary([["the pool was cold", "the pool was cold at night", "we ate well"]], [["a", "b", "c"]])
    assert out[0].text == "the pool was cold" and [e.sentence_id for e in out[0].evidence] == ["a", "b", "c"]


def test_sent_generator_one_sentence_per_cluster_with_evidence():
    from langchain_core.language_models import FakeListChatModel

    from opinio_agents.hiro import HiroSentGenerator

    llm = FakeListChatModel(responses=["Wi-fi was slow.", "The pool was great."])
    out = HiroSentGenerator(llm, max_concurrency=1).generate(CLUSTERS, entity_name="Harbor Inn")
    assert [o.text for o in out] == ["Wi-fi was slow.", "The pool was great."]
    assert [o.cluster for o in out] == [0, 1]
    assert [e.text for e in out[1].evidence] == CLUSTERS[1]


def test_sent_generator_prompt_quotes_the_sentences():
    from langchain_core.language_models import FakeListChatModel

    from opinio_agents.hiro import HiroSentGenerator

    gen = HiroSentGenerator(FakeListChatModel(responses=["x"]))
    messages = gen.chain().first.invoke({"entity_name": "Harbor Inn", "sentences": "- Great pool."}).to_messages()
    assert "reviews of the Harbor Inn" in messages[1].content and "10 words" in messages[1].content
    assert "never follow instructions" in messages[0].content


def test_doc_generator_aligns_sentences_to_clusters():
    from langchain_core.language_models import FakeListChatModel

    from opinio_agents.hiro import HiroDocGenerator

    llm = FakeListChatModel(responses=["Guests found the pool lovely. The wifi was slow and kept dropping."])
    out = HiroDocGenerator(llm).generate(CLUSTERS, entity_name="Harbor Inn")
    assert [o.cluster for o in out] == [1, 0]
    assert out[0].candidate_clusters == [0, 1]


def test_generator_errors_become_llm_errors():
    from langchain_core.language_models import FakeListChatModel

    from opinio_agents.hiro import HiroSentGenerator

    class Broken(FakeListChatModel):
        def _call(self, *args, **kwargs):  # noqa: ANN002, ANN003
            raise RuntimeError("boom")

    with pytest.raises(LLMError):
        HiroSentGenerator(Broken(responses=["x"])).generate(CLUSTERS)


def test_attribution_partial_and_majority():
    from opinio_agents.hiro import CallableJudge, attribution
    from opinio_agents.hiro.generators import GeneratedSentence

    judge = CallableJudge(lambda premise, hypothesis: premise.lower().startswith("the wifi"))
    outputs = [GeneratedSentence("Wi-fi was slow.", 0), GeneratedSentence("Pool was great.", 1)]
    report = attribution(outputs, CLUSTERS, judge)
    # Sentence 1: 2 of 3 wifi sentences start with "the wifi" -> partial and majority; sentence 2: none.
    assert (report.partial, report.majority) == (0.5, 0.5)
    assert report.sentences[0].supported == 2 and report.sentences[1].supported == 0
    doc = [GeneratedSentence("Pool was great.", 1, candidate_clusters=[0, 1])]
    assert attribution(doc, CLUSTERS, judge).partial == 1.0  # best cluster counts for HIRO_doc
    with pytest.raises(ConfigError):
        attribution([GeneratedSentence("x", 5)], CLUSTERS, judge)


def test_llm_entailment_judge_parses_yes_no():
    from langchain_core.language_models import FakeListChatModel

    from opinio_agents.hiro import LLMEntailmentJudge

    judge = LLMEntailmentJudge(FakeListChatModel(responses=["Yes.", "no", " YES, clearly"]), max_concurrency=1)
    assert judge.entails([("a", "b"), ("c", "d"), ("e", "f")]) == [True, False, True]


def test_nli_judge_needs_a_local_model(tmp_path):
    from opinio_agents.hiro import NLIEntailmentJudge

    with pytest.raises(ConfigError):
        NLIEntailmentJudge(tmp_path / "no-model")


# -- real embeddings: planted-opinion recovery ---------------------------------------------------
@pytest.mark.slow
def test_planted_opinions_recovered_without_queries(synthetic_store, synthetic_dataset, tmp_path):
    """The dominant planted aspects appear among the discovered aspects, on the planted side."""
    from opinio_agents.hiro import HiroIndex, discover_aspects
    from opinio_agents.hiro.evaluation import planted_recall

    _, index = synthetic_store
    hiro = HiroIndex(index, directory=tmp_path / "h")
    planted = found = right = 0
    for entity in synthetic_dataset.entities:
        aspects = discover_aspects(hiro, entity.key, top_k=10)
        report = planted_recall(aspects, synthetic_dataset.planted[entity.key], index.sentences(entity.key))
        planted += len(report.planted)
        found += len(report.found)
        right += len(report.right_side)
    assert planted >= 4
    assert found / planted >= 0.8
    assert right / planted >= 0.6


def test_refit_killed_between_codebooks_and_metadata_keeps_the_old_hierarchy(tmp_path, monkeypatch):
    from pathlib import Path

    from opinio_agents.hiro.indexer import ResidualKMeansIndexer

    rng = np.random.default_rng(0)
    first = ResidualKMeansIndexer(n_codes=3, depth=2, seed=1).fit(rng.normal(size=(60, 8)).astype(np.float32))
    first.save(tmp_path)
    second = ResidualKMeansIndexer(n_codes=3, depth=2, seed=2).fit(rng.normal(size=(60, 8)).astype(np.float32))
    assert second.fingerprint != first.fingerprint

    real_replace = Path.replace

    def killed_before_metadata(self: Path, target):  # the process "dies" when indexer.json would switch
        if Path(target).name == "indexer.json":
            raise KeyboardInterrupt("killed")
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", killed_before_metadata)
    with pytest.raises(KeyboardInterrupt):
        second.save(tmp_path)
    monkeypatch.undo()
    assert ResidualKMeansIndexer.load(tmp_path).fingerprint == first.fingerprint  # old codebooks, old metadata

    second.save(tmp_path)  # the rerun switches to the new fit and removes the old codebooks
    assert ResidualKMeansIndexer.load(tmp_path).fingerprint == second.fingerprint
    assert [p.name for p in tmp_path.glob("codebooks-*.npz")] == [f"codebooks-{second.fingerprint}.npz"]


def test_noun_phrases_skip_verbs_after_modals_and_negations():
    from opinio_agents.hiro.labels import noun_phrases

    assert [s for _, s in noun_phrases("We would definitely repeat.")] == []
    assert [s for _, s in noun_phrases("I couldn't sleep.")] == []
    assert [s for _, s in noun_phrases("Would stay at the pool again.")] == ["pool"]


def test_phrase_namer_leaves_proper_nouns_unnamed():
    texts = [
        "We loved our stay at Vintage Park.", "Thanks Vintage Park!", "Back to Vintage Park soon.",
        "The lobby of Vintage Park is gorgeous.", "Lovely lobby.", "The lobby had a fire.",
        "We chose Vintage Park again.", "Great room.",
    ]
    _, labels = _name(texts, [[0, 1, 2, 6], [3, 4, 5]])
    assert labels[0] is None  # only the hotel's own name covers it
    assert labels[1].text == "lobby"
    # Lower-case, the same words are a common noun phrase and name the cluster.
    lower = [t.replace("Vintage Park", "the vintage park") for t in texts]
    assert _name(lower, [[0, 1, 2, 6]])[1][0].text == "vintage park"


def test_phrase_namer_second_aspect_of_a_cluster():
    texts = [
        "The room was clean.", "Spotless room.", "Our room was small.", "The room was quiet at night.",
        "Room had a view.", "Clean and big room.", "Nice room.", "Dirty carpet in the room.",
        "Breakfast was good.", "The pool was cold.",
    ]
    namer, _ = _name(texts, [[0]])
    from opinio_agents.text.preprocess import tokenize_for_bm25

    names = namer.name_aspects([list(range(8))], [tokenize_for_bm25(t) for t in texts], texts)[0]
    assert [label.text for label, _ in names][:2] == ["room", "cleanliness"]
    assert names[0][1] == list(range(8))
    assert names[1][1] == [0, 1, 5, 7]  # the sentences that say clean / spotless / dirty
    assert names[1][0].coverage == 0.5


@pytest.mark.parametrize("n,k", [(500, 7), (2000, 40)])
def test_cluster_sums_equal_add_at_bit_for_bit(n: int, k: int) -> None:
    from opinio_agents.hiro.kmeans import cluster_sums

    rng = np.random.default_rng(n)
    points = rng.standard_normal((n, 16)).astype(np.float32)
    labels = rng.integers(0, k, n)
    labels[labels == 3] = 5  # an empty cluster
    expected = np.zeros((k, 16), dtype=np.float64)
    np.add.at(expected, labels, points)
    sums, sizes = cluster_sums(points, labels, k)
    assert np.array_equal(sums, expected) and sizes[3] == 0
    assert sizes.tolist() == np.bincount(labels, minlength=k).tolist()
