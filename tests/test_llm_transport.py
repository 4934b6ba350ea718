"""The real openai client against a scripted OpenAI-compatible server on loopback.

Proves: native json_schema output, retries with backoff on 429/5xx, timeouts,
malformed bodies, the downgrade to text parsing on HTTP 400, and the SQLite cache.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_openai")

from llm_fixtures import answer, make_item  # noqa: E402
from loopback_server import LoopbackServer, hang, ok, raw, status  # noqa: E402

from opinio_agents.llm import RetryPolicy  # noqa: E402
from opinio_agents.synthesis.llm import LLMSynthesizer  # noqa: E402

GOOD = answer(("PROS", "Fast, free Wi-Fi in every room.", ["S1", "S2"]))
FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)


def synth(server: LoopbackServer, tmp_path=None, **kwargs):  # type: ignore[no-untyped-def]
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("timeout", 2.0)
    return LLMSynthesizer(
        "openai:loopback-model",
        base_url=server.base_url,
        cache_path=(tmp_path / "llm_cache.sqlite") if tmp_path is not None else None,
        **kwargs,
    )


@pytest.fixture(autouse=True)
def _no_real_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-only")


def test_success_uses_native_json_schema_and_reports_usage() -> None:
    with LoopbackServer([ok(GOOD, prompt_tokens=812, completion_tokens=31)]) as server:
        s = synth(server)
        [h] = s.synthesize(make_item())
    assert h.sentence_ids == ["7:11:0", "7:12:3"]
    body = server.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["temperature"] == 0.7 and body["top_p"] == 0.9
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 256
    assert body["messages"][0]["role"] == "system"
    assert "expert summarizer" in body["messages"][0]["content"]
    assert (s.usage.prompt_tokens, s.usage.completion_tokens, s.usage.calls) == (812, 31, 1)
    assert s.chain.mode == "native" and s.model_name == "loopback-model"


def test_429_then_success_is_retried() -> None:
    script = [status(429, headers={"retry-after-ms": "10"}), status(503), ok(GOOD)]
    with LoopbackServer(script) as server:
        [h] = synth(server).synthesize(make_item())
    assert h.text == "Fast, free Wi-Fi in every room."
    assert server.request_count == 3


def test_500_exhausts_retries_and_is_reported_not_raised_by_synthesize_many() -> None:
    with LoopbackServer([status(500)]) as server:
        outcomes = list(synth(server).synthesize_many([make_item()]))
    [outcome] = outcomes
    assert outcome.failure is not None and outcome.highlights == []
    assert "HTTP 500" in outcome.failure.error and outcome.failure.attempts == 3
    assert server.request_count == 3


def test_timeout_is_retried_then_reported() -> None:
    with LoopbackServer([hang()]) as server:  # no race: the server never answers
        one_retry = RetryPolicy(max_retries=1, base_delay=0.0)
        [outcome] = list(synth(server, timeout=0.3, retry=one_retry).synthesize_many([make_item()]))
    assert outcome.failure is not None
    assert "Timeout" in outcome.failure.error and outcome.failure.attempts == 2
    assert server.request_count == 2


def test_timeout_then_success() -> None:
    with LoopbackServer([hang(), ok(GOOD)]) as server:
        [h] = synth(server, timeout=0.3).synthesize(make_item())
    assert h.polarity.value == "pros"


def test_malformed_body_and_malformed_content() -> None:
    with LoopbackServer([raw(b"{not json at all"), ok(GOOD)]) as server:
        [h] = synth(server).synthesize(make_item())  # a garbled body is retried
    assert h.sentence_ids == ["7:11:0", "7:12:3"] and server.request_count == 2
    with LoopbackServer([raw(b"<html>proxy error</html>")]) as server:
        [outcome] = list(synth(server).synthesize_many([make_item()]))
    assert outcome.failure is not None and "JSONDecodeError" in outcome.failure.error
    assert outcome.failure.attempts == 3 and server.request_count == 3
    with LoopbackServer([ok("Sure! " + GOOD[:40]), ok("```json\n" + GOOD + "\n```")]) as server:
        s = synth(server)
        [h] = s.synthesize(make_item())
    assert h.sentence_ids == ["7:11:0", "7:12:3"]
    assert server.request_count == 2  # one repair turn
    assert "could not be used" in server.requests[1]["body"]["messages"][-1]["content"]
    assert s.usage.calls == 2


def test_server_without_json_schema_support_downgrades_to_parsing() -> None:
    refusal = status(400, {"error": {"message": "response_format not supported"}})
    with LoopbackServer([refusal, ok("Here: " + GOOD)]) as server:
        s = synth(server)
        [h] = s.synthesize(make_item())
    assert s.chain.mode == "parser"
    assert "response_format" in server.requests[0]["body"] and "response_format" not in server.requests[1]["body"]
    assert h.sentence_ids == ["7:11:0", "7:12:3"]


def test_cache_makes_a_rerun_free_and_identical(tmp_path) -> None:  # type: ignore[no-untyped-def]
    items = [make_item("wi-fi"), make_item("internet")]
    with LoopbackServer([ok(GOOD, prompt_tokens=500, completion_tokens=20)]) as server:
        first = synth(server, tmp_path)
        run1 = {o.item.query: o.highlights for o in first.synthesize_many(items)}
        assert server.request_count == 2
        second = synth(server, tmp_path)
        run2 = {o.item.query: o.highlights for o in second.synthesize_many(items)}
        assert server.request_count == 2  # nothing sent the second time
    assert run1 == run2
    assert first.usage.cached_calls == 0 and second.usage.cached_calls == 2
    assert second.usage.prompt_tokens == first.usage.prompt_tokens == 1000
    assert len(second.cache) == 2  # type: ignore[arg-type]


def test_cache_key_includes_sampling_settings(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with LoopbackServer([ok(GOOD)]) as server:
        synth(server, tmp_path).synthesize(make_item())
        LLMSynthesizer(
            "openai:loopback-model",
            base_url=server.base_url,
            cache_path=tmp_path / "llm_cache.sqlite",
            retry=FAST,
            max_tokens=100,
        ).synthesize(make_item())
        assert server.request_count == 2
        body = server.requests[1]["body"]
        assert body.get("max_completion_tokens", body.get("max_tokens")) == 100
