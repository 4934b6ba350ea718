"""HTML entities in reviews: decoded once on ingest (the readers), escaped once per medium (issue 25).

A review that holds ``old &amp; scuffed`` means "old & scuffed". The readers decode it once, so
the store, the JSON output and every surface hold ``&``; each medium then escapes it once: the
markdown and the HTML report show ``&`` (never ``&amp;amp;`` nor a visible ``&amp;``), the
terminal prints ``&``. Plural forms are checked here too ("1 helpful vote", "1 review").
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from opinio_agents.io.loaders import load_entities, load_entity
from opinio_agents.io.outputs import markdown_safe

TEXT = "The carpet was old &amp; scuffed. Breakfast had snacks &amp;amp; water. R&D folks; this&nothing &#39;ok&#x27;."
DECODED = "The carpet was old & scuffed. Breakfast had snacks &amp; water. R&D folks; this&nothing 'ok'."


def _entity(text: str = TEXT, name: str = "Caf&eacute; Inn") -> dict:
    reviews = [{"review_id": "r1", "text": text, "rating": 2, "helpful_votes": 1}]
    reviews += [
        {"review_id": f"r{i}", "text": f"The carpet in room {i} was stained &amp; worn.", "rating": 2,
         "helpful_votes": 1}
        for i in range(2, 5)
    ]
    reviews += [
        {"review_id": f"r{i}", "text": f"Room {i} was quiet and the breakfast was fine.", "rating": 4}
        for i in range(5, 9)
    ]
    return {
        "entity_id": "e1",
        "entity_name": name,
        "expert_review": {"pros": {}, "cons": {"carpet": "Worn carpets &amp; old decor."}},
        "user_reviews": reviews,
    }


def test_json_reader_decodes_entities_once(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps([_entity()]), encoding="utf-8")
    entity = load_entity(path, "e1")
    assert entity.user_reviews[0].text == DECODED
    assert entity.entity_name == "Café Inn"
    assert entity.expert_review is not None and entity.expert_review.cons["carpet"] == "Worn carpets & old decor."


def test_jsonl_and_csv_readers_decode_entities_once(tmp_path: Path) -> None:
    jsonl = tmp_path / "data.jsonl"
    jsonl.write_text(json.dumps(_entity()) + "\n", encoding="utf-8")
    assert next(iter(load_entities(jsonl))).user_reviews[0].text == DECODED
    csv = tmp_path / "data.csv"
    quoted = TEXT.replace('"', '""')
    csv.write_text(f'entity_id,entity_name,review_id,text\ne1,Caf&eacute; Inn,r1,"{quoted}"\n', encoding="utf-8")
    entity = next(iter(load_entities(csv)))
    assert entity.user_reviews[0].text == DECODED and entity.entity_name == "Café Inn"


def test_the_sample_is_decoded_on_load() -> None:
    from opinio_agents.datasets import load_sample

    texts = [r.text for e in load_sample() for r in e.user_reviews]
    assert not [t for t in texts if "&amp;" in t]
    assert any(" & " in t for t in texts)


def test_markdown_escapes_once_and_shows_a_plain_ampersand() -> None:
    assert markdown_safe("snacks & water") == "snacks & water"
    assert markdown_safe("snacks &amp; water") == "snacks &amp;amp; water"  # a literal "&amp;" renders as written
    assert markdown_safe("a &copy; b &#169; c") == "a &amp;copy; b &amp;#169; c"
    assert markdown_safe("<b>") == "&lt;b&gt;"


def test_plural() -> None:
    from opinio_agents.io.outputs import plural

    assert plural(1, "review") == "1 review"
    assert plural(2, "review") == "2 reviews"
    assert plural(1, "other entity", "other entities") == "1 other entity"
    assert plural(0, "helpful vote") == "0 helpful votes"
    assert plural(1_234, "review") == "1,234 reviews"


def test_alert_descriptions_use_plural_forms() -> None:
    from opinio_agents.synthesis.alerts import CRITICAL_CATEGORIES

    for category in CRITICAL_CATEGORIES:
        assert "(s)" not in category.describe(1) and "(s)" not in category.describe(3)
        assert category.describe(1).endswith("in 1 review") and category.describe(3).endswith("in 3 reviews")


def test_every_medium_shows_the_ampersand_once(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the report's charts need matplotlib")
    from opinio_agents import OpinioRAG
    from opinio_agents.cli.render import to_markdown, to_rich
    from opinio_agents.report import build_report, render_report
    from tests.fake_encoder import HashEncoder

    path = tmp_path / "data.json"
    path.write_text(json.dumps([_entity()]), encoding="utf-8")
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder(dimension=384), top_k=8)
    rag.index(load_entity(path, "e1"))
    result = rag.highlights("e1", ["carpet"])
    quoted = [e.text for h in result.highlights for e in h.evidence]
    assert any(" & " in text for text in quoted) and not any("&amp;" in text for text in quoted), quoted

    markdown = to_markdown(result, evidence=10)
    assert " & " in markdown and "&amp;" not in markdown

    console = Console(file=io.StringIO(), width=120, record=True)
    console.print(to_rich(result, width=120))
    terminal = console.export_text()
    assert " & " in terminal and "&amp;" not in terminal

    page = render_report(build_report(rag, "e1", ["carpet"], verify=False))
    assert "stained &amp; worn" in page and "&amp;amp;" not in page
    assert "1 helpful vote)" in page and "1 helpful votes" not in page
