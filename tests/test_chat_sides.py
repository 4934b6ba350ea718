"""The chat's excerpts mirror its support line: the sides the highlights show come first."""

from __future__ import annotations

import pytest

from opinio_agents.agents.chat import side_ordered
from opinio_agents.models import Polarity, Sentence
from opinio_agents.retrieval.factory import ScoredSentence


def _hit(i: int, sentiment: float) -> ScoredSentence:
    sentence = Sentence(
        sentence_id=f"e:r{i}:0", entity_id="e", review_id=f"r{i}", index=0, text=f"sentence {i}", start=0, end=10
    )
    return ScoredSentence(sentence=sentence, score=1.0 - i / 100, sentiment=sentiment)


def test_a_negative_majority_is_quoted_even_when_the_top_hits_are_positive() -> None:
    # 'Is parking easy?': 77% negative, but the three most relevant sentences were positive.
    hits = [_hit(0, 0.6), _hit(1, 0.5), _hit(2, 0.4), _hit(3, -0.7), _hit(4, -0.5)]
    chosen = side_ordered(hits, [Polarity.CONS], 3)
    assert len(chosen) == 3
    assert chosen[0].sentiment < 0  # the majority side opens the answer
    assert [h.sentence.review_id for h in chosen[1:]] == ["r0", "r1"]  # then by relevance


def test_both_shown_sides_are_quoted_majority_first() -> None:
    hits = [_hit(0, 0.6), _hit(1, 0.5), _hit(2, 0.0), _hit(3, -0.7)]
    chosen = side_ordered(hits, [Polarity.PROS, Polarity.CONS], 3)
    assert [h.sentence.review_id for h in chosen] == ["r0", "r1", "r3"]


@pytest.mark.parametrize("sides", [[], [Polarity.PROS]])
def test_relevance_order_is_kept_when_the_top_hits_already_hold_the_sides(sides: list[Polarity]) -> None:
    hits = [_hit(0, 0.6), _hit(1, 0.5), _hit(2, 0.4), _hit(3, -0.7)]
    assert [h.sentence.review_id for h in side_ordered(hits, sides, 3)] == ["r0", "r1", "r2"]


def test_only_hits_that_mention_the_aspect_are_quoted_when_there_are_any() -> None:
    # r0 (most relevant) and r4 do not mention the aspect; r3 is the only on-topic negative.
    hits = [_hit(0, 0.6), _hit(1, 0.5), _hit(2, 0.4), _hit(3, -0.7), _hit(4, -0.3)]
    mentioned = frozenset(h.sentence.sentence_id for h in hits[1:4])
    chosen = side_ordered(hits, [Polarity.PROS, Polarity.CONS], 3, mentioned)
    assert [h.sentence.review_id for h in chosen] == ["r1", "r2", "r3"]
    assert [h.sentence.review_id for h in side_ordered(hits, [Polarity.PROS], 6, mentioned)] == ["r1", "r2", "r3"]
    # no hit mentions it: relevance as before
    assert len(side_ordered(hits, [Polarity.PROS], 3, frozenset({"other"}))) == 3
    # no mention known: relevance as before
    assert [h.sentence.review_id for h in side_ordered(hits, [Polarity.PROS], 3)] == ["r0", "r1", "r2"]
