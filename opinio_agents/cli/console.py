"""The CLI's output helpers: the two consoles and the one way untrusted text reaches them.

Every command module imports these from here (never from :mod:`opinio_agents.cli.main`, which
imports the command modules), so the CLI's modules import only downward.

Untrusted strings (review text, entity and review ids, file names, queries) reach the terminal
as plain :class:`rich.text.Text` (:func:`plain`), never as rich markup, with control and bidi
characters shown as escapes.

Example:
    >>> plain("[bold]x[/bold]\\x1b").plain
    '[bold]x[/bold]\\\\x1b'
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from opinio_agents.errors import ConfigError
from opinio_agents.io.outputs import terminal_safe

__all__ = ["out", "err", "plain", "say_error", "fail", "check_store_path"]

#: Results (standard output).
out = Console()
#: Progress, notes and errors (standard error).
err = Console(stderr=True)


def plain(text: object, style: str = "") -> Text:
    """``text`` as rich ``Text`` (never parsed as markup), control and bidi characters escaped."""
    return Text(terminal_safe(str(text)), style=style)


def say_error(message: object) -> None:
    """Print ``error: message`` on stderr: one line, the message taken literally."""
    line = terminal_safe(" ".join(str(message).split()) if "\n" in str(message) else str(message))
    err.print(Text.assemble(("error:", "bold red"), " ", line), highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the Exit to raise."""
    say_error(message)
    return typer.Exit(code)


def check_store_path(store: Path) -> Path:
    """``store``, refused with one line when it names something that is not a directory.

    Example:
        >>> check_store_path(Path("/etc/hostname"))  # doctest: +SKIP
        ConfigError: --store '/etc/hostname' is a file, not a store directory; ...
    """
    if store.exists() and not store.is_dir():
        raise ConfigError(
            f"--store {str(store)!r} is a file, not a store directory; pass a directory "
            "(it is created when missing), e.g. --store .opinio"
        )
    for parent in store.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"--store {str(store)!r}: {str(parent)!r} is a file, not a directory")
            break
    return store
