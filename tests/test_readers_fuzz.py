"""The dataset readers under random mutations (Hypothesis), and NaN / Infinity ratings named.

A valid JSON / JSONL / CSV file is mutated (bytes flipped, cut, tokens inserted: ``NaN``,
``Infinity``, ``null``, quotes, huge numbers, BOMs, NUL ...). Each mutant must either read as
valid entities or raise one :class:`~opinio_agents.errors.DataError` naming the file, never
another exception (which the CLI would show as a traceback). In the slow tier a few mutants
are also indexed: the store is then either updated cleanly or left exactly as it was.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")

from fake_encoder import HashEncoder  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from opinio_agents.errors import DataError, OpinioError  # noqa: E402
from opinio_agents.io.loaders import iter_valid_entities  # noqa: E402

ENTITIES = [
    {"entity_id": 1, "entity_name": "Harbor Inn", "user_reviews": [
        {"review_id": "a", "text": "The pool was clean and the staff friendly.", "rating": 4},
        {"review_id": "b", "text": "Wi-fi was slow and cost extra.", "rating": 2},
    ]},
    {"entity_id": "two", "entity_name": "Dune Hotel", "user_reviews": [
        {"review_id": "c", "text": "Breakfast was great.", "rating": 5, "publication_date": "2020-01-02"},
    ]},
]
TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"null", b'"', b"\\", b"{", b"]", b",", b"1e999", b"-1",
          b"\x00", b"\xef\xbb\xbf", b"\xff", b"\n", b'"rating": ', b"true", b"99999999999999999999"]


def _valid(kind: str) -> bytes:
    if kind == "json":
        return json.dumps(ENTITIES, indent=1).encode()
    if kind == "jsonl":
        return "\n".join(json.dumps(e) for e in ENTITIES).encode() + b"\n"
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["entity_id", "entity_name", "review_id", "text", "rating"])
    for e in ENTITIES:
        for r in e["user_reviews"]:
            writer.writerow([e["entity_id"], e["entity_name"], r["review_id"], r["text"], r["rating"]])
    return out.getvalue().encode()


@st.composite
def mutants(draw: Any) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(["json", "jsonl", "csv"]))
    data = bytearray(_valid(kind))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "replace", "delete", "cut", "flip"]))
        if action == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif action == "replace":
            data[at:at + draw(st.integers(1, 8))] = draw(st.sampled_from(TOKENS))
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 20))]
        elif action == "cut":
            del data[at:]
        elif data and at < len(data):
            data[at] = draw(st.integers(0, 255))
    return kind, bytes(data)


def _outcome(path: Path) -> list[Any] | DataError:
    try:
        return list(iter_valid_entities(path))
    except DataError as exc:
        return exc


TALLY = {"examples": 0, "errors": 0}


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutant=mutants())
def test_a_mutated_file_reads_cleanly_or_fails_with_one_named_error(mutant: tuple[str, bytes], tmp_path: Path) -> None:
    kind, data = mutant
    path = tmp_path / f"data.{kind}"
    path.write_bytes(data)
    got = _outcome(path)  # any other exception fails the test (the CLI would print a traceback)
    TALLY["examples"] += 1
    if isinstance(got, DataError):
        TALLY["errors"] += 1
        assert "data." in str(got) and str(got).strip(), got


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("kind", ["json", "jsonl"])
def test_non_finite_ratings_name_field_line_and_value(tmp_path: Path, kind: str, token: str) -> None:
    text = _valid(kind).decode().replace('"rating": 2', f'"rating": {token}')
    path = tmp_path / f"data.{kind}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        list(iter_valid_entities(path))
    error = caught.value
    assert error.field == "rating" and error.line is not None
    shown = str(error)
    assert "rating" in shown and token.lstrip("-").lower()[:3] in shown.lower() and f"line {error.line}" in shown


@pytest.mark.slow
@settings(max_examples=25, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutant=mutants())
def test_indexing_a_mutant_updates_the_store_cleanly_or_not_at_all(
    mutant: tuple[str, bytes], tmp_path_factory: Any
) -> None:
    from opinio_agents.api import OpinioRAG

    kind, data = mutant
    folder = tmp_path_factory.mktemp("mutant")
    path = folder / f"data.{kind}"
    path.write_bytes(data)
    rag = OpinioRAG(folder / "store", encoder=HashEncoder())
    try:
        rag.index([_first_entity()])
        before = {k: rag.store.generation(k) for k in rag.entities()}
        try:
            rag.index(path)
        except OpinioError:
            assert {k: rag.store.generation(k) for k in rag.entities()} == before  # nothing half-written
        assert rag.store.incomplete_entities() == []
    finally:
        rag.close()


def _first_entity() -> Any:
    from opinio_agents.models import Entity

    return Entity.model_validate({**ENTITIES[0], "entity_id": "base"})
