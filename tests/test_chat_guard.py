"""The chat answer guard on its own: sentence cutting, citations, repetition, verification, marks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from opinio_agents.agents.answer_guard import (
    CONTRADICTED_MARK,
    UNVERIFIED_MARK,
    AnswerGuard,
    citation_numbers,
    is_coverage_statement,
    split_sentences,
)
from opinio_agents.errors import ConfigError
from opinio_agents.synthesis.verification import HighlightVerifier
from opinio_agents.triplets.base import Triplet, TripletExtractor

EVIDENCE = ["The wifi kept dropping in our room.", "Breakfast was great with fresh pancakes."]


class Lexicon(TripletExtractor):
    """Triplets from a handful of words: enough to drive the verdict rules deterministically."""

    OPINIONS = {"dropping": -1, "slow": -1, "drops": -1, "fast": 1, "reliable": 1, "great": 1, "fresh": 1}

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        out = []
        for text in sentences:
            low = text.lower()
            aspect = "wifi" if "wifi" in low or "wi-fi" in low else "breakfast" if "breakfast" in low else None
            found = []
            for word, sign in self.OPINIONS.items():
                if aspect and word in low:
                    found.append(Triplet(aspect=aspect, opinion=word, sentiment=sign))
            out.append(found)
        return out


def _verifier() -> HighlightVerifier:
    return HighlightVerifier(Lexicon(), similarity=lambda a, bs: [1.0 if a == b else 0.0 for b in bs])


class BagOfWords:
    """A tiny deterministic encoder (word counts over a fixed vocabulary) for attribution."""

    name = "bag-of-words"
    VOCAB = ["wifi", "dropping", "room", "kept", "breakfast", "pancakes", "fresh", "great"]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[t.lower().count(w) for w in self.VOCAB] for t in texts], dtype=np.float32)


def test_split_keeps_trailing_citations_and_waits_for_the_next_sentence() -> None:
    done, rest = split_sentences("Slow wifi. [S1] Good breakfast [S2].")
    assert done == ["Slow wifi. [S1]"] and rest == "Good breakfast [S2]."
    done, rest = split_sentences("Slow wifi. [S")
    assert done == [] and rest == "Slow wifi. [S"
    done, _ = split_sentences("1. Slow wifi [S1].\n2. Nice pool [2].\nEnd")
    assert done == ["1. Slow wifi [S1].", "2. Nice pool [2]."]
    done, _ = split_sentences("Rated 4.5 by most. Next")
    assert done == ["Rated 4.5 by most."]


def test_citation_forms_and_coverage_statements() -> None:
    assert citation_numbers("a [S1] b [s2] c [3] d [S4, S5] e [6; S1] f [note] g (S7)") == [1, 2, 3, 4, 5, 6]
    assert is_coverage_statement("None of the reviews mention a casino.")
    assert is_coverage_statement("The reviews don't say whether pets are allowed.")
    assert not is_coverage_statement("The room was not clean, one review said.")
    assert not is_coverage_statement("The wifi is slow.")


def test_guard_streams_what_passes_and_canonicalises_markers() -> None:
    guard = AnswerGuard(EVIDENCE, verify=False)
    shown = []
    for piece in ["The wifi keeps drop", "ping [1]. Breakfast", " is great [S2, S9]. Pets? The rev",
                  "iews do not mention pets. Overall it's a nice hotel."]:
        shown += guard.feed(piece)
    shown += guard.close()
    assert shown == ["The wifi keeps dropping [S1].", "Breakfast is great [S2].",
                     "The reviews do not mention pets."]
    checks = guard.checks
    assert checks[1].invalid == ["S9"] and checks[1].citations == ["S2"]
    assert [c.issue for c in checks] == [None, None, "no-citation", None, "no-citation"]
    report = guard.report()
    assert (report.sentences, report.shown, report.dropped, report.uncited) == (5, 3, 2, 2)
    assert guard.cited_markers() == ["S1", "S2"]


def test_repetition_is_dropped_and_stops_generation() -> None:
    guard = AnswerGuard(EVIDENCE, verify=False, max_repeats=2)
    out = guard.feed("The wifi drops [S1]. The wifi drops [S1]. the WIFI drops! [S1] The wifi drops [S1]. ")
    assert out == ["The wifi drops [S1]."]
    assert guard.done and guard.report().repeated == 2
    looping = AnswerGuard(EVIDENCE, verify=False)
    loop = "great wifi and great food and " * 3
    assert looping.feed(f"{loop}more [S1]. x") == []
    assert looping.checks[0].issue == "repeated"


def test_sentence_limit_stops_generation() -> None:
    guard = AnswerGuard(EVIDENCE, verify=False, max_sentences=2)
    out = guard.feed("Wifi drops [S1]. Breakfast is great [S2]. Pancakes are fresh [S2]. More")
    assert len(out) == 2 and guard.done


def test_verification_drops_or_marks_contradicted_sentences() -> None:
    text = "The wifi is fast and reliable [S1]. Breakfast is great [S2]. The wifi is great [S2]. "
    guard = AnswerGuard(EVIDENCE, [-0.5, 0.7], verifier=_verifier())
    assert guard.feed(text) + guard.close() == ["Breakfast is great [S2]."]
    verdicts = [(c.verdict, c.action) for c in guard.checks]
    assert verdicts == [("contradicted", "dropped"), ("supported", "shown"), ("contradicted", "dropped")]
    assert "wifi" in guard.checks[2].reason
    marking = AnswerGuard(EVIDENCE, [-0.5, 0.7], verifier=_verifier(), unsupported="mark")
    shown = marking.feed(text) + marking.close()
    assert shown[0] == f"{CONTRADICTED_MARK} The wifi is fast and reliable." and "[S1]" not in shown[0]
    assert marking.report().marked == 2 and marking.cited_markers() == ["S2"]


def test_an_uncited_paraphrase_is_attributed_then_verified() -> None:
    guard = AnswerGuard(EVIDENCE, [-0.5, 0.7], verifier=_verifier(), encoder=BagOfWords())
    shown = guard.feed("The wifi kept dropping in the room. The wifi in the room kept being fast. ") + guard.close()
    assert shown == ["The wifi kept dropping in the room [S1]."]
    first, second = guard.checks
    assert first.action == "repaired" and first.citations == ["S1"] and "attributed" in first.reason
    assert second.issue == "contradicted" and second.action == "dropped"
    nothing = AnswerGuard(EVIDENCE, verify=False, encoder=BagOfWords(), unsupported="mark")
    assert nothing.feed("The pool is heated all year. ") + nothing.close() == [
        f"{UNVERIFIED_MARK} The pool is heated all year."
    ]


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ConfigError):
        AnswerGuard(EVIDENCE, unsupported="hide")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        AnswerGuard(EVIDENCE, verify=True)
    with pytest.raises(ConfigError):
        AnswerGuard(EVIDENCE, [0.1], verify=False)
