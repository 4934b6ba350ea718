"""Streaming loaders for OpinioBank data (OpinioRAG App. A.1).

Supported inputs, chosen by file extension:

* ``.json``: a JSON array of entity objects, or one entity object (several
  whitespace-separated objects are accepted too). Read incrementally: an
  array is decoded one entity at a time with :meth:`json.JSONDecoder.raw_decode`
  over a buffer filled in chunks, so a 1 GB file never sits whole in memory.
  (``ijson`` would also work, but it is one more dependency for a 100-line job.)
* ``.jsonl`` / ``.ndjson``: one entity object per line.
* ``.csv``: one review per row, with an ``entity_id`` column (required),
  ``entity_name`` (optional) and review columns named as the review fields
  (``review_id`` and ``text`` required; ``rating``, ``helpful_votes``,
  ``publication_date``, ``user_reviews_posted`` or the dataset's
  ``user_review_posted``, ``user_cities_visited``, ``user_helpful_votes``).
  Empty cells mean "absent". The rows of one entity must be contiguous (sort
  by ``entity_id``); ids made only of digits become integers, as in the JSON
  files. Expert reviews cannot be given in CSV.
* ``-``: standard input; the format is sniffed (``[``/``{`` -> JSON, else CSV).

Every problem is raised as one :class:`~opinio_agents.errors.DataError` naming
the file, the line (JSON: the line where the entity object starts; JSONL/CSV:
the record's line), the entity, the review and the field. With
``skip_invalid=True`` bad entities (CSV: bad rows) are skipped and listed in the
:class:`LoadReport` instead; syntax errors inside a JSON array cannot be
skipped (the rest of the array cannot be located reliably) and always raise.

Example:
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "hotels.json"
    >>> _ = path.write_text(json.dumps([{"entity_id": 1, "user_reviews": [
    ...     {"review_id": 1, "text": "Quiet room."}]}]))
    >>> [e.entity_id for e in iter_entities(path)]
    [1]
"""

from __future__ import annotations

import codecs
import csv
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from opinio_agents.errors import DataError
from opinio_agents.models import Entity, EntityId, Review

__all__ = [
    "LoadReport",
    "iter_entities",
    "load_entities",
    "load_entity",
    "validate_file",
    "DEFAULT_CHUNK_SIZE",
    "SUPPORTED_EXTENSIONS",
]

#: Characters read per chunk by the streaming JSON reader.
DEFAULT_CHUNK_SIZE = 1 << 20
#: File extensions understood by :func:`iter_entities`.
SUPPORTED_EXTENSIONS = (".json", ".jsonl", ".ndjson", ".csv")

_REVIEW_COLUMNS = (
    "review_id",
    "text",
    "rating",
    "helpful_votes",
    "publication_date",
    "user_reviews_posted",
    "user_review_posted",
    "user_cities_visited",
    "user_helpful_votes",
)
_CANONICAL_INT = re.compile(r"(?:0|[1-9][0-9]{0,17})")
_WS = " \t\r\n"
_DUPLICATE_REVIEW = "duplicate review_id within the entity; review ids must be unique per entity"


@dataclass
class LoadReport:
    """What a load did: entities and reviews read, records skipped (with reasons).

    Attributes:
        source: The file read.
        entities_loaded: Entities yielded.
        reviews_loaded: User reviews in those entities.
        skipped: ``(location, reason)`` for each skipped entity or CSV row.

    Example:
        >>> LoadReport(source="a.json", entities_loaded=2, reviews_loaded=9).summary()
        'a.json: 2 entities, 9 reviews loaded, 0 records skipped'
    """

    source: str = ""
    entities_loaded: int = 0
    reviews_loaded: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def summary(self, max_reasons: int = 5) -> str:
        """One line (plus up to ``max_reasons`` skip reasons, one per line)."""
        head = (
            f"{self.source}: {self.entities_loaded} entities, "
            f"{self.reviews_loaded} reviews loaded, "
            f"{len(self.skipped)} records skipped"
        )
        lines = [head] + [f"  skipped {where}: {why}" for where, why in self.skipped[:max_reasons]]
        if len(self.skipped) > max_reasons:
            lines.append(f"  ... and {len(self.skipped) - max_reasons} more")
        return "\n".join(lines)


# --------------------------------------------------------------------------- reading text


class _Decoded:
    """Incrementally decode a binary stream, turning decode errors into DataError."""

    def __init__(self, raw: BinaryIO, encoding: str, source: str, chunk_size: int) -> None:
        enc = "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding
        self._decoder = codecs.getincrementaldecoder(enc)()
        self._raw = raw
        self._encoding = encoding
        self._source = source
        self._chunk_size = chunk_size
        self._bytes_done = 0
        self._lines_done = 0
        self.eof = False

    def read(self) -> str:
        """Next decoded chunk ('' at end of input)."""
        while not self.eof:
            data = self._raw.read(self._chunk_size)
            final = not data
            pending = len(self._decoder.getstate()[0])
            try:
                text = self._decoder.decode(data, final=final)
            except UnicodeDecodeError as exc:
                offset = self._bytes_done - pending + exc.start
                head = data[: max(exc.start - pending, 0)]
                line = self._lines_done + head.count(b"\n") + 1
                raise DataError(
                    f"not valid {self._encoding} at byte {offset} ({exc.reason}); "
                    f"re-save the file as UTF-8 or pass encoding=... (e.g. encoding='latin-1')",
                    source=self._source,
                    line=line,
                ) from None
            self._bytes_done += len(data)
            self._lines_done += data.count(b"\n")
            if final:
                self.eof = True
            if text:
                return text
        return ""


def _open_binary(path: str | Path) -> tuple[BinaryIO, str, bool]:
    """Open ``path`` (or stdin for '-'); returns (stream, source name, must_close)."""
    if str(path) == "-":
        return sys.stdin.buffer, "<stdin>", False
    file = Path(path)
    if not file.exists():
        raise DataError("file not found; check the path", source=str(file))
    if file.is_dir():
        raise DataError("is a directory; pass a .json, .jsonl or .csv file", source=str(file))
    return open(file, "rb"), str(file), True  # noqa: SIM115 - closed by the caller


# --------------------------------------------------------------------------- validation


def _norm_id(value: Any) -> Any:
    """CSV ids: canonical digit strings become ints (as in the JSON files)."""
    if isinstance(value, str):
        value = value.strip()
        if _CANONICAL_INT.fullmatch(value):
            return int(value)
    return value


def _describe_input(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _from_validation_error(
    exc: ValidationError, raw: dict[str, Any], *, source: str, line: int | None, entity_id: Any
) -> DataError:
    """Turn a pydantic error into a DataError naming the review id and the field."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    review_id = None
    field_name = ".".join(str(part) for part in loc) or None
    if len(loc) >= 2 and loc[0] == "user_reviews" and isinstance(loc[1], int):
        index = loc[1]
        reviews = raw.get("user_reviews")
        candidate = None
        if isinstance(reviews, list) and index < len(reviews) and isinstance(reviews[index], dict):
            candidate = reviews[index].get("review_id")
        rest = ".".join(str(part) for part in loc[2:])
        if candidate is not None and not (first.get("type") != "missing" and rest == "review_id"):
            review_id = candidate
            field_name = rest or None
        else:
            field_name = f"user_reviews[{index}]" + (f".{rest}" if rest else "")
    message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    if first.get("type") == "missing":
        message = "required field is missing"
    else:
        message = f"{message} (got {_describe_input(first.get('input'))})"
    if len(errors) > 1:
        message += (
            f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} in this entity)"
        )
    return DataError(
        message,
        source=source,
        line=line,
        entity_id=entity_id,
        review_id=review_id,
        field=field_name,
    )


def _csv_row_error(
    exc: ValidationError, *, source: str, line: int, entity_id: Any, review_id: Any
) -> DataError:
    """A DataError for one invalid CSV review row."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    field_name = str(loc[0]) if loc else None
    if first.get("type") == "missing":
        message = "required field is missing"
    else:
        message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
        message = f"{message} (got {_describe_input(first.get('input'))})"
    if len(errors) > 1:
        message += (
            f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} in this row)"
        )
    return DataError(
        message,
        source=source,
        line=line,
        entity_id=entity_id,
        review_id=None if field_name == "review_id" else review_id,
        field=field_name,
    )


def _build_entity(raw: Any, *, source: str, line: int | None) -> Entity:
    """Validate one raw entity object."""
    if not isinstance(raw, dict):
        raise DataError(
            f"expected an entity object, got {type(raw).__name__}; "
            "the file must hold entity objects",
            source=source,
            line=line,
        )
    entity_id = raw.get("entity_id")
    reviews = raw.get("user_reviews")
    if isinstance(reviews, list):
        seen: set[str] = set()
        for review in reviews:
            if isinstance(review, dict) and review.get("review_id") is not None:
                key = str(review["review_id"])
                if key in seen:
                    raise DataError(
                        _DUPLICATE_REVIEW,
                        source=source,
                        line=line,
                        entity_id=entity_id,
                        review_id=review["review_id"],
                        field="review_id",
                    )
                seen.add(key)
    try:
        return Entity.model_validate(raw)
    except ValidationError as exc:
        raise _from_validation_error(
            exc, raw, source=source, line=line, entity_id=entity_id
        ) from None


def _location(source: str, line: int | None, entity_id: Any = None, review_id: Any = None) -> str:
    parts = [source]
    if line is not None:
        parts.append(f"line {line}")
    if entity_id is not None:
        parts.append(f"entity {entity_id}")
    if review_id is not None:
        parts.append(f"review {review_id}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- JSON


class _JsonScanner:
    """Yield top-level JSON values one at a time from a chunked text stream.

    Handles a top-level array (yields its elements) or a sequence of
    whitespace-separated values; tracks the line each value starts on.
    """

    def __init__(self, stream: _Decoded, source: str) -> None:
        self._stream = stream
        self._source = source
        self._decoder = json.JSONDecoder()
        self._buf = ""
        self._pos = 0
        self._line_base = 1  # line number of self._buf[0]
        self._col_base = 0  # 0-based column of self._buf[0]

    def _more(self) -> bool:
        chunk = self._stream.read()
        if not chunk:
            return False
        # Drop the consumed prefix, keeping line/column bookkeeping.
        consumed = self._buf[: self._pos]
        newlines = consumed.count("\n")
        if newlines:
            self._line_base += newlines
            self._col_base = len(consumed) - consumed.rfind("\n") - 1
        else:
            self._col_base += len(consumed)
        self._buf = self._buf[self._pos :] + chunk
        self._pos = 0
        return True

    def _grow(self) -> bool:
        """Read until the unparsed part of the buffer has doubled (or input ends).

        Doubling keeps re-parsing a large entity that spans many chunks linear
        in its size rather than quadratic.
        """
        target = 2 * (len(self._buf) - self._pos)
        grew = False
        while self._more():
            grew = True
            if len(self._buf) - self._pos >= target:
                break
        return grew

    def _line_at(self, pos: int) -> int:
        return self._line_base + self._buf.count("\n", 0, pos)

    def _column_at(self, pos: int) -> int:
        last_nl = self._buf.rfind("\n", 0, pos)
        return pos - last_nl if last_nl >= 0 else self._col_base + pos + 1

    def _skip_ws(self) -> str:
        """Skip whitespace; return the next character ('' at end of input)."""
        while True:
            buf, pos = self._buf, self._pos
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            self._pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self._more():
                return ""

    def _syntax_error(self, message: str, pos: int) -> DataError:
        line, col = self._line_at(pos), self._column_at(pos)
        return DataError(
            f"malformed JSON at line {line} column {col}: {message}", source=self._source, line=line
        )

    def _decode_value(self) -> tuple[Any, int]:
        """Decode the value at the cursor; returns (value, start line)."""
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                incomplete = exc.pos >= len(self._buf) - 8 or exc.msg.startswith(
                    "Unterminated string"
                )
                if incomplete and self._grow():
                    continue
                raise self._syntax_error(exc.msg, exc.pos) from None
            if end >= len(self._buf) and isinstance(value, (int, float)) and not self._stream.eof:
                # A number touching the end of the buffer may continue in the next chunk.
                if self._more():
                    continue
            line = self._line_at(self._pos)
            self._pos = end
            return value, line

    def values(self) -> Iterator[tuple[Any, int]]:
        """Yield (value, line) for each entity-level value."""
        first = self._skip_ws()
        if first == "":
            raise DataError(
                "file is empty; expected a JSON array of entities or one entity object",
                source=self._source,
            )
        if first != "[":
            while self._skip_ws():
                yield self._decode_value()
            return
        self._pos += 1
        if self._skip_ws() == "]":
            self._pos += 1
        else:
            while True:
                if self._skip_ws() == "":
                    raise self._syntax_error(
                        "unexpected end of file inside the top-level array", self._pos
                    )
                yield self._decode_value()
                nxt = self._skip_ws()
                if nxt == ",":
                    self._pos += 1
                    continue
                if nxt == "]":
                    self._pos += 1
                    break
                if nxt == "":
                    raise self._syntax_error(
                        "unexpected end of file: the top-level array is not closed", self._pos
                    )
                raise self._syntax_error(
                    f"expected ',' or ']' after an entity, found {nxt!r}", self._pos
                )
        if self._skip_ws():
            raise self._syntax_error("extra data after the top-level array", self._pos)


def _raw_json(stream: _Decoded, source: str) -> Iterator[tuple[Any, int]]:
    yield from _JsonScanner(stream, source).values()


def _raw_jsonl(stream: _Decoded, source: str) -> Iterator[tuple[Any, int]]:
    """Yield (value, line) per non-blank line; a malformed line yields (DataError, line)."""
    pending = ""
    line_no = 0
    seen_any = False
    decoder = json.JSONDecoder()

    def parse(text: str, number: int) -> tuple[Any, int] | None:
        if not text.strip():
            return None
        try:
            value, end = decoder.raw_decode(text, len(text) - len(text.lstrip()))
        except json.JSONDecodeError as exc:
            bad = DataError(
                f"malformed JSON at line {number} column {exc.colno}: {exc.msg}",
                source=source,
                line=number,
            )
            return bad, number
        if text[end:].strip():
            bad = DataError(
                f"malformed JSON at line {number} column {end + 1}: extra data after the object "
                "(JSON Lines needs exactly one entity object per line)",
                source=source,
                line=number,
            )
            return bad, number
        return value, number

    while True:
        chunk = stream.read()
        if not chunk:
            break
        pending += chunk
        lines = pending.split("\n")
        pending = lines.pop()
        for text in lines:
            line_no += 1
            parsed = parse(text, line_no)
            if parsed is not None:
                seen_any = True
                yield parsed
    if pending:
        parsed = parse(pending, line_no + 1)
        if parsed is not None:
            seen_any = True
            yield parsed
    if not seen_any:
        raise DataError("file is empty; expected one entity object per line", source=source)


def _entities_from_json(
    raw_values: Iterator[tuple[Any, int]], source: str, skip_invalid: bool, report: LoadReport
) -> Iterator[Entity]:
    seen: set[str] = set()
    for raw, line in raw_values:
        try:
            if isinstance(raw, DataError):
                raise raw  # A malformed JSON Lines record (skippable).
            entity = _build_entity(raw, source=source, line=line)
            if entity.key in seen:
                raise DataError(
                    "duplicate entity_id in the file; entity ids must be unique",
                    source=source,
                    line=line,
                    entity_id=entity.entity_id,
                    field="entity_id",
                )
        except DataError as err:
            if not skip_invalid:
                raise
            entity_id = raw.get("entity_id") if isinstance(raw, dict) else err.entity_id
            reason = f"field '{err.field}': {err.message}" if err.field else err.message
            report.skipped.append((_location(source, line, entity_id, err.review_id), reason))
            continue
        seen.add(entity.key)
        yield entity


# --------------------------------------------------------------------------- CSV


def _csv_rows(stream: _Decoded) -> Iterator[str]:
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


def _entities_from_csv(
    stream: _Decoded, source: str, skip_invalid: bool, report: LoadReport
) -> Iterator[Entity]:
    reader = csv.reader(_csv_rows(stream))
    try:
        header = next(reader)
        while not any(cell.strip() for cell in header):
            header = next(reader)
    except StopIteration:
        raise DataError(
            "file is empty; expected a CSV header with entity_id, review_id and text", source=source
        ) from None
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", source=source, line=1) from None
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
        for name in (*_REVIEW_COLUMNS, "entity_id", "entity_name")
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
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DataError(f"malformed CSV: {exc}", source=source, line=last_line + 1) from None
        line = last_line + 1
        last_line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        try:
            if len(row) != len(columns):
                raise DataError(
                    f"row has {len(row)} cells but the header has {len(columns)}; "
                    "check quoting and delimiters",
                    source=source,
                    line=line,
                )
            values = {name: row[i] for name, i in index.items()}
            entity_id = _norm_id(values["entity_id"])
            if entity_id == "":
                raise DataError("entity_id is empty", source=source, line=line, field="entity_id")
            key = str(entity_id)
            review_id = _norm_id(values["review_id"])
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
                for name in _REVIEW_COLUMNS
                if name in values and (name == "text" or values[name].strip() != "")
            }
            fields["review_id"] = review_id
            try:
                review = Review.model_validate(fields)
            except ValidationError as exc:
                raise _csv_row_error(
                    exc, source=source, line=line, entity_id=entity_id, review_id=review_id
                ) from None
        except DataError as err:
            if not skip_invalid:
                raise
            where = _location(source, line, err.entity_id, err.review_id)
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
                _DUPLICATE_REVIEW,
                source=source,
                line=line,
                entity_id=entity_id,
                review_id=review.review_id,
                field="review_id",
            )
            if not skip_invalid:
                raise duplicate
            report.skipped.append(
                (_location(source, line, entity_id, review.review_id), duplicate.message)
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


# --------------------------------------------------------------------------- public API


def _detect_format(path: str | Path, head: str) -> str:
    if str(path) == "-":
        stripped = head.lstrip()
        return "json" if stripped[:1] in ("[", "{") else "csv"
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise DataError(
        f"unsupported file extension {suffix or '(none)'!r}; "
        f"use one of {', '.join(SUPPORTED_EXTENSIONS)}",
        source=str(path),
    )


class _Prefixed(_Decoded):
    """A decoded stream with an already-read first chunk put back (format sniffing on stdin)."""

    def __init__(self, inner: _Decoded, first: str) -> None:  # noqa: D107 - internal
        self.__dict__.update(inner.__dict__)
        self._inner = inner
        self._first = first

    def read(self) -> str:
        if self._first:
            first, self._first = self._first, ""
            return first
        text = self._inner.read()
        self.eof = self._inner.eof
        return text


def iter_entities(
    path: str | Path,
    *,
    skip_invalid: bool = False,
    report: LoadReport | None = None,
    encoding: str = "utf-8",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Iterator[Entity]:
    """Stream the entities of an OpinioBank file, one at a time.

    Args:
        path: A ``.json``, ``.jsonl``/``.ndjson`` or ``.csv`` file, or ``"-"`` for stdin.
        skip_invalid: Skip (and record in ``report``) invalid entities / CSV rows
            instead of raising.
        report: Filled in while iterating (counts and skip reasons).
        encoding: Text encoding of the file (a UTF-8 BOM is accepted).
        chunk_size: Characters read at a time (memory use is about one entity
            plus one chunk).

    Yields:
        Validated :class:`~opinio_agents.models.Entity` objects, in file order.

    Raises:
        DataError: For unreadable, malformed or invalid input (see the module docstring).

    Example:
        >>> report = LoadReport()
        >>> entities = list(iter_entities("hotels.jsonl", report=report))  # doctest: +SKIP
    """
    if chunk_size < 1:
        from opinio_agents.errors import ConfigError

        raise ConfigError(f"chunk_size={chunk_size!r}: must be a positive number of characters")
    try:
        codecs.lookup(encoding)
    except LookupError:
        from opinio_agents.errors import ConfigError

        raise ConfigError(
            f"encoding={encoding!r}: unknown text encoding; use e.g. 'utf-8' or 'latin-1'"
        ) from None
    report = report if report is not None else LoadReport()
    raw, source, must_close = _open_binary(path)
    report.source = source
    try:
        stream: _Decoded = _Decoded(raw, encoding, source, chunk_size)
        head = ""
        if str(path) == "-":
            head = stream.read()
            stream = _Prefixed(stream, head)
        fmt = _detect_format(path, head)
        if fmt == "csv":
            entities = _entities_from_csv(stream, source, skip_invalid, report)
        else:
            values = _raw_json(stream, source) if fmt == "json" else _raw_jsonl(stream, source)
            entities = _entities_from_json(values, source, skip_invalid, report)
        for entity in entities:
            report.entities_loaded += 1
            report.reviews_loaded += len(entity.user_reviews)
            yield entity
        if report.entities_loaded == 0 and not report.skipped:
            raise DataError("no entities found in the file", source=source)
    finally:
        if must_close:
            raw.close()


def load_entities(path: str | Path, **kwargs: Any) -> list[Entity]:
    """Load every entity of a file into a list (see :func:`iter_entities` for options).

    Example:
        >>> entities = load_entities("hotels.json")  # doctest: +SKIP
    """
    return list(iter_entities(path, **kwargs))


def load_entity(path: str | Path, entity_id: EntityId, **kwargs: Any) -> Entity:
    """Load one entity by id (compared as strings, so ``7`` matches ``"7"``).

    Raises:
        DataError: When the id is not in the file (the message lists a few ids that are).

    Example:
        >>> hotel = load_entity("hotels.json", 7)  # doctest: +SKIP
    """
    wanted = str(entity_id)
    available: list[str] = []
    count = 0
    for entity in iter_entities(path, **kwargs):
        if entity.key == wanted:
            return entity
        count += 1
        if len(available) < 5:
            available.append(entity.key)
    more = f" (and {count - len(available)} more)" if count > len(available) else ""
    raise DataError(
        f"entity {entity_id!r} not found; the file has {count} entities, "
        f"e.g. ids {', '.join(available)}{more}",
        source="<stdin>" if str(path) == "-" else str(path),
        field="entity_id",
    )


def validate_file(path: str | Path, **kwargs: Any) -> LoadReport:
    """Read and validate a whole file without keeping the entities.

    Raises :class:`DataError` at the first problem unless ``skip_invalid=True``.

    Example:
        >>> print(validate_file("hotels.json").summary())  # doctest: +SKIP
        hotels.json: 3 entities, 4512 reviews loaded, 0 records skipped
    """
    report = kwargs.pop("report", None) or LoadReport()
    for _ in iter_entities(path, report=report, **kwargs):
        pass
    return report
