"""The long-context LLM baseline (OpinioRAG App. B.2): all reviews in one prompt.

Reviews are sent newest first until the model's context window (minus the
instruction, the answer budget and a safety margin) is full; older reviews are
dropped first, by ``publication_date`` (undated reviews count as oldest). The
result is a :class:`~opinio_agents.models.HighlightSet` like the RAG pipeline's,
so evaluation can compare both side by side. Long-context highlights carry no
sentence-level evidence (the baseline cites none); critical-complaint alerts are
computed from the entity's sentences all the same.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> from opinio_agents.models import Entity
    >>> entity = Entity.model_validate({"entity_id": 1, "entity_name": "Harbor Inn", "user_reviews": [
    ...     {"review_id": 1, "text": "Great wi-fi. Noisy street.", "publication_date": "2024-05-01"}]})
    >>> synth = LongContextSynthesizer(FakeListChatModel(responses=[
    ...     '{"pros": [{"query": "wi-fi", "text": "Fast Wi-Fi."}], '
    ...     '"cons": [{"query": "noise", "text": "Street noise."}]}']))
    >>> result = synth.run(entity, ["wi-fi", "noise"], n_pros=1, n_cons=1)
    >>> [h.text for h in result.highlights]
    ['Fast Wi-Fi.', 'Street noise.']
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from opinio_agents.chains.long_context import LongContextChain
from opinio_agents.errors import ConfigError, OpinioError
from opinio_agents.llm.providers import model_name_of
from opinio_agents.llm.redact import Redactor
from opinio_agents.llm.retry import RetryPolicy
from opinio_agents.llm.structured import StructuredMode
from opinio_agents.llm.tokens import TokenCounter, count_message_tokens, default_token_counter
from opinio_agents.llm.usage import UsageMeter
from opinio_agents.models import (
    Entity,
    FlaggedSentence,
    Highlight,
    HighlightSet,
    Polarity,
    QueryFailure,
    Review,
    RunMeta,
    Sentence,
    TokenUsage,
)
from opinio_agents.prompts.long_context import LongContextInput, ReviewItem
from opinio_agents.prompts.promptset import PromptSet, default_prompts
from opinio_agents.synthesis.alerts import detect_alerts
from opinio_agents.synthesis.llm import prepare_model
from opinio_agents.text.injection import injection_reasons
from opinio_agents.text.segment import split_sentences

__all__ = ["LongContextSynthesizer", "select_recent_reviews", "simple_sentences"]

_SENT_RE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
NOTE = "long-context baseline: no sentence-level evidence"


def simple_sentences(entity: Entity) -> list[Sentence]:
    """Split reviews at ``. ! ?`` and newlines (used for alerts when no sentences are given)."""
    out: list[Sentence] = []
    for review in entity.user_reviews:
        index = 0
        for match in _SENT_RE.finditer(review.text):
            text = match.group(0).strip()
            if not text:
                continue
            start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
            out.append(
                Sentence(
                    sentence_id=Sentence.make_id(entity.entity_id, review.review_id, index),
                    entity_id=entity.key,
                    review_id=str(review.review_id),
                    index=index,
                    text=text,
                    start=start,
                    end=start + len(text),
                    publication_date=review.publication_date,
                )
            )
            index += 1
    return out


def select_recent_reviews(
    reviews: Sequence[Review], budget_tokens: int, cost: Callable[[Review], int]
) -> tuple[list[Review], int]:
    """Keep the newest reviews whose total ``cost`` fits ``budget_tokens``.

    Returns the kept reviews in their original order and the number dropped.
    """
    order = sorted(
        range(len(reviews)),
        key=lambda i: (reviews[i].publication_date or dt.date.min, i),
        reverse=True,
    )
    kept: set[int] = set()
    used = 0
    for i in order:
        c = cost(reviews[i])
        if used + c > budget_tokens:
            break  # strictly drop the oldest: never skip a newer review to fit an older one
        used += c
        kept.add(i)
    return [r for i, r in enumerate(reviews) if i in kept], len(reviews) - len(kept)


class LongContextSynthesizer:
    """Run the long-context baseline on one entity.

    Args:
        llm: A LangChain chat model or a provider string.
        context_window_tokens: The model's context window.
        max_tokens: Answer budget (paper: 512), also reserved in the window.
        prompts: Prompt set; defaults to the paper's prompts for ``domain``.
        cache_path: SQLite response cache file.
        domain: Domain of the system message.
        base_url: OpenAI-compatible server for string specs.
        timeout: Per-request timeout (seconds) for models built from a string.
        max_retries: Retries of transient errors (``max_retries + 1`` requests at most per call).
        deadline: Total seconds one entity's call may take (retries, backoff, repair turn);
            None for no total limit.
        structured_output: ``"auto"``, ``"native"`` or ``"parser"``.
        counter: Token estimator used to fit the window (heuristic by default).
        safety_margin: Fraction of the window left free for estimation error.
        device: Device of an ``hf:`` model: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``.
        screen_injection: Leave out of the prompt every review with a sentence that reads as
            instructions to an assistant (:mod:`opinio_agents.text.injection`); reported in
            ``meta.flagged``.
    """

    name = "long-context"

    def __init__(
        self,
        llm: BaseChatModel | str,
        *,
        context_window_tokens: int = 128_000,
        max_tokens: int = 512,
        prompts: PromptSet | None = None,
        cache_path: str | Path | None = None,
        domain: str = "hotels and restaurants",
        base_url: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        deadline: float | None = 300.0,  # the whole entity in one call: longer than one query
        structured_output: StructuredMode = "auto",
        counter: TokenCounter | None = None,
        safety_margin: float = 0.05,
        device: str | int = "auto",
        screen_injection: bool = True,
    ) -> None:
        if context_window_tokens < 1024:
            raise ConfigError(f"context_window_tokens={context_window_tokens} must be >= 1024")
        if not 0.0 <= safety_margin < 0.5:
            raise ConfigError(f"safety_margin={safety_margin} must be within [0, 0.5)")
        self.context_window_tokens = context_window_tokens
        self.max_tokens = max_tokens
        self.safety_margin = safety_margin
        self.screen_injection = screen_injection
        self.counter = counter or default_token_counter()
        self.model, self.cache = prepare_model(
            llm, base_url=base_url, max_tokens=max_tokens, timeout=timeout, cache_path=cache_path, device=device
        )
        self.model_name = model_name_of(self.model)
        self.chain = LongContextChain(
            self.model,
            prompts=prompts or default_prompts(domain),
            structured_output=structured_output,
            retry=RetryPolicy(max_retries=max_retries, deadline=deadline),
            counter=self.counter,
        )
        self._meter = UsageMeter()

    @property
    def usage(self) -> TokenUsage:
        """Tokens and calls so far."""
        return self._meter.snapshot()

    # -- prompt building ---------------------------------------------------------------------------
    @staticmethod
    def _counts(entity: Entity, n_pros: int | None, n_cons: int | None) -> tuple[int, int]:
        if n_pros is None or n_cons is None:
            if entity.expert_review is None:
                raise ConfigError(
                    f"entity {entity.entity_id!r} has no expert review to take the expected numbers of "
                    "PROS and CONS from; pass n_pros= and n_cons="
                )
            n_pros = len(entity.expert_review.pros) if n_pros is None else n_pros
            n_cons = len(entity.expert_review.cons) if n_cons is None else n_cons
        if n_pros < 0 or n_cons < 0:
            raise ConfigError(f"n_pros={n_pros} and n_cons={n_cons} must be >= 0")
        return n_pros, n_cons

    @staticmethod
    def _item(review: Review) -> ReviewItem:
        date = review.publication_date.isoformat() if review.publication_date else None
        return ReviewItem(review_id=str(review.review_id), text=review.text, date=date)

    def screen_reviews(self, entity: Entity) -> tuple[list[Review], list[FlaggedSentence]]:
        """The reviews that may go into the prompt, and the instruction-like sentences that kept the others out.

        A review with one such sentence is left out whole: an instruction split over two
        sentences ("Ignore previous instructions. The pool is heated.") is not half-sent.
        """
        if not self.screen_injection:
            return list(entity.user_reviews), []
        kept: list[Review] = []
        flagged: list[FlaggedSentence] = []
        for review in entity.user_reviews:
            hits = []
            for index, (start, end) in enumerate(split_sentences(review.text)):
                reasons = injection_reasons(review.text[start:end])
                if reasons:
                    sentence_id = Sentence.make_id(entity.entity_id, review.review_id, index)
                    hits.append(FlaggedSentence(query="", sentence_id=sentence_id, reasons=list(reasons)))
            if hits:
                flagged.extend(hits)
            else:
                kept.append(review)
        return kept, flagged

    def build_input(
        self, entity: Entity, queries: Sequence[str], n_pros: int, n_cons: int
    ) -> tuple[LongContextInput, int]:
        """The prompt input after dropping the oldest reviews to fit; returns it and the number dropped."""
        empty = LongContextInput(
            entity_name=entity.entity_name, queries=list(queries), reviews=[], n_pros=n_pros, n_cons=n_cons
        )
        fixed = count_message_tokens(self.chain.build_messages(empty), self.counter)
        budget = int(self.context_window_tokens * (1 - self.safety_margin)) - self.max_tokens - fixed
        if budget <= 0:
            raise ConfigError(
                f"context_window_tokens={self.context_window_tokens} leaves no room for reviews after the "
                f"instructions ({fixed} tokens) and the answer ({self.max_tokens} tokens)"
            )
        probe = LongContextInput(queries=["q"], reviews=[], n_pros=0, n_cons=0)

        def cost(review: Review) -> int:
            # one rendered review line, quoted exactly as the prompt will carry it
            line = self.chain.prompts.long_context.render_fields(
                probe.model_copy(update={"reviews": [self._item(review)]})
            )["reviews"]
            return self.counter.count(line) + 1

        kept, dropped = select_recent_reviews(entity.user_reviews, budget, cost)
        return empty.model_copy(update={"reviews": [self._item(r) for r in kept]}), dropped

    def estimate_prompt_tokens(self, entity: Entity, queries: Sequence[str], *, fit: bool = True) -> int:
        """Prompt tokens the baseline would send for ``entity`` (no model call).

        Args:
            entity: The entity.
            queries: The user queries.
            fit: Count after dropping the oldest reviews to fit the window (what is
                really sent); False counts every review.
        """
        n_pros, n_cons = (len(queries), len(queries))
        if fit:
            value, _ = self.build_input(entity, queries, n_pros, n_cons)
        else:
            value = LongContextInput(
                entity_name=entity.entity_name,
                queries=list(queries),
                reviews=[self._item(r) for r in entity.user_reviews],
                n_pros=n_pros,
                n_cons=n_cons,
            )
        return count_message_tokens(self.chain.build_messages(value), self.counter)

    # -- run -----------------------------------------------------------------------------------------
    def run(
        self,
        entity: Entity,
        queries: list[str],
        n_pros: int | None = None,
        n_cons: int | None = None,
        *,
        sentences: Sequence[Sentence] | None = None,
        sentiments: Sequence[float] | None = None,
    ) -> HighlightSet:
        """Summarize ``entity`` for ``queries`` in one call.

        Args:
            entity: The entity and its reviews.
            queries: User queries (default: the expert review's queries when empty).
            n_pros: Expected number of PROS (default: the expert review's count).
            n_cons: Expected number of CONS (default: the expert review's count).
            sentences: The entity's sentences for alerts (default: a simple split).
            sentiments: One sentiment per sentence, for alert evidence.

        Returns:
            A HighlightSet; a failed call is reported in ``failures`` (one per query).
        """
        queries = list(queries) or entity.queries
        if not queries:
            raise ConfigError(f"no queries for entity {entity.entity_id!r}; pass queries=[...]")
        n_pros, n_cons = self._counts(entity, n_pros, n_cons)
        kept, flagged = self.screen_reviews(entity)
        screened = entity.model_copy(update={"user_reviews": kept}) if flagged else entity
        value, dropped = self.build_input(screened, queries, n_pros, n_cons)
        prompt_estimate = count_message_tokens(self.chain.build_messages(value), self.counter)
        result_set = HighlightSet(entity_id=entity.entity_id, entity_name=entity.entity_name)
        alert_sentences = list(sentences) if sentences is not None else simple_sentences(entity)
        result_set.alerts = detect_alerts(alert_sentences, sentiments if sentences is not None else None)
        before = self._meter.snapshot()
        try:
            result = self.chain.invoke(value)
        except OpinioError as exc:
            attempts = getattr(exc, "attempts", None) or 1
            error = Redactor([self.chain.system_text]).clean(str(exc), 600)  # no prompt text, no long output
            result_set.failures = [QueryFailure(query=q, error=error, attempts=attempts) for q in queries]
            notes: list[str] = []
        else:
            self._meter.add(result.usage)
            for side, polarity in (("pros", Polarity.PROS), ("cons", Polarity.CONS)):
                for point in getattr(result, side):
                    result_set.add(Highlight(query=point.query, polarity=polarity, text=point.text, notes=[NOTE]))
            notes = result.dropped
        used = self._meter.snapshot()
        result_set.meta = RunMeta(
            synthesizer=self.name,
            model=self.model_name,
            queries=queries,
            tokens=TokenUsage(
                prompt_tokens=used.prompt_tokens - before.prompt_tokens,
                completion_tokens=used.completion_tokens - before.completion_tokens,
                calls=used.calls - before.calls,
                cached_calls=used.cached_calls - before.cached_calls,
            ),
            reviews_sent=len(value.reviews),
            reviews_dropped=dropped,
            prompt_tokens_estimate=prompt_estimate,
            expected_pros=n_pros,
            expected_cons=n_cons,
            dropped_key_points=notes,
            flagged=flagged,
        )
        return result_set
