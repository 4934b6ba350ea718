"""The evaluation run behind ``opinio evaluate``: generate, score, cache, tabulate.

For every system (:mod:`~opinio_agents.evaluation.systems`) and every indexed
entity with an expert review, the :class:`Evaluator`

1. produces the entity's :class:`~opinio_agents.models.HighlightSet`
   (cached as ``runs/<system>/<entity>.json``);
2. scores it (cached as ``metrics/<system>/<entity>.json``): ROUGE-1/2/L and
   BERTScore per side (Table 2), the LLM judge (Table 3, when a judge is
   given), AR/SF/OF over each highlight and its top-K retrieved evidence
   (Table 4, for systems that synthesise from evidence, when a triplet
   extractor is given), TPR/TNR counts (Table 5) and RAGAs metrics (when a
   RAGAs scorer is given).

A rerun reuses every cached file and computes only what is missing, so an
interrupted run resumes where it stopped. :func:`~opinio_agents.evaluation.tables.build_tables`
turns the records into the paper's tables.

Example:
    >>> from opinio_agents.api import OpinioRAG                                    # doctest: +SKIP
    >>> rag = OpinioRAG(store_dir="/tmp/opinio-eval")                               # doctest: +SKIP
    >>> rag.index(sample_path())                                                    # doctest: +SKIP
    >>> systems = expand_systems(["opiniorag", "random"], ["bm25"], [10])           # doctest: +SKIP
    >>> ev = Evaluator(rag, EvaluationConfig(systems, "out"))                       # doctest: +SKIP
    >>> records = ev.run()                                                          # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.reference import (
    BertScoreMetric,
    SentimentClassifier,
    default_classifier,
    rouge_side_scores,
    sentiment_alignment,
    side_texts,
)
from opinio_agents.evaluation.systems import SystemSpec
from opinio_agents.models import Entity, ExpertReview, HighlightSet

if TYPE_CHECKING:
    from opinio_agents.api import OpinioRAG
    from opinio_agents.evaluation.judge import LLMJudge
    from opinio_agents.evaluation.verify import AOSVerifier
    from opinio_agents.triplets.base import TripletExtractor

__all__ = ["EvaluationConfig", "Evaluator", "RagasScorer", "entity_slug"]

#: ``scorer(result, expert, contexts_by_query) -> {metric: value}`` (see ``ragas_adapter``).
RagasScorer = Callable[[HighlightSet, Any, dict[str, list[str]]], dict[str, float]]


def entity_slug(entity_id: str) -> str:
    """A file-name-safe form of an entity id.

    Example:
        >>> entity_slug("hotel/42 a")
        'hotel_42_a'
    """
    return "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in entity_id) or "_"


def _write_json(path: Path, data: Any) -> None:
    """Atomic JSON write (a crash never leaves a half-written cache file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, ensure_ascii=False)
    os.replace(tmp, path)


def _read_json(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


@dataclass
class EvaluationConfig:
    """What to evaluate and with which scorers.

    Attributes:
        systems: The systems to compare.
        out_dir: Where runs, metrics and tables go.
        bertscore: BERTScore metric (None to skip Table 2's BS column).
        classifier: Sentiment classifier of TPR/TNR and of the baselines'
            sentiment constraint. When None, TPR/TNR use the blended
            MiniLM-head + VADER scorer and the baselines use the sentiment
            stored at indexing time (the same scorer).
        triplet_extractor: AOS extractor for Table 4 (skipped when None).
        judge: LLM judge for Table 3 (skipped when None).
        ragas: RAGAs scorer (skipped when None).
        seed: Seed of the random and graph baselines.
        max_graph_sentences: Cap of sentences ranked by TextRank/LexRank.
        use_stemmer: Porter stemming in ROUGE.
        show_progress: Show a progress bar.
    """

    systems: Sequence[SystemSpec]
    out_dir: str | Path
    bertscore: BertScoreMetric | None = None
    classifier: SentimentClassifier | None = None
    triplet_extractor: TripletExtractor | None = None
    judge: LLMJudge | None = None
    ragas: RagasScorer | None = None
    seed: int = 13
    max_graph_sentences: int = 1000
    use_stemmer: bool = True
    show_progress: bool = False


class Evaluator:
    """Generate and score every system on every entity, with on-disk resume.

    Args:
        rag: The :class:`~opinio_agents.api.OpinioRAG` whose store holds the entities.
        config: The evaluation settings.
    """

    def __init__(self, rag: OpinioRAG, config: EvaluationConfig) -> None:
        if not config.systems:
            raise ConfigError("no system to evaluate; pass at least one system")
        self.rag = rag
        self.config = config
        self.out_dir = Path(config.out_dir)
        self._classifier: SentimentClassifier = config.classifier or default_classifier()
        self._verifier: AOSVerifier | None = None
        self._candidates: dict[str, list] = {}

    # -- generation -----------------------------------------------------------------
    def _baseline(self, spec: SystemSpec):  # noqa: ANN202 - a Baseline
        from opinio_agents.evaluation.baselines import (
            ExtractiveOracle,
            LexRankBaseline,
            RandomBaseline,
            RetrievalOnlyBaseline,
            TextRankBaseline,
        )

        cap = self.config.max_graph_sentences
        if spec.kind == "random":
            return RandomBaseline(seed=self.config.seed)
        if spec.kind == "oracle":
            return ExtractiveOracle(use_stemmer=self.config.use_stemmer)
        if spec.kind == "textrank":
            return TextRankBaseline(max_sentences=cap, seed=self.config.seed)
        if spec.kind == "lexrank":
            return LexRankBaseline(max_sentences=cap, seed=self.config.seed)
        return RetrievalOnlyBaseline(
            self.rag.retrievers, spec.retriever or "bm25", top_k=spec.top_k or 10
        )

    def _baseline_input(self, entity: Entity):  # noqa: ANN202 - BaselineInput
        from opinio_agents.evaluation.baselines import BaselineInput, candidates_from_index

        key = entity.key
        if key not in self._candidates:
            classifier = self.config.classifier  # None: labels from the stored VADER scores
            self._candidates[key] = candidates_from_index(self.rag.store, key, classifier)
        expert = entity.expert_review or ExpertReview()
        return BaselineInput(key, expert, self._candidates[key], entity.entity_name)

    def generate(self, spec: SystemSpec, entity: Entity) -> HighlightSet:
        """The system's highlights for one entity (read from the cache when present)."""
        path = self.out_dir / "runs" / spec.name / f"{entity_slug(entity.key)}.json"
        cached = _read_json(path)
        if cached is not None:
            return HighlightSet.model_validate(cached)
        queries = entity.queries
        if spec.kind == "opiniorag":
            result = self.rag.highlights(
                entity.key,
                queries,
                top_k=spec.top_k,
                retriever=spec.retriever,
                synthesizer="extractive",  # type: ignore[arg-type]
            )
        elif spec.kind == "llm":
            result = self.rag.highlights(
                entity.key, queries, top_k=spec.top_k, retriever=spec.retriever, synthesizer="llm"
            )  # type: ignore[arg-type]
        elif spec.kind == "long-context":
            result = self.rag.highlights(entity.key, queries, synthesizer="long-context")
        else:
            result = self._baseline(spec).run(self._baseline_input(entity))
        _write_json(path, result.model_dump(mode="json"))
        return result

    # -- scoring ----------------------------------------------------------------------
    def _contexts(
        self, spec: SystemSpec, entity: Entity, queries: Sequence[str]
    ) -> dict[str, list[str]]:
        """Top-K retrieved evidence texts per query, as the system retrieved them."""
        out: dict[str, list[str]] = {}
        for query in dict.fromkeys(queries):
            hits = self.rag.retrieve(
                entity.key, query, top_k=spec.top_k or 10, retriever=spec.retriever or "hybrid"
            )  # type: ignore[arg-type]
            out[query] = [h.sentence.text for h in hits]
        return out

    def _aos(self, spec: SystemSpec, entity: Entity, result: HighlightSet) -> list[dict[str, Any]]:
        from opinio_agents.evaluation.verify import AOSVerifier

        if self._verifier is None:
            self._verifier = AOSVerifier(self.config.triplet_extractor)  # type: ignore[arg-type]
        contexts = self._contexts(spec, entity, [h.query for h in result.highlights])
        items = [(h.text, contexts[h.query]) for h in result.highlights]
        labels = [
            {
                "system": spec.name,
                "entity_id": entity.key,
                "query": h.query,
                "polarity": h.polarity.value,
                "text": h.text,
            }
            for h in result.highlights
        ]
        return [score.to_dict() for score in self._verifier.verify(items, labels)]

    def score(self, spec: SystemSpec, entity: Entity, result: HighlightSet) -> dict[str, Any]:
        """The metric record of one system on one entity (cached; only missing parts computed)."""
        path = self.out_dir / "metrics" / spec.name / f"{entity_slug(entity.key)}.json"
        record: dict[str, Any] = _read_json(path) or {}
        record.update(
            {
                "system": spec.name,
                "kind": spec.kind,
                "retriever": spec.retriever,
                "top_k": spec.top_k,
            }
        )
        record["entity_id"] = entity.key
        expert = entity.expert_review or ExpertReview()
        before = json.dumps(record, sort_keys=True, default=str)
        if "rouge" not in record:
            record["rouge"] = rouge_side_scores(result, expert, use_stemmer=self.config.use_stemmer)
        if self.config.bertscore is not None and "bertscore" not in record:
            pairs = side_texts(result, expert)
            sides = list(pairs)
            scores = self.config.bertscore.f1(
                [pairs[s][0] for s in sides], [pairs[s][1] for s in sides]
            )
            record["bertscore"] = dict(zip(sides, scores, strict=False))
        if "alignment" not in record:
            record["alignment"] = sentiment_alignment(result, expert, self._classifier).to_dict()
        if self.config.triplet_extractor is not None and spec.has_evidence and "aos" not in record:
            record["aos"] = self._aos(spec, entity, result)
        if self.config.judge is not None and "judge" not in record:
            judged = self.config.judge.judge(result, expert)
            record["judge"] = {**judged.as_row(), "rationale": judged.rationale}
        if (
            self.config.ragas is not None
            and spec.kind in ("opiniorag", "llm", "retrieval")
            and "ragas" not in record
        ):
            contexts = self._contexts(spec, entity, [h.query for h in result.highlights])
            record["ragas"] = self.config.ragas(result, expert, contexts)
        if json.dumps(record, sort_keys=True, default=str) != before:
            _write_json(path, record)
        return record

    # -- the whole run ------------------------------------------------------------------
    def entities(self, entity_ids: Sequence[str] | None = None) -> list[Entity]:
        """The indexed entities that have an expert review (all, or those asked for)."""
        keys = list(entity_ids) if entity_ids else self.rag.store.entity_keys()
        out = []
        for key in keys:
            entity = self.rag.store.entity(key)
            if entity.expert_review and (entity.expert_review.pros or entity.expert_review.cons):
                out.append(entity)
        if not out:
            raise ConfigError(
                "no indexed entity has an expert review (pros/cons) to evaluate against"
            )
        return out

    def run(self, entity_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Generate and score every system on every entity; returns the metric records."""
        from tqdm.auto import tqdm

        entities = self.entities(entity_ids)
        jobs = [(spec, entity) for spec in self.config.systems for entity in entities]
        records: list[dict[str, Any]] = []
        with tqdm(
            total=len(jobs), desc="evaluating", unit="run", disable=not self.config.show_progress
        ) as bar:
            for spec, entity in jobs:
                bar.set_postfix_str(f"{spec.name} / {entity.key}"[:50])
                records.append(self.score(spec, entity, self.generate(spec, entity)))
                bar.update(1)
        return records
