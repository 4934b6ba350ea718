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


def test_a_pro_whose_only_praise_is_negated_is_no_pro(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 185237's bathroom PRO at HIRO seeds 2 and 3 (issue 21, helper neg13).
    from opinio_agents.synthesis import selection
    from opinio_agents.synthesis.complaints import negates_praise

    negated = ("Bathroom was not large.", "Not worth the money.", "No free wifi.", "The room was not very clean.")
    praise = (
        "No problems at all.", "The location is not too far from some great downtown clubs.",
        "Never had an issue with the staff.", "Couldn't have been better.", "Not a problem.",
        "Nothing to complain about.", "The rooms were not big, but very clean.", "Not only clean but spacious.",
        "Good breakfast, but not included.",
    )
    for text in negated:
        assert negates_praise(text), text
    for text in praise:
        assert not negates_praise(text), text
    assert agreeing_points([*negated, "The bed was nice and firm."], range(5), 1) == [4]
    monkeypatch.setattr(
        selection, "SELECTION_SETTINGS", replace(selection.SELECTION_SETTINGS, pro_praise_unnegated=False)
    )
    assert agreeing_points(["Bathroom was not large."], range(1), 1) == [0]


def test_a_warning_announces_a_complaint() -> None:
    # SPACE dev 111509's breakfast PRO at HIRO seed 1 (issue 21, helper neg13).
    warning = "Definitely do not stay there for the free breakfast."
    assert announces_complaint(warning) and announces_complaint("Don't come here for the view.")
    for praise in ("Don't go anywhere else!", "Never stay anywhere else.", "Do not miss the breakfast."):
        assert not announces_complaint(praise), praise
    assert agreeing_points([warning, "The free breakfast was good."], range(2), 1) == [1]


def test_a_praise_word_that_measures_a_nuisance_complains(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 1176198's noise PRO at HIRO seeds 1-3 (issue 21, helper neg13).
    from opinio_agents.synthesis.complaints import uses_complaint_word, uses_praise_word

    noise = (
        "If you are stayingThursday through until Sunday there is a club with a patio next door and the noise is "
        "terrific until around three in the morning."
    )
    for text in (noise, "There was terrific noise from the club."):
        assert uses_complaint_word(text) and not uses_praise_word(text), text
    for text in ("The noise insulation is terrific.", "The pool is terrific."):
        assert uses_praise_word(text) and not uses_complaint_word(text), text
    assert agreeing_points([noise, "The room was quiet."], range(2), 1) == [1]
    setting(monkeypatch, problem_praise=True)
    assert uses_praise_word(noise) and not uses_complaint_word(noise)


def test_a_complaint_about_the_stay_is_no_complaint_about_the_aspect(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 185237's breakfast CON at HIRO seeds 0-3 (issue 21, helper neg13).
    stay = "All I got for my horrific experience was free breakfast at the restaurant downstairs."
    assert not states_complaint(stay)
    complaints_ = (
        "The breakfast was horrible.", "Horrible stay, the breakfast was cold.", "No breakfast included.",
        "This was one of the worst experiences I have ever with a hotel room that cost $160 a night.",
    )
    for complaint in complaints_:
        assert states_complaint(complaint), complaint
    setting(monkeypatch, stay_complaints=True)
    assert states_complaint(stay)


def test_an_expectation_ends_with_its_clause(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 21, helper neg13: the fear of fears_complain=False reached past "and".
    filthy = "We expected it to be clean and it was filthy."
    assert states_complaint(filthy)
    for feared in ("I thought it would be noisy and dirty.", "We expected the rooms to be small and they were huge."):
        assert not states_complaint(feared), feared
    setting(monkeypatch, fear_clause=False)
    assert not states_complaint(filthy)


def test_a_hedge_is_no_praise(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 197424's bed PRO at HIRO seed 3 (issue 21, helper neg13).
    from opinio_agents.synthesis.complaints import uses_praise_word

    tiny = "The room had a spare sofa bed and to be honest was tiny for three people."
    assert not uses_praise_word(tiny) and uses_praise_word("The staff were honest and kind.")
    assert agreeing_points([tiny], range(1), 1) == []
    setting(monkeypatch, hedges_praise=True)
    assert agreeing_points([tiny], range(1), 1) == [0]


def test_a_restricted_perk_or_a_counterfactual_announces_a_complaint() -> None:
    # SPACE dev 185237's internet PRO at HIRO seed 2: both its key points complain (issue 21, helper neg13).
    lobby = "Here's why: The internet is only free in the lobby."
    hope = "Considering you spend over $200/night for this place, you would hope they can provide free Internet."
    assert announces_complaint(lobby) and announces_complaint(hope)
    for praise in (
        "I would hope to stay again.", "You would think you were in Paris.", "The wifi is free in the lobby and rooms.",
        "Only free parking in town.",
    ):
        assert not announces_complaint(praise), praise
    assert agreeing_points([lobby, hope, "The free wifi was fast."], range(3), 1) == [2]


def test_a_pro_that_names_a_nuisance_must_praise_something(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 1176198's noise PRO at HIRO seeds 1 and 2 once "the noise is terrific" went (issue 21, helper neg13).
    from opinio_agents.synthesis import selection

    rock = "The noise from the club next door will rock your world until about 2:30 AM."
    praise = (
        "Some reviewers had mentioned the noise from the clubs so we asked for a quiet room and were not disappointed.",
        "Noise was never a problem.", "You never hear street noise.",
    )
    assert agreeing_points([rock, *praise], range(4), 1) == [1, 2, 3]
    assert agreeing_points(["The room was not quiet."], range(1), 1) == []  # "quiet" is negated praise
    monkeypatch.setattr(
        selection, "SELECTION_SETTINGS", replace(selection.SELECTION_SETTINGS, pro_problem_praises=False)
    )
    assert agreeing_points([rock], range(1), 1) == [0]


def test_a_pro_whose_part_about_its_aspect_complains_is_no_pro(monkeypatch: pytest.MonkeyPatch) -> None:
    # SPACE dev 1176198's parking PRO at HIRO seed 3: the lobby's praise carried a parking complaint.
    from opinio_agents.synthesis import selection

    lobby = "The lobby is quite lovely, the parking is expensive."
    steep = "Very easy to get to - but parking is an issue and the rate of $35.00 / day is very steep."
    assert agreeing_points([steep, "The parking is a bit tight but was worth it."], range(2), 1, query="parking") == [1]
    kept = (
        "The lobby is quite lovely, the parking is free and easy.",
        "The lobby is small, the parking is free and easy.",
        "Valet parking was easy.",  # one part: the sentiment reading decides
    )
    assert agreeing_points([lobby, *kept], range(4), 1, query="parking") == [1, 2, 3]
    assert agreeing_points([lobby], range(1), 1, query="lobby") == [0]  # its lobby part praises
    assert agreeing_points([lobby], range(1), 1) == [0]  # no aspect given: nothing to read
    assert agreeing_points([lobby], range(1), 1, query="car", terms=["parking"]) == []  # the aspect's other words
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", replace(selection.SELECTION_SETTINGS, pro_aspect_clause=False))
    assert agreeing_points([lobby], range(1), 1, query="parking") == [0]


def test_a_con_whose_part_about_its_aspect_praises_is_no_con(monkeypatch: pytest.MonkeyPatch) -> None:
    # The mirror of the PRO rule (issue 21, helper read14): a CON's other parts may not carry its aspect's praise.
    from opinio_agents.synthesis import selection

    mixed = "The room was filthy and the staff were rude, the breakfast was good."
    kept = (
        "Hotel loud, construction going on outside, Internet is not free.",  # negated praise complains
        "The breakfast was cold.",  # one part: the sentiment reading decides
    )
    assert agreeing_points([mixed, *kept], range(3), -1, query="breakfast") == [1, 2]
    assert agreeing_points([mixed, *kept], range(3), -1, query="internet") == [0, 1, 2]
    assert agreeing_points([mixed], range(1), -1, query="staff") == [0]  # its staff part complains
    assert agreeing_points([mixed], range(1), -1) == [0]  # no aspect given: nothing to read
    monkeypatch.setattr(selection, "SELECTION_SETTINGS", replace(selection.SELECTION_SETTINGS, con_aspect_clause=False))
    assert agreeing_points([mixed], range(1), -1, query="breakfast") == [0]


def test_a_wish_for_what_the_place_lacked_announces_a_complaint() -> None:
    # SPACE dev 150241's airport PRO at HIRO seed 2.
    shuttle = "The only wish would be that the hotel had an airport shuttle."
    assert announces_complaint(shuttle)
    assert announces_complaint("I wish they had a bigger pool.")
    for praise in ("My only wish is that we had stayed longer.", "I wish I could have stayed another week."):
        assert not announces_complaint(praise), praise
    assert agreeing_points([shuttle, "The airport shuttle was free and on time."], range(2), 1) == [1]
