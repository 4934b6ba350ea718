"""The aspect-fidelity benchmark's mention signal is the one definition of an aspect mention."""

from __future__ import annotations

import pytest

from opinio_agents.models import Sentence
from opinio_agents.stores.catalog import StoredSentence
from opinio_agents.text.preprocess import tokenize_for_bm25
from tests.benchmark_support import load_benchmark


@pytest.fixture(scope="module")
def fidelity():  # type: ignore[no-untyped-def]
    return load_benchmark("aspect_fidelity")


def stored(i: int, text: str) -> StoredSentence:
    sentence = Sentence(sentence_id=f"1:{i}:0", entity_id="1", review_id=str(i), index=0, text=text, start=0,
                        end=len(text))
    return StoredSentence(sentence, tuple(tokenize_for_bm25(text)), 0.3)


def test_the_mention_signal_counts_the_words_that_also_name_the_aspect(fidelity) -> None:  # type: ignore[no-untyped-def]
    # SPACE dev hotel 150241's query-free internet PRO was counted off-aspect by the mention signal, which
    # matched the aspect's own word only.
    sentences = [stored(0, "The internet was fast."), stored(1, "Great pool."), stored(2, "Nice staff.")]
    assert fidelity.text_mentions("internet", "Free wi-fi either in the hotel or your room.", sentences)
    assert fidelity.text_mentions("noise", "Quiet and relaxing.", sentences)
    assert not fidelity.text_mentions("internet", "The pool was lovely.", sentences)
