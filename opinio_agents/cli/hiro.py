"""CLI commands built on HIRO: ``opinio aspects`` and ``opinio compare``.

The lead's ``opinio_agents.cli.main`` calls :func:`register` on its Typer app.
Both commands index ``DATASET`` into the store first when the entity is not
indexed yet, so they also run on a fresh checkout.

Example:
    $ opinio aspects sample.json --entity 101 --format json
    [{"aspect": "wi-fi", "mentions": 61, "positive": 12, "negative": 45, "example_sentence_ids": [...]}, ...]
    $ opinio compare sample.json --entity 101
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from opinio_agents.cli.console import plain
from opinio_agents.errors import OpinioError
from opinio_agents.io.outputs import terminal_safe

if TYPE_CHECKING:
    from rich.table import Table

    from opinio_agents.hiro.compare import EntityComparison, Standing

__all__ = ["register", "OutputFormat"]


class OutputFormat(str, Enum):
    """Output format of the HIRO commands."""

    table = "table"
    json = "json"


def _open_rag(dataset: Path, entity: str, store: Path):  # noqa: ANN202 - OpinioRAG, imported lazily
    """The façade over ``store``, with ``entity`` indexed and the HIRO hierarchy fitted.

    Indexing (when the entity is missing) fits the hierarchy as part of ``index``; a store
    indexed without one gets it fitted here, said on stderr, never silently inside a query.
    """
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(store_dir=store)
    if not rag.store.has_entity(entity):
        if not dataset.exists():
            raise typer.BadParameter(f"dataset {str(dataset)!r} does not exist", param_hint="DATASET")
        rag.index(dataset)
    rag.store.require_entity(entity)
    if not rag.hiro_fitted:
        typer.echo("note: this store has no HIRO hierarchy yet; fitting it once (opinio index fits it too)", err=True)
        rag.fit_hiro()
    return rag


def _fail(error: OpinioError) -> None:
    typer.echo(f"error: {terminal_safe(str(error), keep_newlines=False)}", err=True)
    raise typer.Exit(code=2)


DatasetArg = Annotated[Path, typer.Argument(help="OpinioBank JSON/JSONL file (indexed on first use).")]
EntityOpt = Annotated[str, typer.Option("--entity", "-e", help="Entity id.")]
StoreOpt = Annotated[Path, typer.Option("--store", help="Store directory.")]
FormatOpt = Annotated[OutputFormat, typer.Option("--format", "-f", help="table or json.")]
TopOpt = Annotated[int, typer.Option("--top", "-n", min=1, help="How many aspects.")]
AlphaOpt = Annotated[float, typer.Option("--alpha", min=0.0, help="HIRO smoothing constant (paper: 6).")]


def aspects_command(
    dataset: DatasetArg,
    entity: EntityOpt,
    store: StoreOpt = Path(".opinio"),
    output: FormatOpt = OutputFormat.table,
    top: TopOpt = 10,
    alpha: AlphaOpt = 6.0,
) -> None:
    """List the entity's most discussed aspects, weighed with how distinctive they are (usable as queries)."""
    try:
        rag = _open_rag(dataset, entity, store)
        found = rag.aspects(entity, top_k=top, alpha=alpha)
    except OpinioError as error:
        _fail(error)
        return
    if output is OutputFormat.json:
        typer.echo(json.dumps([a.to_dict() for a in found], ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    index = rag.store
    table = Table(title=plain(f"Aspects of {index.entity_record(entity).entity_name or entity}"))
    for column in ("aspect", "mentions", "share", "positive", "negative", "HIRO score"):
        table.add_column(column, no_wrap=True)
    table.add_column("example", overflow="fold", min_width=30)
    by_id = {s.sentence.sentence_id: s.sentence.text for s in index.sentences(index.require_entity(entity))}
    for a in found:
        example = by_id.get(a.example_sentence_ids[0], "") if a.example_sentence_ids else ""
        table.add_row(
            plain(a.aspect),
            plain(a.mentions),
            plain(f"{a.share:.0%}"),
            plain(a.positive),
            plain(a.negative),
            plain(f"{a.score:.2f}"),
            plain(example[:90]),
        )
    Console().print(table)


def compare_command(
    dataset: DatasetArg,
    entity: EntityOpt,
    store: StoreOpt = Path(".opinio"),
    output: FormatOpt = OutputFormat.table,
    top: TopOpt = 8,
    alpha: AlphaOpt = 6.0,
    since: Annotated[
        datetime | None,
        typer.Option(
            formats=["%Y-%m-%d"],
            help="Also rank the entity against the others per aspect: reviews since this date vs the year before.",
        ),
    ] = None,
) -> None:
    """Show what sets the entity apart from the other entities in the store.

    With --since, each aspect also shows where the entity stands against the others now
    (reviews since the date) versus a year earlier (the year before it).

    Example: opinio compare sample.json --entity 101 --since 2024-01-01
    """
    try:
        report = _open_rag(dataset, entity, store).compare(
            entity, top_k=top, alpha=alpha, since=since.date() if since else None
        )
    except OpinioError as error:
        _fail(error)
        return
    if output is OutputFormat.json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    if report.since is not None:
        Console().print(_standing_table(report))
        return
    table = Table(title=plain(f"{report.entity_name or report.entity_id} vs {report.compared_with} other entities"))
    for column in ("aspect", "here", "elsewhere", "lift", "positive here", "positive elsewhere"):
        table.add_column(column)
    for item in report.items:
        table.add_row(
            plain(item.aspect),
            plain(f"{item.share_here:.0%}"),
            plain(f"{item.share_others:.0%}"),
            plain(f"x{item.lift:.1f}"),
            plain(f"{item.positive_here:.0%}"),
            plain(f"{item.positive_others:.0%}"),
        )
    Console().print(table)


def _standing_table(report: EntityComparison) -> Table:
    """Per aspect: the positive share here vs elsewhere and the rank, now and a year earlier."""
    from rich.table import Table

    first = next((i for i in report.items if i.now is not None), None)
    now_label = first.now.window if first and first.now else "now"
    before_label = first.year_before.window if first and first.year_before else "a year earlier"
    table = Table(
        title=plain(f"{report.entity_name or report.entity_id} vs {report.compared_with} other entities, in time"),
        caption=plain(
            "% positive of the mentions here vs elsewhere, and rank here among the entities "
            "with 3+ mentions (1st = most positive)"
        ),
    )
    table.add_column("aspect", overflow="fold")
    table.add_column(plain(f"now\n{now_label}"), overflow="fold")
    table.add_column(plain(f"a year earlier\n{before_label}"), overflow="fold")
    table.add_column("change", overflow="fold")
    for item in report.items:
        now, before = item.now, item.year_before
        if now is None or before is None:
            continue
        table.add_row(plain(item.aspect), plain(now.cell()), plain(before.cell()), plain(_change(now, before)))
    return table


def _change(now: Standing, before: Standing) -> str:
    if now.rank is None or before.rank is None:
        return "-"
    points = round(100 * (now.positive_here - before.positive_here))
    moved = before.rank - now.rank
    where = "same rank" if moved == 0 else (f"up {moved}" if moved > 0 else f"down {-moved}")
    return f"{points:+d} pts, {where}"


def register(app: typer.Typer) -> None:
    """Add ``aspects`` and ``compare`` to a Typer app."""
    app.command("aspects")(aspects_command)
    app.command("compare")(compare_command)
