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
from typing import TYPE_CHECKING, Annotated, Any

import typer

from opinio_agents.cli.console import plain
from opinio_agents.errors import ConfigError, OpinioError
from opinio_agents.io.outputs import plural, terminal_safe

if TYPE_CHECKING:
    from rich.table import Table

    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.compare import EntityComparison, Standing

__all__ = ["register", "OutputFormat"]


class OutputFormat(str, Enum):
    """Output format of the HIRO commands."""

    table = "table"
    json = "json"


def _others(rag, key: str) -> list[str]:  # noqa: ANN001 - OpinioRAG, imported lazily
    """The store's other complete entities (what ``compare`` compares ``key`` with)."""
    return [k for k in rag.store.entity_keys() if k != key and rag.store.is_complete(k)]


def _open_rag(dataset: Path, entity: str, store: Path, *, others: bool = False):  # noqa: ANN202 - OpinioRAG
    """The façade over ``store``, with ``entity`` indexed and the HIRO hierarchy fitted.

    Indexing (when the entity is missing) fits the hierarchy as part of ``index``; a store
    indexed without one gets it fitted here, said on stderr, never silently inside a query.
    With ``others`` (``compare``), a store that holds no other entity gets the whole
    DATASET indexed (incrementally: what is indexed already is not embedded again), said on
    stderr; when that adds no other entity either, one line says how to give it one.
    """
    from opinio_agents.api import OpinioRAG

    rag = OpinioRAG(store_dir=store)
    missing = not rag.store.has_entity(entity)
    alone = not missing and others and not _others(rag, rag.store.require_entity(entity))
    if missing or alone:
        if not dataset.exists():
            raise typer.BadParameter(f"dataset {str(dataset)!r} does not exist", param_hint="DATASET")
        rag.index(dataset)
    key = rag.store.require_entity(entity)
    if alone and _others(rag, key):
        typer.echo(
            f"note: the store held no other entity; indexed {terminal_safe(str(dataset))} to compare {entity} with",
            err=True,
        )
    if others and not _others(rag, key):
        raise ConfigError(
            f"nothing to compare entity {entity} with: the store {str(store)!r} holds no other entity and "
            f"{str(dataset)!r} has none; index another dataset into the same store first "
            f"(opinio index OTHER.json --store {store}), then run compare again"
        )
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
TopOpt = Annotated[
    int | None, typer.Option("--top", "-n", min=1, help="How many aspects (default 10 listed, 8 compared).")
]
AlphaOpt = Annotated[
    float | None, typer.Option("--alpha", min=0.0, help="HIRO smoothing constant (default: the paper's 6).")
]


def _given(**options: Any) -> dict[str, Any]:
    """The options a user set, so that an unset one takes the library's default (defined once, in the library)."""
    return {name: value for name, value in options.items() if value is not None}


def aspects_command(
    dataset: DatasetArg,
    entity: EntityOpt,
    store: StoreOpt = Path(".opinio"),
    output: FormatOpt = OutputFormat.table,
    top: TopOpt = None,
    alpha: AlphaOpt = None,
) -> None:
    """List the entity's most discussed aspects, weighed with how distinctive they are (usable as queries)."""
    try:
        rag = _open_rag(dataset, entity, store)
        found = rag.aspects(entity, **_given(top_k=top, alpha=alpha))
    except OpinioError as error:
        _fail(error)
        return
    if output is OutputFormat.json:
        typer.echo(json.dumps([a.to_dict() for a in found], ensure_ascii=False, indent=2))
        return
    from rich.console import Console

    index = rag.store
    by_id = {s.sentence.sentence_id: s.sentence.text for s in index.sentences(index.require_entity(entity))}
    examples = [by_id.get(a.example_sentence_ids[0], "") if a.example_sentence_ids else "" for a in found]
    console = Console()
    title = f"Aspects of {index.entity_record(entity).entity_name or entity}"
    console.print(aspects_table(found, examples, title=title, width=console.width))


#: From this terminal width on, ``opinio aspects`` shows the example sentence in a column of its own.
WIDE_ASPECTS = 110
#: The example sentence of an aspect is cut (at a word boundary, marked "…") after this many words.
EXAMPLE_WORDS = 30


def _example(text: str) -> str:
    words = text.split()
    return " ".join(words[:EXAMPLE_WORDS]) + (" …" if len(words) > EXAMPLE_WORDS else "")


def aspects_table(found: list[DiscoveredAspect], examples: list[str], *, title: str, width: int) -> Table:
    """The ``opinio aspects`` table at ``width`` columns: numbers whole, the example wrapped at word boundaries.

    From :data:`WIDE_ASPECTS` columns on the example sentence has a column of its own;
    narrower, it is quoted under the aspect's name, so the table fits 80 columns with its borders.
    """
    from rich.table import Table

    wide = width >= WIDE_ASPECTS
    table = Table(
        title=plain(title),
        caption="mentions: reviews that mention it (share: of all reviews); pos/neg: how many of them are positive "
        "/ negative; score: HIRO's popularity weighed with how distinctive the aspect is",
        caption_justify="left",
        show_lines=True,
    )
    table.add_column("aspect" if wide else "aspect and an example", overflow="fold", ratio=1 if not wide else None)
    for column in ("mentions", "share", "pos/neg", "score"):
        table.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    if wide:
        table.add_column("example", overflow="fold", ratio=1)
    for aspect, example in zip(found, examples, strict=True):
        name = plain(aspect.aspect)
        name.stylize("bold")
        quoted = plain(f"“{_example(example)}”") if example else plain("")
        quoted.stylize("dim")
        if not wide and example:
            name.append("\n")
            name.append_text(quoted)
        row = [
            name,
            plain(aspect.mentions),
            plain(f"{aspect.share:.0%}"),
            plain(f"{aspect.positive}/{aspect.negative}"),
            plain(f"{aspect.score:.2f}"),
        ]
        table.add_row(*row, *([quoted] if wide else []))
    return table


def compare_command(
    dataset: DatasetArg,
    entity: EntityOpt,
    store: StoreOpt = Path(".opinio"),
    output: FormatOpt = OutputFormat.table,
    top: TopOpt = None,
    alpha: AlphaOpt = None,
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
        report = _open_rag(dataset, entity, store, others=True).compare(
            entity, since=since.date() if since else None, **_given(top_k=top, alpha=alpha)
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
    table = Table(
        title=plain(compare_title(report)),
        caption="here / elsewhere: share of the reviews that mention the aspect (elsewhere: the other entities' "
        "reviews together); lift: here / elsewhere (smoothed); positive: share of those mentions that are positive",
        caption_justify="left",
    )
    table.add_column("aspect", overflow="fold", ratio=1)
    for column in ("here", "elsewhere", "lift", "positive\nhere", "positive\nelsewhere"):
        table.add_column(column, justify="right", no_wrap=True)
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


#: ``compare``'s headline names the other entities when there are at most this many.
NAMED_OTHERS = 3


def compare_title(report: EntityComparison, *, suffix: str = "") -> str:
    """What ``compare`` compares, in words: ``'Harbor vs 1 other entity (Palm Cove)'``.

    Example:
        >>> from opinio_agents.hiro.compare import EntityComparison
        >>> compare_title(EntityComparison("1", "Harbor", 2, [], others=("Palm Cove", "Dune Inn")))
        'Harbor vs 2 other entities (Palm Cove, Dune Inn)'
    """
    names = list(report.others)
    shown = ", ".join(names[:NAMED_OTHERS])
    if len(names) > NAMED_OTHERS:
        shown += f" and {len(names) - NAMED_OTHERS} more"
    others = plural(report.compared_with, "other entity", "other entities")
    return f"{report.entity_name or report.entity_id} vs {others}{suffix}" + (f" ({shown})" if shown else "")


def _standing_table(report: EntityComparison) -> Table:
    """Per aspect: the positive share here vs elsewhere and the rank, now and a year earlier."""
    from rich.table import Table

    first = next((i for i in report.items if i.now is not None), None)
    now_label = first.now.window if first and first.now else "now"
    before_label = first.year_before.window if first and first.year_before else "a year earlier"
    table = Table(
        title=plain(compare_title(report, suffix=", in time")),
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
