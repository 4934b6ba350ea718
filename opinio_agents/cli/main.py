"""The ``opinio`` command line.

Every command prints one clear line on bad input (``error: FILE: line N,
entity E, review R, field 'F': ...``) and exits with status 2, without a
traceback; so does every usage error (an unknown option, a missing or extra
argument, a bad option value: ``error: opinio highlight: No such option:
--bogus (see 'opinio highlight --help')``). Anything unexpected also becomes
one line (status 2) that says to rerun with ``--debug`` for the traceback.
Long work shows progress on stderr; results go to stdout.

Untrusted strings (review text, entity and review ids, file names, queries) reach
the terminal as plain :class:`rich.text.Text`, never as rich markup, and with
control and bidi characters shown as escapes (``\x1b``, ``\u202e``); ids and file
names print exactly as given otherwise (``hotel[v2].json`` stays ``hotel[v2].json``).

Example:
    $ opinio sample sample.json
    $ opinio index sample.json
    $ opinio highlight sample.json --entity 101 --query "wi-fi" --query "breakfast buffet"
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from opinio_agents.cli.console import check_store_path, err, fail, out, plain, say_error
from opinio_agents.cli.llm_limits import LLMDeadlineOpt, LLMTimeoutOpt, llm_limits
from opinio_agents.errors import OpinioError
from opinio_agents.io.base import DEFAULT_MAX_REVIEW_CHARS
from opinio_agents.io.outputs import check_output_path, plural, write_text_atomic
from opinio_agents.kinds import DEFAULT_STORE, RetrieverKind, SynthesizerKind

if TYPE_CHECKING:
    from rich.table import Table

    from opinio_agents.indexing import IndexStats

__all__ = ["app", "main", "run"]

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

app = typer.Typer(
    name="opinio",
    help="User-centric opinion highlights (PROS/CONS with evidence) from large collections of reviews.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="On an unexpected error, print the Python traceback as well.")
    ] = False,
) -> None:
    """User-centric opinion highlights (PROS/CONS with evidence) from large collections of reviews."""
    # ``--debug`` is taken out of the arguments by main() (so it works anywhere); this makes --help show it.

StoreOpt = Annotated[Path, typer.Option("--store", help="Index directory.", show_default=True)]
MaxReviewCharsOpt = Annotated[
    int, typer.Option("--max-review-chars", min=1, help="Longest review text accepted (a longer one is a bad record).")
]
MaxFileMbOpt = Annotated[
    int, typer.Option("--max-file-mb", min=1, help="Largest input file accepted, in MiB (a larger one is refused).")
]
DEFAULT_MAX_FILE_MB = 16 << 10
DEBUG_FLAG = "--debug"


class Format(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


class EncoderChoice(str, Enum):
    auto = "auto"
    torch = "torch"
    onnx = "onnx"
    onnx_int8 = "onnx-int8"


EncoderOpt = Annotated[
    EncoderChoice | None,
    typer.Option(
        "--encoder",
        help="Encoder backend: torch (fp32 reference), onnx (fp32, default on CPU), onnx-int8 (fastest, opt-in), auto. "
        "Default: the store's, else $OPINIO_ENCODER, else auto.",
        show_default=False,
    ),
]


class LLMCallsChoice(str, Enum):
    per_query = "per-query"
    per_entity = "per-entity"


@app.command("index")
def index_cmd(
    dataset: Annotated[Path, typer.Argument(help="OpinioBank JSON/JSONL file or reviews CSV; '-' reads stdin.")],
    store: StoreOpt = DEFAULT_STORE,
    skip_invalid: Annotated[bool, typer.Option(help="Skip bad records and report them.")] = False,
    chroma_host: Annotated[str | None, typer.Option(help="Use a Chroma server at this host.")] = None,
    chroma_port: Annotated[int | None, typer.Option(help="Port of the Chroma server.")] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="Print nothing but errors: no progress bars, no table of what was indexed.")
    ] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait while another process writes to the store.")] = False,
    max_review_chars: MaxReviewCharsOpt = DEFAULT_MAX_REVIEW_CHARS,
    max_file_mb: MaxFileMbOpt = DEFAULT_MAX_FILE_MB,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="[ADDRESS]",
            help="Encode on a Ray cluster (extra 'scale'): bare --ray starts a local one; or auto, HOST:PORT, "
            "ray://HOST:10001. Needs --chroma-host (a Chroma server every node reaches).",
        ),
    ] = None,
    ray_workers: Annotated[
        int | None, typer.Option("--ray-workers", min=1, help="Ray actors encoding (default: one per cluster CPU).")
    ] = None,
    encoder: EncoderOpt = None,
    aspects: Annotated[
        bool,
        typer.Option(
            "--aspects",
            help="Also name every entity's HIRO aspects and query-free highlights now (stored with the hierarchy), "
            "so `opinio aspects` and query-free highlights answer at once; otherwise their first call does it.",
        ),
    ] = False,
) -> None:
    """Split reviews into sentences and index them (BM25 + Chroma vectors).

    Incremental: unchanged reviews are never re-embedded; an interrupted run is
    completed by the next one. A file with an error indexes nothing (unless --skip-invalid,
    which skips bad records; a file malformed as a whole still indexes nothing).

    Examples:
      opinio index sample.json --store .opinio
      cat reviews.jsonl | opinio index -
    """
    from opinio_agents.api import OpinioRAG
    from opinio_agents.io.loaders import LoadReport, iter_valid_entities

    check_store_path(store)
    if ray is not None:
        from opinio_agents.cli.scale import index_on_ray

        index_on_ray(
            dataset, store, ray, chroma_host=chroma_host, chroma_port=chroma_port, workers=ray_workers, quiet=quiet,
            skip_invalid=skip_invalid, max_review_chars=max_review_chars, max_file_bytes=max_file_mb << 20,
        )
        return
    rag = OpinioRAG(
        store, chroma_host=chroma_host, chroma_port=chroma_port, encoder=encoder.value if encoder else None
    )
    report = LoadReport()
    entities = iter_valid_entities(
        dataset,
        skip_invalid=skip_invalid,
        report=report,
        max_review_chars=max_review_chars,
        max_file_bytes=max_file_mb << 20,
    )
    stats = rag.index(entities, show_progress=not quiet, wait=wait)
    if aspects and rag.hiro_fitted:
        rag.precompute_hiro()
    if not quiet:
        out.print(_index_table(stats, store))
    if report.skipped:
        err.print(plain(f"skipped {plural(len(report.skipped), 'invalid record')}:", "yellow"))
        for where, why in report.skipped[:20]:
            err.print(plain(f"  {where}: {why}"), highlight=False, soft_wrap=True)
        if len(report.skipped) > 20:
            err.print(plain(f"  ... and {len(report.skipped) - 20} more"), highlight=False)


def _index_table(stats: list[IndexStats], store: Path) -> Table:
    """What ``opinio index`` did, per entity, in 80 columns: whole headers, numbers never cut, ids folded."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=plain(f"Indexed into {store}"),
        box=box.SIMPLE_HEAD,  # no vertical rules: nine columns with whole headers fit 80 columns
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    table.add_column("entity", overflow="fold", min_width=6, ratio=1)
    for column in ("reviews", "added", "updated", "unchanged", "removed", "sentences", "embedded", "time"):
        table.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    for s in stats:
        table.add_row(
            plain(s.entity_id),
            str(s.reviews_total),
            str(s.reviews_added),
            str(s.reviews_updated),
            str(s.reviews_unchanged),
            str(s.reviews_removed),
            str(s.sentences_total),
            str(s.sentences_embedded),
            f"{s.seconds:.1f}s",
        )
    return table


@app.command("highlight")
def highlight_cmd(
    dataset: Annotated[Path, typer.Argument(help="The dataset the entity comes from (indexed on the fly).")],
    entity: Annotated[str, typer.Option("--entity", "-e", help="Entity id.")],
    query: Annotated[
        list[str] | None,
        typer.Option("--query", "-q", help="A user-centric query; repeat for several. Default: expert queries."),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, help="Evidence sentences per query.")] = 10,
    retriever: Annotated[RetrieverKind, typer.Option(help="Retriever.")] = "hybrid",
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    store: StoreOpt = DEFAULT_STORE,
    llm: Annotated[
        str | None,
        typer.Option(help="LLM, e.g. openai:gpt-4o-mini, ollama:llama3.1, hf:/path, gguf:/file.gguf. Default: no LLM."),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="Base URL of an OpenAI-compatible server.")] = None,
    synthesizer: Annotated[
        SynthesizerKind | None, typer.Option(help="extractive (default without --llm), llm, long-context.")
    ] = None,
    query_free: Annotated[
        bool,
        typer.Option(
            "--query-free", help="HIRO's query-free highlights (the default only when there is no query at all)."
        ),
    ] = False,
    skip_invalid: Annotated[bool, typer.Option(help="Skip bad records while indexing.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="Print nothing but errors and the result: no progress bars, no notes.")
    ] = False,
    llm_timeout: LLMTimeoutOpt = None,
    llm_deadline: LLMDeadlineOpt = None,
    llm_calls: Annotated[
        LLMCallsChoice,
        typer.Option(
            "--llm-calls",
            help="per-query: one LLM call per query (the paper); per-entity: all queries in one call (fewer tokens).",
        ),
    ] = LLMCallsChoice.per_query,
    wait: Annotated[bool, typer.Option("--wait", help="Wait while another process writes to the store.")] = False,
    max_review_chars: MaxReviewCharsOpt = DEFAULT_MAX_REVIEW_CHARS,
    max_file_mb: MaxFileMbOpt = DEFAULT_MAX_FILE_MB,
    verify: Annotated[
        bool | None,
        typer.Option(
            "--verify/--no-verify",
            help="Check every highlight against its own evidence (AR/SF/OF and a verdict; contradicted "
            "ones are rewritten from the evidence or dropped). Default: on; an entity's first check "
            "loads the triplet model and waits about as long as the synthesis, later ones a tenth of it "
            "(benchmarks/verification.py). --no-verify skips it.",
        ),
    ] = None,
    since: Annotated[
        datetime | None,
        typer.Option(formats=["%Y-%m-%d"], help="Count support (and take evidence) from reviews from this date on."),
    ] = None,
    until: Annotated[
        datetime | None,
        typer.Option(formats=["%Y-%m-%d"], help="... and on or before this date."),
    ] = None,
    half_life: Annotated[
        float | None,
        typer.Option("--half-life", min=0.001, metavar="DAYS", help="Weight support by recency (half-life in days)."),
    ] = None,
    weight_helpful: Annotated[
        bool, typer.Option("--weight-helpful", help="Weight support by helpful votes (1 + votes per review).")
    ] = False,
    encoder: EncoderOpt = None,
) -> None:
    """PROS and CONS of one entity for the queries asked, each with its evidence, support and trend.

    Without --query and without an expert review there is no query: highlight then runs
    HIRO's query-free mode and says so on stderr (or pass --query-free to ask for it).
    Support is a plain count of reviews unless --since/--until, --half-life or
    --weight-helpful say otherwise; the support column then names the weighting.

    Examples:
      opinio highlight sample.json --entity 101 --query wi-fi --query "breakfast buffet"
      opinio highlight sample.json --entity 101 --format json -o highlights.json
      opinio highlight sample.json --entity 101 --llm openai:gpt-4o-mini
      opinio highlight sample.json --entity 101 --llm openai:qwen2.5 --base-url http://localhost:8000/v1
      opinio highlight sample.json --entity 101 --verify
      opinio highlight sample.json --entity 101 --since 2022-01-01 --half-life 365
      opinio highlight sample.json --entity 101 --llm openai:gpt-4o-mini --llm-calls per-entity
    """
    from opinio_agents.api import OpinioRAG
    from opinio_agents.cli.render import to_json, to_markdown, to_rich
    from opinio_agents.io.loaders import load_entity

    check_store_path(store)
    if output is not None:
        check_output_path(output)  # before any work: a bad -o fails in a second, not after the run
    rag = OpinioRAG(
        store,
        retriever=retriever,
        top_k=top_k,
        llm=llm,
        base_url=base_url,
        synthesizer=synthesizer,
        llm_options={
            **llm_limits(llm_timeout, llm_deadline),
            **({"llm_calls": llm_calls.value} if llm_calls is not LLMCallsChoice.per_query else {}),
        },
        verify=verify,
        encoder=encoder.value if encoder else None,
    )
    if query_free and query:
        raise fail("--query-free takes no --query; drop one of them")
    record = load_entity(
        dataset,
        entity,
        skip_invalid=skip_invalid,
        max_review_chars=max_review_chars,
        max_file_bytes=max_file_mb << 20,
    )
    rag.index(record, show_progress=not quiet, wait=wait)  # also fits/encodes HIRO for query-free mode
    request = rag.plan(  # the façade decides the mode, once: query-free only when there is no query at all
        record.key,
        query or None,
        query_free=True if query_free else "auto",
        since=since.date() if since else None,
        until=until.date() if until else None,
        half_life_days=half_life,
        weight_helpful=weight_helpful,
    )
    if request.mode == "query-free" and not query_free and not quiet:
        err.print(  # announced before the work starts: never a silent mode switch
            plain(
                f"note: entity {request.entity_key} has no queries (no --query, no expert review): "
                "query-free mode, HIRO's popular and distinctive aspects"
            ),
            highlight=False,
        )
    result = rag.run(request)
    if fmt is Format.json:
        text = to_json(result)
    elif fmt is Format.markdown:
        text = to_markdown(result)
    else:
        text = None
    if output is not None:
        write_text_atomic(output, text if text is not None else to_markdown(result))
        if not quiet:
            err.print(plain(f"wrote {output}"), highlight=False)
    elif text is not None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        out.print(to_rich(result, width=out.width))


@app.command("sample")
def sample_cmd(path: Annotated[Path, typer.Argument(help="Where to write the sample OpinioBank JSON.")]) -> None:
    """Write the shipped sample dataset (2 hotels, ~230 reviews each, expert pros/cons).

    Example: opinio sample sample.json
    """
    from opinio_agents.datasets import load_sample, write_sample

    written = write_sample(path)
    entities = load_sample()
    summary = ", ".join(f"{e.entity_id} ({e.entity_name}, {len(e.user_reviews)} reviews)" for e in entities)
    err.print(plain(f"wrote {written}: {summary}"), highlight=False)


@app.command("synth")
def synth_cmd(
    path: Annotated[Path, typer.Argument(help="Where to write the synthetic OpinioBank JSON.")],
    entities: Annotated[int, typer.Option("--entities", min=1, help="Number of entities.")] = 3,
    reviews_per_entity: Annotated[int, typer.Option(min=1, help="Reviews per entity.")] = 200,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    trend: Annotated[
        list[str] | None,
        typer.Option(
            "--trend",
            metavar="ASPECT:DATE[:DIRECTION]",
            help="Plant a change of opinion in every entity, e.g. 'wi-fi:2020-01-01:improving' "
            "(negative before the date, positive after; 'worsening' is the reverse). Repeatable.",
        ),
    ] = None,
    trends: Annotated[
        int, typer.Option("--trends", min=0, help="Plant this many trends per entity, on random aspects and dates.")
    ] = 0,
) -> None:
    """Write a synthetic dataset with planted opinions, and its ground truth to PATH.truth.json.

    Planted trends are listed in the truth under "trends" (aspect, change date, direction).

    Examples:
      opinio synth synth.json --entities 1 --reviews-per-entity 1500 --seed 7
      opinio synth trend.json --entities 1 --reviews-per-entity 400 --trend wi-fi:2020-01-01:improving
    """
    from opinio_agents.datasets import write_synthetic
    from opinio_agents.datasets.synthetic import PlantedTrend, parse_trend

    if trend and trends:
        raise fail("pass either --trend (named trends) or --trends N (random ones), not both")
    planted: list[PlantedTrend] | int = [parse_trend(spec) for spec in trend] if trend else trends
    data_path, truth = write_synthetic(
        path, n_entities=entities, reviews_per_entity=reviews_per_entity, seed=seed, trends=planted
    )
    err.print(plain(f"wrote {data_path} and {truth}"), highlight=False)


#: Command groups contributed by subpackages (each module exposes ``register(app)``).
_COMMAND_MODULES = (
    "opinio_agents.cli.triplets",
    "opinio_agents.cli.hiro",
    "opinio_agents.cli.evaluate",
    "opinio_agents.cli.agents",
    "opinio_agents.cli.serve",
    "opinio_agents.cli.report",
)


def _register_commands() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(app)


_register_commands()


def _usage_line(exc: typer.TyperException) -> str:
    """One line for a usage error: the command, what is wrong, where to look for help."""
    message = " ".join(exc.format_message().split()).replace(": Value error, ", ": ")
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", "") or "opinio"
    return f"{command}: {message} (see '{command} --help')"


def _split_debug(argv: list[str]) -> tuple[list[str], bool]:
    """``argv`` without ``--debug`` (accepted anywhere before a ``--``), and whether it was there."""
    if "--" in argv:
        cut = argv.index("--")
        head, tail = argv[:cut], argv[cut:]
    else:
        head, tail = argv, []
    debug = DEBUG_FLAG in head
    return [a for a in head if a != DEBUG_FLAG] + tail, debug


def _bare_ray(argv: list[str]) -> list[str]:
    """``opinio index ... --ray`` without an address means a local Ray cluster (``--ray local``).

    The word after ``--ray`` is its address only when it looks like one (``auto``, ``local``,
    ``HOST:PORT``, ``ray://...``) and is not a file, so ``opinio index --ray data.json`` works.
    """
    if "--ray" not in argv or (argv and argv[0] != "index"):
        return argv
    out = list(argv)
    at = out.index("--ray")
    after = out[at + 1] if at + 1 < len(out) else None
    looks_like_address = after is not None and (after in ("auto", "local") or ":" in after)
    if not looks_like_address or Path(str(after)).exists():
        out.insert(at + 1, "local")
    return out


def _unexpected_line(exc: BaseException) -> str:
    """One line for an exception nothing else handled: what it was and how to see more."""
    if isinstance(exc, OSError) and (exc.strerror or exc.filename):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}; rerun with --debug for the traceback"
    if isinstance(exc, RecursionError):
        what = "the input nests too deeply to process"
    elif isinstance(exc, MemoryError):
        what = "out of memory (the input is too large; lower --max-review-chars or split the file)"
    else:
        text = " ".join(str(exc).split())
        what = f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__
    return f"unexpected error: {what}; rerun with --debug for the traceback"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI on ``argv`` and return the exit status.

    OpinioErrors and usage errors become one ``error:`` line on stderr and status 2;
    never a traceback. Any other exception (a bug, an unhandled case) also becomes one
    line and status 2, with a hint to rerun with ``--debug``, which prints the
    traceback too (``--debug`` may stand anywhere on the command line).

    Example:
        >>> main(["sample", "a.json", "b.json"])  # doctest: +SKIP
        2
    """
    args, debug = _split_debug(list(sys.argv[1:] if argv is None else argv))
    args = _bare_ray(args)
    # typer >= 0.29 vendors click: its usage errors derive from typer.TyperException,
    # not from click.exceptions.ClickException.
    try:
        # Outside standalone mode click *returns* the code of a typer.Exit raised by a command.
        status = app(args=args, standalone_mode=False, prog_name="opinio")
    except OpinioError as exc:
        if debug:
            traceback.print_exc()
        say_error(exc)
        return 2
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        err.print("aborted")
        return 1
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `opinio` / `opinio GROUP`: the help text
            text = exc.format_message()  # typer's rich help is already printed; plain help is returned
            if text.strip():
                err.print(text, highlight=False, markup=False)
            return 2
        say_error(_usage_line(exc))
        return int(getattr(exc, "exit_code", 2) or 2)
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except BrokenPipeError:  # stdout closed early (``| head``): nothing more to say
        return 1
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if debug:
            traceback.print_exc()
        say_error(_unexpected_line(exc))
        return 2
    return status if isinstance(status, int) and not isinstance(status, bool) else 0


def run() -> None:
    """Console-script entry point (``opinio``)."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
