"""Tests for opinio_agents.datasets: the shipped sample and the synthetic generator."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from opinio_agents.datasets import (
    ASPECTS,
    generate_dataset,
    load_sample,
    mentions,
    sample_path,
    truth_path,
    write_sample,
    write_synthetic,
)
from opinio_agents.datasets import phrases as bank
from opinio_agents.datasets.synthetic import generate_entity
from opinio_agents.errors import ConfigError
from opinio_agents.models import Entity

# Simple sentence split (end punctuation, line breaks, <br/>), enough to count.
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|<br/>")


def _sentences(text: str) -> list[str]:
    return [part for part in _SPLIT.split(text) if part.strip()]


def _mean_rating(reviews: list) -> float:
    values = [r["rating"] if isinstance(r, dict) else r.rating for r in reviews]
    values = [v for v in values if v is not None]
    return sum(values) / len(values)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _polarity(aspect: str, text: str, extra: dict | None = None) -> str:
    """Sentiment of the review's sentence about ``aspect``, by its closest known template."""
    phrases = ASPECTS[aspect]
    known = [(t, "positive") for t in phrases.positive] + [(t, "negative") for t in phrases.negative]
    known += [(t, "neutral") for t in phrases.neutral]
    known += [(t, label) for label, items in (extra or {}).items() for t in items]
    best, label = 0.0, "unknown"
    for sentence in _sentences(text):
        if not mentions(aspect, sentence):
            continue
        words = _words(sentence)
        for template, template_label in known:
            ref = _words(template)
            score = len(words & ref) / len(words | ref)
            if score > best:
                best, label = score, template_label
    return label


def _sample_script():
    path = Path(__file__).resolve().parents[1] / "scripts" / "make_sample.py"
    spec = importlib.util.spec_from_file_location("make_sample", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_sample", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sample() -> list[Entity]:
    return load_sample()


# -- phrase bank -----------------------------------------------------------------


def test_bank_has_thirty_aspects_with_enough_templates() -> None:
    assert len(ASPECTS) >= 30
    for phrases in ASPECTS.values():
        assert len(phrases.positive) >= 6, phrases.name
        assert len(phrases.negative) >= 6, phrases.name
        assert len(set(phrases.positive)) == len(phrases.positive)
        assert phrases.expert_pro and phrases.expert_con


def test_every_template_mentions_its_own_aspect_and_no_other() -> None:
    for name, phrases in ASPECTS.items():
        for sentence in (*phrases.positive, *phrases.negative, *phrases.neutral):
            assert mentions(name, sentence), (name, sentence)
            leaks = [other for other in ASPECTS if other != name and mentions(other, sentence)]
            assert not leaks, (name, sentence, leaks)


def test_narrative_sentences_mention_no_aspect() -> None:
    narrative = (
        *bank.OPENERS, *bank.FILLER, *bank.NON_NATIVE_FILLER, *bank.CLOSERS_POSITIVE,
        *bank.CLOSERS_NEGATIVE, *bank.CLOSERS_MIXED, *bank.ONE_LINERS_POSITIVE,
        *bank.ONE_LINERS_NEGATIVE, *bank.PREFIXES_POSITIVE, *bank.PREFIXES_NEGATIVE,
        *bank.PREFIXES_ANY, *(v for values in bank.SLOTS.values() for v in values),
    )  # fmt: skip
    for sentence in narrative:
        hits = [name for name in ASPECTS if mentions(name, sentence)]
        assert not hits, (sentence, hits)


def test_mention_matching_variants() -> None:
    assert mentions("wi-fi", "WIFI was down") and mentions("wi-fi", "the wi fi")
    assert mentions("check-in", "we checked in late") and mentions("check-in", "Check in took ages")
    assert not mentions("bar", "the minibar") and not mentions("view", "a long review")
    with pytest.raises(ConfigError, match="unknown aspect"):
        mentions("jacuzzi", "text")


# -- shipped sample --------------------------------------------------------------


def test_sample_loads_with_the_data_model(sample: list[Entity]) -> None:
    assert sample_path().name == "sample_opiniobank.json"
    assert len(sample) >= 2
    assert len({entity.key for entity in sample}) == len(sample)
    for entity in sample:
        assert len(entity.user_reviews) >= 150
        ids = [str(review.review_id) for review in entity.user_reviews]
        assert len(set(ids)) == len(ids)
        assert entity.expert_review is not None
        assert 5 <= len(entity.expert_review.pros) <= 8
        assert 5 <= len(entity.expert_review.cons) <= 8


def test_sample_raw_json_uses_paper_format() -> None:
    records = json.loads(sample_path().read_text(encoding="utf-8"))
    assert isinstance(records, list)
    review = records[0]["user_reviews"][0]
    assert set(records[0]) == {"entity_id", "entity_name", "expert_review", "user_reviews"}
    assert {"review_id", "text", "rating", "publication_date"} <= set(review)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", review["publication_date"])
    assert sample_path().stat().st_size < 1_500_000


def test_sample_expert_queries_are_supported_by_reviews(sample: list[Entity]) -> None:
    profiles = {p.entity_id: p for p in _sample_script().PROFILES}
    for entity in sample:
        extra = profiles[entity.entity_id].extra
        assert entity.expert_review is not None
        for side, sign in (("pros", 1), ("cons", -1)):
            for query in getattr(entity.expert_review, side):
                mentioning = [r for r in entity.user_reviews if mentions(query, r.text)]
                assert len(mentioning) >= 10, (entity.entity_name, query, len(mentioning))
                votes = Counter(_polarity(query, r.text, extra.get(query, {})) for r in mentioning)
                agree, dissent = ("positive", "negative") if sign > 0 else ("negative", "positive")
                # A clear majority on the expert's side, with some dissent.
                assert votes[agree] >= 2 * votes[dissent], (entity.entity_name, query, votes)
                assert votes[agree] < len(mentioning), (entity.entity_name, query, votes)


def test_sample_is_varied(sample: list[Entity]) -> None:
    reviews = [review for entity in sample for review in entity.user_reviews]
    texts = [review.text for review in reviews]
    assert len(set(texts)) == len(texts)
    lengths = [len(_sentences(text)) for text in texts]
    assert min(lengths) <= 2 and max(lengths) >= 15
    assert set(Counter(int(review.rating or 0) for review in reviews)) >= {1, 2, 3, 4, 5}
    assert len({review.publication_date.year for review in reviews if review.publication_date}) >= 5
    assert any(review.user_reviews_posted is None for review in reviews)
    joined = "\n".join(texts)
    for marker in ("\n\n", "<br/>", " & ", "!!!"):
        assert marker in joined, marker
    assert "&amp;" not in joined and "&amp;" in sample_path().read_text(encoding="utf-8")  # decoded on load
    assert re.search(r"\b[A-Z]{2,}(?: [A-Z]{2,}){2,}", joined)


def test_sample_has_a_few_critical_complaints(sample: list[Entity]) -> None:
    texts = [review.text.lower() for review in sample[0].user_reviews]
    assert 1 <= sum("bed bugs" in text for text in texts) <= 3
    assert 1 <= sum("stolen" in text for text in texts) <= 3


def test_write_sample_copies_the_file(tmp_path) -> None:
    out = write_sample(tmp_path / "nested" / "hotels.json")
    assert out.read_bytes() == sample_path().read_bytes()
    assert [p.name for p in out.parent.iterdir()] == ["hotels.json"]


# -- synthetic generator ---------------------------------------------------------


def test_generator_is_deterministic_and_seed_dependent() -> None:
    first = generate_dataset(2, 40, seed=7)
    again = generate_dataset(2, 40, seed=7)
    other = generate_dataset(2, 40, seed=8)
    dump = [e.model_dump(mode="json") for e in first.entities]
    assert dump == [e.model_dump(mode="json") for e in again.entities]
    assert first.truth == again.truth
    assert dump != [e.model_dump(mode="json") for e in other.entities]


def test_truth_matches_planted_and_expert_review() -> None:
    data = generate_dataset(3, 60, seed=1, aspects_per_entity=(3, 6))
    assert len(data.entities) == 3
    for entity in data.entities:
        planted = data.planted[entity.key]
        truth = data.truth[entity.key]
        assert 3 <= len(planted) <= 6
        assert truth["pros"] == [p.aspect for p in planted if p.polarity == "pros"]
        assert truth["cons"] == [p.aspect for p in planted if p.polarity == "cons"]
        assert entity.expert_review is not None
        assert list(entity.expert_review.pros) == truth["pros"]
        assert list(entity.expert_review.cons) == truth["cons"]


def test_prevalence_and_majority_as_planted() -> None:
    record, planted = generate_entity(0, 400, seed=3)
    reviews = record["user_reviews"]
    for opinion in planted:
        texts = [r for r in reviews if mentions(opinion.aspect, r["text"])]
        assert abs(len(texts) / len(reviews) - opinion.prevalence) < 0.02, opinion
        assert len(texts) == opinion.mentioned
        votes = Counter(_polarity(opinion.aspect, r["text"]) for r in texts)
        majority = "positive" if opinion.polarity == "pros" else "negative"
        assert votes[majority] == opinion.agreeing, (opinion, votes)
        # Reviews mentioning a PRO rate the entity higher than the rest on average; a CON, lower.
        sign = 1 if opinion.polarity == "pros" else -1
        others = [r for r in reviews if not mentions(opinion.aspect, r["text"])]
        assert (_mean_rating(texts) - _mean_rating(others)) * sign > 0, opinion
        assert 0.75 <= opinion.agreeing / opinion.mentioned <= 0.9 + 1e-9


def test_unplanted_aspects_stay_in_the_background() -> None:
    record, planted = generate_entity(0, 600, seed=4, prevalence=(0.2, 0.4))
    reviews = record["user_reviews"]
    names = {p.aspect for p in planted}
    lowest_planted = min(p.mentioned for p in planted)
    for name in ASPECTS:
        if name not in names:
            assert sum(mentions(name, r["text"]) for r in reviews) < lowest_planted / 2, name


def test_entity_at_paper_scale_has_about_ten_thousand_sentences() -> None:
    record, _ = generate_entity(0, 1500, seed=0)
    sentences = sum(len(_sentences(r["text"])) for r in record["user_reviews"])
    assert 9_000 <= sentences <= 12_000


def test_write_synthetic_streams_json_and_truth(tmp_path) -> None:
    path, truth_file = write_synthetic(tmp_path / "data" / "synth.json", n_entities=2, reviews_per_entity=30, seed=5)
    assert truth_file == tmp_path / "data" / "synth.json.truth.json" == truth_path(path)
    records = json.loads(path.read_text(encoding="utf-8"))
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    expected = generate_dataset(2, 30, seed=5)
    assert [Entity.model_validate(r).model_dump(mode="json") for r in records] == [
        e.model_dump(mode="json") for e in expected.entities
    ]
    assert truth == expected.truth
    assert sorted(p.name for p in path.parent.iterdir()) == ["synth.json", "synth.json.truth.json"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_entities": 0},
        {"reviews_per_entity": 0},
        {"aspects_per_entity": (5, 2)},
        {"prevalence": (0.1, 1.5)},
        {"sentences_per_review": (0, 5)},
    ],
)
def test_generator_rejects_bad_arguments(kwargs) -> None:
    with pytest.raises(ConfigError):
        generate_dataset(**{"n_entities": 1, "reviews_per_entity": 5, **kwargs})


# --------------------------------------------------------------------------- golden output


def _digest(value: object) -> str:
    import hashlib

    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _bank_contents() -> dict[str, object]:
    names = [n for n in bank.__all__ if n.isupper()]
    out: dict[str, object] = {n: getattr(bank, n) for n in names if n != "ASPECTS"}
    out["ASPECTS"] = {name: list(vars(a).values()) for name, a in bank.ASPECTS.items()}
    return out


# Recorded from the phrase bank as Python code (before it became a JSON data file): the bank's
# content and the generator's output for fixed seeds must stay exactly the same.
BANK_DIGEST = "46ecad62db39f685ca32286a3543572c441cde700c2e969cba95efdfb1f739ab"
GENERATOR_DIGEST = "6912729a146053832eaf5afaa4028c2582daed48d427277d66e7a63193c13eda"


def test_phrase_bank_content_is_unchanged() -> None:
    assert _digest(_bank_contents()) == BANK_DIGEST


def test_generator_output_is_unchanged_for_fixed_seeds() -> None:
    data = [generate_dataset(n_entities=2, reviews_per_entity=40, seed=seed) for seed in (0, 7)]
    dumped = [[e.model_dump(mode="json") for e in d.entities] + [d.truth] for d in data]
    assert _digest(dumped) == GENERATOR_DIGEST


def test_phrase_bank_is_a_data_file_read_on_first_use() -> None:
    import subprocess

    code = (
        "import opinio_agents.datasets, opinio_agents.datasets.phrases as p;"
        "before = p._bank.cache_info().currsize;"
        "n = len(p.ASPECTS);"
        "print(before, p._bank.cache_info().currsize, n)"
    )
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, timeout=120, check=True
    )
    assert done.stdout.split() == ["0", "1", str(len(bank.ASPECTS))]  # not read at import
    resource = repo / "opinio_agents" / "datasets" / "resources" / "phrase_bank.json"
    data = json.loads(resource.read_text(encoding="utf-8"))
    assert len(data["aspects"]) == len(bank.ASPECTS)
    assert data["aspects"][0]["name"] == next(iter(bank.ASPECTS))
