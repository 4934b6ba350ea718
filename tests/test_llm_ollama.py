"""``ollama:`` models for real: langchain-ollama's ChatOllama against a loopback server speaking Ollama's API."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_ollama")

from llm_fixtures import answer, make_item  # noqa: E402
from ollama_loopback import OllamaServer, chat, error  # noqa: E402

from opinio_agents.chains import HighlightChain  # noqa: E402
from opinio_agents.errors import LLMError  # noqa: E402
from opinio_agents.evaluation.judge import LLMJudge  # noqa: E402
from opinio_agents.llm import RetryPolicy, model_name_of, resolve_chat_model  # noqa: E402
from opinio_agents.synthesis.llm import LLMSynthesizer  # noqa: E402

GOOD = answer(("PROS", "Fast, free Wi-Fi in every room.", ["S1", "S2"]))
FAST = RetryPolicy(max_retries=2, base_delay=0.0)


def test_resolves_to_chat_ollama_with_the_paper_sampling_settings() -> None:
    model = resolve_chat_model("ollama:tiny", base_url="http://127.0.0.1:9/v1", max_tokens=64)
    assert type(model).__name__ == "ChatOllama" and model_name_of(model) == "tiny"
    assert model.base_url == "http://127.0.0.1:9"  # type: ignore[attr-defined]  # /v1 is Ollama's OpenAI API
    assert (model.temperature, model.top_p, model.num_predict) == (0.7, 0.9, 64)  # type: ignore[attr-defined]


def test_the_server_lists_its_model_as_ollama_does() -> None:
    from langchain_ollama import ChatOllama

    with OllamaServer([chat("x")]) as server:
        ChatOllama(model="tiny", base_url=server.base_url, validate_model_on_init=True)
        with pytest.raises(ValueError, match="not found"):
            ChatOllama(model="llama3.1", base_url=server.base_url, validate_model_on_init=True)
    assert [r["path"] for r in server.requests] == ["/api/tags", "/api/tags"]


def test_highlight_chain_uses_ollama_native_json_schema_format() -> None:
    with OllamaServer([chat(GOOD, prompt_eval_count=345, eval_count=21)]) as server:
        model = resolve_chat_model("ollama:tiny", base_url=server.base_url)
        chain = HighlightChain(model, retry=FAST)  # type: ignore[arg-type]
        result = chain.invoke(make_item())
    assert chain.mode == "native" and result.mode == "native"
    assert [h.sentence_ids for h in result.highlights] == [["7:11:0", "7:12:3"]]
    [body] = server.chat_requests()
    assert body["model"] == "tiny" and body["stream"] is True
    assert "highlights" in body["format"]["properties"]  # the JSON schema went to Ollama's `format`
    assert body["options"]["temperature"] == 0.7 and body["options"]["top_p"] == 0.9
    assert body["options"]["num_predict"] == 256
    assert body["messages"][0]["role"] == "system" and "expert summarizer" in body["messages"][0]["content"]
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (345, 21)


def test_parser_mode_sends_no_format_and_repairs_once() -> None:
    with OllamaServer([chat("Sure! " + GOOD[:30]), chat("```json\n" + GOOD + "\n```")]) as server:
        model = resolve_chat_model("ollama:tiny", base_url=server.base_url)
        result = HighlightChain(model, retry=FAST, structured_output="parser").invoke(make_item())  # type: ignore[arg-type]
    first, second = server.chat_requests()
    assert first.get("format") in (None, "") and result.repaired and result.attempts == 2
    assert "could not be used" in second["messages"][-1]["content"]
    assert result.highlights[0].text == "Fast, free Wi-Fi in every room."


def test_server_errors_are_retried_then_reported_per_query() -> None:
    with OllamaServer([error(503, "model is loading"), chat(GOOD)]) as server:
        synth = LLMSynthesizer("ollama:tiny", base_url=server.base_url, retry=FAST)
        [outcome] = list(synth.synthesize_many([make_item()]))
    assert outcome.failure is None and outcome.highlights[0].sentence_ids == ["7:11:0", "7:12:3"]
    assert len(server.chat_requests()) == 2 and synth.model_name == "tiny"
    with OllamaServer([error(404, "model 'tiny' not found")]) as server:
        synth = LLMSynthesizer("ollama:tiny", base_url=server.base_url, retry=FAST)
        [outcome] = list(synth.synthesize_many([make_item()]))
        with pytest.raises(LLMError, match="HTTP 404"):
            synth.synthesize(make_item())
    assert outcome.failure is not None and "not found" in outcome.failure.error
    assert outcome.failure.attempts == 1  # a 404 is not transient: no retry


def test_judge_through_ollama() -> None:
    verdict = ('{"aspect_relevance": 4, "non_redundancy": 5, "sentiment_agreement": 4, '
               '"opinion_faithfulness": 3, "overall_usefulness": 4, "rationale": "ok"}')
    with OllamaServer([chat(verdict)]) as server:
        judge = LLMJudge(resolve_chat_model("ollama:tiny", base_url=server.base_url))  # type: ignore[arg-type]
        scores = judge.judge_texts("PROS: fast wifi", "PROS: wifi is fast")
    assert judge.mode == "native" and scores.as_row()["OF"] == 3
    assert "opinion_faithfulness" in server.chat_requests()[0]["format"]["properties"]
