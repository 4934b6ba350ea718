"""Provider resolution from strings and objects (through init_chat_model); keys only from the environment."""

from __future__ import annotations

import sys

import pytest
from langchain_core.language_models import FakeListChatModel

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.llm import hf_device_index, model_name_of, parse_spec, resolve_chat_model

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


@pytest.mark.parametrize(
    ("module", "spec", "extra"),
    [
        ("langchain_ollama", "ollama:llama3.1", "ollama"),
        ("langchain_openai", "openai:m", "llm"),
        ("gguf", "hf:{tmp}/model.gguf", "huggingface"),
    ],
)
def test_a_missing_extra_names_its_pip_install_line(
    module: str, spec: str, extra: str, tmp_path, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "model.gguf").write_bytes(b"GGUF")  # only read once the packages are there
    with pytest.raises(MissingDependencyError, match=rf"pip install 'opinio-agents\[{extra}\]'"):
        resolve_chat_model(spec.format(tmp=tmp_path))


def test_ollama_never_falls_back_to_a_paid_api(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_ollama", None)
    with pytest.raises(MissingDependencyError, match="11434/v1"):  # the hint names Ollama's own /v1
        resolve_chat_model("ollama:llama3.1")


def test_local_hf_model_must_be_a_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="neither a directory nor a .gguf file"):
        resolve_chat_model(f"hf:{tmp_path / 'missing'}")
    with pytest.raises(ConfigError, match="no such .gguf file"):
        resolve_chat_model(f"hf:{tmp_path / 'missing.gguf'}")
    with pytest.raises(ConfigError, match="device"):
        resolve_chat_model(f"hf:{tmp_path}", device="gpu")  # checked before anything is loaded


def test_hf_device_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    assert hf_device_index("cpu") == -1 and hf_device_index(-1) == -1 and hf_device_index(2) == 2
    for bad in ("tpu", "cuda:x", -3):
        with pytest.raises(ConfigError, match="device"):
            hf_device_index(bad)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert hf_device_index("auto") == -1
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        hf_device_index("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert (hf_device_index("auto"), hf_device_index("cuda"), hf_device_index("CUDA:1")) == (0, 0, 1)
    with pytest.raises(ConfigError, match="only 2 GPU"):
        hf_device_index("cuda:2")


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
