"""Build a LangChain chat model from one string (or pass an existing one through).

Accepted forms of ``spec``:

* ``"openai:gpt-4o-mini"`` - OpenAI (``langchain-openai``); the key is read from
  ``OPENAI_API_KEY`` only.
* ``"openai:MODEL"`` with ``base_url=...`` (or a bare ``"MODEL"`` with ``base_url``)
  - any OpenAI-compatible server: vLLM, llama.cpp server, LM Studio, Ollama's
  ``/v1``. ``OPENAI_API_KEY`` is used when set, else the placeholder ``"not-needed"``.
* ``"ollama:llama3.1"`` - ``langchain-ollama``'s ``ChatOllama`` when installed
  (native JSON-schema output); otherwise Ollama's OpenAI-compatible endpoint
  ``http://localhost:11434/v1`` (or ``base_url``) through ``ChatOpenAI``. Both
  talk to the same local server; neither ever reaches a paid API.
* ``"hf:/path/to/model"`` or an existing directory - a local Hugging Face model
  run through ``langchain-huggingface`` (``local_files_only``; nothing is downloaded).
* a LangChain ``BaseChatModel`` - returned unchanged.
* ``None`` - returns None (the caller then runs the extractive synthesizer; there
  is never a silent fallback to a paid API).

Paper defaults (App. B.3): temperature 0.7, top_p 0.9, 256 new tokens (512 for the
long-context baseline). API keys are never logged or put in error messages.

Example:
    >>> resolve_chat_model(None) is None
    True
    >>> parse_spec("ollama:llama3.1")
    ('ollama', 'llama3.1')
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from opinio_agents.errors import ConfigError, MissingDependencyError

__all__ = [
    "resolve_chat_model",
    "parse_spec",
    "model_name_of",
    "ACCEPTED_FORMS",
    "OLLAMA_OPENAI_URL",
    "LOCAL_API_KEY_PLACEHOLDER",
]

logger = logging.getLogger(__name__)

ACCEPTED_FORMS = (
    "'openai:MODEL' (needs OPENAI_API_KEY), 'openai:MODEL' with base_url= for any "
    "OpenAI-compatible server, 'ollama:MODEL', 'hf:/local/model/dir' (or an existing "
    "directory), or a LangChain BaseChatModel object"
)
OLLAMA_OPENAI_URL = "http://localhost:11434/v1"
LOCAL_API_KEY_PLACEHOLDER = "not-needed"
_PROVIDERS = ("openai", "ollama", "hf", "huggingface")


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``'provider:model'`` into its parts; an existing directory is ``('hf', path)``.

    Raises:
        ConfigError: Empty spec, unknown provider or missing model name.
    """
    text = spec.strip()
    if not text:
        raise ConfigError(f"llm={spec!r} is empty; give one of {ACCEPTED_FORMS}")
    if Path(text).expanduser().is_dir():
        return "hf", text
    provider, sep, model = text.partition(":")
    provider = provider.strip().lower()
    if not sep or provider not in _PROVIDERS:
        raise ConfigError(f"llm={spec!r} is not a known provider; give one of {ACCEPTED_FORMS}")
    model = model.strip()
    if not model:
        raise ConfigError(f"llm={spec!r} names no model; write e.g. 'openai:gpt-4o-mini'")
    return ("hf" if provider == "huggingface" else provider), model


def _chat_openai(**kwargs: Any) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise MissingDependencyError("langchain_openai", "llm", "OpenAI and OpenAI-compatible models") from exc
    return ChatOpenAI(**kwargs)


def _check_params(temperature: float, top_p: float, max_tokens: int, timeout: float, max_retries: int) -> None:
    if not 0.0 <= temperature <= 2.0:
        raise ConfigError(f"temperature={temperature} must be within [0, 2]")
    if not 0.0 < top_p <= 1.0:
        raise ConfigError(f"top_p={top_p} must be within (0, 1]")
    if max_tokens < 1:
        raise ConfigError(f"max_tokens={max_tokens} must be >= 1")
    if timeout <= 0:
        raise ConfigError(f"timeout={timeout} must be > 0 seconds")
    if max_retries < 0:
        raise ConfigError(f"max_retries={max_retries} must be >= 0")


def resolve_chat_model(
    spec: str | BaseChatModel | None,
    *,
    base_url: str | None = None,
    temperature: float = 0.7,
    top_p: float = 0.9,
    max_tokens: int = 256,
    timeout: float = 60.0,
    max_retries: int = 3,
) -> BaseChatModel | None:
    """Return a chat model for ``spec`` (see the module docstring for the forms).

    Args:
        spec: Provider string, a ``BaseChatModel`` (returned as is) or None.
        base_url: URL of an OpenAI-compatible server (``.../v1``) or of Ollama.
        temperature: Sampling temperature (paper: 0.7).
        top_p: Nucleus sampling (paper: 0.9).
        max_tokens: Maximum new tokens (paper: 256; 512 for the long-context baseline).
        timeout: Per-request timeout in seconds.
        max_retries: Transport-level retries of the provider client (429/5xx/timeouts,
            honouring Retry-After). :class:`~opinio_agents.synthesis.llm.LLMSynthesizer`
            resolves strings with 0 here and retries itself, so attempts are counted once.

    Raises:
        ConfigError: Unknown form, bad parameter, or OpenAI without ``OPENAI_API_KEY``.
        MissingDependencyError: The provider's optional package is not installed.

    Example:
        >>> import os; os.environ.pop("OPENAI_API_KEY", None) and None
        >>> resolve_chat_model("openai:gpt-4o-mini")
        Traceback (most recent call last):
        ...
        opinio_agents.errors.ConfigError: ...
    """
    if spec is None:
        return None
    if isinstance(spec, BaseChatModel):
        return spec
    if not isinstance(spec, str):
        raise ConfigError(
            f"llm must be a string or a LangChain BaseChatModel, got {type(spec).__name__}; "
            f"give one of {ACCEPTED_FORMS}"
        )
    _check_params(temperature, top_p, max_tokens, timeout, max_retries)
    text = spec.strip()
    if base_url and ":" not in text and text and not Path(text).expanduser().is_dir():
        provider, model = "openai", text
    else:
        provider, model = parse_spec(spec)

    if provider == "openai":
        key = os.environ.get("OPENAI_API_KEY")
        if not base_url and not key:
            raise ConfigError(
                f"llm={spec!r} needs an OpenAI API key: set the OPENAI_API_KEY environment "
                "variable (keys are read only from the environment), or pass base_url= for a "
                "local OpenAI-compatible server"
            )
        kwargs: dict[str, Any] = {
            "model": model,
            "api_key": key or LOCAL_API_KEY_PLACEHOLDER,
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "timeout": timeout,
            "max_retries": max_retries,
        }
        if base_url:
            kwargs["base_url"] = base_url
        return _chat_openai(**kwargs)

    if provider == "ollama":
        try:
            from langchain_ollama import ChatOllama
        except ImportError:
            url = base_url or OLLAMA_OPENAI_URL
            if not url.rstrip("/").endswith("/v1"):
                url = url.rstrip("/") + "/v1"
            logger.info("langchain-ollama is not installed; using Ollama's OpenAI-compatible API at %s", url)
            return _chat_openai(
                model=model,
                api_key="ollama",
                base_url=url,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_tokens,
                timeout=timeout,
                max_retries=max_retries,
            )
        ollama_kwargs: dict[str, Any] = {
            "model": model,
            "temperature": temperature,
            "top_p": top_p,
            "num_predict": max_tokens,
            "client_kwargs": {"timeout": timeout},
        }
        if base_url:
            ollama_kwargs["base_url"] = base_url.rstrip("/").removesuffix("/v1")
        return ChatOllama(**ollama_kwargs)

    # provider == "hf"
    return _huggingface(model, temperature=temperature, top_p=top_p, max_tokens=max_tokens)


def _huggingface(path: str, *, temperature: float, top_p: float, max_tokens: int) -> BaseChatModel:
    model_dir = Path(path).expanduser()
    if not model_dir.is_dir():
        raise ConfigError(
            f"llm='hf:{path}': {str(model_dir)!r} is not a directory; give the path of a local "
            "Hugging Face model (models are never downloaded)"
        )
    try:
        from langchain_huggingface import ChatHuggingFace, HuggingFacePipeline
    except ImportError as exc:
        raise MissingDependencyError(
            "langchain_huggingface", "huggingface", "local Hugging Face chat models"
        ) from exc
    pipeline = HuggingFacePipeline.from_model_id(
        model_id=str(model_dir),
        task="text-generation",
        device=-1,
        model_kwargs={"local_files_only": True},
        pipeline_kwargs={
            "max_new_tokens": max_tokens,
            "temperature": temperature,
            "top_p": top_p,
            "do_sample": temperature > 0,
            "return_full_text": False,
        },
    )
    return ChatHuggingFace(llm=pipeline, model_id=str(model_dir))


def model_name_of(model: Any) -> str:
    """A readable model name for run metadata, e.g. ``'gpt-4o-mini'``."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__
