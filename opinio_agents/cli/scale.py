"""``opinio index DATASET --ray [ADDRESS]``: the distributed path of ``opinio index``.

The entities are encoded by a pool of Ray actors, the vectors go to a Chroma
server (``--chroma-host/--chroma-port``) and the catalog, BM25 and HIRO are
written on this machine under ``--store``; see :mod:`opinio_agents.scale.distributed`.

Example:
    $ chroma run --host 0.0.0.0 --port 8000 --path /data/chroma
    $ opinio index corpus.json --ray auto --chroma-host 10.0.0.5 --chroma-port 8000
"""

from __future__ import annotations

from pathlib import Path

from opinio_agents.errors import ConfigError

__all__ = ["index_on_ray"]


def index_on_ray(
    dataset: Path,
    store: Path,
    address: str,
    *,
    chroma_host: str | None,
    chroma_port: int | None,
    workers: int | None,
    quiet: bool,
    skip_invalid: bool,
    max_review_chars: int,
    max_file_bytes: int,
) -> None:
    """Run the distributed index and print the same table as ``opinio index`` plus one summary line.

    Raises:
        ConfigError: Without ``--chroma-host`` (the workers cannot share an embedded database).
    """
    from rich.table import Table

    from opinio_agents.cli.console import err, out, plain
    from opinio_agents.io.loaders import LoadReport, iter_valid_entities
    from opinio_agents.scale.distributed import index_with_ray, require_ray

    if not chroma_host:
        raise ConfigError(
            "--ray needs --chroma-host (and --chroma-port): the Ray workers write vectors to a Chroma server "
            "that every node reaches; start one with `chroma run --host 0.0.0.0 --port 8000 --path DIR`"
        )
    require_ray()  # the install hint before the dataset is read
    report = LoadReport()
    entities = iter_valid_entities(
        dataset, skip_invalid=skip_invalid, report=report, max_review_chars=max_review_chars,
        max_file_bytes=max_file_bytes,
    )
    stats = index_with_ray(
        entities,
        store,
        chroma_host=chroma_host,
        chroma_port=chroma_port,
        address=None if address == "local" else address,
        workers=workers,
        show_progress=not quiet,
    )
    table = Table(title=plain(f"Indexed into {store} (vectors in {chroma_host}:{chroma_port or 8000})"))
    for column in ("entity", "reviews", "added", "updated", "removed", "sentences", "embedded", "reused", "worker"):
        table.add_column(column, justify="left" if column in ("entity", "worker") else "right")
    for s in stats.stats:
        table.add_row(
            plain(s.entity_id), str(s.reviews_total), str(s.reviews_added), str(s.reviews_updated),
            str(s.reviews_removed), str(s.sentences_total), str(s.sentences_embedded), str(s.sentences_resumed),
            plain(stats.worker_of.get(s.entity_id, "")),
        )
    out.print(table)
    err.print(
        plain(
            f"{stats.entities_indexed} entities on {stats.workers} Ray worker(s), {stats.entities_skipped} already "
            f"up to date; {stats.sentences_encoded} sentences encoded, {stats.sentences_reused} reused; "
            f"{stats.seconds:.1f} s"
        ),
        highlight=False,
    )
    if report.skipped:
        err.print(plain(f"skipped {len(report.skipped)} invalid record(s):", "yellow"))
        for where, why in report.skipped[:20]:
            err.print(plain(f"  {where}: {why}"), highlight=False, soft_wrap=True)
