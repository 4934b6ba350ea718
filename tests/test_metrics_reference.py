"""ROUGE parity with rouge_score, side-level scores, TPR/TNR, BERTScore."""

from __future__ import annotations

import random

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.reference import (
    AlignmentCounts,
    BertScoreMetric,
    VaderClassifier,
    rouge_side_scores,
    sentiment_alignment,
    side_texts,
)
from opinio_agents.evaluation.rouge import lcs_length, rouge_f1, rouge_scores, rouge_tokenize
from opinio_agents.models import ExpertReview, Highlight, HighlightSet, Polarity

WORDS = (
    "the room rooms was were clean cleaning dirty wifi wi-fi fast slow staff friendly breakfast "
    "and not very a pool"
).split()


def _texts(seed: int, n: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)

    def sent() -> str:
        lines = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
            for _ in range(rng.randint(1, 3))
        ]
        return "\n".join(lines) + rng.choice(["", ".", "!"])

    return [(sent(), sent()) for _ in range(n)]


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_rouge_parity_with_rouge_score(use_stemmer):
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    types = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]
    scorer = rouge_scorer.RougeScorer(types, use_stemmer=use_stemmer)
    pairs = _texts(7, 150) + [
        ("", "clean room"),
        ("clean room", ""),
        ("Rooms: CLEAN!!", "room clean"),
    ]
    for pred, ref in pairs:
        ours = rouge_scores(pred, ref, rouge_types=types, use_stemmer=use_stemmer)
        theirs = scorer.score(ref, pred)
        for kind in types:
            assert ours[kind].precision == pytest.approx(theirs[kind].precision), (kind, pred, ref)
            assert ours[kind].recall == pytest.approx(theirs[kind].recall), (kind, pred, ref)
            assert ours[kind].fmeasure == pytest.approx(theirs[kind].fmeasure), (kind, pred, ref)


def test_rouge_basics():
    assert rouge_tokenize("Rooms were spotless!") == ["room", "were", "spotless"]
    assert rouge_tokenize("Rooms", use_stemmer=False) == ["rooms"]
    assert lcs_length(list("abcd"), list("acde")) == 3
    assert rouge_f1("clean rooms", "clean rooms") == 1.0
    assert rouge_f1("", "clean rooms") == 0.0
    with pytest.raises(ConfigError):
        rouge_scores("a", "b", rouge_types=("rougeX",))


def _hs(pros=(), cons=()):
    return HighlightSet(
        entity_id=1,
        pros=[Highlight(query=q, polarity=Polarity.PROS, text=t) for q, t in pros],
        cons=[Highlight(query=q, polarity=Polarity.CONS, text=t) for q, t in cons],
    )


def test_side_texts_and_rouge_per_side():
    expert = ExpertReview(
        pros={"wifi": "Fast wifi.", "staff": "Friendly staff."}, cons={"noise": "Noisy street."}
    )
    result = _hs(pros=[("wifi", "Fast wifi."), ("staff", "Friendly staff.")])
    texts = side_texts(result, expert)
    assert texts["pros"] == ("Fast wifi.\nFriendly staff.", "Fast wifi.\nFriendly staff.")
    assert texts["cons"] == ("", "Noisy street.")
    scores = rouge_side_scores(result, expert)
    assert scores["pros"] == {"R1": 100.0, "R2": pytest.approx(100 * 3 / 3), "RL": 100.0}
    assert scores["cons"] == {"R1": 0.0, "R2": 0.0, "RL": 0.0}
    assert "cons" not in rouge_side_scores(result, ExpertReview(pros={"wifi": "x"}))


def test_sentiment_alignment_counts_misses_and_other_side():
    expert = ExpertReview(
        pros={"wifi": "a", "pool": "b", "spa": "c"}, cons={"noise": "d", "price": "e"}
    )
    result = _hs(pros=[("wifi", "GOOD"), ("pool", "BAD")], cons=[("noise", "BAD"), ("spa", "GOOD")])
    seen = []

    def classifier(texts):
        seen.extend(texts)
        return [1 if t == "GOOD" else -1 for t in texts]

    counts = sentiment_alignment(result, expert, classifier)
    # spa only has a CON text (classified positive here) -> still a TP; price is missing -> miss.
    assert (counts.positives, counts.true_positives, counts.negatives, counts.true_negatives) == (
        3,
        2,
        2,
        1,
    )
    assert counts.tpr == pytest.approx(200 / 3) and counts.tnr == 50.0
    assert len(seen) == 4
    total = counts.add(AlignmentCounts(1, 1, 0, 0))
    assert total.tpr == 75.0
    assert AlignmentCounts().tpr is None
    assert total.to_dict()["TNR"] == 50.0


def test_vader_classifier_labels():
    assert VaderClassifier()(
        ["Spotless room, lovely staff!", "The wifi was terrible.", "We arrived at noon."]
    ) == [1, -1, 0]
    assert VaderClassifier()([]) == []


@pytest.mark.slow
def test_bertscore_with_local_minilm():
    if not BertScoreMetric.available():
        pytest.skip("bert-score not installed (eval extra)")
    metric = BertScoreMetric()
    same, other, empty = metric.f1(
        ["Fast wifi everywhere."] * 2 + [""], ["Fast wifi everywhere.", "Rude staff.", "x"]
    )
    assert same == pytest.approx(100.0, abs=0.01)
    assert other < same
    assert empty == 0.0
    with pytest.raises(ConfigError):
        metric.f1(["a"], [])


@pytest.mark.slow  # builds and loads a (tiny) model
def test_transformers_classifier_maps_labels_from_a_local_model(tmp_path):
    """A tiny randomly initialised SiEBERT-like model saved locally (nothing downloaded)."""
    import shutil

    from transformers import BertConfig, BertForSequenceClassification

    from opinio_agents.embeddings import default_model_path
    from opinio_agents.evaluation.reference import TransformersSentimentClassifier

    src = default_model_path()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, tmp_path / name)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        id2label={0: "NEGATIVE", 1: "POSITIVE"},
        label2id={"NEGATIVE": 0, "POSITIVE": 1},
    )
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    labels = TransformersSentimentClassifier(tmp_path)(["Great pool.", "Rude staff.", "Ok."])
    assert len(labels) == 3 and set(labels) <= {-1, 1}
    with pytest.raises(ConfigError):
        TransformersSentimentClassifier(tmp_path / "missing")


def test_scorer_classifier_thresholds_any_scorer():
    from opinio_agents.evaluation.reference import ScorerClassifier

    class Fixed:
        def score(self, texts):
            return [0.5, -0.06, 0.04, -0.5][: len(texts)]

    assert ScorerClassifier(Fixed())(["a", "b", "c", "d"]) == [1, -1, 0, -1]
    assert ScorerClassifier(Fixed(), threshold=0.1)(["a", "b"]) == [1, 0]
    assert ScorerClassifier(Fixed())([]) == []


@pytest.mark.slow
def test_default_classifier_is_the_blended_indexing_scorer():
    from opinio_agents.evaluation.reference import default_classifier

    assert default_classifier()(["Spotless room, lovely staff!", "The wifi was terrible."]) == [
        1,
        -1,
    ]
