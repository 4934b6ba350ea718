"""RAGAs baselines through the evaluator chain (optional ``ragas`` extra, adapted to ragas 0.4.3).

Each highlight becomes a ragas ``SingleTurnSample``: ``user_input`` is the
query, ``response`` the highlight, ``retrieved_contexts`` the top-K evidence
the system retrieved for the query, and ``reference`` / ``reference_contexts``
the expert sentence for that query (same side first). Scores are averaged over
an entity's highlights that have an expert sentence.

Metrics:

* without an LLM (always, offline): ``non_llm_context_precision_with_reference``,
  ``non_llm_context_recall``, ``non_llm_string_similarity`` (response vs
  reference) and ``rouge_score`` (ROUGE-L F1, response vs reference);
* with an LLM (any LangChain chat model, wrapped in ragas'
  ``LangchainLLMWrapper``): ``faithfulness`` and
  ``llm_context_precision_with_reference``; ``answer_relevancy`` also needs
  embeddings (:class:`EncoderEmbeddings` adapts the offline MiniLM encoder).

ragas never builds a client of its own here: LLM metrics are created only with
the models you pass. Usage analytics are switched off (``RAGAS_DO_NOT_TRACK``)
unless you set the variable yourself. ragas 0.4.x imports
``langchain_community.chat_models.vertexai``, which langchain-community 0.4
removed, so the ``ragas`` extra pins ``langchain-community<0.4``; the non-LLM
metrics need ``rapidfuzz``, which ragas does not declare (the extra lists it).

Install in its own environment, where ragas' pins (openai < 2 via instructor)
fit: ``pip install -e ".[ragas]"`` (see the README).

Example:
    >>> scorer = RagasScorer()                                          # doctest: +SKIP
    >>> scorer.score_sample("wifi", "Fast wifi.", ["The wifi was fast."],
    ...                     "Fast, free wifi.")  # doctest: +SKIP
    {'non_llm_context_precision_with_reference': 1.0, ...}
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import os
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.models import ExpertReview, HighlightSet

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from opinio_agents.embeddings import Encoder

__all__ = ["RAGAS_PIN", "import_ragas", "EncoderEmbeddings", "RagasScorer"]

#: The ragas versions this adapter is written against.
RAGAS_PIN = "ragas>=0.4.3,<0.5"
_VERTEX = "langchain_community.chat_models.vertexai"


def import_ragas() -> types.ModuleType:
    """Import ragas lazily, with analytics off and its version checked.

    Raises:
        MissingDependencyError: When ragas (or rapidfuzz) is not installed, or when ragas
            cannot import because langchain-community >= 0.4 (no ``chat_models.vertexai``)
            is installed; the message says what to install.
        ConfigError: When the installed ragas is outside :data:`RAGAS_PIN`.
    """
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    try:
        import ragas
        import ragas.llms  # noqa: F401 - fails here when langchain-community is too new
    except ModuleNotFoundError as exc:
        if exc.name == _VERTEX:
            raise MissingDependencyError(
                "langchain-community<0.4", extra="ragas", purpose="ragas 0.4 (it imports " + _VERTEX + ")"
            ) from exc
        raise MissingDependencyError("ragas", extra="ragas", purpose="RAGAs metrics") from exc
    version = getattr(ragas, "__version__", "0")
    major_minor = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if major_minor != (0, 4):
        raise ConfigError(f"ragas {version} is installed but this adapter needs {RAGAS_PIN}")
    try:
        import rapidfuzz  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            "rapidfuzz", extra="ragas", purpose="ragas' non-LLM string metrics"
        ) from exc
    return ragas


def _embeddings_base() -> type:
    from langchain_core.embeddings import Embeddings

    return Embeddings


class EncoderEmbeddings:
    """LangChain ``Embeddings`` over a :class:`~opinio_agents.embeddings.SentenceEncoder` (MiniLM).

    Built through :meth:`create` so that langchain-core is imported lazily.

    Example:
        >>> emb = EncoderEmbeddings.create()                 # doctest: +SKIP
        >>> len(emb.embed_query("wifi"))                     # doctest: +SKIP
        384
    """

    @staticmethod
    def create(encoder: Encoder | None = None) -> Embeddings:
        """A LangChain Embeddings instance backed by ``encoder`` (the shared MiniLM by default)."""
        from opinio_agents.embeddings import get_encoder

        base = _embeddings_base()
        enc = encoder or get_encoder()

        class _Encoder(base):  # type: ignore[misc, valid-type]
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return enc.encode(texts).tolist()

            def embed_query(self, text: str) -> list[float]:
                return enc.encode([text])[0].tolist()

        return _Encoder()


def _run(coro: Any) -> Any:
    """Run a coroutine to completion, also from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class RagasScorer:
    """Score highlights with ragas metrics; usable as ``EvaluationConfig.ragas``.

    Args:
        llm: A LangChain chat model for the LLM metrics (None: non-LLM metrics only).
        embeddings: LangChain embeddings for ``answer_relevancy`` (needs ``llm`` too).
        non_llm: Include the offline metrics.

    Raises:
        MissingDependencyError: When ragas is not installed.
    """

    def __init__(
        self,
        llm: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        *,
        non_llm: bool = True,
    ) -> None:
        import_ragas()
        self.llm = llm
        self.embeddings = embeddings
        self.non_llm = non_llm
        self._metrics: list[Any] | None = None

    def metrics(self) -> list[Any]:
        """The ragas metric objects in use."""
        if self._metrics is not None:
            return self._metrics
        from ragas.metrics import (
            NonLLMContextPrecisionWithReference,
            NonLLMContextRecall,
            NonLLMStringSimilarity,
            RougeScore,
        )

        metrics: list[Any] = []
        if self.non_llm:
            metrics += [
                NonLLMContextPrecisionWithReference(),
                NonLLMContextRecall(),
                NonLLMStringSimilarity(),
                RougeScore(rouge_type="rougeL", mode="fmeasure"),
            ]
        if self.llm is not None:
            from ragas.llms import LangchainLLMWrapper
            from ragas.metrics import Faithfulness, LLMContextPrecisionWithReference

            wrapped = LangchainLLMWrapper(self.llm)
            metrics += [Faithfulness(llm=wrapped), LLMContextPrecisionWithReference(llm=wrapped)]
            if self.embeddings is not None:
                from ragas.embeddings import LangchainEmbeddingsWrapper
                from ragas.metrics import ResponseRelevancy

                metrics.append(
                    ResponseRelevancy(
                        llm=wrapped, embeddings=LangchainEmbeddingsWrapper(self.embeddings)
                    )
                )
        if not metrics:
            raise ConfigError("RagasScorer has no metric: keep non_llm=True or pass llm=...")
        self._metrics = metrics
        return metrics

    def score_sample(
        self, query: str, response: str, contexts: Sequence[str], reference: str
    ) -> dict[str, float]:
        """Every metric on one highlight (``nan`` scores are dropped)."""
        from ragas.dataset_schema import SingleTurnSample

        sample = SingleTurnSample(
            user_input=query,
            response=response,
            retrieved_contexts=list(contexts) or [""],
            reference=reference,
            reference_contexts=[reference],
        )
        out: dict[str, float] = {}
        for metric in self.metrics():
            value = float(_run(metric.single_turn_ascore(sample)))
            if not math.isnan(value):
                out[metric.name] = value
        return out

    def __call__(
        self, result: HighlightSet, expert: ExpertReview, contexts: dict[str, list[str]]
    ) -> dict[str, float]:
        """Mean of each metric over the entity's highlights that have an expert sentence."""
        sums: dict[str, list[float]] = {}
        for highlight in result.highlights:
            side = highlight.polarity.value
            other = "cons" if side == "pros" else "pros"
            reference = getattr(expert, side).get(highlight.query) or getattr(expert, other).get(
                highlight.query
            )
            if not reference:
                continue
            scores = self.score_sample(
                highlight.query, highlight.text, contexts.get(highlight.query, []), reference
            )
            for name, value in scores.items():
                sums.setdefault(name, []).append(value)
        return {name: sum(values) / len(values) for name, values in sums.items()}
