"""Provider resolution from strings and objects; keys only from the environment."""

from __future__ import annotations

import importlib.util

import pytest
from langchain_core.language_models import FakeListChatModel

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.llm import model_name_of, parse_spec, resolve_chat_model

SECRET = "sk-test-secret-value-123"


def test_none_and_objects_pass_through() -> None:
    assert resolve_chat_model(None) is None
    model = FakeListChatModel(responses=["x"])
    assert resolve_chat_model(model) is model
    with pytest.raises(ConfigError, match="BaseChatModel"):
        resolve_chat_model(42)  # type: ignore[arg-type]


def test_openai_needs_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        resolve_chat_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    model = resolve_chat_model("openai:gpt-4o-mini")
    assert model_name_of(model) == "gpt-4o-mini"
    assert (model.temperature, model.top_p, model.max_tokens) == (0.7, 0.9, 256)  # type: ignore[attr-defined]
    assert SECRET not in repr(model) and SECRET not in str(model.model_dump())


def test_openai_compatible_server_by_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = resolve_chat_model(
        "openai:qwen2.5", base_url="http://127.0.0.1:8000/v1", temperature=0.2, max_tokens=512, max_retries=0
    )
    assert model.openai_api_base == "http://127.0.0.1:8000/v1"  # type: ignore[attr-defined]
    assert model.openai_api_key.get_secret_value() == "not-needed"  # type: ignore[attr-defined]
    assert (model.temperature, model.max_tokens, model.max_retries) == (0.2, 512, 0)  # type: ignore[attr-defined]
    bare = resolve_chat_model("llama-3.1-8b", base_url="http://127.0.0.1:8080/v1")
    assert model_name_of(bare) == "llama-3.1-8b"


@pytest.mark.skipif(importlib.util.find_spec("langchain_ollama") is not None, reason="langchain-ollama installed")
def test_ollama_without_langchain_ollama_uses_its_openai_endpoint() -> None:
    model = resolve_chat_model("ollama:llama3.1")
    assert model.openai_api_base == "http://localhost:11434/v1"  # type: ignore[attr-defined]
    other = resolve_chat_model("ollama:llama3.1", base_url="http://gpu-box:11434")
    assert other.openai_api_base == "http://gpu-box:11434/v1"  # type: ignore[attr-defined]


@pytest.mark.skipif(importlib.util.find_spec("langchain_huggingface") is not None, reason="extra installed")
def test_local_hf_model_needs_the_extra(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MissingDependencyError, match=r"opinio-agents\[huggingface\]"):
        resolve_chat_model(f"hf:{tmp_path}")
    with pytest.raises(MissingDependencyError):
        resolve_chat_model(str(tmp_path))  # an existing directory means a local HF model
    with pytest.raises(ConfigError, match="not a directory"):
        resolve_chat_model(f"hf:{tmp_path / 'missing'}")


@pytest.mark.parametrize("spec", ["claude:haiku", "gpt-4o-mini", "openai:", "", "   "])
def test_bad_specs_name_value_and_accepted_forms(spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_chat_model(spec)
    assert repr(spec) in str(info.value)


def test_bad_parameters() -> None:
    for kwargs in ({"temperature": 3.0}, {"top_p": 0.0}, {"max_tokens": 0}, {"timeout": 0}, {"max_retries": -1}):
        with pytest.raises(ConfigError):
            resolve_chat_model("openai:m", base_url="http://127.0.0.1:1/v1", **kwargs)  # type: ignore[arg-type]


def test_parse_spec() -> None:
    assert parse_spec("ollama:llama3.1") == ("ollama", "llama3.1")
    assert parse_spec("huggingface:/m") == ("hf", "/m")
    assert parse_spec("OpenAI:gpt-4o") == ("openai", "gpt-4o")
