"""Verification reasons that agree with the evidence (issue 25 item 4).

Fast tier: :func:`judge` on hand-written triplets for the two reasons the issue found wrong.
Slow tier: the 30 checked highlights of ``tests/data/verifier_checked.json`` (verdicts written
down before the verifier ran; SPACE dev entries read their text from ``../shared`` and are
skipped without it), through ``benchmarks/verifier_agreement.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from opinio_agents.models import Evidence, Highlight, Polarity
from opinio_agents.synthesis.verification import HighlightVerifier, judge, second_reading
from opinio_agents.triplets.base import Triplet as T
from opinio_agents.triplets.base import TripletExtractor

ROOT = Path(__file__).resolve().parents[1]


def far(_: str, others: list[str]) -> list[float]:
    """Every opinion phrase far from every other one (what MiniLM said for 'ridiculous' vs 'Sadly': 0.38)."""
    return [0.38] * len(others)


class CheckInWords(TripletExtractor):
    """The highlight's own opinion; no triplet in the quotes, so their sentiment decides their stance."""

    def extract(self, sentences: list[str]) -> list[list[T]]:  # type: ignore[override]
        quick = [T(aspect="check-in", opinion="quick", sentiment=1)]
        return [quick if s.startswith("Quick") else [] for s in sentences]


def test_a_pro_over_two_complaints_of_five_is_mixed() -> None:
    # The checked set's check-in PRO (written weak): two of its quotes, stored slightly positive
    # by the embedding head, are complaints the review lexicon reads ("took over an hour").
    quotes = [
        ("Check-in was quick and easy, we were in our room within five minutes.", 0.43),
        ("Check-in took over an hour, there was one person working and a huge queue.", 0.19),
        ("The online check-in worked perfectly, we just picked up the keys!!", 0.32),
        ("Check-in is at 4pm and they would not budge even though the room was ready.", 0.08),
        ("Check-in was a breeze, friendly and fast.", 0.6),
    ]
    evidence = [Evidence(sentence_id=f"202:{i}:0", text=t, sentiment=s) for i, (t, s) in enumerate(quotes)]
    readings = second_reading(evidence)
    assert [r is not None and r < 0 for r in readings] == [False, True, False, True, False]
    h = Highlight(query="check-in", polarity=Polarity.PROS, text="Quick and easy check-in.", evidence=evidence)
    (v,) = HighlightVerifier(CheckInWords(), similarity=lambda a, bs: [1.0] * len(bs)).verify([h])
    assert v.verdict == "weak" and "mixed evidence" in v.reason, v.reason


def test_wording_the_evidence_itself_uses_is_not_far_from_it() -> None:
    # The wi-fi CON: its wording 'ridiculous' is quoted from its own evidence ("just ridiculous").
    evidence_texts = [
        "Sadly, they charge for wifi, which in this day and age is just ridiculous.",
        "Wi-fi only worked in the corridor on our floor, not in the room itself.",
        "Sadly, the wi-fi was painfully slow and kept dropping every few minutes.",
    ]
    v = judge(
        Polarity.CONS,
        [T(aspect="wifi", opinion="ridiculous", sentiment=-1)],
        [
            [T(aspect="wifi", opinion="Sadly", sentiment=-1)],
            [T(aspect="wi-fi", opinion="only worked in the corridor", sentiment=-1)],
            [T(aspect="wi-fi", opinion="painfully slow", sentiment=-1)],
        ],
        [-0.4, -0.08, -0.49],
        far,
        evidence_texts=evidence_texts,
        query="wi-fi",
        highlight_text="They charge for wifi, which in this day and age is just ridiculous.",
    )
    assert v.verdict == "supported", v.reason
    assert "far from" not in v.reason


def test_a_supported_highlight_that_spells_out_the_evidence_aspect_is_relevant() -> None:
    # The housekeeping PRO: "supported" with aspect relevance 0.00, although its own text
    # names the evidence's main aspect (the extractor read the highlight's aspect as 'housekeeping').
    v = judge(
        Polarity.PROS,
        [T(aspect="housekeeping", opinion="big compliments", sentiment=1)],
        [
            [T(aspect="maid service", opinion="thorough", sentiment=1)],
            [T(aspect="maid service", opinion="thorough", sentiment=1)],
            [T(aspect="housekeeping", opinion="excellent", sentiment=1)],
        ],
        [0.42, 0.38, 0.63],
        lambda _, others: [0.9] * len(others),
        evidence_texts=[
            "The maid service was thorough, fresh towels every day without asking!!",
            "Big thumbs up: the maid service was thorough, fresh towels every day without asking.",
            "Housekeeping did an excellent job, the room was spotless every day.",
        ],
        query="housekeeping",
        highlight_text="Big compliments to housekeeping. The maid service was thorough, fresh towels every day.",
    )
    assert v.verdict == "supported", v.reason
    assert v.aspect_relevance == 1.0


def _benchmark():
    spec = importlib.util.spec_from_file_location("verifier_agreement", ROOT / "benchmarks" / "verifier_agreement.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_checked_set_is_well_formed() -> None:
    bench = _benchmark()
    entries, highlights = bench.checked_highlights({"sample"})
    assert len(entries) == 20 == len(highlights)  # the sample's 20 always build (no ../shared needed)
    assert {e["verdict"] for e in entries} <= {"supported", "weak", "contradicted"}
    assert all(h.evidence and h.text for h in highlights)


@pytest.mark.slow
def test_verifier_agrees_with_the_written_verdicts(encoder) -> None:
    bench = _benchmark()
    sets = {"sample", "space_dev"} if bench.SPACE.exists() else {"sample"}
    entries, found = bench.agreement(sets)
    same = sum(e["verdict"] == v.verdict for e, v in zip(entries, found, strict=True))
    assert same >= 0.9 * len(entries), f"{same}/{len(entries)}"  # 26/30 before the second reading, 27/30 after
    for entry, v in zip(entries, found, strict=True):
        if v.verdict == "supported":  # a reason and scores that agree with the verdict
            assert v.aspect_relevance != 0.0, (entry["query"], v)
        assert "far from" not in (v.reason or "") or "similarity" in (v.reason or "")
