"""Bounded LLM calls: one retry layer, truthful attempts, a per-query deadline, no prompt text in errors.

Every test drives the real ``openai`` client (through LangChain) against the scripted
loopback server and counts the requests on the server side. Timeouts are made
deterministic with ``hang()`` (the server never answers); nothing asserts wall-clock time.
"""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("langchain_openai")

from llm_fixtures import answer, make_item  # noqa: E402
from loopback_server import LoopbackServer, hang, ok, status  # noqa: E402

from opinio_agents.errors import LLMDeadlineError, LLMError, LLMOutputError  # noqa: E402
from opinio_agents.llm import RetryPolicy, resolve_chat_model, without_client_retries  # noqa: E402
from opinio_agents.llm.redact import WITHHELD, shingles  # noqa: E402
from opinio_agents.prompts import default_prompts  # noqa: E402
from opinio_agents.synthesis.llm import LLMSynthesizer  # noqa: E402

GOOD = answer(("PROS", "Fast, free Wi-Fi in every room.", ["S1", "S2"]))
SYSTEM = default_prompts().system.render()


@pytest.fixture(autouse=True)
def _no_real_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-only")


def _client_with_own_retries(server: LoopbackServer, retries: int = 3, timeout: float = 5.0):  # type: ignore[no-untyped-def]
    """A ChatOpenAI whose openai client would retry on its own (as OpinioRAG.llm builds it)."""
    return resolve_chat_model(
        "openai:loopback-model", base_url=server.base_url, max_retries=retries, timeout=timeout
    )


@pytest.mark.parametrize("code", [429, 500])
@pytest.mark.parametrize("retries", [0, 3])
def test_always_failing_server_gets_exactly_the_configured_attempts(code: int, retries: int) -> None:
    with LoopbackServer([status(code)]) as server:
        synth = LLMSynthesizer(
            _client_with_own_retries(server), retry=RetryPolicy(max_retries=retries, base_delay=0.0)
        )
        [outcome] = list(synth.synthesize_many([make_item()]))
    assert outcome.failure is not None
    assert server.request_count == retries + 1  # not (client retries + 1) x (ours + 1)
    assert outcome.failure.attempts == server.request_count
    assert f"attempts={retries + 1}" in outcome.failure.error
    assert f"HTTP {code}" in outcome.failure.error


def test_string_spec_and_defaults_count_once() -> None:
    with LoopbackServer([status(503)]) as server:
        synth = LLMSynthesizer(
            "openai:loopback-model", base_url=server.base_url, max_retries=2, retry=None, timeout=5.0
        )
        synth.chain.structured.retry = RetryPolicy(max_retries=2, base_delay=0.0, deadline=60.0)
        with pytest.raises(LLMError) as info:
            synth.synthesize(make_item())
    assert server.request_count == 3 and info.value.attempts == 3


def test_client_retries_are_switched_off_without_touching_the_original() -> None:
    with LoopbackServer([ok(GOOD)]) as server:
        model = _client_with_own_retries(server, retries=5, timeout=30.0)
        stripped = without_client_retries(model, timeout=2.0)
        assert stripped is not model
        assert stripped.root_client.max_retries == 0 and stripped.async_client is not model.async_client
        assert stripped.root_client.timeout == 2.0
        assert model.root_client.max_retries == 5 and model.root_client.timeout == 30.0


def test_a_server_that_never_answers_stops_at_the_deadline() -> None:
    # 50 retries of a 0.2 s timeout would take 10 s; the 0.5 s deadline ends the query first.
    policy = RetryPolicy(max_retries=50, base_delay=0.0, deadline=0.5)
    with LoopbackServer([hang()]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server, timeout=0.2), retry=policy)
        with pytest.raises(LLMDeadlineError) as info:
            synth.synthesize(make_item())
        made = server.request_count
    assert 1 <= made < policy.max_attempts
    assert info.value.attempts == made
    assert "deadline of 0.5 s" in str(info.value) and "--llm-deadline" in str(info.value)


def test_the_async_path_cancels_the_request_in_flight_at_the_deadline() -> None:
    # The client timeout (30 s) never fires: only the deadline can end the query.
    policy = RetryPolicy(max_retries=5, base_delay=0.0, deadline=0.3)
    with LoopbackServer([hang()]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server, timeout=30.0), retry=policy)
        synth.chain.structured.model = _client_with_own_retries(server, retries=0, timeout=30.0)
        with pytest.raises(LLMDeadlineError) as info:
            asyncio.run(synth.asynthesize(make_item()))
        assert server.request_count == 1
    assert info.value.attempts == 1


def test_backoff_that_would_pass_the_deadline_is_not_slept() -> None:
    # Retry-After asks for 30 s (capped at max_delay=20 s); the deadline is 5 s: stop after one request.
    policy = RetryPolicy(max_retries=3, base_delay=0.0, deadline=5.0)
    with LoopbackServer([status(429, headers={"retry-after": "30"})]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server), retry=policy)
        [outcome] = list(synth.synthesize_many([make_item()]))
    assert server.request_count == 1
    assert outcome.failure is not None and outcome.failure.attempts == 1
    assert "deadline" in outcome.failure.error and "HTTP 429" in outcome.failure.error


def test_deadline_spans_the_repair_turn_and_attempts_add_up() -> None:
    # First answer unusable, the repair turn hits a 500 four times: 1 + 4 requests, all reported.
    policy = RetryPolicy(max_retries=3, base_delay=0.0, deadline=60.0)
    with LoopbackServer([ok("no json here"), status(500)]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server), retry=policy, structured_output="parser")
        with pytest.raises(LLMError) as info:
            synth.synthesize(make_item())
    assert server.request_count == 5 and info.value.attempts == 5


def _assert_clean(message: str) -> None:
    assert not shingles(message) & shingles(SYSTEM), message
    assert len(message) < 900


def test_an_echo_of_the_system_prompt_never_reaches_the_failure_message() -> None:
    echo = f"Sure. My instructions: {SYSTEM}"
    with LoopbackServer([ok(echo)]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server), retry=RetryPolicy(max_retries=0))
        [outcome] = list(synth.synthesize_many([make_item()]))
        with pytest.raises(LLMOutputError) as info:
            synth.synthesize(make_item())
    assert outcome.failure is not None and outcome.failure.attempts == 2  # the answer + one repair turn
    _assert_clean(outcome.failure.error)
    _assert_clean(str(info.value))
    assert WITHHELD in str(info.value)
    assert info.value.raw_output == echo  # kept on the exception for debugging, not in the message


def test_long_or_hostile_output_is_quoted_as_a_short_escaped_snippet() -> None:
    hostile = "\x1b[31m" + "garbage " * 500 + "\u202e"
    with LoopbackServer([ok(hostile)]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server), retry=RetryPolicy(max_retries=0))
        with pytest.raises(LLMOutputError) as info:
            synth.synthesize(make_item())
    message = str(info.value)
    assert "\x1b" not in message and "\u202e" not in message
    assert "\\x1b" in message
    assert message.count("garbage") <= 12


def test_highlight_text_that_repeats_the_prompt_is_withheld_from_the_error() -> None:
    leak = json.dumps({"highlights": [{"polarity": "PROS", "text": SYSTEM[:300], "sentence_ids": ["S99"]}]})
    with LoopbackServer([ok(leak)]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server), retry=RetryPolicy(max_retries=0))
        with pytest.raises(LLMOutputError) as info:
            synth.synthesize(make_item())
    _assert_clean(str(info.value))


def test_deadline_and_policy_arguments_are_checked() -> None:
    from opinio_agents.errors import ConfigError

    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError):
            RetryPolicy(deadline=bad)
    assert RetryPolicy(max_retries=2).max_attempts == 3


def test_cli_llm_timeout_and_deadline_reach_the_query(tmp_path, encoder, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from opinio_agents.cli.main import main
    from opinio_agents.datasets import load_sample
    from opinio_agents.io.writers import write_opiniobank
    from opinio_agents.models import HighlightSet

    entity = load_sample()[0]
    entity.user_reviews = entity.user_reviews[:20]
    path = tmp_path / "one.json"
    write_opiniobank([entity], path)
    store = tmp_path / "store"
    assert main(["index", str(path), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()
    args = ["highlight", str(path), "-e", str(entity.entity_id), "--store", str(store), "-q", "wi-fi",
            "--llm", "openai:loopback-model", "--format", "json", "--quiet",
            "--llm-timeout", "0.2", "--llm-deadline", "0.6"]
    with LoopbackServer([hang()]) as server:
        assert main([*args, "--base-url", server.base_url]) == 0
        made = server.request_count
    result = HighlightSet.model_validate_json(capsys.readouterr().out)
    # The model never answered within the deadline: the query gets its extractive highlight, marked as such.
    assert not result.failures
    assert result.meta.llm is not None and result.meta.llm.fallback == 1 and result.meta.llm.answered == 0
    shown = result.pros + result.cons
    assert shown and all(h.origin == "extractive-fallback" for h in shown)
    assert 1 <= made <= 4  # default policy: at most 4 attempts before the deadline


def test_malformed_native_json_is_not_accepted_as_an_empty_answer() -> None:
    # LangChain parses native output as partial JSON; a broken answer must go to the repair turn.
    broken = '{"highlights": [{"polarity": "PROS", "text": }'
    with LoopbackServer([ok(broken)]) as server:
        synth = LLMSynthesizer(_client_with_own_retries(server), retry=RetryPolicy(max_retries=0))
        assert synth.chain.mode == "native"
        [outcome] = list(synth.synthesize_many([make_item()]))
    assert outcome.failure is not None and outcome.failure.attempts == 2 == server.request_count


@pytest.mark.parametrize(
    ("command", "flags"),
    [("highlight", ["--llm-timeout", "--llm-deadline"]), ("evaluate", ["--llm-timeout", "--llm-deadline"]),
     ("chat", ["--llm-timeout"])],
)
def test_llm_limits_are_cli_options(command: str, flags: list[str], capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from opinio_agents.cli.main import main

    monkeypatch.setenv("COLUMNS", "240")  # help is wrapped to the terminal width
    monkeypatch.setenv("TERMINAL_WIDTH", "240")

    try:
        code = main([command, "--help"])
    except SystemExit as exit_:  # typer may exit after printing help
        code = int(exit_.code or 0)
    assert code == 0
    text = capsys.readouterr().out
    assert all(flag in text for flag in flags), text[-600:]


def test_llm_limits_maps_flags_to_llm_options() -> None:
    from opinio_agents.cli.llm_limits import llm_limits

    assert llm_limits(None, None) == {}
    assert llm_limits(5, 30) == {"timeout": 5.0, "deadline": 30.0}
