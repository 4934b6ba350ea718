"""Evaluation against human summaries (evaluation/human.py, baselines/summary.py): fast, no model."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from opinio_agents.errors import ConfigError, DataError
from opinio_agents.evaluation.baselines.summary import (
    centroid_summary,
    lexrank_summary,
    oracle_summary,
    random_summary,
    take_budget,
)
from opinio_agents.evaluation.human import (
    HumanEvalConfig,
    HumanReferenceEvaluator,
    general_text,
    highlight_texts,
    load_references,
    parse_references,
    rouge_multi,
    summarize_records,
    write_human_tables,
)
from opinio_agents.models import Highlight, HighlightSet, Polarity, Sentence
from opinio_agents.stores.catalog import StoredSentence

REFS = {
    "h1": {
        "split": "dev",
        "general": ["The staff were friendly and the rooms were clean.", "Clean rooms, friendly staff."],
        "aspects": {"rooms": ["The rooms were clean and spacious."], "service": ["Friendly, helpful staff."]},
    },
    "h2": {"general": ["Great location near the beach."], "aspects": {}},
}


def test_parse_and_load_references(tmp_path) -> None:
    refs = parse_references(REFS)
    assert refs["h1"].aspects["rooms"] == ["The rooms were clean and spacious."]
    assert refs["h2"].aspects == {}
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(REFS))
    assert load_references(path)["h1"].general == REFS["h1"]["general"]
    with pytest.raises(DataError, match="list of strings"):
        parse_references({"x": {"general": "one string"}})
    with pytest.raises(DataError, match="object"):
        parse_references({"x": ["no"]})
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(DataError, match="not valid JSON"):
        load_references(tmp_path / "bad.json")
    with pytest.raises(DataError, match="cannot read"):
        load_references(tmp_path / "missing.json")


PAIRS = [
    (
        "The rooms were cleaned daily and the staff was helpful.",
        ["Rooms are clean. Helpful staff!", "The staff helped us."],
    ),
    ("Breakfast: eggs, bacon & coffee (all included)", ["The breakfast included coffee and eggs.", "No breakfast."]),
    ("Walking distance to everything; running shoes needed.", ["It is within walking distance of the sights."]),
]


@pytest.mark.parametrize(("system", "refs"), PAIRS)
def test_rouge_multi_matches_rouge_score_averaged(system: str, refs: list[str]) -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    expected = {"R1": 0.0, "R2": 0.0, "RL": 0.0}
    for ref in refs:
        scores = scorer.score(ref, system)
        expected["R1"] += 100 * scores["rouge1"].fmeasure / len(refs)
        expected["R2"] += 100 * scores["rouge2"].fmeasure / len(refs)
        expected["RL"] += 100 * scores["rougeL"].fmeasure / len(refs)
    got = rouge_multi(system, refs)
    for key in expected:
        assert got[key] == pytest.approx(expected[key], abs=1e-9)


def test_rouge_multi_needs_references() -> None:
    with pytest.raises(ConfigError):
        rouge_multi("x", [])


def test_baselines_select_within_limits() -> None:
    texts = ["Clean rooms.", "clean rooms!", "Friendly staff at the desk.", "Noisy street at night.", "Great pool."]
    assert take_budget(texts, [0, 1, 2], max_sentences=2) == ["Clean rooms.", "Friendly staff at the desk."]
    with pytest.raises(ConfigError):
        take_budget(texts, [0], max_sentences=None, budget_words=None)
    first = random_summary(texts, seed=3, max_sentences=3)
    assert first == random_summary(texts, seed=3, max_sentences=3) and len(first) == 3
    assert len({t.lower().strip("!.") for t in first}) == 3
    assert sum(len(t.split()) for t in random_summary(texts, seed=1, budget_words=3)) >= 3
    assert lexrank_summary(["warm pool", "the pool was warm", "rude staff"], max_sentences=1) != ["rude staff"]
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.7, 0.7], [0.0, 1.0], [0.6, 0.8]])
    assert centroid_summary(texts, vectors, max_sentences=1) == ["Friendly staff at the desk."]
    with pytest.raises(ConfigError):
        centroid_summary(texts, vectors[:2], max_sentences=1)


def test_oracle_reads_the_references() -> None:
    texts = ["Rude staff.", "The pool was cold.", "Friendly staff.", "The rooms were clean."]
    refs = ["The staff were friendly. The rooms were clean."]
    picked = oracle_summary(texts, refs, max_sentences=None, budget_words=20)
    assert set(picked) == {"Friendly staff.", "The rooms were clean."}
    assert oracle_summary(texts, refs, max_sentences=1) == ["The rooms were clean."]
    assert oracle_summary(texts, []) == []
    assert rouge_multi(" ".join(picked), refs)["R1"] > rouge_multi("Rude staff. The pool was cold.", refs)["R1"]


def test_system_texts_of_a_highlight_set() -> None:
    hs = HighlightSet(
        entity_id="h1",
        pros=[Highlight(query="rooms", polarity=Polarity.PROS, text="Clean rooms.")],
        cons=[Highlight(query="rooms", polarity=Polarity.CONS, text="Small bathrooms.")],
    )
    assert highlight_texts(hs, "rooms") == "Clean rooms. Small bathrooms."
    assert highlight_texts(hs, "food") == ""
    assert general_text(hs) == "Clean rooms. Small bathrooms."
    hs.summary = "Rooms are clean but bathrooms small."
    assert general_text(hs) == "Rooms are clean but bathrooms small."


SENTENCES = {
    "h1": [
        ("The rooms were clean and spacious.", 0.7),
        ("Staff were friendly and helpful.", 0.8),
        ("We arrived late on Tuesday.", 0.0),
        ("The pool was closed.", -0.4),
    ],
    "h2": [("Great location near the beach.", 0.8), ("Parking was expensive.", -0.5)],
}


@dataclass
class Hit:
    sentence: Sentence
    score: float


class FakeStore:
    """The few store methods the evaluator reads, over inline sentences."""

    def __init__(self) -> None:
        self.rows: dict[str, list[StoredSentence]] = {}
        for key, items in SENTENCES.items():
            self.rows[key] = [
                StoredSentence(
                    Sentence(sentence_id=f"{key}:{i}:0", entity_id=key, review_id=str(i), index=0, text=t, start=0,
                             end=len(t)),
                    tuple(t.lower().strip(".").split()),
                    s,
                )
                for i, (t, s) in enumerate(items)
            ]

    def entity_keys(self) -> list[str]:
        return list(self.rows)

    def has_entity(self, key: str) -> bool:
        return key in self.rows

    def sentences(self, key: str) -> list[StoredSentence]:
        return self.rows[key]

    def embeddings(self, key: str) -> np.ndarray:
        n = len(self.rows[key])
        return np.eye(n, 4)

    def positions(self, key: str) -> dict[str, int]:
        return {s.sentence.sentence_id: i for i, s in enumerate(self.rows[key])}


class FakeRAG:
    def __init__(self) -> None:
        self.store = FakeStore()

    def retrieve(self, key: str, query: str, *, top_k: int, retriever: str) -> list[Hit]:
        words = set(query.lower().rstrip("s").split())
        hits = [
            Hit(s.sentence, 1.0)
            for s in self.store.rows[key]
            if words & {w.rstrip("s") for w in s.tokens}
        ]
        return hits[:top_k]


def fake_system(rag, key, task, units):  # noqa: ANN001, ANN201
    if task == "aspect":
        return {"rooms": "The rooms were clean and spacious.", "service": "Staff were friendly and helpful."}
    return {"general": " ".join(s.sentence.text for s in rag.store.sentences(key)[:2])}


def test_evaluator_runs_every_task_and_baseline(tmp_path) -> None:
    evaluator = HumanReferenceEvaluator(
        FakeRAG(), parse_references(REFS), HumanEvalConfig(general_words=8), system=fake_system
    )
    records = evaluator.run()
    tasks = {(r["task"], r["system"]) for r in records}
    assert ("aspect", "bm25-top2") in tasks and ("general", "bm25-top2") not in tasks
    assert {s for t, s in tasks if t == "general"} == {"opinio", "random", "lexrank", "centroid", "oracle"}
    aspect_units = {r["unit"] for r in records if r["task"] == "aspect"}
    assert aspect_units == {"rooms", "service"}  # h2 has no aspect references
    ours = [r for r in records if r["system"] == "opinio" and r["unit"] == "rooms"][0]
    assert ours["R1"] == pytest.approx(100.0)
    bm25 = [r for r in records if r["system"] == "bm25-top2" and r["unit"] == "rooms"][0]
    assert bm25["text"] == "The rooms were clean and spacious."
    tables = summarize_records(records)
    assert {row["System"] for row in tables["general"]["rows"]} >= {"opinio", "oracle"}
    written = write_human_tables(records, tmp_path / "out", label="toy", plots=False)
    assert (tmp_path / "out" / "human_tables.md").read_text().startswith("### Aspect")
    saved = json.loads((tmp_path / "out" / "human_tables.json").read_text())
    assert saved["label"] == "toy" and saved["tables"]["aspect"]["rows"]
    assert len((tmp_path / "out" / "human_records.jsonl").read_text().splitlines()) == len(records)
    assert written["notes"] == []
    only = HumanReferenceEvaluator(
        FakeRAG(), parse_references(REFS), HumanEvalConfig(tasks=("general",), baselines=("random",)),
        system=fake_system,
    )
    assert {r["system"] for r in only.run(["h2"])} == {"opinio", "random"}
    with pytest.raises(ConfigError, match="no indexed entity"):
        only.run(["unknown"])
    with pytest.raises(ConfigError, match="task"):
        HumanReferenceEvaluator(FakeRAG(), {}, HumanEvalConfig(tasks=("bogus",)))  # type: ignore[arg-type]


def test_general_budget_defaults_to_reference_length() -> None:
    evaluator = HumanReferenceEvaluator(FakeRAG(), parse_references(REFS), system=fake_system)
    lengths = [9, 4, 5]
    assert evaluator.general_words == round(sum(lengths) / len(lengths))


def test_specificity_margin_scores_against_the_other_entities() -> None:
    from opinio_agents.evaluation.human import rouge_multi, specificity_margin

    own = ["The pool is heated and the spa is great."]
    others = [["Rude staff and a dirty lobby."], ["The staff were rude."]]
    other, margin = specificity_margin("Heated pool, great spa.", own, others)
    assert other == 0.0 and margin == pytest.approx(rouge_multi("Heated pool, great spa.", own)["RL"])
    generic_other, generic_margin = specificity_margin("The staff were rude.", ["Rude staff."], others)
    assert generic_other > 30 and generic_margin < 0  # fits the other entities as well as its own
    evaluator = HumanReferenceEvaluator(
        FakeRAG(), parse_references(REFS), HumanEvalConfig(general_words=8), system=fake_system
    )
    records = evaluator.run()
    general = [r for r in records if r["task"] == "general"]
    assert general and all(r["margin"] == pytest.approx(r["RL"] - r["RL_other"]) for r in general)
    row = next(r for r in summarize_records(records)["general"]["rows"] if r["System"] == "opinio")
    assert set(row) >= {"RL other", "Margin"}
    none = HumanReferenceEvaluator(
        FakeRAG(), parse_references(REFS), HumanEvalConfig(general_words=8, margin_entities=0), system=fake_system
    )
    assert all("margin" not in r for r in none.run())
