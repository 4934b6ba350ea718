"""App. F baselines: deterministic random and oracle, graph ranking, sentiment constraint."""

from __future__ import annotations

import numpy as np
import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.baselines import (
    BaselineInput,
    Candidate,
    ExtractiveOracle,
    LexRankBaseline,
    RandomBaseline,
    TextRankBaseline,
)
from opinio_agents.evaluation.baselines.graph import lexrank_matrix, pagerank, textrank_matrix
from opinio_agents.evaluation.rouge import rouge_f1
from opinio_agents.models import ExpertReview

SENTENCES = [
    ("The pool was warm and very clean.", 1),
    ("Pool area was clean and the pool was warm.", 1),
    ("Warm clean pool, lovely loungers.", 1),
    ("The staff were rude at check-in.", -1),
    ("Rude staff at the front desk.", -1),
    ("Staff at check-in were rude and slow.", -1),
    ("We arrived on Tuesday by train.", 0),
    ("Breakfast had great coffee and fresh pastries.", 1),
    ("The street noise was terrible at night.", -1),
    ("Parking costs twenty dollars a day.", 0),
]
EXPERT = ExpertReview(
    pros={
        "pool": "Warm, clean pool.",
        "breakfast": "Fresh pastries and great coffee at breakfast.",
    },
    cons={"staff": "Rude staff at check-in.", "noise": "Terrible street noise at night."},
)


def data(entity_id: str = "7", expert: ExpertReview = EXPERT) -> BaselineInput:
    cands = [
        Candidate(f"{entity_id}:1:{i}", text, label) for i, (text, label) in enumerate(SENTENCES)
    ]
    return BaselineInput(
        entity_id=entity_id, expert=expert, candidates=cands, entity_name="Harbor Inn"
    )


def texts(hs, side):
    return [h.text for h in getattr(hs, side)]


def test_random_is_deterministic_with_a_seed_and_disjoint():
    first, again = RandomBaseline(seed=1).run(data()), RandomBaseline(seed=1).run(data())
    assert texts(first, "pros") == texts(again, "pros") and texts(first, "cons") == texts(
        again, "cons"
    )
    assert len(first.pros) == 2 and len(first.cons) == 2
    assert not set(texts(first, "pros")) & set(texts(first, "cons"))
    outs = {tuple(texts(RandomBaseline(seed=s).run(data()), "pros")) for s in range(10)}
    assert len(outs) > 1
    assert [h.query for h in first.pros] == ["pool", "breakfast"]
    assert first.meta.synthesizer == "random"


def test_random_with_fewer_sentences_than_asked():
    small = BaselineInput("1", EXPERT, [Candidate("1:1:0", "Only one.", 0)])
    hs = RandomBaseline().run(small)
    assert len(hs.pros) == 1 and hs.cons == []


def test_oracle_picks_best_rouge_l_under_sentiment_constraint():
    hs = ExtractiveOracle().run(data())
    assert texts(hs, "cons") == [
        "The staff were rude at check-in.",
        "The street noise was terrible at night.",
    ]
    assert texts(hs, "pros")[1] == "Breakfast had great coffee and fresh pastries."
    cands = data().candidates
    positives = [c.text for c in cands if c.label == 1]
    best = max(positives, key=lambda t: rouge_f1(t, EXPERT.pros["pool"]))
    assert texts(hs, "pros")[0] == best
    assert ExtractiveOracle().run(data()).model_dump() == hs.model_dump()


def test_oracle_never_reuses_a_sentence_and_respects_polarity():
    expert = ExpertReview(
        pros={"a": "Warm clean pool.", "b": "Warm clean pool."}, cons={"c": "Warm clean pool."}
    )
    hs = ExtractiveOracle().run(data(expert=expert))
    picked = texts(hs, "pros")
    assert len(set(picked)) == 2
    assert all(dict(SENTENCES)[t] == 1 for t in picked)
    assert dict(SENTENCES)[texts(hs, "cons")[0]] == -1


def test_pagerank_and_similarity_matrices():
    star = np.zeros((4, 4))
    star[0, 1:] = star[1:, 0] = 1.0
    scores = pagerank(star)
    assert scores.sum() == pytest.approx(1.0)
    assert int(np.argmax(scores)) == 0
    assert pagerank(np.zeros((0, 0))).shape == (0,)
    tr = textrank_matrix(["pool warm clean", "pool warm", "rude staff"])
    assert tr[0, 1] == pytest.approx(2 / (np.log(3) + np.log(2)))
    assert tr[0, 2] == 0 and tr[0, 0] == 0
    lr = lexrank_matrix(["pool warm", "warm pool", "rude staff"])
    assert lr.tolist()[0] == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("cls", [TextRankBaseline, LexRankBaseline])
def test_graph_baselines_pick_central_sentences_by_polarity(cls):
    hs = cls().run(data())
    assert len(hs.pros) == 2 and len(hs.cons) == 2
    assert all(dict(SENTENCES)[t] == 1 for t in texts(hs, "pros"))
    assert all(dict(SENTENCES)[t] == -1 for t in texts(hs, "cons"))
    # The three near-duplicate pool/staff sentences are the most central of each side.
    assert "pool" in texts(hs, "pros")[0].lower()
    assert "staff" in texts(hs, "cons")[0].lower()
    assert cls().run(data()).model_dump() == hs.model_dump()


def test_graph_cap_samples_deterministically():
    many = BaselineInput(
        "9",
        EXPERT,
        [Candidate(f"9:{i}:0", f"pool number {i} was warm", 1 if i % 2 else -1) for i in range(50)],
    )
    base = TextRankBaseline(max_sentences=10)
    chosen = base.select(many)
    assert len(chosen) == 10 and chosen == base.select(many)
    with pytest.raises(ConfigError):
        TextRankBaseline(max_sentences=1)


@pytest.mark.parametrize(
    "cls", [RandomBaseline, ExtractiveOracle, TextRankBaseline, LexRankBaseline]
)
def test_baselines_never_pick_the_same_text_twice(cls):
    repeated = [Candidate(f"5:{i}:0", "The pool was warm and very clean.", 1) for i in range(6)]
    repeated += [Candidate(f"5:{i}:1", "The staff were RUDE at check-in!!", -1) for i in range(6)]
    repeated += [Candidate("5:8:1", "The staff were rude at check-in.", -1)]
    repeated += [Candidate("5:9:0", "Warm clean pool, lovely loungers.", 1)]
    hs = cls().run(BaselineInput("5", EXPERT, repeated))
    chosen = texts(hs, "pros") + texts(hs, "cons")
    assert len(chosen) == len(set(chosen))
