"""CLI commands for the agent integration: ``opinio chat`` and ``opinio mcp``.

``register(app)`` adds both commands to the main Typer app.

Example:
    $ opinio chat hotels.json --entity 101                    # extractive answers, no LLM
    $ opinio chat hotels.json --entity 101 --llm openai:gpt-4o-mini
    $ opinio mcp --store .opinio                              # MCP server on stdio
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from opinio_agents.cli.llm_limits import llm_limits
from opinio_agents.errors import OpinioError
from opinio_agents.io.outputs import terminal_safe as _safe

if TYPE_CHECKING:
    from opinio_agents.agents.answer_guard import GuardReport

__all__ = ["register", "chat_command", "mcp_command", "guard_line"]

_HELP = "Commands: /reset forgets the conversation, /quit (or Ctrl-D) leaves."


def chat_command(
    dataset: Path = typer.Argument(..., help="OpinioBank JSON/JSONL file holding the entity (indexed if needed)."),
    entity: str = typer.Option(..., "--entity", "-e", help="Id of the entity to chat about."),
    llm: Optional[str] = typer.Option(  # noqa: UP045 - typer needs Optional on 3.10
        None,
        "--llm",
        help="Chat model: 'openai:MODEL', 'ollama:MODEL', 'hf:/dir', 'gguf:/file.gguf'. Omit for extractive answers.",
    ),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible server URL (…/v1)."),  # noqa: UP045
    store: Path = typer.Option(Path(".opinio"), "--store", help="Index directory."),
    k: int = typer.Option(6, "--k", min=1, max=50, help="Review sentences retrieved per question."),
    llm_timeout: Optional[float] = typer.Option(  # noqa: UP045
        None, "--llm-timeout", min=0.1, help="Seconds one LLM request may take (default 60)."
    ),
    verify: bool = typer.Option(
        True, "--verify/--no-verify",
        help="Check each cited answer sentence against its excerpts (contradicted ones are removed).",
    ),
    mark_unsupported: bool = typer.Option(
        False, "--mark-unsupported",
        help="Show uncited or contradicted sentences behind a visible mark instead of removing them.",
    ),
) -> None:
    """Chat about one entity; every answer sentence cites the review sentences it uses and is checked."""
    from opinio_agents.agents.chat import ReviewChat
    from opinio_agents.api import OpinioRAG

    try:
        rag = OpinioRAG(store_dir=store, llm=llm, base_url=base_url, llm_options=llm_limits(llm_timeout))
        if not dataset.is_file():
            raise typer.BadParameter(f"{dataset} is not a file", param_hint="DATASET")
        stats = rag.index(dataset)
        added = sum(s.reviews_added + s.reviews_updated for s in stats)
        if added:
            typer.echo(_safe(f"indexed {added} new or changed reviews into {store}"), err=True)
        session = ReviewChat(
            rag, entity, k=k, verify=verify, unsupported="mark" if mark_unsupported else "drop"
        )
    except OpinioError as exc:
        typer.echo(f"error: {_safe(str(exc), keep_newlines=False)}", err=True)
        raise typer.Exit(2) from exc
    mode = "LLM" if session.mode == "llm" else "extractive (no --llm given)"
    typer.echo(_safe(f"Chatting about {session.entity_name} [{session.entity_key}], mode: {mode}. {_HELP}"))
    while True:
        typer.echo("you> ", nl=False)
        line = sys.stdin.readline()
        if not line:
            typer.echo("")
            break
        question = line.strip()
        if not question:
            continue
        if question in ("/quit", "/exit"):
            break
        if question == "/reset":
            session.reset()
            typer.echo("(conversation cleared)")
            continue
        typer.echo("opinio> ", nl=False)
        try:
            for piece in session.stream(question):
                typer.echo(_safe(piece), nl=False)
        except OpinioError as exc:
            typer.echo(f"\nerror: {_safe(str(exc), keep_newlines=False)}", err=True)
            continue
        typer.echo("")
        answer = session.last_answer
        if answer is not None and answer.citations:
            typer.echo("Sources:")
            for c in answer.citations:
                typer.echo(_safe(f"  [{c.marker}] {c.sentence_id}: {c.text}", keep_newlines=False))
        elif answer is not None and answer.mode == "extractive" and answer.covered:
            typer.echo("Sources:")
            for c in answer.evidence[: session.extractive_sentences]:
                typer.echo(_safe(f"  [{c.marker}] {c.sentence_id}", keep_newlines=False))
        if answer is not None and answer.guard is not None and (answer.guard.dropped or answer.guard.marked):
            typer.echo(_safe(guard_line(answer.guard), keep_newlines=False))


def guard_line(report: GuardReport) -> str:
    """One line saying what the answer guard removed or marked, e.g. for ``opinio chat``.

    Example:
        >>> from opinio_agents.agents.answer_guard import GuardReport
        >>> guard_line(GuardReport(sentences=4, shown=1, repaired=0, marked=0, dropped=3, uncited=1,
        ...                        contradicted=1, repeated=1))
        'Checked 4 model sentences: 3 removed (1 without a valid citation, 1 contradicted by its excerpts, 1 repeated)'
    """
    parts = [
        f"{n} {what}"
        for n, what in (
            (report.uncited - report.repaired, "without a valid citation"),
            (report.contradicted, "contradicted by its excerpts"),
            (report.repeated, "repeated"),
        )
        if n
    ]
    done = " and ".join(
        f"{n} {verb}" for n, verb in ((report.dropped, "removed"), (report.marked, "marked")) if n
    )
    return f"Checked {report.sentences} model sentences: {done or 'none removed'} ({', '.join(parts)})"


def mcp_command(
    store: Path = typer.Option(Path(".opinio"), "--store", help="Index directory to serve."),
    dataset: Optional[Path] = typer.Option(  # noqa: UP045
        None, "--dataset", help="Index this OpinioBank file into the store before serving."
    ),
    llm: Optional[str] = typer.Option(None, "--llm", help="Chat model used by review_highlights (optional)."),  # noqa: UP045
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible server URL."),  # noqa: UP045
) -> None:
    """Serve the review tools to MCP clients over stdio."""
    from opinio_agents.agents.mcp_server import serve_stdio

    try:
        serve_stdio(store, dataset=dataset, llm=llm, base_url=base_url)
    except OpinioError as exc:
        typer.echo(f"error: {_safe(str(exc), keep_newlines=False)}", err=True)
        raise typer.Exit(2) from exc


def register(app: typer.Typer) -> None:
    """Add ``chat`` and ``mcp`` to ``app``."""
    app.command("chat")(chat_command)
    app.command("mcp")(mcp_command)
