r"""Safe outputs: untrusted review text made inert for terminals and markdown; files written atomically.

Review text, entity ids and file names are untrusted. Before they reach a terminal or a
markdown document they pass through one of these functions:

* :func:`terminal_safe` shows control characters (ANSI escapes, carriage returns, bells,
  C1 controls), bidi overrides and isolates (``U+202A``-``U+202E``, ``U+2066``-``U+2069``)
  and lone surrogates as visible escapes (``\x1b``, ``\u202e``), so a terminal never runs
  them. It does not touch rich markup: pass the result to rich as a
  :class:`rich.text.Text` (or through :func:`rich.markup.escape`).
* :func:`markdown_safe` does the same, then escapes HTML (``<``, ``>``, and ``&`` where it
  would start a character reference such as ``&amp;``) and the characters of inline markdown
  syntax (links ``[text](url)``, emphasis, code, tables), and joins lines, so a review renders
  as the words it contains and nothing else. Review text reaches it decoded (the readers decode
  HTML entities once, on ingest), so a plain ``&`` stays ``&``: escaped once, never ``&amp;amp;``.

:func:`plural` words a count ("1 review", "2 reviews") for every message.

JSON output is never passed through these: it stays verbatim (JSON escaping is enough there).

:func:`write_text_atomic` writes a file through :func:`tempfile.mkstemp` in the target's
directory (``O_CREAT | O_EXCL``, a fresh random name: a symlink planted in advance is
never followed) and moves it into place with :func:`os.replace`.

Example:
    >>> terminal_safe("ok\x1b[31mred\u202e")
    'ok\\x1b[31mred\\u202e'
    >>> markdown_safe("see [here](http://evil.example) <b>now</b>")
    'see \\[here\\](http://evil.example) &lt;b&gt;now&lt;/b&gt;'
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from opinio_agents.errors import ConfigError

__all__ = ["terminal_safe", "markdown_safe", "plural", "atomic_writer", "write_text_atomic", "check_output_path"]

#: Bidi embeddings, overrides and isolates, the marks, and other invisible format characters
#: that can reorder or hide text.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u2028\u2029\ufeff"
_UNSAFE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}\\ud800-\\udfff]")
_UNSAFE_NO_NEWLINES = re.compile(f"[\\x00-\\x08\\x0a-\\x1f\\x7f-\\x9f{_BIDI}\\ud800-\\udfff]")
#: Characters with a meaning in (CommonMark / GitHub) markdown, escaped with a backslash.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
#: An ``&`` that would start a character reference (``&amp;``, ``&#39;``, ``&#x27;``); any other ``&`` is literal.
_REFERENCE = re.compile(r"&(?=#?[A-Za-z0-9]{1,32};)")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    r"""``text`` with control, bidi and surrogate characters shown as escapes (``\x1b``, ``\u202e``).

    Tabs (and newlines, unless ``keep_newlines=False``) are kept; a Windows line end
    (``\r\n``) counts as a newline.

    Example:
        >>> terminal_safe("a\rb\tc\n")
        'a\\x0db\tc\n'
        >>> terminal_safe("a\nb", keep_newlines=False)
        'a\\x0ab'
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    pattern = _UNSAFE if keep_newlines else _UNSAFE_NO_NEWLINES
    return pattern.sub(_visible, text)


def markdown_safe(text: str) -> str:
    r"""``text`` as inert inline markdown: no HTML, links, emphasis, control or bidi characters.

    Escapes ``\\ ` * _ [ ] | ~`` with a backslash, ``< >`` as HTML entities (without
    brackets there is no link or image) and ``&`` only where it would start a character
    reference (``&amp;`` in a review stays the five characters it is; ``fish & chips`` stays
    as it reads). Line breaks become spaces, so a review cannot start a heading, list, quote
    or code block.

    Example:
        >>> markdown_safe("**bold** </evidence>\n# title")
        '\\*\\*bold\\*\\* &lt;/evidence&gt; # title'
        >>> markdown_safe("fish & chips, not &copy;")
        'fish & chips, not &amp;copy;'
    """
    text = " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text
    text = terminal_safe(text, keep_newlines=False)
    text = _REFERENCE.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN.sub(r"\\\1", text)


def check_output_path(path: str | Path) -> Path:
    """The output file ``path``, refused with one clear line when it cannot be a file.

    Raises:
        ConfigError: When ``path`` is a directory, or a parent of it is a regular file.

    Example:
        >>> check_output_path("/tmp")
        Traceback (most recent call last):
        ...
        opinio_agents.errors.ConfigError: output '/tmp' is a directory; pass a file name (e.g. '/tmp/highlights.md')
    """
    target = Path(path)
    if target.is_dir():
        raise ConfigError(
            f"output {str(target)!r} is a directory; pass a file name (e.g. {str(target / 'highlights.md')!r})"
        )
    for parent in target.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise ConfigError(
                    f"output {str(target)!r}: {str(parent)!r} is a file, not a directory; choose another path"
                )
            break
    return target


def plural(count: int | float, singular: str, plural_form: str | None = None) -> str:
    """``count`` and the noun in the right number: ``1 review``, ``2 reviews``, ``1,234 reviews``.

    Args:
        count: How many (an integral float prints without decimals).
        singular: The noun (phrase) for one.
        plural_form: The form for any other count (default: ``singular + "s"``).

    Example:
        >>> plural(1, "other entity", "other entities"), plural(3, "helpful vote")
        ('1 other entity', '3 helpful votes')
    """
    number = f"{int(count):,}" if float(count).is_integer() else f"{count:,.1f}"
    return f"{number} {singular if count == 1 else (plural_form or singular + 's')}"


def _usual_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file: ``0o666`` less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return stat.S_IMODE(0o666 & ~umask)


@contextlib.contextmanager
def atomic_writer(
    path: str | Path, *, encoding: str | None = "utf-8", newline: str | None = "", fsync: bool = True
) -> Iterator[IO[Any]]:
    """A handle on a fresh temporary file beside ``path``, moved onto ``path`` when the block ends.

    The temporary file is created by ``mkstemp`` (``O_EXCL``, a random name: a file or
    symlink planted next to ``path`` is never written through) and gets the usual mode
    (``0o666`` less the umask, like any file the shell writes) before ``os.replace``
    swaps it in. If the block raises, ``path`` is left unchanged and the temporary file
    is removed. ``encoding=None`` opens it in binary mode. Missing parent folders are created.

    Raises:
        ConfigError: When ``path`` is a directory, lies under a regular file, or cannot be written.

    Example:
        >>> import pathlib, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> out = pathlib.Path(tmp.name) / "out.txt"
        >>> with atomic_writer(out) as handle:
        ...     _ = handle.write("streamed")
        >>> out.read_text()
        'streamed'
    """
    target = check_output_path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise ConfigError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
    try:
        binary = encoding is None
        options: dict[str, Any] = {} if binary else {"encoding": encoding, "newline": newline}
        with os.fdopen(fd, "wb" if binary else "w", **options) as handle:
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        try:  # mkstemp makes the file 0600; give the output the usual permissions
            os.chmod(tmp_name, _usual_mode())
        except OSError:
            pass
        os.replace(tmp_name, target)
    except BaseException as exc:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise ConfigError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
        raise


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically: a fresh ``mkstemp`` file in the same directory, then ``os.replace``.

    Missing parent directories are created. The temporary file is created with
    ``O_EXCL`` under a random name, so a file or symlink planted next to ``path``
    is never written through; ``os.replace`` swaps the name itself (a symlink at
    ``path`` is replaced, its target is left alone). On failure ``path`` is unchanged.
    The file gets the usual mode (``0o666`` less the umask), see :func:`atomic_writer`.

    Raises:
        ConfigError: When ``path`` is a directory, lies under a regular file, or cannot be written.

    Example:
        >>> import pathlib, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> out = pathlib.Path(tmp.name) / "out.md"
        >>> write_text_atomic(out, "# hi\\n").read_text()
        '# hi\\n'
    """
    with atomic_writer(path, encoding=encoding) as handle:
        handle.write(text)
    return Path(path)
