"""``opinio report``: one self-contained HTML page of an entity's highlights, charts, trends and alerts.

The lead's ``opinio_agents.cli.main`` calls :func:`register` on its Typer app.

Example:
    $ opinio report sample.json --entity 101 -o report.html
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register", "report_command"]


def report_command(
    dataset: Annotated[Path, typer.Argument(help="The dataset the entity comes from (indexed on the fly).")],
    entity: Annotated[str, typer.Option("--entity", "-e", help="Entity id.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path("report.html"),
    query: Annotated[
        list[str] | None,
        typer.Option("--query", "-q", help="A query; repeat for several. Default: expert queries, else HIRO aspects."),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="Evidence sentences per query.")] = 10,
    store: Annotated[Path, typer.Option("--store", help="Index directory.")] = Path(".opinio"),
    since: Annotated[
        datetime | None, typer.Option(formats=["%Y-%m-%d"], help="Only reviews from this date on.")
    ] = None,
    until: Annotated[
        datetime | None, typer.Option(formats=["%Y-%m-%d"], help="Only reviews up to this date.")
    ] = None,
    verify: Annotated[
        bool,
        typer.Option("--verify/--no-verify", help="Verify each highlight against its evidence (a verdict each)."),
    ] = True,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="Print nothing but errors: no progress bars, no 'wrote' line.")
    ] = False,
) -> None:
    """Write one self-contained HTML report (no network): aspect sentiment bars, trends per aspect,
    the highlights with their verdicts and evidence, and the alerts.

    Examples:
      opinio report sample.json --entity 101 -o report.html
      opinio report sample.json --entity 202 --query pool --query "kids club" -o pool.html
    """
    from opinio_agents.api import OpinioRAG
    from opinio_agents.cli.console import check_store_path, err, plain
    from opinio_agents.io.loaders import load_entity
    from opinio_agents.io.outputs import check_output_path, plural, write_text_atomic
    from opinio_agents.report import build_report, render_report
    from opinio_agents.trends import Weighting

    check_store_path(store)
    check_output_path(output)
    weighting = Weighting(since=since.date() if since else None, until=until.date() if until else None)
    record = load_entity(dataset, entity)
    rag = OpinioRAG(store, top_k=top_k)
    rag.index(record, show_progress=not quiet)
    data = build_report(rag, record.key, query or None, weighting=weighting, verify=verify)
    write_text_atomic(output, render_report(data))
    if not quiet:
        counts = ", ".join(
            plural(n, one, many)
            for n, one, many in ((len(data.result.pros), "pro", "pros"), (len(data.result.cons), "con", "cons"),
                                 (len(data.result.alerts), "alert", "alerts"))
        )
        err.print(plain(f"wrote {output} ({counts})"), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``report`` to a Typer app."""
    app.command("report")(report_command)
