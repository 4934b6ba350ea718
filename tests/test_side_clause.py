"""Clause choice by side (issue 21 item 1): a PRO key point of a mixed sentence is its praise, a CON's its complaint."""

from __future__ import annotations

from dataclasses import replace

import pytest

from opinio_agents.hiro.highlights import aspect_highlights
from opinio_agents.synthesis import keypoint
from opinio_agents.synthesis.keypoint import best_clause, to_key_point
from tests.selection_support import stored, unit
from tests.test_query_free_quality import aspect_of


def without_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keypoint, "KEY_POINT_SETTINGS", replace(keypoint.KEY_POINT_SETTINGS, side_clause=False))


def test_a_pro_key_point_of_a_mixed_sentence_is_its_praise(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "The rooms are small but clean and very comfortable."
    assert to_key_point(text, "rooms", sign=1, terms=["room"]) == "The rooms are clean and very comfortable."
    assert to_key_point(text, "rooms", sign=-1, terms=["room"]) == "The rooms are small."
    assert to_key_point("The room was small but had everything you could want.", "room", sign=1) == (
        "The room had everything you could want."  # the praise opens with its own verb
    )
    without_rule(monkeypatch)
    assert to_key_point(text, "rooms", sign=1, terms=["room"]) == "The rooms are small."


def test_a_con_key_point_of_a_mixed_sentence_is_its_complaint(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "The room was spotless but very small and dark."
    assert to_key_point(text, "room", sign=-1) == "The room was very small and dark."
    assert to_key_point(text, "room", sign=1) == "The room was spotless."
    without_rule(monkeypatch)
    assert to_key_point(text, "room", sign=-1) == "The room was spotless."


def test_the_side_clause_keeps_the_sentence_words_only() -> None:
    # a clause with a subject of its own, a list of other things, a ";" or no side to turn to: the usual clause
    assert best_clause("The rooms are small but the staff were lovely", "room", 1) == "The rooms are small"
    assert best_clause("Pools are small but beautiful landscaping, comfortable chairs, quiet", "pool", 1) == (
        "Pools are small"
    )
    assert best_clause("The pool is small; clean and very well kept", "pool", 1) == "The pool is small"
    assert best_clause("The rooms are small but I thought it was a nice size", "room", 1) == "The rooms are small"
    assert best_clause("The rooms are spotless but clean and very comfortable", "room", 1) == (
        "The rooms are spotless"  # the named clause already praises
    )
    assert best_clause("The rooms are small but clean and very comfortable", "room") == "The rooms are small"


def test_a_mixed_sentence_gives_its_aspect_a_pro(monkeypatch: pytest.MonkeyPatch) -> None:
    # 182519 at HIRO seed 0: "The rooms are small." was cut from a sentence that went on to praise, and the
    # complaint test dropped it; the praise with its subject is the PRO.
    rows = [
        stored(0, "The rooms are small but comfortable and clean.", 0.6),
        stored(1, "The room was small but perfectly clean and comfortable.", 0.6),
    ]
    embeddings = unit([[1.0, 0.0], [0.9, 0.1]])
    aspect = aspect_of("room", 2, ["room", "rooms"])
    (pro,) = aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, budget_words=40)
    assert pro.text in ("The rooms are comfortable and clean.", "The room was perfectly clean and comfortable.")
    without_rule(monkeypatch)
    assert aspect_highlights(aspect, rows, embeddings=embeddings, max_points=2, budget_words=40) == []
