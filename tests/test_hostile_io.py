"""Hostile input at the reader, model and output layers (fast tier: no model, no subprocess).

Ratings, CSV quoting, size and depth limits, lone surrogates, whole-file validation with
``skip_invalid``, unambiguous sentence ids through a real store, and the escaping of
untrusted text in markdown and terminal output (JSON stays verbatim).
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import pytest
from rich.console import Console

from opinio_agents.errors import ConfigError, DataError
from opinio_agents.io.base import LoadReport, ReadOptions
from opinio_agents.io.json_readers import JsonReader
from opinio_agents.io.loaders import iter_entities, iter_valid_entities, load_entities
from opinio_agents.io.outputs import check_output_path, markdown_safe, terminal_safe, write_text_atomic
from opinio_agents.models import RATING_RANGE, Entity, Evidence, Highlight, HighlightSet, Polarity, Review, Sentence


def _entity(entity_id: object = 1, **review: object) -> dict:
    base = {"review_id": 1, "text": "Quiet room."}
    return {"entity_id": entity_id, "user_reviews": [{**base, **review}]}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- ratings ------------------------------------------------------------------------------
@pytest.mark.parametrize("rating", ["NaN", "Infinity", "-Infinity"])
def test_jsonl_nan_and_infinity_ratings_are_refused(tmp_path, rating) -> None:
    path = _write(tmp_path / "r.jsonl", '{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "ok", '
                  f'"rating": {rating}}}]}}\n')
    with pytest.raises(DataError) as info:
        load_entities(path)
    assert "field 'rating'" in str(info.value) and "finite" in str(info.value)


@pytest.mark.parametrize("cell", ["nan", "inf", "11", "-1"])
def test_csv_bad_ratings_are_refused_or_skipped(tmp_path, cell) -> None:
    path = _write(tmp_path / "r.csv", f"entity_id,review_id,text,rating\n1,1,Quiet.,{cell}\n1,2,Clean.,4\n")
    with pytest.raises(DataError) as info:
        load_entities(path)
    assert "line 2" in str(info.value) and "rating" in str(info.value)
    report = LoadReport()
    [entity] = load_entities(path, skip_invalid=True, report=report)
    assert [r.review_id for r in entity.user_reviews] == [2]
    assert len(report.skipped) == 1


def test_rating_range_is_documented_and_enforced() -> None:
    low, high = RATING_RANGE
    assert Review(review_id=1, text="x", rating=low).rating == low
    assert Review(review_id=1, text="x", rating=high).rating == high
    for bad in (math.nan, math.inf, high + 0.5, low - 0.5):
        with pytest.raises(ValueError, match="finite number from 0 to 10"):
            Review(review_id=1, text="x", rating=bad)


def test_json_nan_literal_is_an_error_naming_the_field_and_value(tmp_path) -> None:
    path = _write(tmp_path / "r.json", '[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "ok", '
                  '"rating": NaN}]}]')
    with pytest.raises(DataError, match="rating is NaN .*JSON has no NaN or Infinity") as info:
        load_entities(path)
    assert info.value.field == "rating" and info.value.line == 1


# -- CSV quoting --------------------------------------------------------------------------
def test_csv_unbalanced_quote_is_an_error_naming_the_line(tmp_path) -> None:
    path = _write(tmp_path / "q.csv", 'entity_id,review_id,text\n1,1,Fine.\n1,2,"Never closed.\n1,3,Gone?\n1,4,Also.\n')
    with pytest.raises(DataError) as info:
        load_entities(path)
    message = str(info.value)
    assert "line 3" in message and "never closed" in message
    # skip_invalid cannot skip it: the rows after the quote cannot be told apart
    with pytest.raises(DataError, match="never closed"):
        list(iter_valid_entities(path, skip_invalid=True))


def test_csv_stray_quote_is_an_error(tmp_path) -> None:
    path = _write(tmp_path / "q.csv", 'entity_id,review_id,text\n1,1,"Quiet" room.\n1,2,Nice.\n')
    with pytest.raises(DataError) as info:
        load_entities(path)
    assert "line 2" in str(info.value) and "malformed CSV" in str(info.value)


def test_csv_quoted_multiline_cell_still_reads(tmp_path) -> None:
    path = _write(tmp_path / "q.csv", 'entity_id,review_id,text\n1,1,"Two\nlines, ""quoted"""\n1,2,Next.\n')
    [entity] = load_entities(path)
    assert [r.text for r in entity.user_reviews] == ['Two\nlines, "quoted"', "Next."]


# -- size limits --------------------------------------------------------------------------
def test_review_over_the_size_limit_is_refused_or_skipped_json(tmp_path) -> None:
    data = [_entity(1, text="x " * 60), _entity(2)]
    path = _write(tmp_path / "big.json", json.dumps(data))
    with pytest.raises(DataError) as info:
        load_entities(path, max_review_chars=100)
    assert "entity 1, review 1, field 'text'" in str(info.value) and "over the limit of 100" in str(info.value)
    report = LoadReport()
    kept = list(iter_valid_entities(path, skip_invalid=True, report=report, max_review_chars=100))
    assert [e.entity_id for e in kept] == [2] and len(report.skipped) == 1
    assert len(load_entities(path)) == 2  # the default limit (100K characters) is generous


def test_review_over_the_size_limit_is_refused_or_skipped_csv(tmp_path) -> None:
    big = "y" * 5000  # above the csv module's own field limit check too
    path = _write(tmp_path / "big.csv", f"entity_id,review_id,text\n1,1,{big}\n1,2,Short.\n")
    with pytest.raises(DataError) as info:
        load_entities(path, max_review_chars=100)
    assert "line 2" in str(info.value) and "characters" in str(info.value)
    report = LoadReport()
    [entity] = load_entities(path, skip_invalid=True, report=report, max_review_chars=100)
    assert [r.review_id for r in entity.user_reviews] == [2] and len(report.skipped) == 1


def test_file_over_the_size_limit_is_refused_whole(tmp_path) -> None:
    path = _write(tmp_path / "f.json", json.dumps([_entity(i) for i in range(20)]))
    with pytest.raises(DataError, match="over the limit"):
        list(iter_valid_entities(path, max_file_bytes=100))
    with pytest.raises(DataError, match="over the limit"):
        list(iter_valid_entities(path, skip_invalid=True, max_file_bytes=100))
    with pytest.raises(ConfigError):
        list(iter_entities(path, max_review_chars=0))


# -- whole-file errors with skip_invalid ------------------------------------------------------
def test_skip_invalid_on_a_truncated_array_yields_nothing(tmp_path) -> None:
    text = json.dumps([_entity(1), _entity(2), _entity(3)])
    path = _write(tmp_path / "cut.json", text[: text.rindex("{")])
    yielded: list[Entity] = []
    with pytest.raises(DataError, match="malformed JSON|unexpected end"):
        for entity in iter_valid_entities(path, skip_invalid=True):
            yielded.append(entity)
    assert yielded == []


def test_skip_invalid_still_skips_bad_records(tmp_path) -> None:
    path = _write(tmp_path / "mixed.json", json.dumps([_entity(1), _entity(2, text=" "), _entity(3)]))
    report = LoadReport()
    kept = list(iter_valid_entities(path, skip_invalid=True, report=report))
    assert [e.entity_id for e in kept] == [1, 3] and len(report.skipped) == 1


# -- depth and surrogates -------------------------------------------------------------------
@pytest.mark.parametrize("depth", [100, 100_000])
def test_deeply_nested_json_is_one_data_error(tmp_path, depth) -> None:
    nested = "[" * depth + "]" * depth
    path = _write(tmp_path / "deep.json", f'[{{"entity_id": 1, "x": {nested}, "user_reviews": '
                  '[{"review_id": 1, "text": "ok"}]}]')
    with pytest.raises(DataError, match="nests deeper than 64 levels"):
        load_entities(path)


def test_deeply_nested_jsonl_is_one_data_error(tmp_path) -> None:
    nested = "[" * 50_000 + "]" * 50_000
    path = _write(tmp_path / "deep.jsonl", f'{{"entity_id": 1, "x": {nested}}}\n')
    with pytest.raises(DataError, match="line 1.*nests too deeply"):
        load_entities(path)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = "[" * 500 + '\\"' + "{" * 500
    data = json.dumps([_entity(1, text=text)]).encode()
    for chunk in (3, 64, 1 << 20):
        [entity] = JsonReader().read(io.BytesIO(data), "s.json", ReadOptions(chunk_size=chunk), LoadReport())
        assert entity.user_reviews[0].text == json.loads(data)[0]["user_reviews"][0]["text"]


@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
def test_lone_surrogate_in_json_is_refused_and_pairs_are_fine(chunk) -> None:
    bad = b'[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "a\\ud800b"}]}]'
    with pytest.raises(DataError, match="lone surrogate"):
        list(JsonReader().read(io.BytesIO(bad), "s.json", ReadOptions(chunk_size=chunk), LoadReport()))
    pair = b'[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "a\\ud83d\\ude00b \\\\ud800"}]}]'
    [entity] = JsonReader().read(io.BytesIO(pair), "s.json", ReadOptions(chunk_size=chunk), LoadReport())
    assert entity.user_reviews[0].text == "a\U0001f600b \\ud800"


def test_lone_surrogate_in_jsonl_names_the_field_and_is_skippable(tmp_path) -> None:
    path = _write(tmp_path / "s.jsonl", '{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "a\\ud800"}]}\n'
                  + json.dumps(_entity(2)) + "\n")
    with pytest.raises(DataError) as info:
        load_entities(path)
    assert "line 1, entity 1, review 1, field 'text'" in str(info.value) and "lone surrogate" in str(info.value)
    assert [e.entity_id for e in load_entities(path, skip_invalid=True)] == [2]


# -- sentence ids -------------------------------------------------------------------------
def test_sentence_ids_cannot_collide_and_plain_ids_are_unchanged() -> None:
    assert Sentence.make_id(101, 1010160, 2) == "101:1010160:2"
    assert Sentence.make_id("a:b", "c", 0) != Sentence.make_id("a", "b:c", 0)
    assert Sentence.make_id("a%3Ab", "c", 0) != Sentence.make_id("a:b", "c", 0)
    triples = [(e, r, i) for e in ("a", "a:b", "a%", "%3A", ":") for r in ("b:c", "c", "%", "") for i in (0, 1)]
    assert len({Sentence.make_id(*t) for t in triples}) == len(triples)


def test_colliding_pair_through_the_real_store(tmp_path) -> None:
    from opinio_agents.api import OpinioRAG
    from tests.fake_encoder import HashEncoder

    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    first = Entity.model_validate({"entity_id": "a:b", "user_reviews": [{"review_id": "c", "text": "Lovely pool."}]})
    second = Entity.model_validate({"entity_id": "a", "user_reviews": [{"review_id": "b:c", "text": "Dirty room."}]})
    rag.index([first, second], fit_hiro=False)
    got = {key: [(s.sentence.sentence_id, s.sentence.text) for s in rag.store.sentences(key)] for key in ("a:b", "a")}
    assert got == {"a:b": [("a%3Ab:c:0", "Lovely pool.")], "a": [("a:b%3Ac:0", "Dirty room.")]}
    assert rag.store.count_sentences() == 2


# -- outputs ------------------------------------------------------------------------------
HOSTILE = "Nice </evidence><b>x</b> [click](http://evil.example) \x1b[31mred\x1b[0m \u202eevil\u202c [/] *em*"


def _hostile_set() -> HighlightSet:
    ev = Evidence(sentence_id="t1:r1:0", text=HOSTILE, score=1.0)
    result = HighlightSet(entity_id="[/]", entity_name="Inn [bold]x")
    result.add(Highlight(query="pool [/]", polarity=Polarity.PROS, text=HOSTILE, evidence=[ev]))
    return result


def test_markdown_escapes_html_links_controls_and_bidi() -> None:
    from opinio_agents.cli.render import to_markdown

    text = to_markdown(_hostile_set())
    for raw in ("<b>", "</evidence>", "[click]", "\x1b", "\u202e", "*em*"):
        assert raw not in text
    assert not re.search(r"(?<!\\)\]\(", text)  # no unescaped "](": no link
    assert "&lt;/evidence&gt;&lt;b&gt;" in text and "\\[click\\](http://evil.example)" in text
    assert "\\\\x1b" in text and "\\\\u202e" in text  # shown, backslash-escaped for markdown
    assert "[t1:r1:0]" in text


def test_terminal_table_shows_ids_literally_and_runs_no_escape_codes() -> None:
    from opinio_agents.cli.render import to_rich

    console = Console(file=io.StringIO(), width=300, color_system=None, force_terminal=False)
    console.print(to_rich(_hostile_set()))
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[t1:r1:0]" in shown and "pool [/]" in shown and "(entity [/])" in shown and "[bold]x" in shown
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "\\x1b[31mred" in shown


def test_json_output_stays_verbatim() -> None:
    from opinio_agents.cli.render import to_json

    data = json.loads(to_json(_hostile_set()))
    assert data["pros"][0]["text"] == HOSTILE and data["pros"][0]["evidence"][0]["text"] == HOSTILE


def test_safe_text_helpers() -> None:
    assert terminal_safe("a\x07b\x9bc\u2066d\ud800") == "a\\x07b\\x9bc\\u2066d\\ud800"
    assert terminal_safe("keep\ttabs\nand lines") == "keep\ttabs\nand lines"
    assert terminal_safe("crlf\r\nline\rover") == "crlf\nline\\x0dover"
    assert markdown_safe("line1\n# not a heading") == "line1 # not a heading"
    assert markdown_safe("a & b") == "a & b"  # a plain ampersand is literal markdown
    assert markdown_safe("a &amp; b") == "a &amp;amp; b"  # a character reference is escaped, shown as written


def test_write_text_atomic_never_follows_a_planted_symlink(tmp_path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out.md"
    (tmp_path / "out.md.tmp").symlink_to(victim)  # the name the old code wrote through
    write_text_atomic(out, "# result\n")
    assert out.read_text() == "# result\n" and victim.read_text() == "precious"
    assert not out.is_symlink()
    # a symlink at the output name itself is replaced, its target left alone
    link = tmp_path / "link.md"
    link.symlink_to(victim)
    write_text_atomic(link, "new\n")
    assert not link.is_symlink() and link.read_text() == "new\n" and victim.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "out.md", "out.md.tmp", "victim.txt"]


def test_output_paths_that_cannot_be_files_are_refused(tmp_path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        check_output_path(tmp_path)
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a directory"):
        write_text_atomic(plain / "sub" / "out.md", "x")
    assert plain.read_text() == "x"
