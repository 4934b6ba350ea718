"""Mojibake repaired on ingest (``io.encoding``, ``io.base.decoded_entity``) and what a key point keeps.

SPACE's TripAdvisor dump holds UTF-8 read as Windows-1252 ("didnâ€™t", "Hamptons â€“ this
location"); key points cut from such sentences were shown as "didnâ t" and "â “". Every reader now
re-reads such text once, on ingest. Key points lost the currency sign of a price ("€150" -> " 150")
and "wasn´t" became "wasn t".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from opinio_agents.io.encoding import repair_mojibake
from opinio_agents.io.loaders import load_entities
from opinio_agents.synthesis.keypoint import clean_sentence, to_key_point

_ALPHABET = "abcdefghij XYZ.,!'" + "’‘“”–—…éèàüñçÉ€£½°"


def _garbled(text: str) -> str:
    return text.encode("utf-8").decode("cp1252")


@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_text_read_as_windows_1252_is_repaired(text: str) -> None:
    try:
        garbled = _garbled(text)
    except UnicodeDecodeError:  # a byte Windows-1252 has no character for: this mojibake cannot occur
        assume(False)
        return
    assert repair_mojibake(garbled) == text


@pytest.mark.parametrize(
    "text",
    [
        "Plain ASCII, nothing to do.",
        "Ã la carte",  # a lead character followed by a space is not a run
        "São Paulo and Zürich",
        "Prices in € and £, 20°C, ½ price.",
    ],
)
def test_text_that_is_not_mojibake_is_left_alone(text: str) -> None:
    assert repair_mojibake(text) == text


def test_an_invalid_run_is_left_as_it_is() -> None:
    # "Ã" + "€" reads as the bytes C3 80: valid UTF-8 ("À"); "â" + "€" + "a" is no run at all.
    assert repair_mojibake("Ã€") == "À"
    assert repair_mojibake("â€a") == "â€a"


@pytest.mark.parametrize(
    ("sentence", "shown"),
    [
        ("We didn’t realize that the room faced the street.", "We didn’t realize that the room faced the street."),
        ("Great location – close to the metro.", "Great location – close to the metro."),
        ("The room was €150 a night, breakfast £12.", "The room was €150 a night, breakfast £12."),
        ("It wasn´t loud at all.", "It wasn´t loud at all."),
        ("Dinner for two was ₹800… worth it.", "Dinner for two was ₹800… worth it."),
        ("Loved it \U0001F60D\U0001F44D\U0001F3FB!!", "Loved it!"),  # the emoji goes, and the space before the mark
    ],
)
def test_clean_sentence_keeps_what_the_reviewer_wrote(sentence: str, shown: str) -> None:
    assert clean_sentence(sentence) == shown


def test_readers_repair_mojibake_once_on_ingest(tmp_path: Path) -> None:
    garbled = "The staff were so friendly, we didnâ€™t want to leave. CafÃ© &amp; bar â€“ great."
    reviews = [{"review_id": "r1", "text": garbled}, {"review_id": "r2", "text": "Plain text stays."}]
    data = tmp_path / "reviews.json"
    data.write_text(json.dumps([{"entity_id": "h1", "entity_name": "HÃ´tel", "user_reviews": reviews}]), "utf-8")
    (entity,) = load_entities(data)
    assert entity.entity_name == "Hôtel"
    assert entity.user_reviews[0].text == "The staff were so friendly, we didn’t want to leave. Café & bar – great."
    assert entity.user_reviews[1].text == "Plain text stays."
    point = to_key_point(entity.user_reviews[0].text, "staff", sign=1)
    assert "â" not in point and "€" not in point
