"""``opinio evaluate``: the paper's evaluation tables on a dataset with expert reviews.

Indexes the dataset into ``--store`` (incremental; ``<out>/store`` by default),
runs every system (OpinioRAG per retriever and top-K, the retrieval-only
ablation and the App. F baselines; LLM systems with ``--llm``), scores them and
writes Tables 2-5 as markdown and JSON (plus PNG plots) to ``-o DIR``. Runs and
scores are cached under ``DIR``, so an interrupted evaluation resumes.

Example:
    $ opinio evaluate sample -o eval-out --top-k 5 --top-k 10
    $ opinio evaluate reviews.json --systems opiniorag,oracle --retriever bm25 --top-k 10 -o out
    $ opinio evaluate sample --systems llm --llm openai:gpt-4o-mini --judge openai:gpt-4o -o out
    $ opinio evaluate space_dev.json --references space_dev.refs.json --task aspect --task general -o out

With ``--references`` the systems are scored against human-written summaries
(:mod:`opinio_agents.evaluation.human`) instead of the expert PROS/CONS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from opinio_agents.cli.llm_limits import LLMDeadlineOpt, LLMTimeoutOpt, llm_limits
from opinio_agents.kinds import RETRIEVERS

__all__ = ["register", "evaluate_cmd", "split_list"]


def split_list(values: list[str] | None) -> list[str]:
    """Flatten repeated and comma-separated option values.

    Example:
        >>> split_list(["bm25,dense", "hybrid"])
        ['bm25', 'dense', 'hybrid']
    """
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _load_entities(dataset: str, max_reviews: int | None, entity_ids: list[str]) -> list[Any]:
    from opinio_agents.datasets import sample_path
    from opinio_agents.io.loaders import iter_entities

    path = sample_path() if dataset == "sample" else Path(dataset)
    wanted = set(entity_ids)
    out = []
    for entity in iter_entities(path):
        if wanted and entity.key not in wanted:
            continue
        if max_reviews is not None:
            entity = entity.model_copy(update={"user_reviews": entity.user_reviews[:max_reviews]})
        out.append(entity)
    return out


def _triplet_extractor(spec: str | None) -> tuple[Any, str | None]:
    """The AOS extractor, or None with the reason Table 4 is skipped."""
    try:
        from opinio_agents.triplets import get_triplet_extractor  # type: ignore[attr-defined]
    except ImportError as exc:
        return None, f"no triplet extractor available ({exc})"
    from opinio_agents.errors import OpinioError

    try:
        extractor = get_triplet_extractor(spec) if spec else get_triplet_extractor()
        extractor.extract(["The staff was friendly."])  # load it now: fail here, not mid-run
    except (OpinioError, OSError, TypeError) as exc:
        return None, f"the triplet extractor could not be loaded: {exc}"
    return extractor, None


def evaluate_cmd(
    dataset: Annotated[
        str, typer.Argument(help="OpinioBank JSON/JSONL/CSV file with expert reviews, or 'sample'.")
    ],
    systems: Annotated[
        list[str] | None,
        typer.Option(
            "--systems",
            "-s",
            help="Systems (comma-separated or repeated): opiniorag, retrieval, random, oracle, "
            "textrank, "
            "lexrank, llm, long-context. Default: every system that needs no LLM.",
        ),
    ] = None,
    top_k: Annotated[
        list[str] | None,
        typer.Option(
            "--top-k", "-k", help="Top-K values (repeat or comma-separate). Default: 5,10."
        ),
    ] = None,
    retriever: Annotated[
        list[str] | None,
        typer.Option(
            "--retriever",
            "-r",
            help="Retrievers: bm25, dense, hybrid (repeat or comma-separate). Default: all.",
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Output directory (tables, runs, cache).")
    ] = Path("evaluation"),
    store: Annotated[
        Path | None, typer.Option("--store", help="Index directory. Default: <output>/store.")
    ] = None,
    entity: Annotated[
        list[str] | None, typer.Option("--entity", "-e", help="Only these entity ids.")
    ] = None,
    max_reviews: Annotated[
        int | None,
        typer.Option(min=1, help="Use only the first N reviews of each entity (quick runs)."),
    ] = None,
    llm: Annotated[
        str | None,
        typer.Option(help="LLM for the llm/long-context systems, e.g. openai:gpt-4o-mini."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Base URL of an OpenAI-compatible server.")
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(help="LLM judge for Table 3, e.g. openai:gpt-4o. Default: none."),
    ] = None,
    triplets: Annotated[
        str | None,
        typer.Option(help="Triplet extractor spec for Table 4 (default: the embedded model)."),
    ] = None,
    aos: Annotated[
        bool, typer.Option("--aos/--no-aos", help="Compute Table 4 (AOS verification).")
    ] = True,
    bertscore: Annotated[
        bool, typer.Option("--bertscore/--no-bertscore", help="Compute BERTScore.")
    ] = True,
    bertscore_model: Annotated[
        Path | None, typer.Option(help="Local model directory for BERTScore (default: MiniLM).")
    ] = None,
    sentiment_model: Annotated[
        Path | None,
        typer.Option(
            help="Local transformers sentiment model (e.g. SiEBERT) for TPR/TNR and baselines; "
            "default: the offline blended MiniLM-head + VADER scorer."
        ),
    ] = None,
    ragas: Annotated[
        bool,
        typer.Option(
            "--ragas/--no-ragas",
            help="Add RAGAs metrics (ragas extra); LLM-based ones use the --judge model.",
        ),
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the random and graph baselines.")] = 13,
    graph_cap: Annotated[
        int, typer.Option(min=2, help="Max sentences ranked by TextRank/LexRank.")
    ] = 1000,
    plots: Annotated[
        bool, typer.Option("--plots/--no-plots", help="Write PNG plots (needs matplotlib).")
    ] = True,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
    references: Annotated[
        Path | None,
        typer.Option(
            "--references",
            help="Human summaries {entity_id: {general: [...], aspects: {aspect: [...]}}} "
            "(e.g. space_dev.refs.json): score against them instead of the expert PROS/CONS.",
        ),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option(
            "--task",
            help="With --references: aspect (queries = the reference aspects, PROS+CONS joined) "
            "and/or general (the query-free summary). Default: both.",
        ),
    ] = None,
    general_words: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="With --references: word budget of the general-task baselines "
            "(default: the mean length of the general references).",
        ),
    ] = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_deadline: LLMDeadlineOpt = None,
) -> None:
    """Evaluate systems against expert PROS/CONS and write the paper's tables (2-5).

    With ``--references`` it scores the offline system and the random, BM25
    top-2, LexRank, centroid and oracle baselines against human summaries
    instead (ROUGE-1/2/L F1 averaged over references, per task).
    """
    from rich.console import Console

    if references is not None:
        _evaluate_references(
            dataset,
            references,
            tasks=split_list(task),
            output=output,
            store=store,
            entity_ids=split_list(entity),
            max_reviews=max_reviews,
            seed=seed,
            general_words=general_words,
            plots=plots,
            quiet=quiet,
        )
        return

    from opinio_agents.api import OpinioRAG
    from opinio_agents.errors import ConfigError
    from opinio_agents.evaluation.reference import BertScoreMetric, TransformersSentimentClassifier
    from opinio_agents.evaluation.runner import EvaluationConfig, Evaluator
    from opinio_agents.evaluation.systems import DEFAULT_SYSTEMS, expand_systems
    from opinio_agents.evaluation.tables import to_markdown, write_tables

    err = Console(stderr=True)
    kinds = split_list(systems) or list(DEFAULT_SYSTEMS)
    try:
        ks = [int(k) for k in split_list(top_k)] or [5, 10]
    except ValueError as exc:
        raise ConfigError(f"--top-k expects integers, got {top_k!r}") from exc
    specs = expand_systems(kinds, split_list(retriever) or list(RETRIEVERS), ks)
    if any(s.needs_llm for s in specs) and not llm:
        raise ConfigError(
            "the llm and long-context systems need --llm (e.g. --llm openai:gpt-4o-mini)"
        )

    output.mkdir(parents=True, exist_ok=True)
    rag = OpinioRAG(
        store_dir=store or output / "store",
        llm=llm,
        base_url=base_url,
        synthesizer="extractive",
        llm_options=llm_limits(llm_timeout, llm_deadline),
    )
    entities = _load_entities(dataset, max_reviews, split_list(entity))
    rag.index(entities, show_progress=not quiet)

    skipped: dict[str, str] = {}
    notes: list[str] = []
    bs_metric = None
    if bertscore:
        if BertScoreMetric.available():
            bs_metric = BertScoreMetric(bertscore_model)
        else:
            notes.append(
                "BERTScore skipped: bert-score is not installed (pip install 'opinio-agents[eval]')"
            )
    extractor = None
    if aos:
        extractor, reason = _triplet_extractor(triplets)
        if reason:
            skipped["table4"] = reason
    else:
        skipped["table4"] = "--no-aos"
    judge_obj = None
    judge_llm = None
    if judge:
        from opinio_agents.evaluation.judge import LLMJudge
        from opinio_agents.llm.providers import resolve_chat_model

        judge_llm = resolve_chat_model(judge, base_url=base_url, **llm_limits(llm_timeout))
        if judge_llm is None:
            raise ConfigError(f"--judge {judge!r} did not resolve to a chat model")
        judge_obj = LLMJudge(judge_llm)
    else:
        skipped["table3"] = "no --judge LLM given"
    ragas_scorer = None
    if ragas:
        from opinio_agents.evaluation.ragas_adapter import EncoderEmbeddings, RagasScorer

        # The LLM-based ragas metrics use the judge model (and the offline MiniLM embeddings).
        embeddings = (
            EncoderEmbeddings.create(rag.encoder) if judge_llm is not None else None
        )
        ragas_scorer = RagasScorer(judge_llm, embeddings)
    classifier = TransformersSentimentClassifier(sentiment_model) if sentiment_model else None

    config = EvaluationConfig(
        systems=specs,
        out_dir=output,
        bertscore=bs_metric,
        classifier=classifier,
        triplet_extractor=extractor,
        judge=judge_obj,
        ragas=ragas_scorer,
        seed=seed,
        max_graph_sentences=graph_cap,
        show_progress=not quiet,
    )
    records = Evaluator(rag, config).run([e.key for e in entities])
    summary = write_tables(records, output, skipped=skipped, plots=plots)
    for table in summary["tables"].values():
        typer.echo(to_markdown(table) + "\n")
    for key, reason in summary["skipped"].items():
        err.print(f"{key} not computed: {reason}", highlight=False, markup=False)
    for note in [*notes, *summary["notes"]]:
        err.print(note, highlight=False, markup=False)
    err.print(f"wrote {output / 'tables.md'} and {output / 'tables.json'}", highlight=False, markup=False)


def _evaluate_references(
    dataset: str,
    references: Path,
    *,
    tasks: list[str],
    output: Path,
    store: Path | None,
    entity_ids: list[str],
    max_reviews: int | None,
    seed: int,
    general_words: int | None,
    plots: bool,
    quiet: bool,
) -> None:
    """``opinio evaluate --references``: the system and baselines vs human summaries."""
    from rich.console import Console

    from opinio_agents.api import OpinioRAG
    from opinio_agents.errors import ConfigError
    from opinio_agents.evaluation.human import (
        TASKS,
        HumanEvalConfig,
        HumanReferenceEvaluator,
        human_tables_markdown,
        load_references,
        write_human_tables,
    )

    err = Console(stderr=True)
    for name in tasks:
        if name not in TASKS:
            raise ConfigError(f"--task {name!r} is not one of {', '.join(TASKS)}")
    refs = load_references(references)
    entities = [e for e in _load_entities(dataset, max_reviews, entity_ids) if e.key in refs]
    if not entities:
        raise ConfigError(
            f"no entity of {dataset!r} has references in {str(references)!r}; the references "
            "file's keys must be the dataset's entity_id values"
        )
    output.mkdir(parents=True, exist_ok=True)
    rag = OpinioRAG(store_dir=store or output / "store", synthesizer="extractive")
    rag.index(entities, show_progress=not quiet)
    config = HumanEvalConfig(
        tasks=tuple(tasks) or TASKS,  # type: ignore[arg-type]
        seed=seed,
        general_words=general_words,
        show_progress=not quiet,
    )
    evaluator = HumanReferenceEvaluator(rag, refs, config)
    records = evaluator.run([e.key for e in entities])
    label = Path(dataset).stem if dataset != "sample" else "sample"
    summary = write_human_tables(
        records,
        output,
        label=label,
        plots=plots,
        extra={"general_budget_words": evaluator.general_words, "entities": len(entities)},
    )
    typer.echo(human_tables_markdown(summary["tables"], label=label) + "\n")
    for note in summary["notes"]:
        err.print(note, highlight=False, markup=False)
    err.print(f"wrote {', '.join(summary['files'])}", highlight=False, markup=False)
    rag.close()


def register(app: typer.Typer) -> None:
    """Add ``opinio evaluate`` to a Typer app."""
    app.command("evaluate")(evaluate_cmd)
