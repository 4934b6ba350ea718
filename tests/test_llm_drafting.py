"""Forced tokens and drafts of the ``hf:`` greedy decoder (pure logic, no model)."""

from __future__ import annotations

import pytest

from opinio_agents.llm.drafting import NgramDraft, single_allowed_token


@pytest.mark.parametrize(
    ("words", "token"),
    [
        ([0, 0, 0], None),  # nothing allowed (a finished grammar)
        ([0, 1, 0], 32),
        ([0, 0, 1 << 5], 69),
        ([-(1 << 31), 0], 31),  # torch's int32 words are signed: bit 31 is a negative word
        ([0b101, 0], None),  # two tokens in one word
        ([1, 0, 1], None),  # two tokens in two words
    ],
)
def test_single_allowed_token_reads_one_set_bit(words: list[int], token: int | None) -> None:
    assert single_allowed_token(words) == token


def test_draft_follows_the_longest_matching_run_at_its_latest_occurrence() -> None:
    # (1, 2) occurs twice; the run (9, 1, 2) only once, and that one wins over the later (1, 2)
    draft = NgramDraft([9, 1, 2, 3, 4, 7, 1, 2, 5, 6, 8], max_ngram=3, min_ngram=2)
    for token in (9, 1, 2):
        draft.add(token)
    assert draft.propose(2) == [3, 4]
    draft = NgramDraft([1, 2, 3, 1, 2, 5, 1, 2], max_ngram=3, min_ngram=2)
    assert draft.propose(5) == [5, 1, 2]  # the latest (1, 2) before the end, cut where the text ends


def test_draft_is_empty_without_a_match_and_learns_from_the_answer() -> None:
    draft = NgramDraft([10, 11, 12], max_ngram=2, min_ngram=2)
    draft.add(20)
    assert draft.propose() == []
    draft.add(21)
    draft.add(22)
    draft.add(20)
    draft.add(21)
    assert draft.propose(1) == [22]  # the answer's own earlier run
    assert draft.propose(0) == []


def test_draft_rejects_impossible_run_lengths() -> None:
    with pytest.raises(ValueError, match="min_ngram"):
        NgramDraft([], max_ngram=1, min_ngram=2)
