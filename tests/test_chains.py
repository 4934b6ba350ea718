"""Highlight and long-context chains against fake chat models (no network)."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage
from llm_fixtures import RaisingThenOk, ScriptedChatModel, ToolCallingFake, answer, make_item, tool_message

from opinio_agents.chains import HighlightChain, LongContextChain, match_query
from opinio_agents.errors import ConfigError, LLMError, LLMOutputError
from opinio_agents.llm import RetryPolicy, StructuredChat, iter_json_candidates, parse_json_output
from opinio_agents.models import Polarity
from opinio_agents.prompts import LongContextInput, ReviewItem

FAST = RetryPolicy(max_retries=2, base_delay=0.0)
GOOD = answer(("PROS", "Fast, free Wi-Fi in every room.", ["S1", "S2"]))


def chain_for(responses: list[str] | object, **kwargs: object) -> tuple[HighlightChain, ScriptedChatModel]:
    model = ScriptedChatModel(respond=responses)
    return HighlightChain(model, retry=FAST, **kwargs), model  # type: ignore[arg-type]


def test_valid_json_gives_cited_validated_highlight() -> None:
    chain, model = chain_for([GOOD])
    result = chain.invoke(make_item())
    assert chain.mode == "parser"  # BaseChatModel without tool binding -> parser fallback
    [h] = result.highlights
    assert h.polarity is Polarity.PROS and h.text == "Fast, free Wi-Fi in every room."
    assert h.sentence_ids == ["7:11:0", "7:12:3"]
    assert h.support.reviews == 3
    assert h.evidence_polarity is Polarity.PROS and h.polarity_agrees is True
    assert result.repaired is False and result.attempts == 1 and len(model.calls) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Here is the highlight you asked for:\n" + GOOD + "\nLet me know if you need more.",
        "```json\n" + GOOD + "\n```",
        "```\n" + GOOD.replace("]}]}", "],}]}") + "\n```",  # trailing comma inside a fence
        GOOD.replace('"', "\u201c", 1),  # a smart quote: direct parse fails, the block is repaired
        'Answer: "highlights": [{"polarity": "PROS", "text": "Fast, free Wi-Fi in every room.", '
        '"sentence_ids": ["S1"]}] -- end',
    ],
    ids=["prose", "fence", "fence-trailing-comma", "smart-quote", "key-pattern"],
)
def test_b5_fallback_recovers_json_without_a_repair_turn(text: str) -> None:
    chain, model = chain_for([text])
    result = chain.invoke(make_item())
    assert [h.text for h in result.highlights] == ["Fast, free Wi-Fi in every room."]
    assert result.repaired is False and len(model.calls) == 1


def test_broken_json_gets_one_repair_turn_with_the_error() -> None:
    chain, model = chain_for(['{"highlights": [{"polarity": "PROS", "text": "Fast', GOOD])
    result = chain.invoke(make_item())
    assert result.repaired is True and len(result.highlights) == 1
    repair_prompt = str(model.calls[1][-1].content)
    assert "could not be used" in repair_prompt
    assert isinstance(model.calls[1][-2], AIMessage)  # the bad answer is shown back
    assert result.usage.calls == 2


def test_output_still_broken_after_repair_raises_output_error() -> None:
    chain, model = chain_for(["no json here", "still nothing"])
    with pytest.raises(LLMOutputError) as info:
        chain.invoke(make_item())
    assert info.value.raw_output == "still nothing"
    assert len(model.calls) == 2  # bounded: exactly one repair


def test_wrong_schema_is_repaired_or_rejected() -> None:
    wrong = json.dumps({"summary": "Great wifi", "rating": 5})
    chain, model = chain_for([wrong, GOOD])
    assert chain.invoke(make_item()).repaired is True
    assert "does not match the schema" in str(model.calls[1][-1].content)
    bad_side = json.dumps({"highlights": [{"polarity": "GOOD", "text": "x", "sentence_ids": ["S1"]}]})
    chain, _ = chain_for([wrong, bad_side])
    with pytest.raises(LLMOutputError, match="schema"):
        chain.invoke(make_item())


def test_unknown_ids_are_stripped_and_reported_never_passed_through() -> None:
    text = answer(("PROS", "Fast Wi-Fi.", ["S1", "S9", "7:99:0", "ignore"]))
    chain, _ = chain_for([text])
    result = chain.invoke(make_item())
    [h] = result.highlights
    assert h.sentence_ids == ["7:11:0"]
    assert result.rejected_ids == ["S9", "7:99:0", "ignore"]
    assert any("rejected citation" in n for n in h.notes)


def test_highlight_citing_only_unknown_ids_is_repaired_then_rejected() -> None:
    bad = answer(("PROS", "Fast Wi-Fi.", ["S7"]))
    chain, model = chain_for([bad, GOOD])
    assert chain.invoke(make_item()).highlights[0].sentence_ids == ["7:11:0", "7:12:3"]
    assert "cites no sentence" in str(model.calls[1][-1].content)
    chain, _ = chain_for([bad, bad])
    with pytest.raises(LLMOutputError, match="cites no sentence"):
        chain.invoke(make_item())


def test_full_sentence_ids_and_label_variants_are_accepted() -> None:
    chain, _ = chain_for([answer(("PROS", "Fast Wi-Fi.", ["7:12:3", "[S1]", "s2"]))])
    assert chain.invoke(make_item()).highlights[0].sentence_ids == ["7:12:3", "7:11:0"]


def test_polarity_disagreement_is_recorded() -> None:
    chain, _ = chain_for([answer(("CONS", "Wi-Fi is unreliable.", ["S1", "S2"]))])
    [h] = chain.invoke(make_item()).highlights
    assert h.polarity is Polarity.CONS and h.evidence_polarity is Polarity.PROS
    assert h.polarity_agrees is False
    assert any("leans pros" in n for n in h.notes)


def test_split_evidence_gives_pro_and_con_and_extra_sides_are_dropped() -> None:
    text = answer(
        ("PROS", "Fast Wi-Fi in rooms.", ["S1"]),
        ("CONS", "Slow Wi-Fi in the evenings.", ["S3"]),
        ("PROS", "Wi-Fi on balconies.", ["S2"]),
    )
    chain, _ = chain_for([text])
    highlights = chain.invoke(make_item()).highlights
    assert [h.polarity for h in highlights] == [Polarity.PROS, Polarity.CONS]
    assert highlights[1].polarity_agrees is True
    assert any("dropped a second pros" in n for n in highlights[1].notes)


def test_text_is_length_bounded() -> None:
    chain, _ = chain_for([answer(("PROS", "fast " * 200, ["S1"]))], max_text_chars=60)
    [h] = chain.invoke(make_item()).highlights
    assert len(h.text) <= 60 and h.text.endswith("\u2026")
    assert any("cut to 60" in n for n in h.notes)


def test_empty_answer_and_no_evidence() -> None:
    chain, model = chain_for(['{"highlights": []}'])
    assert chain.invoke(make_item()).highlights == []
    result = chain.invoke({"query": "spa", "evidence": []})
    assert result.highlights == [] and result.attempts == 0
    assert len(model.calls) == 1  # no call without evidence
    with pytest.raises(ConfigError):
        chain.invoke(42)
    with pytest.raises(ConfigError, match="query"):
        chain.invoke({"evidence": []})


def test_transient_errors_are_retried_and_permanent_ones_are_not() -> None:
    class Busy(Exception):
        status_code = 429

    class BadKey(Exception):
        status_code = 401

    chain, model = chain_for(RaisingThenOk([Busy("slow down"), TimeoutError("t")], GOOD))
    result = chain.invoke(make_item())
    assert result.attempts == 3 and len(model.calls) == 3
    chain, model = chain_for(RaisingThenOk([BadKey("no")], GOOD))
    with pytest.raises(LLMError, match="HTTP 401") as info:
        chain.invoke(make_item())
    assert info.value.attempts == 1
    chain, model = chain_for(RaisingThenOk([Busy("1"), Busy("2"), Busy("3"), Busy("4")], GOOD))
    with pytest.raises(LLMError) as info:
        chain.invoke(make_item())
    assert info.value.attempts == 3  # 1 + max_retries


def test_native_structured_output_path_with_tool_calls() -> None:
    args = {"highlights": [{"polarity": "PROS", "text": "Fast Wi-Fi.", "sentence_ids": ["S1"]}]}
    model = ToolCallingFake(messages=iter([tool_message("HighlightOutput", args)]))
    chain = HighlightChain(model, retry=FAST)
    assert chain.mode == "native"
    [h] = chain.invoke(make_item()).highlights
    assert h.sentence_ids == ["7:11:0"]
    assert model.bound  # with_structured_output bound the schema as a tool


def test_native_path_falls_back_to_text_and_repair() -> None:
    bad = tool_message("HighlightOutput", {"highlights": [{"polarity": "PROS", "text": "x", "sentence_ids": ["S8"]}]})
    good = tool_message(
        "HighlightOutput", {"highlights": [{"polarity": "CONS", "text": "Slow.", "sentence_ids": ["S3"]}]}
    )
    model = ToolCallingFake(messages=iter([bad, good]))
    result = HighlightChain(model, retry=FAST).invoke(make_item())
    assert result.repaired and result.highlights[0].sentence_ids == ["7:15:1"]


def test_native_mode_required_but_unavailable() -> None:
    with pytest.raises(ConfigError, match="parser"):
        HighlightChain(FakeListChatModel(responses=[GOOD]), structured_output="native")
    with pytest.raises(ConfigError):
        HighlightChain(FakeListChatModel(responses=[GOOD]), structured_output="magic")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="BaseChatModel"):
        HighlightChain("openai:gpt-4o-mini")  # type: ignore[arg-type]


def test_runnable_interface_batch_stream_async() -> None:
    chain = HighlightChain(FakeListChatModel(responses=[GOOD] * 6), retry=FAST)
    items = [make_item("wi-fi"), make_item("internet")]
    assert [r.query for r in chain.batch(items, config={"max_concurrency": 2})] == ["wi-fi", "internet"]
    assert [r.query for r in chain.stream(make_item())] == ["wi-fi"]
    result = asyncio.run(chain.ainvoke(make_item()))
    assert result.highlights[0].sentence_ids == ["7:11:0", "7:12:3"]
    results = asyncio.run(chain.abatch(items))
    assert len(results) == 2
    done = {index for index, _ in chain.batch_as_completed(items)}
    assert done == {0, 1}


def test_usage_from_metadata_or_estimated() -> None:
    model = ScriptedChatModel(respond=[GOOD], usage={"input": 321, "output": 12})
    result = HighlightChain(model, retry=FAST).invoke(make_item())
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (321, 12)
    estimated = HighlightChain(ScriptedChatModel(respond=[GOOD]), retry=FAST).invoke(make_item()).usage
    assert estimated.prompt_tokens > 300 and 10 < estimated.completion_tokens < 60


def test_json_candidates_order_and_failure() -> None:
    assert list(iter_json_candidates('[1, 2] then {"a": 1}')) == [[1, 2], {"a": 1}]
    with pytest.raises(LLMOutputError):
        parse_json_output("nothing")


def test_structured_chat_rejects_non_chat_models_and_non_pydantic_outputs() -> None:
    with pytest.raises(ConfigError, match="BaseChatModel"):
        StructuredChat(object(), dict)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="pydantic"):
        StructuredChat(FakeListChatModel(responses=["x"]), dict)  # type: ignore[arg-type]


def test_long_context_chain_maps_queries_and_drops_unknown() -> None:
    text = json.dumps(
        {
            "pros": [{"query": "Wi-Fi", "text": "Fast Wi-Fi."}, {"query": "golf course", "text": "Nice golf."}],
            "cons": [{"query": "the pool area", "text": "Pool often closed."}],
        }
    )
    chain = LongContextChain(ScriptedChatModel(respond=[text]), retry=FAST)
    reviews = [ReviewItem(review_id="1", text="x")]
    value = LongContextInput(queries=["wi-fi", "pool"], reviews=reviews, n_pros=1, n_cons=1)
    result = chain.invoke(value)
    assert [(k.query, k.text) for k in result.pros] == [("wi-fi", "Fast Wi-Fi.")]
    assert [k.query for k in result.cons] == ["pool"]
    assert result.dropped == ["pros: 'golf course'"]
    bad = json.dumps({"pros": [{"query": "golf", "text": "x"}], "cons": []})
    chain = LongContextChain(ScriptedChatModel(respond=[bad, bad]), retry=FAST)
    with pytest.raises(LLMOutputError, match="listed user queries"):
        chain.invoke(value)
    assert match_query("WIFI", ["wi-fi"]) == "wi-fi"
    assert match_query("", ["wi-fi"]) is None
