"""Tests for opinio_agents.io (streamed loaders and the atomic writer)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from opinio_agents.errors import DataError
from opinio_agents.io import (
    LoadReport,
    entity_to_opiniobank,
    iter_entities,
    load_entities,
    load_entity,
    validate_file,
    write_opiniobank,
)
from opinio_agents.models import Entity


def review(review_id: Any, text: str = "Nice room.", **extra: Any) -> dict[str, Any]:
    return {"review_id": review_id, "text": text, **extra}


def entity(entity_id: Any, *reviews: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "entity_id": entity_id,
        "entity_name": f"Hotel {entity_id}",
        "user_reviews": list(reviews),
        **extra,
    }


def write_array(path: Path, entities: list[Any]) -> Path:
    """One entity per line after a '[' line: entity i starts on line i + 2."""
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in entities) + "\n]\n", encoding="utf-8")
    return path


GOOD = [
    entity(
        1,
        review(
            1,
            "Great wi-fi.",
            rating=5,
            helpful_votes=2,
            publication_date="2020-01-02",
            user_review_posted=4,
        ),
        review(2, "Noisy street."),
        expert_review={"pros": {"wi-fi": "Fast wi-fi."}, "cons": {"noise": "Street noise."}},
    ),
    entity(2, review("a", "Rude staff.")),
]


# --------------------------------------------------------------------------- happy paths


@pytest.mark.parametrize("chunk_size", [1, 3, 17, 1 << 20])
def test_json_array_streams_with_any_chunk_size(tmp_path: Path, chunk_size: int) -> None:
    path = write_array(tmp_path / "hotels.json", GOOD)
    report = LoadReport()
    entities = list(iter_entities(path, chunk_size=chunk_size, report=report))
    assert [e.entity_id for e in entities] == [1, 2]
    first = entities[0]
    assert first.user_reviews[0].user_reviews_posted == 4
    assert first.user_reviews[0].publication_date is not None
    assert first.expert_review is not None and first.expert_review.pros == {"wi-fi": "Fast wi-fi."}
    assert (report.entities_loaded, report.reviews_loaded, report.skipped) == (2, 3, [])


def test_streaming_yields_before_reading_the_rest(tmp_path: Path) -> None:
    # The second element is broken: the first entity must still come out first.
    path = tmp_path / "hotels.json"
    path.write_text("[" + json.dumps(GOOD[0]) + ",\n{broken", encoding="utf-8")
    iterator = iter_entities(path, chunk_size=8)
    assert next(iterator).entity_id == 1
    with pytest.raises(DataError, match="malformed JSON at line 2"):
        next(iterator)


def test_single_entity_object_and_numbers_across_chunks(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(entity(123456789, review(98765, rating=4.25))), encoding="utf-8")
    (loaded,) = load_entities(path, chunk_size=2)
    assert loaded.entity_id == 123456789
    assert loaded.user_reviews[0].review_id == 98765 and loaded.user_reviews[0].rating == 4.25


def test_jsonl_and_utf8_bom(tmp_path: Path) -> None:
    path = tmp_path / "hotels.jsonl"
    text = "\n".join(json.dumps(e) for e in GOOD) + "\n\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert [e.key for e in iter_entities(path, chunk_size=5)] == ["1", "2"]


def test_non_utf8_encoding_argument(tmp_path: Path) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(
        json.dumps([entity(1, review(1, "Caf\u00e9 ok"))], ensure_ascii=False).encode("latin-1")
    )
    assert load_entities(path, encoding="latin-1")[0].user_reviews[0].text == "Caf\u00e9 ok"


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.dumps(GOOD).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert [e.key for e in iter_entities("-")] == ["1", "2"]


def test_load_entity_and_not_found(tmp_path: Path) -> None:
    path = write_array(tmp_path / "hotels.json", GOOD)
    assert load_entity(path, "2").entity_id == 2
    with pytest.raises(DataError) as info:
        load_entity(path, 99)
    message = str(info.value)
    assert "hotels.json" in message and "99" in message and "1, 2" in message


def test_validate_file_returns_report(tmp_path: Path) -> None:
    path = write_array(tmp_path / "hotels.json", GOOD)
    report = validate_file(path)
    assert report.entities_loaded == 2 and report.reviews_loaded == 3
    assert report.summary() == f"{path}: 2 entities, 3 reviews loaded, 0 records skipped"


# --------------------------------------------------------------------------- errors


def raises(path: Path, **kwargs: Any) -> str:
    with pytest.raises(DataError) as info:
        list(iter_entities(path, **kwargs))
    return str(info.value)


def test_mistyped_review_field(tmp_path: Path) -> None:
    path = write_array(
        tmp_path / "h.json", [GOOD[1], entity(7, review(1), review(3, rating="high"))]
    )
    message = raises(path, chunk_size=4)
    assert message.startswith(f"{path}: line 3, entity 7, review 3, field 'rating': ")
    assert "'high'" in message


def test_empty_review_text(tmp_path: Path) -> None:
    path = write_array(tmp_path / "h.json", [entity(7, review(5, "   "))])
    assert raises(path).startswith(
        f"{path}: line 2, entity 7, review 5, field 'text': review text is empty"
    )


def test_missing_fields(tmp_path: Path) -> None:
    path = write_array(tmp_path / "h.json", [{"entity_name": "x", "user_reviews": []}])
    assert raises(path) == f"{path}: line 2, field 'entity_id': required field is missing"
    path = write_array(tmp_path / "h.json", [entity(4, {"text": "no id"})])
    assert (
        raises(path)
        == f"{path}: line 2, entity 4, field 'user_reviews[0].review_id': required field is missing"
    )


def test_duplicate_review_ids(tmp_path: Path) -> None:
    path = write_array(tmp_path / "h.json", [entity(3, review(1), review(1))])
    message = raises(path)
    assert message.startswith(
        f"{path}: line 2, entity 3, review 1, field 'review_id': duplicate review_id"
    )


def test_duplicate_entity_ids(tmp_path: Path) -> None:
    path = write_array(tmp_path / "h.json", [GOOD[1], GOOD[1]])
    assert raises(path).startswith(
        f"{path}: line 3, entity 2, field 'entity_id': duplicate entity_id"
    )


def test_malformed_json_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text(
        '[\n{"entity_id": 1, "user_reviews": []},\n{"entity_id": 2 "user_reviews": []}\n]',
        encoding="utf-8",
    )
    assert (
        raises(path, chunk_size=5)
        == f"{path}: line 3: malformed JSON at line 3 column 30: after key and value, inside map, "
        "I expect ',' or '}'"
    )


def test_unclosed_array_and_non_object(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text('[{"entity_id": 1, "user_reviews": []}', encoding="utf-8")
    assert "top-level array is not closed" in raises(path)
    path.write_text('[{"entity_id": 1, "user_reviews": []}, 5]', encoding="utf-8")
    assert "expected an entity object, got int" in raises(path)


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    data = b'[\n{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "caf\xe9"}]}]'
    path.write_bytes(data)
    message = raises(path, chunk_size=4)
    assert data.index(b"\xe9") == 65
    assert message.startswith(f"{path}: line 2: not valid utf-8 at byte 65")
    assert "re-save the file as UTF-8 or pass encoding=" in message


@pytest.mark.parametrize("name", ["h.json", "h.jsonl", "h.csv"])
def test_empty_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("  \n", encoding="utf-8")
    assert raises(path).startswith(f"{path}: file is empty")


def test_empty_array_and_unknown_extension_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    path.write_text("[]", encoding="utf-8")
    assert raises(path) == f"{path}: no entities found in the file"
    other = tmp_path / "h.txt"
    other.write_text("[]", encoding="utf-8")
    assert "unsupported file extension '.txt'" in raises(other)
    assert (
        raises(tmp_path / "nope.json")
        == f"{tmp_path / 'nope.json'}: file not found; check the path"
    )


def test_jsonl_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(GOOD[0]) + "\n{oops\n", encoding="utf-8")
    assert raises(path).startswith(f"{path}: line 2: malformed JSON at line 2 column 2")


# --------------------------------------------------------------------------- skip_invalid


def test_skip_invalid_counts_and_continues(tmp_path: Path) -> None:
    records = [
        entity(1, review(1)),
        entity(2, review(1, "")),
        entity(3, review(1), review(1)),
        entity(1, review(2)),
        "not an object",
        entity(4, review(9, rating="x")),
        entity(5, review(1)),
    ]
    path = write_array(tmp_path / "h.json", records)
    report = LoadReport()
    loaded = list(iter_entities(path, skip_invalid=True, report=report, chunk_size=6))
    assert [e.entity_id for e in loaded] == [1, 5]
    assert report.entities_loaded == 2 and len(report.skipped) == 5
    where = [w for w, _ in report.skipped]
    assert where[0] == f"{path}, line 3, entity 2, review 1"
    assert where[1] == f"{path}, line 4, entity 3, review 1"
    assert where[2] == f"{path}, line 5, entity 1"
    assert where[4] == f"{path}, line 7, entity 4, review 9"
    assert report.skipped[4][1].startswith("field 'rating': ")
    assert "5 records skipped" in report.summary()


def test_skip_invalid_jsonl_malformed_lines(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(
        json.dumps(GOOD[0]) + "\n{oops\n" + json.dumps(GOOD[1]) + " trailing\n", encoding="utf-8"
    )
    report = validate_file(path, skip_invalid=True)
    assert report.entities_loaded == 1
    assert [w for w, _ in report.skipped] == [f"{path}, line 2", f"{path}, line 3"]


# --------------------------------------------------------------------------- CSV


CSV_HEADER = "entity_id,entity_name,review_id,text,rating,user_review_posted,publication_date\n"


def test_csv_loading(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        CSV_HEADER
        + '1,Inn,1,"Nice room.\nQuiet, too.",5,3,2020-01-02\n'
        + "1,,2,Bad wifi,,,\n"
        + "\n"
        + "h2,Motel,x1,ok,2.5,,\n",
        encoding="utf-8",
    )
    entities = load_entities(path, chunk_size=3)
    assert [(e.entity_id, e.entity_name, len(e.user_reviews)) for e in entities] == [
        (1, "Inn", 2),
        ("h2", "Motel", 1),
    ]
    first = entities[0].user_reviews[0]
    assert (
        first.text == "Nice room.\nQuiet, too."
        and first.user_reviews_posted == 3
        and first.rating == 5.0
    )
    assert entities[0].user_reviews[1].rating is None


def test_csv_errors_name_line_entity_review_and_field(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(CSV_HEADER + "1,Inn,1,ok,5,,\n1,,2,bad,high,,\n", encoding="utf-8")
    assert raises(path).startswith(f"{path}: line 3, entity 1, review 2, field 'rating': ")
    path.write_text(CSV_HEADER + "1,Inn,1,ok,,,\n1,,1,again,,,\n", encoding="utf-8")
    assert raises(path).startswith(
        f"{path}: line 3, entity 1, review 1, field 'review_id': duplicate review_id"
    )
    path.write_text(CSV_HEADER + '1,Inn,1,"",,,\n', encoding="utf-8")
    assert raises(path).startswith(
        f"{path}: line 2, entity 1, review 1, field 'text': review text is empty"
    )
    path.write_text(CSV_HEADER + "1,Inn,1,a,,,\n2,B,1,b,,,\n1,,2,c,,,\n", encoding="utf-8")
    assert "not contiguous" in raises(path) and "line 4, entity 1" in raises(path)
    path.write_text("entity_id,text\n1,a\n", encoding="utf-8")
    assert (
        raises(path) == f"{path}: line 1: CSV header lacks required column(s) review_id; "
        "found columns: entity_id, text"
    )
    path.write_text(CSV_HEADER + "1,Inn,1\n", encoding="utf-8")
    assert raises(path).startswith(f"{path}: line 2: row has 3 cells but the header has 7")


def test_csv_skip_invalid_rows(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(CSV_HEADER + "1,Inn,1,ok,,,\n1,,2,bad,x,,\n1,,3,fine,,,\n", encoding="utf-8")
    report = LoadReport()
    (loaded,) = list(iter_entities(path, skip_invalid=True, report=report))
    assert [r.review_id for r in loaded.user_reviews] == [1, 3]
    assert report.skipped[0][0] == f"{path}, line 3, entity 1, review 2"


# --------------------------------------------------------------------------- writer


@pytest.mark.parametrize(("name", "jsonl"), [("out.json", False), ("out.jsonl", True)])
def test_writer_round_trip(tmp_path: Path, name: str, jsonl: bool) -> None:
    source = [Entity.model_validate(e) for e in GOOD]
    path = tmp_path / name
    assert write_opiniobank(iter(source), path, jsonl=jsonl) == 2
    assert load_entities(path) == source
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temp file left behind


def test_entity_to_opiniobank_format() -> None:
    data = entity_to_opiniobank(Entity.model_validate(GOOD[0]))
    first = data["user_reviews"][0]
    assert first["publication_date"] == "2020-01-02" and first["user_reviews_posted"] == 4
    assert "rating" not in data["user_reviews"][1]
    assert list(data) == ["entity_id", "entity_name", "expert_review", "user_reviews"]


def test_writer_failure_keeps_old_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old", encoding="utf-8")

    def broken() -> Any:
        yield Entity.model_validate(GOOD[0])
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_opiniobank(broken(), path)
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


# --------------------------------------------------------------------------- stdin, registry, ijson


def test_stdin_is_validated_then_read_and_errors_name_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    from opinio_agents.io import iter_valid_entities

    data = json.dumps(GOOD).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    report = LoadReport()
    assert [e.key for e in iter_valid_entities("-", report=report)] == ["1", "2"]
    assert report.source == "<stdin>" and report.entities_loaded == 2
    bad = "[\n" + json.dumps(GOOD[0]) + ",\n" + json.dumps(entity(3, review(1, ""))) + "\n]"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.encode("utf-8"))))
    got: list[Entity] = []
    with pytest.raises(DataError) as info:
        got.extend(iter_valid_entities("-"))
    assert got == []  # validated first: nothing is yielded from input that fails
    assert str(info.value).startswith("<stdin>: line 3, entity 3, review 1, field 'text'")


def test_stdin_csv_is_sniffed(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (CSV_HEADER + "1,Inn,1,ok,,,\n").encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert [e.entity_name for e in iter_entities("-")] == ["Inn"]


def test_pretty_printed_json_names_the_line_the_entity_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps([GOOD[0], entity(9, review(1, rating="bad"))], indent=2), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, text in enumerate(lines, 1) if '"entity_id": 9' in text) - 1  # the "{" line
    assert lines[start - 1].strip() == "{"
    assert raises(path, chunk_size=7).startswith(f"{path}: line {start}, entity 9, review 1, field 'rating'")


def test_large_file_error_after_many_chunks(tmp_path: Path) -> None:
    records = [entity(i, review(1, "Fine room. " * 50)) for i in range(300)] + [entity(300, review(1, ""))]
    path = write_array(tmp_path / "big.json", records)
    assert raises(path, chunk_size=4096).startswith(f"{path}: line 302, entity 300, review 1, field 'text'")


def test_a_new_format_is_one_reader_class(tmp_path: Path) -> None:
    from opinio_agents.io import Reader, register_reader, registered_readers
    from opinio_agents.io.base import unregister_reader

    @register_reader
    class PipeReader(Reader):
        """``entity|review|text`` lines (a toy format for the test)."""

        format = "pipes"
        extensions = (".pipes",)

        def read(self, raw, source, options, report):  # type: ignore[no-untyped-def]
            rows = [line.split("|") for line in raw.read().decode(options.encoding).splitlines() if line]
            for key in dict.fromkeys(r[0] for r in rows):
                reviews = [{"review_id": r[1], "text": r[2]} for r in rows if r[0] == key]
                yield Entity.model_validate({"entity_id": key, "user_reviews": reviews})

    try:
        assert registered_readers()["pipes"] is PipeReader
        path = tmp_path / "reviews.pipes"
        path.write_text("a|1|Quiet.\na|2|Clean.\nb|1|Noisy.\n", encoding="utf-8")
        report = LoadReport()
        assert [(e.key, len(e.user_reviews)) for e in iter_entities(path, report=report)] == [("a", 2), ("b", 1)]
        assert report.reviews_loaded == 3
    finally:
        unregister_reader("pipes")
    assert "unsupported file extension '.pipes'" in raises(path)


def test_registered_builtin_readers() -> None:
    from opinio_agents.io import registered_readers

    readers = registered_readers()
    assert {"json", "jsonl", "csv"} <= set(readers)
    assert readers["jsonl"].extensions == (".jsonl", ".ndjson")
