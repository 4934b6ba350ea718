"""The per-query highlight chain: (query, evidence) -> validated, cited Highlights.

A LangChain :class:`~langchain_core.runnables.RunnableSerializable` (``invoke``,
``batch``, ``stream``, ``ainvoke``, ``abatch``, ``batch_as_completed``): every call
runs through LangChain's run machinery, so callbacks, tags, metadata and LangSmith
traces see the chain run and the chat-model calls inside it. The model is asked
through :class:`~opinio_agents.llm.structured.StructuredChat` (native JSON schema
or the App. B.5 text fallback, one repair turn). Input: a
:class:`~opinio_agents.synthesis.base.QueryEvidence` or a dict with ``query``,
``evidence`` (Evidence objects or dicts) and optional ``support`` /
``entity_name``. Output: :class:`HighlightResult`.

Guarantees on the output:

* every highlight cites at least one evidence sentence, and only sentences that
  were in the input (labels the model invents are rejected, never passed through);
* at most one PROS and one CONS highlight; text non-empty and at most
  ``max_text_chars`` characters;
* a highlight that repeats the prompt's own wording is rejected (no prompt leak);
* evidence sentences that read as instructions to an assistant
  (:func:`~opinio_agents.text.injection.injection_reasons`) never reach the prompt: they
  are listed in ``HighlightResult.withheld`` instead (``screen_injection=False`` to turn
  this off);
* the model's side (PROS/CONS) is cross-checked with the majority sentiment of the
  cited evidence: ``evidence_polarity``, ``polarity_agrees`` and a note on
  disagreement.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> from opinio_agents.models import Evidence
    >>> model = FakeListChatModel(responses=[
    ...     '{"highlights": [{"polarity": "PROS", "text": "Fast, free Wi-Fi.", "sentence_ids": ["S1"]}]}'])
    >>> chain = HighlightChain(model)
    >>> result = chain.invoke({"query": "wi-fi", "evidence": [
    ...     Evidence(sentence_id="1:7:0", text="The wifi was fast and free.", sentiment=0.7)]})
    >>> result.highlights[0].sentence_ids, result.highlights[0].polarity_agrees
    (['1:7:0'], True)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field, PrivateAttr

from opinio_agents.chains.base import ChainPlan, StructuredChatChain
from opinio_agents.errors import ConfigError
from opinio_agents.llm.redact import Redactor, escape_snippet
from opinio_agents.llm.retry import RetryPolicy
from opinio_agents.llm.structured import OutputInvalid, StructuredChat, StructuredMode, StructuredResult
from opinio_agents.llm.tokens import TokenCounter
from opinio_agents.models import Evidence, Highlight, Polarity, QueryEvidence, Support, TokenUsage
from opinio_agents.prompts.highlight import EvidenceItem, HighlightOutput, at_least_one, cited_labels_schema
from opinio_agents.prompts.promptset import PromptSet
from opinio_agents.text.injection import partition_instruction_like
from opinio_agents.text.polarity import evidence_polarity

__all__ = [
    "HighlightChain",
    "HighlightResult",
    "HIGHLIGHT_REPAIR_INSTRUCTION",
    "evidence_polarity",
    "label_for",
]

#: The repair turn of the highlight chain (the generic one plus the citation rule).
HIGHLIGHT_REPAIR_INSTRUCTION = (
    "Your previous answer could not be used: {error}\n"
    "Answer again with JSON only, in exactly the requested format, citing only labels that "
    "appear in the evidence block. Do not add any other text."
)

_LABEL_RE = re.compile(r"^\[?\s*[sS]\s*(\d+)\s*\]?$")
_WORD_RE = re.compile(r"[a-z0-9]+")
#: A highlight must hold a word of three or more letters outside markup (small models write "<em>" or "S1").
_PHRASE_WORD_RE = re.compile(r"[^\W\d_]{3,}")
_MARKUP_RE = re.compile(r"<[^<>]*>")


def label_for(index: int) -> str:
    """The prompt label of the ``index``-th (0-based) evidence sentence: ``S1``, ``S2``, ..."""
    return f"S{index + 1}"


class HighlightResult(BaseModel):
    """What the chain returns for one query."""

    query: str
    highlights: list[Highlight] = Field(default_factory=list)
    attempts: int = 1
    repaired: bool = False
    mode: str = "parser"
    usage: TokenUsage = Field(default_factory=TokenUsage)
    rejected_ids: list[str] = Field(default_factory=list, description="Cited ids not in the evidence (dropped).")
    withheld: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Evidence kept out of the prompt as instruction-like: sentence id -> the rules it tripped.",
    )
    raw_output: str = ""


def _shingles(text: str, size: int) -> set[tuple[str, ...]]:
    words = _WORD_RE.findall(text.lower())
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:-") + "\u2026"


def _coerce_item(value: Any) -> QueryEvidence:
    if isinstance(value, QueryEvidence):
        return value
    if isinstance(value, Mapping):
        if "query" not in value:
            raise ConfigError("highlight chain input needs a 'query' key")
        evidence = [e if isinstance(e, Evidence) else Evidence.model_validate(e) for e in value.get("evidence", [])]
        support = value.get("support") or Support()
        if not isinstance(support, Support):
            support = Support.model_validate(support)
        return QueryEvidence(
            query=str(value["query"]), evidence=evidence, support=support, entity_name=str(value.get("entity_name", ""))
        )
    raise ConfigError(
        "highlight chain input must be a QueryEvidence or a dict with 'query' and 'evidence', "
        f"got {type(value).__name__}"
    )


class _Context:
    """Per-call state: label map and rejected ids.

    ``labels`` gives the prompt label of each evidence sentence (default ``S1``, ``S2``, ...
    in order; the per-entity prompt labels sentences over the whole entity).
    """

    def __init__(self, item: QueryEvidence, labels: list[str] | None = None) -> None:
        self.item = item
        self.by_label: dict[str, Evidence] = {}
        self.by_id: dict[str, Evidence] = {}
        for index, ev in enumerate(item.evidence):
            self.by_label[labels[index] if labels is not None else label_for(index)] = ev
            self.by_id[ev.sentence_id] = ev
        self.rejected: list[str] = []

    def describe_labels(self) -> str:
        """The valid labels, for error messages (``S1..S5``, or a list when they are not consecutive)."""
        labels = list(self.by_label)
        if labels == [label_for(i) for i in range(len(labels))]:
            return f"S1..S{len(labels)}"
        return ", ".join(labels[:12]) + (" ..." if len(labels) > 12 else "")

    def resolve(self, ref: str) -> Evidence | None:
        ref = str(ref).strip()
        match = _LABEL_RE.match(ref)
        if match:
            return self.by_label.get(f"S{int(match.group(1))}")
        return self.by_id.get(ref)


class HighlightChain(StructuredChatChain[Any, HighlightResult]):
    """(query, evidence sentences) -> :class:`HighlightResult`.

    Args:
        model: A LangChain chat model (see :func:`opinio_agents.llm.resolve_chat_model`).
        prompts: Prompt set (system message, highlight prompt); defaults to the paper's.
        domain: Domain of the default system message.
        structured_output: ``"auto"`` (native when available), ``"native"`` or ``"parser"``.
        retry: Retry policy for transient errors (429, 5xx, timeouts).
        max_text_chars: Upper bound on a highlight's text (longer text is cut at a word).
        max_evidence_chars: Upper bound on one evidence sentence in the prompt.
        counter: Token estimator for responses without usage metadata.
        screen_injection: Keep instruction-like evidence sentences out of the prompt.
    """

    max_evidence_chars: int = 600
    screen_injection: bool = True

    _secret_shingles: set[tuple[str, ...]] = PrivateAttr(default_factory=set)
    _system_text: str = PrivateAttr(default="")
    _redactor: Redactor = PrivateAttr(default_factory=Redactor)

    def __init__(
        self,
        model: BaseChatModel,
        *,
        prompts: PromptSet | None = None,
        domain: str = "hotels and restaurants",
        structured_output: StructuredMode = "auto",
        retry: RetryPolicy | None = None,
        max_text_chars: int = 300,
        max_evidence_chars: int = 600,
        counter: TokenCounter | None = None,
        screen_injection: bool = True,
        **kwargs: Any,
    ) -> None:
        fields = self.settings(
            model,
            prompts=prompts,
            domain=domain,
            structured_output=structured_output,
            retry=retry,
            counter=counter,
            max_text_chars=max_text_chars,
            max_evidence_chars=max_evidence_chars,
        )
        fields["screen_injection"] = screen_injection
        super().__init__(**fields, **kwargs)
        self._bind()  # outside pydantic validation, so a ConfigError stays a ConfigError

    def _bind(self) -> None:
        """Render the system message and bind the structured caller."""
        self._system_text = self.prompts.system.render()
        secret_text = " ".join(
            [
                self.prompts.system.template,
                self.prompts.system.data_rules,
                self.prompts.highlight.static_instruction,
                self.prompts.highlight.instruction,
            ]
        )
        self._secret_shingles = _shingles(secret_text, 6)
        full_system = self.prompts.highlight.system_text(self._system_text)
        self._redactor = Redactor([full_system, secret_text])
        self._structured = StructuredChat(
            self.model,
            self.prompts.highlight.output_model,
            mode=self.structured_output,
            retry=self.retry,
            counter=self.counter,
            repair_instruction=HIGHLIGHT_REPAIR_INSTRUCTION,
            what="highlight",
            protected=(full_system, secret_text),
        )

    @property
    def system_text(self) -> str:
        """The system turn as sent: the system message, then the highlight task (static for every query)."""
        return self.prompts.highlight.system_text(self._system_text)

    @property
    def redactor(self) -> Redactor:
        """Withholds prompt text from error messages (see :class:`~opinio_agents.llm.redact.Redactor`)."""
        return self._redactor

    # -- prompt -----------------------------------------------------------------------------------
    def build_messages(self, item: QueryEvidence) -> list[BaseMessage]:
        """The chat messages sent for one query."""
        prompt_input = self.prompts.highlight.input_model(
            query=item.query,
            entity_name=item.entity_name,
            evidence=[EvidenceItem(id=label_for(i), text=e.text) for i, e in enumerate(item.evidence)],
            max_evidence_chars=self.max_evidence_chars,
        )
        return self.prompts.highlight.build_messages(self._system_text, prompt_input)
    # -- validation -------------------------------------------------------------------------------
    def _leaks_prompt(self, text: str) -> bool:
        return bool(_shingles(text, 6) & self._secret_shingles)

    def _validate(self, ctx: _Context, output: HighlightOutput) -> list[Highlight]:
        rejected: list[str] = []
        highlights: list[Highlight] = []
        seen_sides: set[Polarity] = set()
        extra_notes: list[str] = []
        for draft in output.highlights:
            polarity = Polarity.PROS if draft.polarity == "PROS" else Polarity.CONS
            text = " ".join(draft.text.split())
            if not text:
                raise OutputInvalid("a highlight has empty text")
            if not _PHRASE_WORD_RE.search(_MARKUP_RE.sub(" ", text)):
                raise OutputInvalid(
                    f"highlight {self._redactor.snippet(text, 40)} says nothing: write a short phrase about the query"
                )
            if self._leaks_prompt(text):
                raise OutputInvalid("a highlight repeats the instructions instead of summarizing the evidence")
            cited: list[Evidence] = []
            for ref in draft.sentence_ids:
                ev = ctx.resolve(ref)
                if ev is None:
                    rejected.append(str(ref)[:80])
                elif all(ev.sentence_id != c.sentence_id for c in cited):
                    cited.append(ev)
            if not cited:
                cited_refs = ", ".join(escape_snippet(str(r), 20) for r in list(draft.sentence_ids)[:5])
                raise OutputInvalid(
                    f"highlight {self._redactor.snippet(text, 60)} cites no sentence of the evidence block "
                    f"(cited {cited_refs}; valid labels are {ctx.describe_labels()})"
                )
            if polarity in seen_sides:
                extra_notes.append(
                    f"dropped a second {polarity.value} highlight: {self._redactor.snippet(text, 80)}"
                )
                continue
            seen_sides.add(polarity)
            notes: list[str] = []
            if len(text) > self.max_text_chars:
                text = _truncate(text, self.max_text_chars)
                notes.append(f"text cut to {self.max_text_chars} characters")
            leaning = evidence_polarity(cited)
            agrees = None if leaning is None else leaning is polarity
            if agrees is False:
                scores = [e.sentiment for e in cited if e.sentiment is not None]
                mean = sum(scores) / len(scores)
                notes.append(
                    f"model chose {polarity.value} but the cited evidence leans {leaning.value} "  # type: ignore[union-attr]
                    f"(mean sentiment {mean:+.2f})"
                )
            highlights.append(
                Highlight(
                    query=ctx.item.query,
                    polarity=polarity,
                    text=text,
                    evidence=[e.model_copy() for e in cited],
                    support=ctx.item.support.model_copy(),
                    evidence_polarity=leaning,
                    polarity_agrees=agrees,
                    notes=notes,
                )
            )
        if rejected:
            note = f"rejected citation(s) not in the retrieved evidence: {rejected[:10]}"
            for h in highlights:
                h.notes.append(note)
        if extra_notes and highlights:
            highlights[-1].notes.extend(extra_notes)
        ctx.rejected = rejected
        return highlights

    # -- Runnable ---------------------------------------------------------------------------------
    def screen(self, item: QueryEvidence) -> tuple[QueryEvidence, dict[str, list[str]]]:
        """``item`` without its instruction-like evidence, and what was withheld (id -> reasons)."""
        if not self.screen_injection:
            return item, {}
        kept, flagged = partition_instruction_like(range(len(item.evidence)), lambda i: item.evidence[i].text)
        if not flagged:
            return item, {}
        vectors = item.vectors[kept] if item.vectors is not None else None
        screened = dataclasses.replace(item, evidence=[item.evidence[i] for i in kept], vectors=vectors)
        return screened, {item.evidence[i].sentence_id: list(r) for i, r in flagged}

    def _prepare(self, value: Any) -> tuple[_Context, list[BaseMessage] | None, dict[str, list[str]]]:
        item = _coerce_item(value)
        if not item.query.strip():
            raise ConfigError("query must not be empty")
        item, withheld = self.screen(item)
        if not item.evidence:
            return _Context(item), None, withheld
        return _Context(item), self.build_messages(item), withheld

    def _empty(self, ctx: _Context, withheld: dict[str, list[str]]) -> HighlightResult:
        return HighlightResult(query=ctx.item.query, attempts=0, mode=self.mode, withheld=withheld)

    @staticmethod
    def _result(ctx: _Context, result: StructuredResult[Any], withheld: dict[str, list[str]]) -> HighlightResult:
        return HighlightResult(
            withheld=withheld,
            query=ctx.item.query,
            highlights=result.value,
            attempts=result.attempts,
            repaired=result.repaired,
            mode=result.mode,
            usage=result.usage,
            rejected_ids=ctx.rejected,
            raw_output=result.raw_output[:4000],
        )

    def _plan(self, value: Any) -> ChainPlan[HighlightResult]:
        ctx, messages, withheld = self._prepare(value)

        def finish(result: StructuredResult[Any] | None) -> HighlightResult:
            return self._empty(ctx, withheld) if result is None else self._result(ctx, result, withheld)

        schema = None
        if messages is not None and ctx.by_label:
            schema = cited_labels_schema(self._structured.output_model.model_json_schema(), list(ctx.by_label))
            at_least_one(schema, "highlights")
        return ChainPlan(messages, validate=lambda out: self._validate(ctx, out), finish=finish, schema=schema)
