"""The reader seam of :mod:`opinio_agents.io`: a base class, a registry, shared validation.

A data format is one :class:`Reader` subclass registered with :func:`register_reader`:
it names its format and file extensions, may recognise its content from the first
bytes (for standard input), and turns a binary stream into validated
:class:`~opinio_agents.models.Entity` objects. Everything else (opening files,
standard input, counting, skip reports, ``load_entity``) is shared by
:mod:`opinio_agents.io.loaders`.

Example:
    >>> from opinio_agents.io.base import Reader, register_reader, reader_for
    >>> @register_reader
    ... class TsvReader(Reader):  # tab-separated reviews (illustration)
    ...     format = "tsv-example"
    ...     extensions = (".tsv-example",)
    ...     def read(self, raw, source, options, report):
    ...         return iter(())
    >>> type(reader_for("reviews.tsv-example")).__name__
    'TsvReader'
    >>> unregister_reader("tsv-example")
"""

from __future__ import annotations

import codecs
import html
import html.entities
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from pydantic import ValidationError

from opinio_agents.errors import DataError
from opinio_agents.io.encoding import repair_mojibake
from opinio_agents.models import Entity

__all__ = [
    "LoadReport",
    "ReadOptions",
    "Reader",
    "register_reader",
    "unregister_reader",
    "reader_for",
    "registered_readers",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_MAX_REVIEW_CHARS",
    "DEFAULT_MAX_FILE_BYTES",
    "MAX_JSON_DEPTH",
    "as_written",
    "decode_entities",
    "decoded_entity",
]

#: Bytes read per chunk by the streaming readers.
DEFAULT_CHUNK_SIZE = 1 << 20
#: Longest review text accepted by default, in characters (a longer review is one bad record).
DEFAULT_MAX_REVIEW_CHARS = 100_000
#: Largest input file accepted by default, in bytes (16 GiB; a larger file is refused whole).
DEFAULT_MAX_FILE_BYTES = 16 << 30
#: Deepest JSON nesting accepted (an OpinioBank file nests 5 levels deep); deeper input is refused whole.
MAX_JSON_DEPTH = 64

REVIEW_COLUMNS = (
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
DUPLICATE_REVIEW = "duplicate review_id within the entity; review ids must be unique per entity"


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


@dataclass(frozen=True)
class ReadOptions:
    """How a reader reads: text encoding, chunk size, whether bad records are skipped, limits.

    Attributes:
        encoding: Text encoding of the input (a UTF-8 BOM is accepted).
        chunk_size: Bytes read at a time (memory use is about one entity plus one chunk).
        skip_invalid: Skip bad records (listing them in the :class:`LoadReport`) instead of raising.
        max_review_chars: Longest review text accepted; a longer review is a bad record
            (an error, or skipped with ``skip_invalid``; JSON: its entity, CSV: its row).
        max_file_bytes: Largest input accepted; a larger file is refused whole (also with
            ``skip_invalid``: a file that is bad as a whole indexes nothing).
    """

    encoding: str = "utf-8"
    chunk_size: int = DEFAULT_CHUNK_SIZE
    skip_invalid: bool = False
    max_review_chars: int = DEFAULT_MAX_REVIEW_CHARS
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


class Reader(ABC):
    """One input format: subclass, set :attr:`format` and :attr:`extensions`, implement :meth:`read`.

    Register the subclass with :func:`register_reader`; :func:`reader_for` then picks it
    by file extension, or by :meth:`sniff` for standard input.
    """

    #: Registry key (``"json"``, ``"jsonl"``, ``"csv"``, ...).
    format: ClassVar[str]
    #: Lower-case file extensions, with the dot.
    extensions: ClassVar[tuple[str, ...]] = ()
    #: Order in which :meth:`sniff` is tried on standard input (lower first).
    sniff_priority: ClassVar[int] = 100

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """Whether ``head`` (the first bytes of standard input, BOM removed) looks like this format."""
        return False

    @abstractmethod
    def read(
        self, raw: BinaryIO, source: str, options: ReadOptions, report: LoadReport
    ) -> Iterator[Entity]:
        """Yield the validated entities of ``raw`` in order.

        Raises:
            DataError: For malformed or invalid input, naming ``source``, the line, the
                entity, the review and the field (unless ``options.skip_invalid``, where a
                bad record is appended to ``report.skipped`` instead).
        """


_READERS: dict[str, type[Reader]] = {}


def register_reader(cls: type[Reader]) -> type[Reader]:
    """Class decorator: make ``cls`` the reader of its format and extensions.

    Raises:
        ConfigError: When ``cls`` has no ``format`` or another reader claims one of its extensions.
    """
    from opinio_agents.errors import ConfigError

    name = getattr(cls, "format", None)
    if not name:
        raise ConfigError(f"{cls.__name__} needs a `format` name to be registered")
    for other in _READERS.values():
        clash = set(other.extensions) & set(cls.extensions)
        if other.format != name and clash:
            raise ConfigError(f"{cls.__name__}: extension(s) {sorted(clash)} already read by {other.__name__}")
    _READERS[name] = cls
    return cls


def unregister_reader(name: str) -> None:
    """Remove the reader of format ``name`` (no error when there is none)."""
    _READERS.pop(name, None)


def registered_readers() -> dict[str, type[Reader]]:
    """Format name -> reader class, for every registered reader."""
    return dict(_READERS)


def supported_extensions() -> tuple[str, ...]:
    """Every extension some registered reader understands."""
    return tuple(ext for cls in _READERS.values() for ext in cls.extensions)


def reader_for(path: str | Path, head: bytes | None = None) -> Reader:
    """The reader for ``path``: by extension, or by content (``head``) for standard input.

    Raises:
        DataError: When no registered reader takes the extension (the message lists those that do).
    """
    if head is not None:
        ordered = sorted(_READERS.values(), key=lambda cls: cls.sniff_priority)
        for cls in ordered:
            if cls.sniff(head):
                return cls()
        raise DataError(
            f"cannot tell the format of standard input; formats: {', '.join(_READERS)}", source=str(path)
        )
    suffix = Path(path).suffix.lower()
    for cls in _READERS.values():
        if suffix in cls.extensions:
            return cls()
    raise DataError(
        f"unsupported file extension {suffix or '(none)'!r}; use one of {', '.join(supported_extensions())}",
        source=str(path),
    )


# --------------------------------------------------------------------------- reading text


class TextChunks:
    """Incrementally decode a binary stream, turning decode errors into DataError.

    Args:
        raw: The binary stream.
        encoding: Its text encoding (UTF-8 input may start with a BOM).
        source: The file name used in error messages.
        chunk_size: Bytes read at a time.
    """

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
        """Next decoded chunk ('' at end of input).

        Raises:
            DataError: When the bytes are not valid in the encoding (with line and byte offset).
        """
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


# --------------------------------------------------------------------------- validation


def norm_id(value: Any) -> Any:
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


def csv_row_error(
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


def too_long(text: Any, max_chars: int | None) -> str | None:
    """The error message when ``text`` is a review text longer than ``max_chars``, else None."""
    if max_chars is None or not isinstance(text, str) or len(text) <= max_chars:
        return None
    return (
        f"review text has {len(text):,} characters, over the limit of {max_chars:,}; "
        "split or shorten the review, or raise the limit (--max-review-chars / max_review_chars=)"
    )


#: A complete HTML character reference (``&amp;``, ``&eacute;``, ``&#39;``, ``&#x27;``). The ``;`` is
#: required, so ``R&D``, ``AT&T`` and ``this&nothing`` (which HTML5 would read as ``this¬hing``) stay as written.
_CHARACTER_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _decode_reference(match: re.Match[str]) -> str:
    reference = match.group(0)
    if reference[1] != "#":  # a name: only a whole known one (html.unescape would read "&notit;" as "¬it;")
        return html.entities.html5.get(reference[1:], reference)
    decoded = html.unescape(reference)
    return reference if decoded == "\ufffd" and "fffd" not in reference.lower() else decoded


def decode_entities(text: str) -> str:
    """``text`` with its HTML character references decoded, once (``&amp;amp;`` becomes ``&amp;``).

    Reviews scraped from web pages often hold ``&amp;`` or ``&#39;`` where the writer typed
    ``&`` or ``'``. Only complete references (ending in ``;``) are decoded; an invalid
    numeric one (a NUL, a surrogate) is kept as written rather than turned into U+FFFD.

    Example:
        >>> decode_entities("old &amp; scuffed, snacks &amp;amp; water, R&D, it&#39;s")
        "old & scuffed, snacks &amp; water, R&D, it's"
    """
    return _CHARACTER_REFERENCE.sub(_decode_reference, text) if "&" in text else text


def as_written(text: str) -> str:
    """``text`` as its writer typed it: mojibake re-read (:func:`~opinio_agents.io.encoding.repair_mojibake`),
    then HTML character references decoded once (:func:`decode_entities`).

    Example:
        >>> as_written("Great location â€“ old &amp; charming")
        'Great location – old & charming'
    """
    return decode_entities(repair_mojibake(text))


def decoded_entity(entity: Entity) -> Entity:
    """``entity`` with its name, review texts and expert review as written (:func:`as_written`), decoded once.

    Every reader's entities pass through this on ingest (:mod:`opinio_agents.io.loaders`,
    and the shipped sample), so the store, the JSON output and every surface hold the
    text as written (``&``, "didn’t" rather than "didnâ€™t"), and each medium escapes it once on output.
    Ids are kept as given. The same object is returned when nothing needs decoding.
    """
    name = as_written(entity.entity_name)
    reviews = [
        review if (text := as_written(review.text)) == review.text else review.model_copy(update={"text": text})
        for review in entity.user_reviews
    ]
    expert = entity.expert_review
    if expert is not None:
        pros = {q: as_written(t) for q, t in expert.pros.items()}
        cons = {q: as_written(t) for q, t in expert.cons.items()}
        if pros != expert.pros or cons != expert.cons:
            expert = expert.model_copy(update={"pros": pros, "cons": cons})
    changed = name != entity.entity_name or expert is not entity.expert_review or any(
        new is not old for new, old in zip(reviews, entity.user_reviews, strict=True)
    )
    if not changed:
        return entity
    return entity.model_copy(update={"entity_name": name, "user_reviews": reviews, "expert_review": expert})


def build_entity(raw: Any, *, source: str, line: int | None, max_review_chars: int | None = None) -> Entity:
    """Validate one raw entity object (reviews longer than ``max_review_chars`` are refused)."""
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
            problem = too_long(review.get("text"), max_review_chars) if isinstance(review, dict) else None
            if problem:
                raise DataError(
                    problem,
                    source=source,
                    line=line,
                    entity_id=entity_id,
                    review_id=review.get("review_id"),
                    field="text",
                )
            if isinstance(review, dict) and review.get("review_id") is not None:
                key = str(review["review_id"])
                if key in seen:
                    raise DataError(
                        DUPLICATE_REVIEW,
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


def location(source: str, line: int | None, entity_id: Any = None, review_id: Any = None) -> str:
    parts = [source]
    if line is not None:
        parts.append(f"line {line}")
    if entity_id is not None:
        parts.append(f"entity {entity_id}")
    if review_id is not None:
        parts.append(f"review {review_id}")
    return ", ".join(parts)


def with_line(error: DataError, line: int | None) -> DataError:
    """``error`` again, located at ``line`` (readers that learn the line only on failure)."""
    return DataError(
        error.message,
        source=error.source,
        line=line,
        entity_id=error.entity_id,
        review_id=error.review_id,
        field=error.field,
    )


def skip_reason(error: DataError) -> str:
    """The reason column of a :class:`LoadReport` skip entry."""
    return f"field '{error.field}': {error.message}" if error.field else error.message
