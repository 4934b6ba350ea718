"""Streaming loaders for OpinioBank data (OpinioRAG App. A.1).

Supported inputs, chosen by file extension through the reader registry of
:mod:`opinio_agents.io.base` (a new format is one new :class:`~opinio_agents.io.base.Reader`):

* ``.json``: a JSON array of entity objects, or one entity object (several
  whitespace-separated objects are accepted too), streamed with ``ijson``
  (:class:`~opinio_agents.io.json_readers.JsonReader`), so a 1 GB file never
  sits whole in memory.
* ``.jsonl`` / ``.ndjson``: one entity object per line.
* ``.csv``: one review per row (:mod:`opinio_agents.io.csv_reader`).
* ``-``: standard input, copied to a temporary file first (so that it can be
  validated and then indexed, and errors can name lines); the format is
  sniffed (``[``/``{`` -> JSON, else CSV).

Every problem is raised as one :class:`~opinio_agents.errors.DataError` naming
the file, the line (JSON: the line where the entity object starts; JSONL/CSV:
the record's line), the entity, the review and the field. With
``skip_invalid=True`` bad entities (CSV: bad rows) are skipped and listed in the
:class:`LoadReport` instead; a file that is malformed as a whole always raises:
a syntax error inside a JSON array (the rest of the array cannot be located
reliably), JSON nested deeper than :data:`~opinio_agents.io.base.MAX_JSON_DEPTH`,
an unbalanced CSV quote, a file over ``max_file_bytes``. :func:`iter_valid_entities`
then yields nothing at all, with or without ``skip_invalid``.

Limits (each configurable): a review text longer than ``max_review_chars``
(100,000 characters by default) is a bad record; a file larger than
``max_file_bytes`` (16 GiB by default) is refused.

Example:
    >>> import json, pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name) / "hotels.json"
    >>> _ = path.write_text(json.dumps([{"entity_id": 1, "user_reviews": [
    ...     {"review_id": 1, "text": "Quiet room."}]}]))
    >>> [e.entity_id for e in iter_entities(path)]
    [1]
"""

from __future__ import annotations

import codecs
import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from opinio_agents.errors import ConfigError, DataError

# Importing the reader modules registers the built-in formats.
from opinio_agents.io import csv_reader as _csv_reader  # noqa: F401
from opinio_agents.io import json_readers as _json_readers  # noqa: F401
from opinio_agents.io.base import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_REVIEW_CHARS,
    LoadReport,
    ReadOptions,
    decoded_entity,
    reader_for,
    supported_extensions,
)
from opinio_agents.models import Entity, EntityId

__all__ = [
    "LoadReport",
    "iter_entities",
    "iter_valid_entities",
    "load_entities",
    "load_entity",
    "validate_file",
    "spooled_input",
    "DEFAULT_CHUNK_SIZE",
    "SUPPORTED_EXTENSIONS",
]

#: File extensions understood by :func:`iter_entities` (the built-in readers).
SUPPORTED_EXTENSIONS = supported_extensions()
STDIN = "-"
_STDIN_SOURCE = "<stdin>"
_SNIFF_BYTES = 4096


def _is_stdin(path: str | Path) -> bool:
    return str(path) == STDIN


@contextlib.contextmanager
def spooled_input(path: str | Path, *, max_bytes: int | None = None) -> Iterator[Path]:
    """``path`` itself, or for ``"-"`` a temporary copy of standard input (removed afterwards).

    Standard input can be read only once; a copy lets it be validated and then
    indexed, and lets error messages name lines. The copy stops with a DataError
    once it passes ``max_bytes``.

    Example:
        >>> with spooled_input("hotels.json") as path:   # doctest: +SKIP
        ...     entities = list(iter_entities(path))
    """
    if not _is_stdin(path):
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="opinio-stdin-") as folder:
        copy = Path(folder) / "stdin"
        with open(copy, "wb") as out:
            if max_bytes is None:
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            else:
                copied = 0
                while chunk := sys.stdin.buffer.read(1 << 20):
                    copied += len(chunk)
                    if copied > max_bytes:
                        raise DataError(_too_big(copied, max_bytes, more=True), source=_STDIN_SOURCE)
                    out.write(chunk)
        yield copy


def _too_big(size: int, limit: int, *, more: bool = False) -> str:
    return (
        f"the input has {'more than ' if more else ''}{size:,} bytes, over the limit of {limit:,}; "
        "split the file, or raise the limit (--max-file-mb / max_file_bytes=)"
    )


def _options(
    encoding: str, chunk_size: int, skip_invalid: bool, max_review_chars: int, max_file_bytes: int
) -> ReadOptions:
    if chunk_size < 1:
        raise ConfigError(f"chunk_size={chunk_size!r}: must be a positive number of characters")
    if max_review_chars < 1:
        raise ConfigError(f"max_review_chars={max_review_chars!r}: must be a positive number of characters")
    if max_file_bytes < 1:
        raise ConfigError(f"max_file_bytes={max_file_bytes!r}: must be a positive number of bytes")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ConfigError(
            f"encoding={encoding!r}: unknown text encoding; use e.g. 'utf-8' or 'latin-1'"
        ) from None
    return ReadOptions(
        encoding=encoding,
        chunk_size=chunk_size,
        skip_invalid=skip_invalid,
        max_review_chars=max_review_chars,
        max_file_bytes=max_file_bytes,
    )


def _sniff(file: Path) -> bytes:
    with open(file, "rb") as raw:
        head = raw.read(_SNIFF_BYTES)
    return head.removeprefix(codecs.BOM_UTF8)


def _read(file: Path, source: str, sniff: bool, options: ReadOptions, report: LoadReport) -> Iterator[Entity]:
    report.source = source
    if not file.exists():
        raise DataError("file not found; check the path", source=source)
    if file.is_dir():
        raise DataError(f"is a directory; pass a file ({', '.join(supported_extensions())})", source=source)
    size = file.stat().st_size
    if size > options.max_file_bytes:
        raise DataError(_too_big(size, options.max_file_bytes), source=source)
    reader = reader_for(source, _sniff(file) if sniff else None)
    with open(file, "rb") as raw:
        for entity in reader.read(raw, source, options, report):
            report.entities_loaded += 1
            report.reviews_loaded += len(entity.user_reviews)
            yield decoded_entity(entity)  # HTML character references decoded once, here, for every reader
    if report.entities_loaded == 0 and not report.skipped:
        raise DataError("no entities found in the file", source=source)


def iter_entities(
    path: str | Path,
    *,
    skip_invalid: bool = False,
    report: LoadReport | None = None,
    encoding: str = "utf-8",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Iterator[Entity]:
    """Stream the entities of an OpinioBank file, one at a time.

    Args:
        path: A ``.json``, ``.jsonl``/``.ndjson`` or ``.csv`` file (or any extension a
            registered reader takes), or ``"-"`` for standard input.
        skip_invalid: Skip (and record in ``report``) invalid entities / CSV rows
            instead of raising.
        report: Filled in while iterating (counts and skip reasons).
        encoding: Text encoding of the file (a UTF-8 BOM is accepted).
        chunk_size: Bytes read at a time (memory use is about one entity plus one chunk).
        max_review_chars: Longest review text accepted (a longer one is a bad record).
        max_file_bytes: Largest file accepted (a larger one is refused whole).

    Yields:
        Validated :class:`~opinio_agents.models.Entity` objects, in file order.

    Raises:
        DataError: For unreadable, malformed or invalid input (see the module docstring).
        ConfigError: For a bad ``encoding`` or ``chunk_size``.

    Example:
        >>> report = LoadReport()
        >>> entities = list(iter_entities("hotels.jsonl", report=report))  # doctest: +SKIP
    """
    options = _options(encoding, chunk_size, skip_invalid, max_review_chars, max_file_bytes)
    report = report if report is not None else LoadReport()
    stdin = _is_stdin(path)
    with spooled_input(path, max_bytes=max_file_bytes) as file:
        yield from _read(file, _STDIN_SOURCE if stdin else str(file), stdin, options, report)


def iter_valid_entities(
    path: str | Path,
    *,
    skip_invalid: bool = False,
    report: LoadReport | None = None,
    encoding: str = "utf-8",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Iterator[Entity]:
    """Like :func:`iter_entities`, but a file with an error yields nothing.

    The whole input (standard input: a temporary copy) is validated before the first
    entity is yielded, so a consumer that indexes the entities never writes anything
    from a file that fails. With ``skip_invalid`` bad records are skipped (and listed
    in ``report``), but a file that is malformed as a whole (a truncated JSON array,
    an unbalanced CSV quote, too deep, too large) still raises before anything is yielded.

    Example:
        >>> for entity in iter_valid_entities("-"):   # doctest: +SKIP
        ...     print(entity.key)
    """
    options = _options(encoding, chunk_size, skip_invalid, max_review_chars, max_file_bytes)
    report = report if report is not None else LoadReport()
    stdin = _is_stdin(path)
    with spooled_input(path, max_bytes=max_file_bytes) as file:
        source = _STDIN_SOURCE if stdin else str(file)
        for _ in _read(file, source, stdin, options, LoadReport()):
            pass
        yield from _read(file, source, stdin, options, report)


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
        source=_STDIN_SOURCE if _is_stdin(path) else str(path),
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
