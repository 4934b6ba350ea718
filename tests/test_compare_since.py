"""``opinio compare --since``: per aspect, where the entity stands against the others now versus a year earlier."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import numpy as np
import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.compare import Standing, _standing, _window, _year_before
from opinio_agents.models import Sentence
from opinio_agents.stores.catalog import StoredSentence

D = dt.date


def _row(entity: str, review: str, text: str, sentiment: float, date: dt.date | None) -> StoredSentence:
    sentence = Sentence(
        sentence_id=f"{entity}:{review}:0", entity_id=entity, review_id=review, index=0, text=text,
        start=0, end=len(text), publication_date=date,
    )  # fmt: skip
    return StoredSentence(sentence=sentence, tokens=tuple(text.lower().split()), sentiment=sentiment)


def _reviews(entity: str, year: int, positive: int, negative: int) -> list[StoredSentence]:
    rows = [_row(entity, f"{year}p{i}", "wifi great", 0.8, D(year, 3, 1 + i)) for i in range(positive)]
    rows += [_row(entity, f"{year}n{i}", "wifi slow", -0.8, D(year, 6, 1 + i)) for i in range(negative)]
    rows.append(_row(entity, f"{year}x", "nice pool", 0.5, D(year, 9, 1)))
    return rows


def test_standing_ranks_the_entity_among_those_with_enough_mentions() -> None:
    here = _reviews("a", 2023, 1, 4) + _reviews("a", 2024, 5, 0)
    others = {"b": _reviews("b", 2023, 4, 1) + _reviews("b", 2024, 2, 2), "c": _reviews("c", 2024, 1, 1)}
    since = D(2024, 1, 1)
    now = _standing("wifi", _window(here, since, None), {k: _window(v, since, None) for k, v in others.items()}, "now")
    start, end = _year_before(since), since - dt.timedelta(days=1)
    before = _standing(
        "wifi", _window(here, start, end), {k: _window(v, start, end) for k, v in others.items()}, "before"
    )
    # Now: a is 5/5 positive and first of the two entities with 3+ mentions (c has 2).
    assert now == Standing("now", 5, 1.0, round(3 / 6, 4), 6, 1, 2)
    # A year earlier: a was 1/5 positive, behind b (4/5); c had no review then.
    assert before == Standing("before", 5, 0.2, 0.8, 5, 2, 2)
    assert now.describe() == "100% positive vs 50% elsewhere, 1st of 2"
    assert before.cell() == "20% vs 80%, 2nd/2"
    thin = _standing("wifi", _reviews("a", 2024, 1, 1), {}, "x")
    assert thin.rank is None and thin.describe() == "2 mentions: too few to rank"
    assert _year_before(D(2024, 2, 29)) == D(2023, 2, 28)


class _Hash:
    name = "test-hash-bow-384"

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
def dated_store(tmp_path_factory):
    from opinio_agents.datasets import generate_dataset
    from opinio_agents.indexing import Indexer
    from opinio_agents.stores import SentenceStore

    data = generate_dataset(3, 50, seed=11, sentences_per_review=(1, 6), mean_sentences=3.0)
    store = SentenceStore(tmp_path_factory.mktemp("compare-since"))
    Indexer(store, _Hash()).index_entities(data.entities)
    return store


@pytest.mark.slow
def test_compare_entity_since_fills_both_windows(dated_store, tmp_path) -> None:
    from rich.console import Console

    from opinio_agents.cli.hiro import _standing_table
    from opinio_agents.hiro import HiroIndex, compare_entity

    hiro = HiroIndex(dated_store, directory=tmp_path / "h")
    plain = compare_entity(hiro, "1", top_k=4)
    assert plain.since is None and all(item.now is None for item in plain.items)
    report = compare_entity(hiro, "1", top_k=4, since=D(2022, 1, 1))
    assert [i.aspect for i in report.items] == [i.aspect for i in plain.items]
    for item in report.items:
        assert item.now is not None and item.year_before is not None
        assert item.now.window == "since 2022-01-01"
        assert item.year_before.window == "2021-01-01 to 2021-12-31"
        assert item.now.mentions <= round(item.share_here * 50) + 1
    data = json.loads(json.dumps(report.to_dict()))
    assert data["since"] == "2022-01-01" and "rank" in data["items"][0]["now"]
    console = Console(width=80, record=True)
    console.print(_standing_table(report))
    text = console.export_text()
    assert "a year earlier" in text and "since 2022-01-01" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_compare_since_needs_dates(tmp_path) -> None:
    from opinio_agents.hiro import HiroIndex, compare_entity
    from opinio_agents.indexing import Indexer
    from opinio_agents.models import Entity
    from opinio_agents.stores import SentenceStore

    reviews = [{"review_id": i, "text": f"The wifi was {'great' if i % 2 else 'slow'}. Room {i} was fine."}
               for i in range(40)]  # fmt: skip
    store = SentenceStore(tmp_path / "s")
    Indexer(store, _Hash()).index_entities(
        [Entity.model_validate({"entity_id": e, "user_reviews": reviews}) for e in ("a", "b")]
    )
    hiro = HiroIndex(store, directory=tmp_path / "h", n_codes=4)
    with pytest.raises(ConfigError, match="publication_date"):
        compare_entity(hiro, "a", top_k=2, since=D(2022, 1, 1))
