"""Evaluation against human-written summaries (SPACE, FewSum, OpoSum references).

A references file maps each entity to its human summaries::

    {"<entity_id>": {"general": ["...", "..."], "aspects": {"rooms": ["...", "..."]}}}

(extra keys such as ``split`` or ``domain`` are ignored). Two tasks:

* ``aspect`` - query-focused: the queries are the entity's reference aspects;
  a query's PROS and CONS joined (PROS first) are scored against that aspect's
  references;
* ``general`` - query-free: the entity's query-free summary
  (``HighlightSet.summary`` when set, else every highlight joined) is scored
  against the general references. The system's summary and the baselines get
  the same word budget (:attr:`HumanReferenceEvaluator.general_words`: the
  references' mean length unless configured).

Scores are ROUGE-1/2/L F1 (x 100, Porter stemming, identical to
``rouge_score``) averaged over an item's references, then over items. Each
text is also scored (ROUGE-L) against the same item's references of the other
entities (up to :attr:`HumanEvalConfig.margin_entities` of them):
the *specificity margin* is ROUGE-L against its own references minus that
mean, so a summary of generic phrasing that would fit any entity gets a
margin near 0 (:func:`specificity_margin`). The
baselines run in the same evaluation, on the same store: ``random``,
``bm25-top2`` (aspect task), ``lexrank``, ``centroid`` (nearest sentences to
the mean embedding) and the greedy extractive ``oracle``.

Example:
    >>> refs = parse_references({"h1": {"general": ["Clean rooms."], "aspects": {}}})
    >>> refs["h1"].general, rouge_multi("The rooms were clean.", ["Clean rooms."])["R1"]
    (['Clean rooms.'], 66.66666666666666)
"""

from __future__ import annotations

import functools
import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from opinio_agents.errors import ConfigError, DataError
from opinio_agents.evaluation.rouge import lcs_length, rouge_scores, rouge_tokenize

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG
    from opinio_agents.models import HighlightSet

__all__ = [
    "Task",
    "TASKS",
    "SYSTEM",
    "BASELINES",
    "EntityReferences",
    "parse_references",
    "load_references",
    "rouge_multi",
    "rouge_l_tokens",
    "specificity_margin",
    "HumanEvalConfig",
    "HumanReferenceEvaluator",
    "summarize_records",
    "human_tables_markdown",
    "write_human_tables",
    "highlight_texts",
    "general_text",
]

Task = Literal["aspect", "general"]
TASKS: tuple[Task, ...] = ("aspect", "general")
#: The name of the system under test in the tables.
SYSTEM = "opinio"
#: Baselines per task, in table order.
BASELINES: dict[str, tuple[str, ...]] = {
    "aspect": ("random", "bm25-top2", "lexrank", "centroid", "oracle"),
    "general": ("random", "lexrank", "centroid", "oracle"),
}


@dataclass
class EntityReferences:
    """The human summaries of one entity.

    Attributes:
        general: General (query-free) summaries.
        aspects: Aspect summaries, ``{aspect: [summaries]}``.
    """

    general: list[str] = field(default_factory=list)
    aspects: dict[str, list[str]] = field(default_factory=dict)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{where} must be a list of strings")
    return [v for v in value if v.strip()]


def parse_references(data: Mapping[str, Any]) -> dict[str, EntityReferences]:
    """Validate a references mapping (see the module docstring).

    Raises:
        DataError: When an entry is not of the documented shape.
    """
    if not isinstance(data, Mapping):
        raise DataError("a references file holds a JSON object {entity_id: {general, aspects}}")
    out: dict[str, EntityReferences] = {}
    for key, entry in data.items():
        if not isinstance(entry, Mapping):
            raise DataError(f"references of entity {key!r} must be an object with general/aspects")
        general = _strings(entry.get("general", []), f"references[{key!r}].general")
        aspects_raw = entry.get("aspects", {}) or {}
        if not isinstance(aspects_raw, Mapping):
            raise DataError(f"references[{key!r}].aspects must be an object {{aspect: [texts]}}")
        aspects = {
            str(a): _strings(v, f"references[{key!r}].aspects[{a!r}]")
            for a, v in aspects_raw.items()
        }
        out[str(key)] = EntityReferences(general, {a: v for a, v in aspects.items() if v})
    return out


def load_references(path: str | Path) -> dict[str, EntityReferences]:
    """Read a references JSON file.

    Raises:
        DataError: When the file is missing, not JSON, or not of the documented shape.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"cannot read the references file {str(path)!r}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"references file {str(path)!r} is not valid JSON: {exc}") from exc
    return parse_references(data)


def rouge_multi(
    system: str, references: Sequence[str], *, use_stemmer: bool = True
) -> dict[str, float]:
    """ROUGE-1/2/L F1 x 100 of ``system``, averaged over ``references`` (0 for an empty system).

    Example:
        >>> rouge_multi("", ["Clean rooms."])
        {'R1': 0.0, 'R2': 0.0, 'RL': 0.0}
    """
    if not references:
        raise ConfigError("rouge_multi needs at least one reference")
    totals = {"R1": 0.0, "R2": 0.0, "RL": 0.0}
    for reference in references:
        scores = rouge_scores(system, reference, use_stemmer=use_stemmer)
        totals["R1"] += 100 * scores["rouge1"].fmeasure
        totals["R2"] += 100 * scores["rouge2"].fmeasure
        totals["RL"] += 100 * scores["rougeL"].fmeasure
    return {k: v / len(references) for k, v in totals.items()}


def highlight_texts(result: HighlightSet, query: str) -> str:
    """A query's PROS then CONS texts joined with spaces (the aspect task's system text).

    Example:
        >>> from opinio_agents.models import Highlight, HighlightSet, Polarity
        >>> hs = HighlightSet(entity_id=1, cons=[Highlight(query="wifi", polarity=Polarity.CONS,
        ...                   text="Slow wifi.")])
        >>> highlight_texts(hs, "wifi")
        'Slow wifi.'
    """
    parts = [h.text for h in result.pros if h.query == query]
    parts += [h.text for h in result.cons if h.query == query]
    return " ".join(parts)


def general_text(result: HighlightSet) -> str:
    """The query-free summary of a HighlightSet: its ``summary`` when set, else all highlights joined."""
    summary = getattr(result, "summary", None)
    if summary:
        return str(summary)
    return " ".join(h.text for h in [*result.pros, *result.cons])


@dataclass
class HumanEvalConfig:
    """Settings of an evaluation against human summaries.

    Attributes:
        tasks: ``aspect`` and/or ``general``.
        baselines: Baselines to run (None: all that apply to each task).
        seed: Seed of the random baseline.
        general_words: Word budget of the general task, for the system's summary
            and the baselines alike (None: the mean length of the general
            references, so every summary is as long as the human ones).
        aspect_sentences: Sentences of the random/BM25/LexRank/centroid aspect baselines.
        aspect_pool: BM25 hits per aspect that LexRank and centroid choose from.
        use_stemmer: Porter stemming in ROUGE.
        show_progress: Show a progress bar.
        margin_entities: Other entities whose references each text is also scored against
            (the specificity margin), taken in turn after it in the evaluated order
            (None: all of them; 0: no margin).
    """

    tasks: Sequence[Task] = TASKS
    baselines: Sequence[str] | None = None
    seed: int = 13
    general_words: int | None = None
    aspect_sentences: int = 2
    aspect_pool: int = 30
    use_stemmer: bool = True
    show_progress: bool = False
    margin_entities: int | None = 24


def rouge_l_tokens(system: Sequence[str], reference: Sequence[str]) -> float:
    """ROUGE-L F1 x 100 of two ROUGE token lists (:func:`~opinio_agents.evaluation.rouge.rouge_tokenize`).

    Example:
        >>> round(rouge_l_tokens(["clean", "room"], ["the", "room", "is", "clean"]), 2)
        33.33
    """
    hits = lcs_length(reference, system)
    if not hits:
        return 0.0
    precision, recall = hits / len(system), hits / len(reference)
    return 100 * 2 * precision * recall / (precision + recall)


def specificity_margin(
    system: str,
    own: Sequence[str],
    others: Sequence[Sequence[str]],
    *,
    use_stemmer: bool = True,
) -> tuple[float, float]:
    """ROUGE-L against the other entities' references, and the margin of the text's own over it.

    Args:
        system: The scored text.
        own: Its entity's references.
        others: The same item's references of each other entity.

    Returns:
        ``(mean ROUGE-L over the other entities, own ROUGE-L minus that)``; ``(0, own)`` without others.

    Example:
        >>> other, margin = specificity_margin("Great pool.", ["The pool is great."], [["Rude staff."]])
        >>> other, round(margin, 1)
        (0.0, 33.3)
    """
    tokens = rouge_tokenize(system, use_stemmer=use_stemmer)

    def mean_rl(references: Sequence[str]) -> float:
        scores = [rouge_l_tokens(tokens, rouge_tokenize(r, use_stemmer=use_stemmer)) for r in references]
        return statistics.mean(scores) if scores and tokens else 0.0

    own_rl = mean_rl(own) if own else 0.0
    scored = [mean_rl(refs) for refs in others if refs]
    other = statistics.mean(scored) if scored else 0.0
    return other, own_rl - other


class HumanReferenceEvaluator:
    """Score the system and the baselines against human summaries, per task.

    Args:
        rag: The :class:`~opinio_agents.api.OpinioRAG` whose store holds the entities.
        references: ``{entity_id: EntityReferences}`` (see :func:`load_references`).
        config: The settings.
        system: Optional replacement of the system under test:
            ``system(rag, entity_key, task, units) -> {unit: text}`` (units are
            the aspects, or ``["general"]``). Default: the extractive highlights
            (aspect) and the HIRO query-free summary (general) with the
            general budget (:func:`default_system`).

    Example:
        >>> evaluator = HumanReferenceEvaluator(rag, load_references("refs.json"))  # doctest: +SKIP
        >>> tables = summarize_records(evaluator.run())                             # doctest: +SKIP
    """

    def __init__(
        self,
        rag: OpinioRAG,
        references: Mapping[str, EntityReferences],
        config: HumanEvalConfig | None = None,
        *,
        system: Callable[[OpinioRAG, str, str, list[str]], dict[str, str]] | None = None,
    ) -> None:
        self.rag = rag
        self.references = dict(references)
        self.config = config or HumanEvalConfig()
        for task in self.config.tasks:
            if task not in TASKS:
                raise ConfigError(f"task {task!r} is not one of {', '.join(TASKS)}")
        self._general_words = self.config.general_words or self._mean_general_words()
        self.system = system or functools.partial(default_system, summary_words=self._general_words)

    def _mean_general_words(self) -> int:
        lengths = [len(t.split()) for r in self.references.values() for t in r.general]
        return max(1, round(statistics.mean(lengths))) if lengths else 75

    @property
    def general_words(self) -> int:
        """Word budget of the general task (the default system's summary and the baselines)."""
        return self._general_words

    def entities(self, entity_ids: Sequence[str] | None = None) -> list[str]:
        """Indexed entities that have references (all, or those asked for).

        Raises:
            ConfigError: When none is left.
        """
        store = self.rag.store
        wanted = list(entity_ids) if entity_ids else store.entity_keys()
        out = [k for k in wanted if k in self.references and store.has_entity(k)]
        if not out:
            raise ConfigError(
                "no indexed entity has references: the references file's entity ids must match "
                "the dataset's entity_id values"
            )
        return out

    def units(self, task: str, key: str) -> list[str]:
        """The scored items of an entity: its aspects, or ``["general"]`` (empty when it has none)."""
        refs = self.references[key]
        if task == "aspect":
            return list(refs.aspects)
        return ["general"] if refs.general else []

    def _refs(self, task: str, key: str, unit: str) -> list[str]:
        refs = self.references[key]
        return refs.aspects[unit] if task == "aspect" else refs.general

    def baseline_texts(self, name: str, task: str, key: str, units: list[str]) -> dict[str, str]:
        """The baseline's text for each unit of an entity."""
        from opinio_agents.evaluation.baselines.summary import (
            centroid_summary,
            lexrank_summary,
            oracle_summary,
            random_summary,
        )

        store = self.rag.store
        cfg = self.config
        stored = store.sentences(key)
        texts = [s.sentence.text for s in stored]
        out: dict[str, str] = {}
        for unit in units:
            refs = self._refs(task, key, unit)
            limits: dict[str, int] = (
                {"max_sentences": cfg.aspect_sentences}
                if task == "aspect"
                else {"budget_words": self._general_words}
            )
            if name == "random":
                picked = random_summary(texts, seed=f"{cfg.seed}:{key}:{unit}", **limits)
            elif name == "oracle":
                budget = (
                    round(statistics.mean(len(r.split()) for r in refs))
                    if task == "aspect"
                    else self._general_words
                )
                picked = oracle_summary(
                    texts, refs, max_sentences=None, budget_words=budget, use_stemmer=cfg.use_stemmer
                )
            elif task == "aspect":
                top = cfg.aspect_sentences if name == "bm25-top2" else cfg.aspect_pool
                hits = self.rag.retrieve(key, unit, top_k=top, retriever="bm25")
                pool = [h.sentence.text for h in hits]
                if name == "bm25-top2":
                    picked = pool
                elif name == "lexrank":
                    picked = lexrank_summary(pool, **limits)
                elif name == "centroid":
                    rows = store.positions(key)
                    vectors = store.embeddings(key)[[rows[h.sentence.sentence_id] for h in hits]]
                    picked = centroid_summary(pool, vectors, **limits) if pool else []
                else:
                    raise ConfigError(f"unknown baseline {name!r} for the aspect task")
            elif name == "lexrank":
                picked = lexrank_summary(texts, seed=cfg.seed, **limits)
            elif name == "centroid":
                picked = centroid_summary(texts, store.embeddings(key), **limits)
            else:
                raise ConfigError(f"unknown baseline {name!r} for the general task")
            out[unit] = " ".join(picked)
        return out

    def run(self, entity_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Score every system on every entity and task.

        Returns:
            One record per (task, system, entity, unit) with ``R1``, ``R2``,
            ``RL``, ``words``, the scored ``text`` and, with a margin
            (:attr:`HumanEvalConfig.margin_entities`), ``RL_other`` and ``margin``.
        """
        from tqdm.auto import tqdm

        keys = self.entities(entity_ids)
        records: list[dict[str, Any]] = []
        jobs = [(task, key) for task in self.config.tasks for key in keys]
        for task, key in tqdm(jobs, desc="evaluating", disable=not self.config.show_progress):
            units = self.units(task, key)
            if not units:
                continue
            names = [SYSTEM, *(n for n in BASELINES[task] if self._wanted(n))]
            for name in names:
                if name == SYSTEM:
                    outputs = self.system(self.rag, key, task, units)
                else:
                    outputs = self.baseline_texts(name, task, key, units)
                for unit in units:
                    text = outputs.get(unit, "")
                    scores = rouge_multi(
                        text, self._refs(task, key, unit), use_stemmer=self.config.use_stemmer
                    )
                    record = {
                        "task": task,
                        "system": name,
                        "entity_id": key,
                        "unit": unit,
                        **scores,
                        "words": len(text.split()),
                        "text": text,
                    }
                    others = self._other_refs(task, key, unit, keys)
                    if others:
                        other, _ = specificity_margin(
                            text, [], others, use_stemmer=self.config.use_stemmer
                        )
                        record["RL_other"] = other
                        record["margin"] = scores["RL"] - other
                    records.append(record)
        return records

    def _other_refs(self, task: str, key: str, unit: str, keys: Sequence[str]) -> list[list[str]]:
        """The references of ``unit`` of the entities after ``key`` in ``keys`` (in turn, up to the margin's count)."""
        limit = self.config.margin_entities
        if limit == 0 or key not in keys:
            return []
        at = list(keys).index(key)
        turn = [keys[(at + step) % len(keys)] for step in range(1, len(keys))]
        out: list[list[str]] = []
        for other in turn:
            refs = self.references[other]
            texts = refs.aspects.get(unit, []) if task == "aspect" else refs.general
            if texts:
                out.append(texts)
            if limit is not None and len(out) >= limit:
                break
        return out

    def _wanted(self, name: str) -> bool:
        return self.config.baselines is None or name in self.config.baselines


def default_system(
    rag: OpinioRAG, key: str, task: str, units: list[str], *, summary_words: int = 75
) -> dict[str, str]:
    """The offline system under test: extractive highlights (aspect) or the query-free summary.

    Args:
        summary_words: Word budget of the query-free summary (the evaluator passes its
            :attr:`~HumanReferenceEvaluator.general_words`, the baselines' budget).
    """
    if task == "aspect":
        result = rag.highlights(key, units, synthesizer="extractive")  # type: ignore[arg-type]
        return {unit: highlight_texts(result, unit) for unit in units}
    return {"general": general_text(rag.query_free_highlights(key, summary_words=summary_words))}


def summarize_records(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-task tables: mean R1/R2/RL and words per system (macro over entities' items).

    With the specificity margin in the records, also ``RL other`` (mean ROUGE-L against
    the other entities' references) and ``Margin`` (``RL`` minus it).

    Example:
        >>> recs = [{"task": "general", "system": "random", "entity_id": "1", "unit": "general",
        ...          "R1": 30.0, "R2": 5.0, "RL": 18.0, "words": 70}]
        >>> summarize_records(recs)["general"]["rows"][0]["RL"]
        18.0
    """
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        grouped[record["task"]][record["system"]].append(record)
    tables: dict[str, dict[str, Any]] = {}
    for task, systems in grouped.items():
        rows = []
        for system, recs in systems.items():
            row: dict[str, Any] = {
                "System": system,
                "Entities": len({r["entity_id"] for r in recs}),
                "Items": len(recs),
                "R1": statistics.mean(r["R1"] for r in recs),
                "R2": statistics.mean(r["R2"] for r in recs),
                "RL": statistics.mean(r["RL"] for r in recs),
            }
            if all("margin" in r for r in recs):
                row["RL other"] = statistics.mean(r["RL_other"] for r in recs)
                row["Margin"] = statistics.mean(r["margin"] for r in recs)
            row["Words"] = statistics.mean(r["words"] for r in recs)
            rows.append(row)
        title = (
            "Aspect summaries (query-focused): ROUGE F1 x100 vs human aspect summaries"
            if task == "aspect"
            else "General summaries (query-free): ROUGE F1 x100 vs human general summaries"
        )
        tables[task] = {"title": title, "rows": rows}
    return tables


def human_tables_markdown(tables: Mapping[str, Mapping[str, Any]], *, label: str = "") -> str:
    """The tables as markdown (one section per task).

    Example:
        >>> t = {"general": {"title": "T", "rows": [{"System": "x", "RL": 1.234}]}}
        >>> print(human_tables_markdown(t))
        ### T
        <BLANKLINE>
        | System | RL |
        |---|---|
        | x | 1.2 |
    """
    parts = []
    for table in tables.values():
        rows = table["rows"]
        if not rows:
            continue
        cols = list(rows[0])
        head = f"### {table['title']}" + (f" ({label})" if label else "")
        lines = [head, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in rows:
            cells = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in row.values()]
            lines.append("| " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _plot(tables: Mapping[str, Mapping[str, Any]], path: Path, label: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install 'opinio-agents[eval]')"
    fig, axes = plt.subplots(1, len(tables), figsize=(5.5 * len(tables), 3.6), squeeze=False)
    for ax, (task, table) in zip(axes[0], tables.items(), strict=False):
        rows = table["rows"]
        names = [r["System"] for r in rows]
        x = range(len(rows))
        width = 0.27
        for offset, metric in ((-width, "R1"), (0.0, "R2"), (width, "RL")):
            ax.bar([i + offset for i in x], [r[metric] for r in rows], width, label=metric)
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_ylabel("F1 x100")
        ax.set_title(f"{label} {task}".strip())
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def write_human_tables(
    records: Sequence[dict[str, Any]],
    out_dir: str | Path,
    *,
    label: str = "",
    plots: bool = True,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``human_tables.md``, ``human_tables.json``, ``human_records.jsonl`` (and a PNG).

    Returns:
        ``{"tables", "notes", "files"}``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = summarize_records(records)
    notes: list[str] = []
    md = human_tables_markdown(tables, label=label)
    files = [out / "human_tables.md", out / "human_tables.json", out / "human_records.jsonl"]
    files[0].write_text(md + "\n", encoding="utf-8")
    files[1].write_text(
        json.dumps({"label": label, **(extra or {}), "tables": tables}, indent=1), encoding="utf-8"
    )
    with files[2].open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    if plots and tables:
        png = out / "human_rouge.png"
        note = _plot(tables, png, label)
        if note:
            notes.append(note)
        else:
            files.append(png)
    return {"tables": tables, "notes": notes, "files": [str(f) for f in files]}
