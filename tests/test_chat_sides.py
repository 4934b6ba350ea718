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


def test_a_mention_in_passing_is_not_quoted() -> None:
    # 'How are the rooms?' quoted advice about walking to the rooms, which judges nothing about them.
    texts = [
        "Keep in mind it is a big place, so there is a bit of walking from the entrance to the rooms.",
        "The rooms are spacious and bright.",
        "We spent the whole afternoon in the room because of the rain.",
        "Tiny room, no window.",
    ]
    hits = [_hit(i, s) for i, s in enumerate([0.3, 0.6, 0.2, -0.5])]
    hits = [
        ScoredSentence(h.sentence.model_copy(update={"text": t}), h.score, h.sentiment)
        for h, t in zip(hits, texts, strict=True)
    ]
    mentioned = frozenset(h.sentence.sentence_id for h in hits)
    assert [h.sentence.review_id for h in side_ordered(hits, [Polarity.PROS], 4, mentioned)][0] == "r0"
    chosen = side_ordered(hits, [Polarity.PROS], 4, mentioned, forms=["room"])
    assert [h.sentence.review_id for h in chosen] == ["r1", "r3"]


def _turn(sides: list[Polarity]) -> object:
    from opinio_agents.agents.chat import Citation, _Turn
    from opinio_agents.agents.schemas import SupportInfo

    evidence = [
        Citation(marker="S1", sentence_id="e:r1:0", text="Wi-fi kept dropping.", sentiment=-0.6),
        Citation(marker="S2", sentence_id="e:r2:0", text="You pay for wi-fi by the day.", sentiment=-0.4),
        Citation(marker="S3", sentence_id="e:r3:0", text="The wi-fi never dropped once.", sentiment=0.5),
        Citation(marker="S4", sentence_id="e:r4:0", text="Wi-fi was in the lobby.", sentiment=None),
    ]
    summary = "mentioned in 50 reviews, 70% negative"
    support = SupportInfo(reviews=50, positive=7, negative=35, neutral=8, summary=summary)
    return _Turn(
        question="How is the wifi?", query="wifi", support=support, evidence=evidence, covered=True,
        history=[], stateful=False, sides=sides,
    )


def test_an_answer_that_cites_only_the_minority_side_gets_the_support_line_and_a_majority_quote() -> None:
    from opinio_agents.agents.chat import _majority_quote

    turn = _turn([Polarity.CONS])
    added = "".join(_majority_quote(turn, ["S3", "S4"]))  # type: ignore[arg-type]
    assert added.startswith("\nMentioned in 50 reviews, 70% negative")
    assert '[S1] "Wi-fi kept dropping."' in added
    assert turn.added == ["S1"]  # the quote is one of the answer's citations


@pytest.mark.parametrize(("cited", "sides"), [(["S2"], [Polarity.CONS]), (["S3"], []), (["S3"], [Polarity.PROS])])
def test_no_quote_is_added_when_the_answer_already_cites_the_majority_side(
    cited: list[str], sides: list[Polarity]
) -> None:
    from opinio_agents.agents.chat import _majority_quote

    turn = _turn(sides)
    assert list(_majority_quote(turn, cited)) == []  # type: ignore[arg-type]
    assert turn.added == []


def test_an_answer_that_misses_what_was_asked_gets_the_excerpt_that_names_it() -> None:
    # SmolLM2, asked "Is it free?" after "How is the wi-fi?", answered with a cited sentence about slowness.
    from dataclasses import replace

    from opinio_agents.agents.chat import Citation, _asked_quote

    turn = _turn([Polarity.CONS])
    turn.evidence.append(Citation(marker="S5", sentence_id="e:r5:0", text="Sadly, wifi is NOT free.", sentiment=-0.5))
    asked = replace(turn, question="Is it free?")  # type: ignore[type-var]
    added = "".join(_asked_quote(asked, ["The wi-fi kept dropping [S1]."]))
    assert added == '\nOn what you asked (free), in the reviews\' words: [S5] "Sadly, wifi is NOT free."'
    assert asked.added == ["S5"]
    # an answer that names it, or a question whose words no excerpt holds, gets nothing
    named = replace(turn, question="Is it free?", added=[])  # type: ignore[type-var]
    assert list(_asked_quote(named, ["The wi-fi is not free [S5]."])) == []
    casino = replace(turn, question="Is there a casino?", added=[])  # type: ignore[type-var]
    assert list(_asked_quote(casino, ["The wi-fi kept dropping [S1]."])) == []
