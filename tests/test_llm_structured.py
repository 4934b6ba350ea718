"""The one structured-output layer: modes, candidates, the single repair turn, errors, and tracing."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from llm_fixtures import ScriptedChatModel, ToolCallingFake, answer, make_item, tool_message
from pydantic import BaseModel, Field

from opinio_agents.chains import HighlightChain, LongContextChain
from opinio_agents.errors import ConfigError, LLMOutputError
from opinio_agents.llm import (
    STRUCTURED_MODES,
    OutputInvalid,
    RetryPolicy,
    StructuredChat,
    astructured_call,
    native_support,
    structured_call,
)
from opinio_agents.prompts import LongContextInput, ReviewItem
from opinio_agents.synthesis.llm import LLMSynthesizer

FAST = RetryPolicy(max_retries=1, base_delay=0.0)
GOOD = answer(("PROS", "Fast, free Wi-Fi in every room.", ["S1", "S2"]))


class Verdict(BaseModel):
    label: str = Field(min_length=1)
    score: int = Field(ge=1, le=5)


PROMPT = [HumanMessage("Rate it.")]


class Recorder(BaseCallbackHandler):
    """Records chain and chat-model starts with their tags and parents."""

    def __init__(self) -> None:
        self.chains: list[tuple[str, list[str], UUID, UUID | None]] = []
        self.chat_models: list[tuple[list[str], UUID | None]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                       tags: list[str] | None = None, **kwargs: Any) -> None:
        self.chains.append((str(kwargs.get("name") or (serialized or {}).get("name")), list(tags or []), run_id,
                            parent_run_id))

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                            tags: list[str] | None = None, **kwargs: Any) -> None:
        self.chat_models.append((list(tags or []), parent_run_id))

    def names(self) -> list[str]:
        return [name for name, *_ in self.chains]


def test_mode_names_are_one_set() -> None:
    assert STRUCTURED_MODES == ("auto", "native", "parser")
    for build in (
        lambda m: StructuredChat(FakeListChatModel(responses=["x"]), Verdict, mode=m),
        lambda m: HighlightChain(FakeListChatModel(responses=["x"]), structured_output=m),
        lambda m: LongContextChain(FakeListChatModel(responses=["x"]), structured_output=m),
    ):
        with pytest.raises(ConfigError, match="'auto', 'native', 'parser'"):
            build("always")


def test_parser_mode_first_answer_used_without_repair() -> None:
    model = ScriptedChatModel(respond=['Sure: {"label": "good", "score": 4}'])
    result = structured_call(model, PROMPT, Verdict, retry=FAST)
    assert (result.value.label, result.value.score, result.repaired, result.attempts) == ("good", 4, False, 1)
    assert result.mode == "parser" and result.usage.calls == 1 and len(model.calls) == 1


def test_exactly_one_repair_turn_and_the_error_carries_everything() -> None:
    model = ScriptedChatModel(respond=["no idea", '{"label": "", "score": 9}', "never reached"])
    with pytest.raises(LLMOutputError) as info:
        structured_call(model, PROMPT, Verdict, retry=FAST, what="verdict")
    err = info.value
    assert len(model.calls) == 2  # the answer and one repair, never a third call
    assert err.outputs == ["no idea", '{"label": "", "score": 9}'] and err.raw_output == err.outputs[-1]
    assert err.errors[0] == "no JSON object was found in the answer" and "schema" in err.errors[1]
    assert err.attempts == 2 and err.usage.calls == 2
    assert str(err).startswith("verdict: could not parse a valid answer after one repair turn")
    repair = model.calls[1]
    assert repair[-2].content == "no idea" and "could not be used" in str(repair[-1].content)


def test_validate_and_text_fallback() -> None:
    def strict(value: Verdict) -> str:
        if value.label == "bad":
            raise OutputInvalid("label must not be 'bad'")
        return value.label.upper()

    model = ScriptedChatModel(respond=['{"label": "bad", "score": 2}', '{"label": "fine", "score": 2}'])
    result = structured_call(model, PROMPT, Verdict, validate=strict, retry=FAST)
    assert result.value == "FINE" and result.repaired and result.errors == ["label must not be 'bad'"]
    plain = ScriptedChatModel(respond=["Excellent"])
    fallback = structured_call(plain, PROMPT, Verdict, text_fallback=lambda t: {"label": t.strip(), "score": 5})
    assert fallback.value.label == "Excellent" and not fallback.repaired


def test_native_support_detection() -> None:
    assert native_support(FakeListChatModel(responses=["x"])) is False
    assert native_support(ToolCallingFake(messages=iter([]))) is None
    with pytest.raises(ConfigError, match="parser"):
        StructuredChat(FakeListChatModel(responses=["x"]), Verdict, mode="native")
    auto = StructuredChat(FakeListChatModel(responses=["x"]), Verdict)
    assert auto.active_mode == "parser"


def test_native_tool_call_answer() -> None:
    model = ToolCallingFake(messages=iter([tool_message("Verdict", {"label": "ok", "score": 3})]))
    result = StructuredChat(model, Verdict, retry=FAST).invoke(PROMPT)
    assert result.mode == "native" and result.value.score == 3


def test_native_not_implemented_at_call_time_turns_auto_to_parser() -> None:
    class NoNativeAtRuntime(ScriptedChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            def refuse(_: Any) -> Any:
                raise NotImplementedError("no response_format here")

            from langchain_core.runnables import RunnableLambda

            return RunnableLambda(refuse)

    model = NoNativeAtRuntime(respond=['{"label": "ok", "score": 1}'])
    chat = StructuredChat(model, Verdict, retry=FAST)
    assert chat.active_mode == "native"
    assert chat.invoke(PROMPT).value.label == "ok"
    assert chat.active_mode == "parser"


def test_async_batch_and_runnable_inputs() -> None:
    chat = StructuredChat(FakeListChatModel(responses=['{"label": "a", "score": 1}'] * 4), Verdict)
    assert chat.invoke("plain string prompt").value.label == "a"
    assert [r.value.score for r in chat.batch([PROMPT, PROMPT], {"max_concurrency": 2})] == [1, 1]
    result = asyncio.run(astructured_call(FakeListChatModel(responses=['{"label": "z", "score": 5}']), PROMPT, Verdict))
    assert result.value.label == "z"
    with pytest.raises(ConfigError, match="chat messages"):
        chat.invoke(42)  # type: ignore[arg-type]


def test_highlight_chain_run_and_inner_chat_model_call_are_traced_with_tags() -> None:
    recorder = Recorder()
    chain = HighlightChain(ScriptedChatModel(respond=[GOOD]), retry=FAST)
    chain.invoke(make_item(), {"callbacks": [recorder], "tags": ["audit-7"], "metadata": {"entity": "7"}})
    assert recorder.names()[:2] == ["HighlightChain", "StructuredChat"]
    (name, tags, chain_run, parent) = recorder.chains[0]
    assert parent is None and "audit-7" in tags
    structured_run = recorder.chains[1][2]
    assert recorder.chains[1][3] == chain_run  # StructuredChat is a child of the chain run
    [(model_tags, model_parent)] = recorder.chat_models
    assert "audit-7" in model_tags and model_parent == structured_run


def test_repair_turn_and_async_calls_are_traced_too() -> None:
    recorder = Recorder()
    chain = HighlightChain(ScriptedChatModel(respond=["not json", GOOD]), retry=FAST)
    asyncio.run(chain.ainvoke(make_item(), {"callbacks": [recorder], "tags": ["t-async"]}))
    assert recorder.names()[0] == "HighlightChain"
    assert len(recorder.chat_models) == 2 and all("t-async" in tags for tags, _ in recorder.chat_models)


def test_long_context_chain_and_synthesizer_config_reach_the_model() -> None:
    recorder = Recorder()
    text = '{"pros": [{"query": "wi-fi", "text": "Fast Wi-Fi."}], "cons": []}'
    chain = LongContextChain(ScriptedChatModel(respond=[text]), retry=FAST)
    value = LongContextInput(queries=["wi-fi"], reviews=[ReviewItem(review_id="1", text="x")], n_pros=1, n_cons=0)
    chain.invoke(value, {"callbacks": [recorder], "tags": ["lc"]})
    assert recorder.names()[0] == "LongContextChain" and recorder.chat_models[0][0] == ["lc"]
    recorder = Recorder()
    synth = LLMSynthesizer(ScriptedChatModel(respond=[GOOD]), retry=FAST, max_concurrency=2,
                           config={"callbacks": [recorder], "tags": ["batch-run"]})
    outcomes = list(synth.synthesize_many([make_item("wi-fi"), make_item("internet")]))
    assert len(outcomes) == 2 and not any(o.failure for o in outcomes)
    assert recorder.names().count("HighlightChain") == 2
    assert len(recorder.chat_models) == 2 and all("batch-run" in tags for tags, _ in recorder.chat_models)
