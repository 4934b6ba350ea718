"""CONs that complain of nothing and PROs that complain (issue 21, helper trust12): a bare price, a feared
complaint that did not come true and a negated condition state no complaint; a list label "Drawbacks:" and a
choice of another hotel "next time" announce one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from opinio_agents.hiro.aspects import DiscoveredAspect
from opinio_agents.hiro.highlights import aspect_highlights
from opinio_agents.models import Polarity
from opinio_agents.synthesis import complaints
from opinio_agents.synthesis.complaints import states_complaint
from opinio_agents.synthesis.selection import agreeing_points, announces_complaint
from tests.selection_support import stored


def highlight_sides(aspect: str, forms: list[str], rows: list[tuple[str, float]]) -> list[Polarity]:
    """The sides of the highlights of ``aspect`` over ``rows`` (sentence, stored sentiment)."""
    sentences = [stored(i, t, s) for i, (t, s) in enumerate(rows)]
    n = len(sentences)
    pos = sum(s > 0 for _, s in rows)
    found = DiscoveredAspect(
        aspect, n, pos, n - pos, 0, 20, 1.0, sentence_indices=list(range(n)), term_indices=list(range(n)),
        forms=forms,
    )
    return [h.polarity for h in aspect_highlights(found, sentences)]


def setting(monkeypatch: pytest.MonkeyPatch, **values: bool) -> None:
    monkeypatch.setattr(complaints, "COMPLAINT_SETTINGS", replace(complaints.COMPLAINT_SETTINGS, **values))


def test_a_bare_price_is_no_complaint(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 185237's parking CON at HIRO seed 0: two bare prices.
    facts = ("Parking is available for $15.00 a day.", "Weekend hotel parking is CN$25 per day, weekday at 40.")
    for fact in facts:
        assert not states_complaint(fact), fact
    for complaint in (
        "Valet parking was over $25.", "We had to pay $20 for parking.", "Wifi is crazy expensive at $16 per night.",
        "The hotel charges $23 for parking.", "No breakfast included - over CAD 13.",
    ):
        assert states_complaint(complaint), complaint
    rows = [(fact, -0.2) for fact in facts]
    assert highlight_sides("parking", ["parking"], rows) == []
    setting(monkeypatch, bare_price=True)
    assert all(states_complaint(fact) for fact in facts)
    assert highlight_sides("parking", ["parking"], rows) == [Polarity.CONS]


def test_a_feared_complaint_that_did_not_come_true_is_no_complaint(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 1176198's noise CON.
    feared = (
        "I thought it would be noisy at night when the clubs close but we were on the 9th floor and did not hear a "
        "thing.",
        "We expected the rooms to be small but they were huge.",
    )
    for text in feared:
        assert not states_complaint(text), text
    for complaint in ("I thought the room was small.", "I thought it would be quiet, but the street was noisy."):
        assert states_complaint(complaint), complaint
    setting(monkeypatch, fears_complain=True)
    assert all(states_complaint(text) for text in feared)


def test_a_negated_condition_is_no_complaint(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 182002's food CON at HIRO seed 0.
    condition = "There's an in-house tim hortons in case you don't want the very affordable breakfast buffet."
    assert not states_complaint(condition)
    assert states_complaint("If you don't have a car, parking is expensive.")  # the complaint stays
    assert states_complaint("There is no breakfast in case you want one.")  # a negation outside the condition
    setting(monkeypatch, conditions_complain=True)
    assert states_complaint(condition)


def test_a_list_label_or_a_choice_of_another_hotel_announces_a_complaint() -> None:
    # SPACE dev 1510471's internet PRO at HIRO seed 0: both its key points complain.
    drawbacks = "Drawbacks: no free internet in the lobby, receptionists could be more welcoming and smiling."
    elsewhere = "The next time I will choose another hotel with free internet access, it is as important as breakfast."
    assert announces_complaint(drawbacks) and announces_complaint(elsewhere)
    assert announces_complaint("Great stay. Downside - the parking.")
    for praise in ("Problem-free stay.", "Next time I will book another night.", "We will stay here next time."):
        assert not announces_complaint(praise), praise
    assert agreeing_points([drawbacks, elsewhere, "The free wifi was fast."], range(3), 1) == [2]


def test_a_negated_noise_is_no_complaint() -> None:
    # SPACE dev 197424's noise CON at HIRO seed 1: both its key points praise the quiet.
    quiet = ("No noise penetrated the room.", "I did not notice any significant noise.", "We didn't hear a thing.")
    for text in quiet:
        assert not states_complaint(text), text
    assert states_complaint("The room was not quiet.") and states_complaint("Noisy, no soundproofing.")
    rows = [(text, -0.3) for text in quiet[:2]]
    assert highlight_sides("noise", ["noise", "noisy", "quiet"], rows) == []


def test_a_pro_that_complains_must_praise_something(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 188745's room PRO at HIRO seed 2 (the blended sentiment read it +0.20).
    from opinio_agents.synthesis import selection

    small = "The first room, on the top floor was very small (even by European standards)."
    mixed = "The rooms were all lovely, quite small, but perfectly formed."
    assert agreeing_points([small, mixed, "The bed was nice and firm."], range(3), 1) == [1, 2]
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", replace(selection.SELECTION_SETTINGS, pro_needs_praise=False))
    assert agreeing_points([small, mixed], range(2), 1) == [0, 1]
