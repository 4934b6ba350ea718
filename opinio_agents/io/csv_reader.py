r"""Reviews CSV reader: one review per row, rows of an entity contiguous.

Columns: ``entity_id`` (required), ``entity_name`` (optional) and review columns named
as the review fields (``review_id`` and ``text`` required; ``rating``,
``helpful_votes``, ``publication_date``, ``user_reviews_posted`` or the dataset's
``user_review_posted``, ``user_cities_visited``, ``user_helpful_votes``). Empty
cells mean "absent"; ids made only of digits become integers, as in the JSON files.
Expert reviews cannot be given in CSV.

Quoting is strict: a quote that is never closed (it would swallow every row after it)
or a stray quote inside a quoted cell is an error naming the line where the row starts,
and the file is refused whole (also with ``skip_invalid``), because the rows after it
cannot be told apart. A cell longer than ``max_review_chars`` is one bad row.

Example:
    >>> import io
    >>> from opinio_agents.io.base import LoadReport, ReadOptions
    >>> data = io.BytesIO(b"entity_id,review_id,text\n1,1,Quiet room.\n")
    >>> [e.entity_id for e in CsvReader().read(data, "r.csv", ReadOptions(), LoadReport())]
    [1]
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, BinaryIO

from pydantic import ValidationError

from opinio_agents.errors import DataError
from opinio_agents.io.base import (
    DUPLICATE_REVIEW,
    REVIEW_COLUMNS,
    LoadReport,
    Reader,
    ReadOptions,
    TextChunks,
    csv_row_error,
    location,
    norm_id,
    register_reader,
    too_long,
)
from opinio_agents.models import Entity, Review

__all__ = ["CsvReader"]


@register_reader
class CsvReader(Reader):
    """Reviews CSV (see the module docstring); a bad row is one (skippable) bad record."""

    format = "csv"
    extensions = (".csv",)
    sniff_priority = 90  # standard input that is not JSON is read as CSV

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        return True

    def read(self, raw: BinaryIO, source: str, options: ReadOptions, report: LoadReport) -> Iterator[Entity]:
        stream = TextChunks(raw, options.encoding, source, options.chunk_size)
        yield from _entities_from_csv(stream, source, options, report)


def _csv_rows(stream: TextChunks) -> Iterator[str]:
    """Yield text lines (with their newlines) from the decoded stream, for csv.reader."""
    pending = ""
    while True:
        chunk = stream.read()
        if not chunk:
            break
        pending += chunk
        lines = pending.splitlines(keepends=True)
        pending = lines.pop() if lines and not lines[-1].endswith(("\n", "\r")) else ""
        yield from lines
    if pending:
        yield pending


class _RowTooLong(Exception):
    """A cell over the field limit (the row is one bad record; reading goes on)."""


def _next_row(reader: Any, limit: int) -> list[str]:
    """``next(reader)`` with the csv module's (process-wide) field limit set to ``limit`` for the call."""
    saved = csv.field_size_limit(limit)
    try:
        return next(reader)
    except csv.Error as exc:
        if str(exc).startswith("field larger than field limit"):
            raise _RowTooLong(str(exc)) from None
        raise
    finally:
        csv.field_size_limit(saved)


def _quote_error(exc: csv.Error, source: str, line: int) -> DataError:
    text = str(exc)
    if "unexpected end of data" in text or "EOF" in text:
        why = (
            f"a quoted cell opened in the row starting on line {line} is never closed "
            "(an unbalanced quote would swallow every row after it); close the quote or double it (\"\")"
        )
    else:
        why = f"{text}; a quote inside a quoted cell must be doubled (\"\")"
    return DataError(f"malformed CSV: {why}", source=source, line=line)


def _entities_from_csv(
    stream: TextChunks, source: str, options: ReadOptions, report: LoadReport
) -> Iterator[Entity]:
    skip_invalid = options.skip_invalid
    limit = max(options.max_review_chars, 4096) + 1
    reader = csv.reader(_csv_rows(stream), strict=True)
    try:
        header = _next_row(reader, limit)
        while not any(cell.strip() for cell in header):
            header = _next_row(reader, limit)
    except StopIteration:
        raise DataError(
            "file is empty; expected a CSV header with entity_id, review_id and text", source=source
        ) from None
    except (csv.Error, _RowTooLong) as exc:
        raise DataError(f"malformed CSV header: {exc}", source=source, line=1) from None
    columns = [name.strip().lower() for name in header]
    missing = [name for name in ("entity_id", "review_id", "text") if name not in columns]
    if missing:
        raise DataError(
            f"CSV header lacks required column(s) {', '.join(missing)}; "
            f"found columns: {', '.join(columns) or '(none)'}",
            source=source,
            line=reader.line_num,
        )
    index = {
        name: columns.index(name)
        for name in (*REVIEW_COLUMNS, "entity_id", "entity_name")
        if name in columns
    }

    done: dict[str, int] = {}  # entity key -> last line of its (finished) block
    current_key: str | None = None
    current_id: Any = None
    current_name = ""
    reviews: list[Review] = []
    review_keys: set[str] = set()
    last_line = reader.line_num

    def finish() -> Entity | None:
        if current_key is None or not reviews:
            return None
        return Entity(entity_id=current_id, entity_name=current_name, user_reviews=list(reviews))

    while True:
        line = last_line + 1
        too_big: str | None = None
        try:
            row = _next_row(reader, limit)
        except StopIteration:
            break
        except _RowTooLong:
            row = []
            too_big = (
                f"a cell has more than {limit - 1:,} characters (the review text limit); "
                "split or shorten the review, or raise the limit (--max-review-chars / max_review_chars=)"
            )
        except csv.Error as exc:
            raise _quote_error(exc, source, line) from None
        last_line = reader.line_num
        if too_big is None and not any(cell.strip() for cell in row):
            continue
        try:
            if too_big is not None:
                raise DataError(too_big, source=source, line=line, field="text")
            if len(row) != len(columns):
                raise DataError(
                    f"row has {len(row)} cells but the header has {len(columns)}; "
                    "check quoting and delimiters",
                    source=source,
                    line=line,
                )
            values = {name: row[i] for name, i in index.items()}
            entity_id = norm_id(values["entity_id"])
            if entity_id == "":
                raise DataError("entity_id is empty", source=source, line=line, field="entity_id")
            key = str(entity_id)
            review_id = norm_id(values["review_id"])
            if key != current_key and key in done:
                raise DataError(
                    "rows of this entity are not contiguous "
                    f"(its earlier rows end at line {done[key]}); "
                    "sort the CSV by entity_id",
                    source=source,
                    line=line,
                    entity_id=entity_id,
                    field="entity_id",
                )
            fields = {
                name: values[name].strip() if name != "text" else values[name]
                for name in REVIEW_COLUMNS
                if name in values and (name == "text" or values[name].strip() != "")
            }
            fields["review_id"] = review_id
            problem = too_long(fields.get("text"), options.max_review_chars)
            if problem:
                raise DataError(
                    problem, source=source, line=line, entity_id=entity_id, review_id=review_id, field="text"
                )
            try:
                review = Review.model_validate(fields)
            except ValidationError as exc:
                raise csv_row_error(
                    exc, source=source, line=line, entity_id=entity_id, review_id=review_id
                ) from None
        except DataError as err:
            if not skip_invalid:
                raise
            where = location(source, line, err.entity_id, err.review_id)
            report.skipped.append(
                (where, f"field '{err.field}': {err.message}" if err.field else err.message)
            )
            continue

        if key != current_key:
            entity = finish()
            if current_key is not None:
                done[current_key] = line - 1
            if entity is not None:
                yield entity
            current_key, current_id = key, entity_id
            current_name = ""
            reviews, review_keys = [], set()
        if str(review.review_id) in review_keys:
            duplicate = DataError(
                DUPLICATE_REVIEW,
                source=source,
                line=line,
                entity_id=entity_id,
                review_id=review.review_id,
                field="review_id",
            )
            if not skip_invalid:
                raise duplicate
            report.skipped.append(
                (location(source, line, entity_id, review.review_id), duplicate.message)
            )
            continue
        review_keys.add(str(review.review_id))
        reviews.append(review)
        name = values.get("entity_name", "").strip()
        if name and not current_name:
            current_name = name
    entity = finish()
    if entity is not None:
        yield entity
