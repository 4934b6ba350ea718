"""Negated complaints (issue 21 item 1): "no problem", "weren't expensive", "not noisy at all" complain of nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from opinio_agents.hiro.aspects import DiscoveredAspect
from opinio_agents.hiro.highlights import aspect_highlights
from opinio_agents.models import Polarity
from opinio_agents.synthesis import complaints
from opinio_agents.synthesis.complaints import states_complaint, uses_complaint_word
from tests.selection_support import stored

PRAISE = (
    "No problem checking in and out.",
    "Happy with the purchase though, as they weren't expensive.",
    "Parking was never a problem.",
    "The street was not noisy at all.",
    "Nothing to complain about.",
    "It wasn\u00b4t loud at all.",
)


def without_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(complaints, "COMPLAINT_SETTINGS", replace(complaints.COMPLAINT_SETTINGS, negation_window=0))


def test_a_negated_complaint_word_is_no_complaint(monkeypatch: pytest.MonkeyPatch) -> None:
    for praise in PRAISE:
        assert not states_complaint(praise), praise
        assert not uses_complaint_word(praise), praise
    stated = (
        "The shower was not hot.",  # a negation that still complains (negation_complains)
        "The speaker is not loud enough.",  # nor does "not ... enough" praise
        "The room was not small but dirty.",  # the negator reaches no word past "but"
        "No air conditioning.",  # a negation of no complaint word complains itself
        "The room wasn't clean.",
        "The only problem was the parking.",
        "We did not like the small bathroom.",  # "small" is three words past the negator, which negates "like"
    )
    for complaint in stated:
        assert states_complaint(complaint), complaint
    without_rule(monkeypatch)
    assert all(states_complaint(praise) for praise in PRAISE)


def noise(rows: list[tuple[str, float]]) -> list[Polarity]:
    sentences = [stored(i, t, s) for i, (t, s) in enumerate(rows)]
    n = len(sentences)
    pos = sum(s > 0 for _, s in rows)
    aspect = DiscoveredAspect(
        "noise", n, pos, n - pos, 0, 20, 1.0, sentence_indices=list(range(n)), term_indices=list(range(n)),
        forms=["noise", "noisy", "loud", "quiet"],
    )
    return [h.polarity for h in aspect_highlights(aspect, sentences)]


def test_a_negated_complaint_is_a_pro_and_no_con(monkeypatch: pytest.MonkeyPatch) -> None:
    # a minority PRO that says the noise was no problem is shown; a CON the head misread ("It wasn´t loud at all.",
    # stored negative) is not
    rows = [
        ("The street noise was terrible.", -0.7), ("The room was noisy at night.", -0.6),
        ("Loud music until 2 am.", -0.5), ("Noise was never a problem for us.", 0.5),
        ("The room was never noisy.", 0.6),
    ]
    assert noise(rows) == [Polarity.CONS, Polarity.PROS]
    misread = [("It wasn\u00b4t loud at all.", -0.4), ("The street was not noisy at all.", -0.3)]
    assert noise(misread) == []
    without_rule(monkeypatch)
    assert noise(rows) == [Polarity.CONS]
    assert noise(misread) == [Polarity.CONS]


def test_a_negated_problem_noun_denies_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 21 items 2-3: "Noise was not a factor." was a noise CON of 197424 at HIRO seed 3 (its lone negator
    # complained by itself, as "No air conditioning." does).
    denied = ("Noise was not a factor.", "Parking was never a concern.", "Not a big deal.")
    for text in denied:
        assert not states_complaint(text), text
    assert states_complaint("No air conditioning.") and states_complaint("The room was not a good deal.")
    assert noise([("Noise was not a factor.", -0.3), ("Noise was never a concern.", -0.2)]) == []
    monkeypatch.setattr(complaints, "COMPLAINT_SETTINGS", replace(complaints.COMPLAINT_SETTINGS, deny_problems=False))
    assert all(states_complaint(text) for text in denied)
    assert noise([("Noise was not a factor.", -0.3), ("Noise was never a concern.", -0.2)]) == [Polarity.CONS]


def test_a_distance_or_a_connective_is_no_complaint() -> None:
    # SPACE dev 150241's beach and noise CONs: "block" and "spite" read negative in the sentiment lexicon.
    assert not states_complaint("A two block walk to the beach was not a problem.")
    assert not uses_complaint_word("The rooms were quiet, in spite of the proximity to the airport.")
    assert not uses_complaint_word("The hotel is two blocks from the metro.")
    assert states_complaint("The hotel is two blocks from the metro and the street is noisy.")
