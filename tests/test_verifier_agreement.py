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

from opinio_agents.models import Polarity
from opinio_agents.synthesis.verification import judge
from opinio_agents.triplets.base import Triplet as T

ROOT = Path(__file__).resolve().parents[1]


def far(_: str, others: list[str]) -> list[float]:
    """Every opinion phrase far from every other one (what MiniLM said for 'ridiculous' vs 'Sadly': 0.38)."""
    return [0.38] * len(others)


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
    assert same >= 0.85 * len(entries), f"{same}/{len(entries)}"
    for entry, v in zip(entries, found, strict=True):
        if v.verdict == "supported":  # a reason and scores that agree with the verdict
            assert v.aspect_relevance != 0.0, (entry["query"], v)
        assert "far from" not in (v.reason or "") or "similarity" in (v.reason or "")
