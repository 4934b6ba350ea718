"""OpinioBank JSON (streamed with ``ijson``) and JSON Lines readers.

* ``.json``: a JSON array of entity objects, or one entity object (several
  whitespace-separated objects are accepted too). Streamed with ``ijson``'s C
  (yajl2) backend, one entity at a time, so a 1 GB file never sits in memory.
  ``ijson`` carries no positions, so the line of a bad entity (or of a syntax
  error) is found only when there is one: :class:`_Locator` re-reads the input
  up to that point, feeding ``ijson``'s event parser one line at a time.
* ``.jsonl`` / ``.ndjson``: one entity object per line (``json.loads`` per line).

Example:
    >>> import io
    >>> from opinio_agents.io.base import LoadReport, ReadOptions
    >>> data = io.BytesIO(b'[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "Quiet."}]}]')
    >>> [e.entity_id for e in JsonReader().read(data, "x.json", ReadOptions(), LoadReport())]
    [1]
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from opinio_agents.errors import DataError, MissingDependencyError
from opinio_agents.io.base import (
    MAX_JSON_DEPTH,
    LoadReport,
    Reader,
    ReadOptions,
    TextChunks,
    build_entity,
    location,
    register_reader,
    skip_reason,
    with_line,
)
from opinio_agents.models import Entity

__all__ = ["JsonReader", "JsonLinesReader"]

_WS = b" \t\r\n"
#: ijson events that start a value.
_VALUE_STARTS = frozenset({"start_map", "start_array", "string", "number", "boolean", "null"})


def _ijson() -> Any:
    try:
        import ijson
    except ImportError as exc:  # a core dependency; only a broken install lacks it
        raise MissingDependencyError("ijson", purpose="streaming JSON input") from exc
    return ijson


_ESCAPED = re.compile(rb"\\.", re.S)
#: A ``\\uD800``-``\\uDFFF`` escape that is not half of a high+low pair (and not itself escaped).
_LONE_SURROGATE = re.compile(
    rb"(?<!\\)(?:\\\\)*(\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)


class _DepthGuard:
    """Refuses JSON that nests deeper than ``limit``, before ijson builds it.

    ijson's builder costs time and memory quadratic in the depth (each event carries its
    full prefix), and Python's own parser and validators recurse; so the nesting is
    measured on the raw bytes as they stream by, with numpy: escapes dropped, string
    contents masked by quote parity, then a running sum of opening minus closing brackets.
    """

    def __init__(self, source: str, limit: int = MAX_JSON_DEPTH) -> None:
        self._source = source
        self._limit = limit
        self._depth = 0
        self._in_string = False
        self._carry = b""
        self._lines = 0
        self._tail = b""
        self._judged = 0
        self._surrogate_lines = 0

    def feed(self, data: bytes) -> None:
        import numpy as np

        if not data:
            self._check_surrogates(b"", final=True)
            return
        self._check_surrogates(data, final=False)
        text = _ESCAPED.sub(b"", self._carry + data)
        self._carry = b""
        if text.endswith(b"\\"):  # an escape cut by the chunk boundary
            self._carry, text = b"\\", text[:-1]
        arr = np.frombuffer(text, dtype=np.uint8)
        quotes = np.cumsum(arr == 0x22, dtype=np.int64)
        inside = (quotes + int(self._in_string)) % 2 == 1
        step = (arr == 0x5B).astype(np.int64) + (arr == 0x7B) - (arr == 0x5D) - (arr == 0x7D)
        step[inside] = 0
        depth = self._depth + np.cumsum(step)
        if depth.size and int(depth.max()) > self._limit:
            at = int(np.argmax(depth > self._limit))
            line = self._lines + text[:at].count(b"\n") + 1
            raise DataError(
                f"JSON nests deeper than {self._limit} levels; an OpinioBank file nests "
                "5 levels deep (array, entity, user_reviews, review, value): flatten the data",
                source=self._source,
                line=line,
            )
        if depth.size:
            self._depth = int(depth[-1])
        self._in_string = bool((int(quotes[-1]) + int(self._in_string)) % 2) if quotes.size else self._in_string
        self._lines += text.count(b"\n")

    def _check_surrogates(self, data: bytes, *, final: bool) -> None:
        """Refuse a lone surrogate escape: ``"\\ud800"`` is not a character (yajl would make it ``?``).

        An escape near the end of a chunk (its partner may start in the next one) is
        judged with the next chunk, and the last 12 bytes are searched again, so an escape
        or a pair cut by a chunk boundary is judged whole.
        """
        buf = self._tail + data
        cut = max(len(buf) - 12, 0)
        for match in _LONE_SURROGATE.finditer(buf):
            if match.start() < self._judged:
                continue  # decided with the previous chunk (the tail is kept for context only)
            if not final and match.end() + 6 > len(buf):
                cut = min(cut, match.start())  # its partner may start in the next chunk
                break
            escape = match.group(1).decode("ascii")
            line = self._surrogate_lines + buf[: match.start(1)].count(b"\n") + 1
            raise DataError(
                f"lone surrogate escape {escape} in a string: not a valid Unicode character "
                "(lone surrogates are refused, not replaced); write the character itself or a high+low "
                "surrogate pair such as \\ud83d\\ude00",
                source=self._source,
                line=line,
            )
        keep = max(cut - 24, 0)  # context before the undecided part (a pair's high half, backslashes)
        self._surrogate_lines += buf[:keep].count(b"\n")
        self._tail, self._judged = buf[keep:], cut - keep


class _Utf8Bytes:
    """A ``read(n)`` byte stream of the input as UTF-8 (what ijson parses), BOM dropped.

    UTF-8 input is passed through as it is (yajl checks it; an invalid byte is then
    located by :class:`_Locator`, which decodes with :class:`TextChunks`); input in
    another encoding is decoded by :class:`TextChunks` and re-encoded.
    """

    def __init__(self, raw: BinaryIO, options: ReadOptions, source: str) -> None:
        self._utf8 = codecs.lookup(options.encoding).name == "utf-8"
        self._raw = raw
        self._size = options.chunk_size
        self._text = None if self._utf8 else TextChunks(raw, options.encoding, source, options.chunk_size)
        self._buf = b""
        self._started = False
        self._guard = _DepthGuard(source)

    def _more(self) -> bytes:
        if self._text is not None:
            data = self._text.read().encode("utf-8")
        else:
            data = self._raw.read(self._size)
            if not self._started:
                self._started = True
                data = data.removeprefix(codecs.BOM_UTF8)
        self._guard.feed(data)
        return data

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buf) < size:
            chunk = self._more()
            if not chunk:
                break
            self._buf += chunk
        if size < 0:
            out, self._buf = self._buf, b""
        else:
            out, self._buf = self._buf[:size], self._buf[size:]
        return out

    def peek_first(self) -> bytes:
        """The first non-whitespace byte (b'' for empty input), left in the stream."""
        while True:
            stripped = self._buf.lstrip(_WS)
            if stripped:
                self._buf = stripped
                return stripped[:1]
            self._buf = b""
            chunk = self._more()
            if not chunk:
                return b""
            self._buf = chunk


def _yajl_message(exc: Exception) -> str:
    """The first line of a yajl error, without its ``parse error:`` prefix."""
    text = str(exc).strip().strip("b'\"").replace("\\n", "\n")
    first = text.splitlines()[0] if text else "malformed JSON"
    for prefix in ("parse error: ", "lexical error: "):
        first = first.removeprefix(prefix)
    if first.startswith("premature EOF"):
        return "unexpected end of file: an object or the top-level array is not closed"
    if first.startswith("trailing garbage"):
        return "extra data after the top-level value"
    return first


class _Locator:
    """Finds lines in the input after the fact, by re-reading it with ijson's event parser.

    Used only on the error path. It reads the same bytes through its own decoder,
    one line at a time, and moves forward monotonically across calls (bad entities
    come in file order), so all the lookups of one read cost at most one more pass.
    The shared stream's position is saved and restored around each lookup.
    """

    def __init__(self, raw: BinaryIO, options: ReadOptions, source: str, prefix: str, start: int | None) -> None:
        self._raw = raw
        self._options = options
        self._source = source
        self._prefix = prefix
        self._start = start or 0
        self.usable = start is not None
        self._reset()

    def _reset(self) -> None:
        self._pos = self._start if self.usable else 0
        self._text: TextChunks | None = None
        self._events: Any = None
        self._coro: Any = None
        self._line = 0  # lines fully fed so far
        self._values = 0  # top-level values started so far
        self._pending = ""
        self._bad_text = ""  # the offending line, once syntax_error located it

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        """Yield (line number, bytes of that line or of a piece of a very long line)."""
        ijson = _ijson()
        if self._text is None:
            self._text = TextChunks(self._raw, self._options.encoding, self._source, self._options.chunk_size)
            self._events = ijson.sendable_list()
            self._coro = ijson.parse_coro(self._events, multiple_values=self._prefix == "")
        while True:
            while "\n" in self._pending:
                head, _, self._pending = self._pending.partition("\n")
                self._line += 1
                yield self._line, (head + "\n").encode("utf-8")
            if len(self._pending) > self._options.chunk_size:
                piece, self._pending = self._pending, ""
                yield self._line + 1, piece.encode("utf-8")
            saved = self._raw.tell()
            self._raw.seek(self._pos)
            try:
                chunk = self._text.read()
            finally:
                self._pos = self._raw.tell()
                self._raw.seek(saved)
            if not chunk:
                if self._pending:
                    piece, self._pending = self._pending, ""
                    self._line += 1
                    yield self._line, piece.encode("utf-8")
                return
            self._pending += chunk

    def line_of_value(self, index: int) -> int | None:
        """The line on which the ``index``-th (0-based) top-level entity value starts."""
        if not self.usable:
            return None
        if index < self._values:  # asked out of order: start again
            self._reset()
        try:
            for number, data in self._lines():
                self._coro.send(data)
                for prefix, event, _ in self._events:
                    if prefix == self._prefix and event in _VALUE_STARTS:
                        if self._values == index:
                            self._values += 1
                            self._events.clear()
                            return number
                        self._values += 1
                self._events.clear()
        except Exception:  # noqa: BLE001 - a syntax error further on; the main reader reports it
            return None
        return None

    def syntax_error(self, exc: Exception) -> DataError:
        """A DataError with the line and column where ijson stopped."""
        message = _yajl_message(exc)
        if not self.usable:
            return DataError(f"malformed JSON: {message}", source=self._source)
        self._reset()
        bad_line, prefix_lines = None, 0
        try:
            for number, data in self._lines():
                try:
                    self._coro.send(data)
                except Exception:  # noqa: BLE001 - the error being located
                    bad_line = number
                    break
                prefix_lines = number
                self._events.clear()
            else:
                try:
                    self._coro.close()
                except Exception:  # noqa: BLE001 - premature end of input
                    bad_line = max(prefix_lines, 1)
        except DataError as decode_error:
            return decode_error
        if bad_line is None:
            return DataError(f"malformed JSON: {message}", source=self._source)
        column = self._column(bad_line)
        where = f"line {bad_line}" + (f" column {column}" if column else "")
        non_finite = _non_finite(self._bad_text, column)
        if non_finite is not None:
            field, value = non_finite
            return DataError(
                f"{field or 'a number'} is {value}" + (f" (column {column})" if column else "")
                + ": JSON has no NaN or Infinity; give a finite number (or leave the field out)",
                source=self._source, line=bad_line, field=field,
            )
        return DataError(f"malformed JSON at {where}: {message}", source=self._source, line=bad_line)

    def _column(self, bad_line: int) -> int | None:
        """Feed the lines before ``bad_line`` whole, then that line one character at a time.

        The column is where yajl notices the error: the end of the offending token.
        """
        self._reset()
        col = 0
        for number, data in self._lines():
            if number < bad_line:
                self._coro.send(data)
                self._events.clear()
                continue
            if number > bad_line:
                break
            self._bad_text += data.decode("utf-8")
            for char in data.decode("utf-8"):
                col += 1
                try:
                    self._coro.send(char.encode("utf-8"))
                except Exception:  # noqa: BLE001 - found it
                    return col
                self._events.clear()
        return None


_NON_FINITE = re.compile(r"-?(NaN|Infinity)")
_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*-?$')


def _non_finite(line: str, column: int | None) -> tuple[str | None, str] | None:
    """``(field, token)`` when the JSON error at ``column`` of ``line`` is a NaN / Infinity literal."""
    if not column:
        return None
    start = column - 1
    if start > 0 and line[start - 1] == "-":
        start -= 1
    found = _NON_FINITE.match(line, start)
    if found is None:
        return None
    key = _KEY_BEFORE.search(line[:start])
    return (key.group(1) if key else None), found.group(0)


def _tell(raw: BinaryIO) -> int | None:
    """The stream position, or None when the stream cannot seek back (no line numbers then)."""
    try:
        return raw.tell() if raw.seekable() else None
    except (OSError, ValueError):
        return None


def _entities(
    values: Iterator[Any],
    *,
    source: str,
    options: ReadOptions,
    report: LoadReport,
    line_of: Any,
) -> Iterator[Entity]:
    """Validate raw values into entities: duplicate ids refused, bad records skipped or raised.

    ``values`` yields ``(raw, line)`` pairs, where ``line`` may be None (then ``line_of(index)``
    is asked on failure); a raw :class:`DataError` is a malformed record (skippable).
    """
    seen: set[str] = set()
    for index, (raw, known_line) in enumerate(values):
        try:
            if isinstance(raw, DataError):
                raise raw
            try:
                entity = build_entity(raw, source=source, line=known_line, max_review_chars=options.max_review_chars)
            except RecursionError:
                raise DataError(
                    "entity nests too deeply to validate; an OpinioBank entity nests 4 levels deep",
                    source=source,
                    line=known_line,
                    entity_id=raw.get("entity_id") if isinstance(raw, dict) else None,
                ) from None
            if entity.key in seen:
                raise DataError(
                    "duplicate entity_id in the file; entity ids must be unique",
                    source=source,
                    line=known_line,
                    entity_id=entity.entity_id,
                    field="entity_id",
                )
        except DataError as err:
            line = known_line if known_line is not None else line_of(index)
            located = err if err.line is not None or line is None else with_line(err, line)
            if not options.skip_invalid:
                raise located from None
            entity_id = raw.get("entity_id") if isinstance(raw, dict) else located.entity_id
            report.skipped.append(
                (location(source, located.line, entity_id, located.review_id), skip_reason(located))
            )
            continue
        seen.add(entity.key)
        yield entity


@register_reader
class JsonReader(Reader):
    """OpinioBank JSON: an array of entity objects (or one, or several, entity objects)."""

    format = "json"
    extensions = (".json",)
    sniff_priority = 10

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        return head.lstrip(_WS)[:1] in (b"[", b"{")

    def read(self, raw: BinaryIO, source: str, options: ReadOptions, report: LoadReport) -> Iterator[Entity]:
        ijson = _ijson()
        start = _tell(raw)  # where the locator re-reads from, if it ever has to
        stream = _Utf8Bytes(raw, options, source)
        first = stream.peek_first()
        if not first:
            raise DataError(
                "file is empty; expected a JSON array of entities or one entity object", source=source
            )
        prefix = "item" if first == b"[" else ""
        locator = _Locator(raw, options, source, prefix, start)
        items = ijson.items(
            stream, prefix, multiple_values=prefix == "", use_float=True, buf_size=min(options.chunk_size, 1 << 16)
        )
        values = ((value, None) for value in items)
        try:
            yield from _entities(
                values, source=source, options=options, report=report, line_of=locator.line_of_value
            )
        except ijson.JSONError as exc:
            raise locator.syntax_error(exc) from None
        except UnicodeDecodeError as exc:  # yajl passed on bytes that are not UTF-8 (from an escape)
            raise DataError(
                f"malformed JSON: a string is not valid Unicode ({exc.reason}; a lone surrogate escape?)",
                source=source,
            ) from None


@register_reader
class JsonLinesReader(Reader):
    """JSON Lines: one entity object per line; a malformed line is one (skippable) bad record."""

    format = "jsonl"
    extensions = (".jsonl", ".ndjson")

    def read(self, raw: BinaryIO, source: str, options: ReadOptions, report: LoadReport) -> Iterator[Entity]:
        values = _jsonl_values(TextChunks(raw, options.encoding, source, options.chunk_size), source)
        yield from _entities(values, source=source, options=options, report=report, line_of=lambda _: None)


def _jsonl_values(stream: TextChunks, source: str) -> Iterator[tuple[Any, int]]:
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
        except RecursionError:
            bad = DataError(
                f"malformed JSON at line {number}: nests too deeply to parse; an OpinioBank entity "
                "nests 4 levels deep",
                source=source,
                line=number,
            )
            return bad, number
        except json.JSONDecodeError as exc:
            bad = DataError(
                f"malformed JSON at line {number} column {exc.colno}: {exc.msg}", source=source, line=number
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
