"""Build a LangChain chat model from one string (or pass an existing one through).

Strings are resolved with LangChain's ``init_chat_model``
(``langchain.chat_models.init_chat_model``); this module only adds the checks and
defaults of the package. Accepted forms of ``spec``:

* ``"openai:gpt-4o-mini"`` - OpenAI (``langchain-openai``, the ``llm`` extra); the
  key is read from ``OPENAI_API_KEY`` only.
* ``"openai:MODEL"`` with ``base_url=...`` (or a bare ``"MODEL"`` with ``base_url``)
  - any OpenAI-compatible server: vLLM, llama.cpp server, LM Studio, Ollama's
  ``/v1``. ``OPENAI_API_KEY`` is used when set, else the placeholder ``"not-needed"``.
* ``"ollama:llama3.1"`` - ``langchain-ollama``'s ``ChatOllama`` (the ``ollama``
  extra) against ``http://localhost:11434`` or ``base_url``; native JSON-schema output.
* ``"hf:/path/to/model"``, ``"hf:/path/to/model.gguf"``, an existing directory or
  ``.gguf`` file - a local Hugging Face causal LM
  (:class:`~opinio_agents.llm.local.LocalChatModel`: JSON-schema constrained decoding,
  greedy, a repetition penalty; the ``huggingface`` extra), loaded with
  ``local_files_only=True`` (nothing is ever downloaded) on ``device`` ``"cpu"``,
  ``"cuda"`` / ``"cuda:N"`` or ``"auto"`` (the first GPU when there is one).
* ``"gguf:/path/to/model.gguf"`` - the GGUF file run in-process by llama.cpp
  (:class:`~opinio_agents.llm.llamacpp.LlamaCppChatModel`, the ``gguf`` extra: the same
  constrained decoding, greedy defaults and usage as ``hf:``, on the quantised weights
  as they are, several times faster on a CPU).
* a LangChain ``BaseChatModel`` - returned unchanged.
* ``None`` - returns None (the caller then runs the extractive synthesizer; there
  is never a silent fallback to a paid API, and a bare model name without
  ``base_url`` is refused rather than guessed to be OpenAI's).

A missing extra raises :class:`~opinio_agents.errors.MissingDependencyError` with the
``pip install`` line. Paper defaults (App. B.3): temperature 0.7, top_p 0.9, 256 new
tokens (512 for the long-context baseline); local ``hf:`` and ``gguf:`` models decode greedily. API keys are
never logged or put in error messages.

Example:
    >>> resolve_chat_model(None) is None
    True
    >>> parse_spec("ollama:llama3.1")
    ('ollama', 'llama3.1')
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from opinio_agents.errors import ConfigError, MissingDependencyError

__all__ = [
    "resolve_chat_model",
    "hf_device_index",
    "parse_spec",
    "model_name_of",
    "without_client_retries",
    "ACCEPTED_FORMS",
    "OLLAMA_OPENAI_URL",
    "LOCAL_API_KEY_PLACEHOLDER",
    "API_TEMPERATURE",
    "LOCAL_TEMPERATURE",
]

logger = logging.getLogger(__name__)

ACCEPTED_FORMS = (
    "'openai:MODEL' (needs OPENAI_API_KEY), 'openai:MODEL' with base_url= for any "
    "OpenAI-compatible server, 'ollama:MODEL', 'hf:/local/model/dir' or 'hf:/local/model.gguf' "
    "(or an existing directory or .gguf file), 'gguf:/local/model.gguf' (llama.cpp), "
    "or a LangChain BaseChatModel object"
)
OLLAMA_OPENAI_URL = "http://localhost:11434/v1"
LOCAL_API_KEY_PLACEHOLDER = "not-needed"
_PROVIDERS = ("openai", "ollama", "hf", "huggingface", "gguf")
#: Sampling temperature of API and server models when none is given (the paper's App. B.3).
API_TEMPERATURE = 0.7
#: Temperature of local ``hf:`` and ``gguf:`` models when none is given: greedy, as small models drift when sampled.
LOCAL_TEMPERATURE = 0.0


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``'provider:model'`` into its parts; an existing directory is ``('hf', path)``.

    Raises:
        ConfigError: Empty spec, unknown provider or missing model name.
    """
    text = spec.strip()
    if not text:
        raise ConfigError(f"llm={spec!r} is empty; give one of {ACCEPTED_FORMS}")
    local = Path(text).expanduser()
    if local.is_dir() or (local.is_file() and local.suffix.lower() == ".gguf"):
        return "hf", text
    provider, sep, model = text.partition(":")
    provider = provider.strip().lower()
    if not sep or provider not in _PROVIDERS:
        raise ConfigError(f"llm={spec!r} is not a known provider; give one of {ACCEPTED_FORMS}")
    model = model.strip()
    if not model:
        raise ConfigError(f"llm={spec!r} names no model; write e.g. 'openai:gpt-4o-mini'")
    return ("hf" if provider == "huggingface" else provider), model


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


_DEVICE_RE = re.compile(r"^(cpu|auto|cuda(?::(\d+))?)$")


def _init(provider: str, model: str, extra: str, purpose: str, **kwargs: Any) -> BaseChatModel:
    """``init_chat_model`` with a MissingDependencyError (and its pip line) for a missing extra."""
    module = _PROVIDER_MODULES[provider]
    if importlib.util.find_spec(module) is None:
        raise MissingDependencyError(module, extra, purpose)
    from langchain.chat_models import init_chat_model

    try:
        chat = init_chat_model(model, model_provider=provider, **kwargs)
    except ImportError as exc:  # a dependency of the integration package itself
        raise MissingDependencyError(module, extra, purpose) from exc
    if not isinstance(chat, BaseChatModel):  # pragma: no cover - only configurable models are not
        raise ConfigError(f"init_chat_model returned {type(chat).__name__}, not a chat model")
    return chat


_PROVIDER_MODULES = {"openai": "langchain_openai", "ollama": "langchain_ollama"}


def hf_device_index(device: str | int) -> int:
    """The transformers pipeline device for ``device``: -1 for CPU, N for ``cuda:N``.

    ``"auto"`` is the first GPU when torch sees one, else the CPU.

    Raises:
        ConfigError: An unknown device, or ``cuda`` when no GPU is visible.

    Example:
        >>> hf_device_index("cpu")
        -1
    """
    if isinstance(device, int) and not isinstance(device, bool):
        if device < -1:
            raise ConfigError(f"device={device} must be -1 (CPU) or a GPU index >= 0")
        return device
    text = str(device).strip().lower()
    match = _DEVICE_RE.match(text)
    if match is None:
        raise ConfigError(f"device={device!r} must be 'cpu', 'cuda', 'cuda:N' or 'auto'")
    if text == "cpu":
        return -1
    import torch

    available = torch.cuda.is_available()
    if text == "auto":
        return 0 if available else -1
    if not available:
        raise ConfigError(
            f"device={device!r} but torch sees no CUDA GPU; use device='cpu' or 'auto' "
            "(or install a CUDA build of torch)"
        )
    index = int(match.group(2) or 0)
    if index >= torch.cuda.device_count():
        raise ConfigError(f"device={device!r} but only {torch.cuda.device_count()} GPU(s) are visible")
    return index


def resolve_chat_model(
    spec: str | BaseChatModel | None,
    *,
    base_url: str | None = None,
    temperature: float | None = None,
    top_p: float = 0.9,
    max_tokens: int = 256,
    timeout: float = 60.0,
    max_retries: int = 3,
    device: str | int = "auto",
) -> BaseChatModel | None:
    """Return a chat model for ``spec`` (see the module docstring for the forms).

    Args:
        spec: Provider string, a ``BaseChatModel`` (returned as is) or None.
        base_url: URL of an OpenAI-compatible server (``.../v1``) or of Ollama.
        temperature: Sampling temperature; None: :data:`API_TEMPERATURE` (the paper's 0.7) for
            API and server models, :data:`LOCAL_TEMPERATURE` (greedy) for ``hf:`` models.
        top_p: Nucleus sampling (paper: 0.9).
        max_tokens: Maximum new tokens (paper: 256; 512 for the long-context baseline).
        timeout: Per-request timeout in seconds (OpenAI and Ollama).
        max_retries: Transport-level retries of the OpenAI client (429/5xx/timeouts,
            honouring Retry-After), for callers that use the model directly (chat).
            Structured calls switch them off (:func:`without_client_retries`) and retry
            with :class:`~opinio_agents.llm.retry.RetryPolicy` instead, so a request is
            never retried by two layers and ``attempts`` counts the requests made.
        device: For ``hf:`` models: ``"cpu"``, ``"cuda"``, ``"cuda:N"``, a GPU index or
            ``"auto"`` (the first GPU when there is one, else the CPU).

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
    _check_params(API_TEMPERATURE if temperature is None else temperature, top_p, max_tokens, timeout, max_retries)
    text = spec.strip()
    if base_url and ":" not in text and text and not Path(text).expanduser().exists():
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
            "api_key": key or LOCAL_API_KEY_PLACEHOLDER,
            "temperature": API_TEMPERATURE if temperature is None else temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "timeout": timeout,
            "max_retries": max_retries,
        }
        if base_url:
            kwargs["base_url"] = base_url
        return _init("openai", model, "llm", "OpenAI and OpenAI-compatible models", **kwargs)

    if provider == "ollama":
        ollama_kwargs: dict[str, Any] = {
            "temperature": API_TEMPERATURE if temperature is None else temperature,
            "top_p": top_p,
            "num_predict": max_tokens,
            "client_kwargs": {"timeout": timeout},
        }
        if base_url:
            ollama_kwargs["base_url"] = base_url.rstrip("/").removesuffix("/v1")
        return _init(
            "ollama",
            model,
            "ollama",
            f"Ollama models; or use 'openai:{model}' with base_url='{OLLAMA_OPENAI_URL}'",
            **ollama_kwargs,
        )

    if provider == "gguf":
        from opinio_agents.llm.llamacpp import LlamaCppChatModel

        return LlamaCppChatModel.load(
            model,
            max_new_tokens=max_tokens,
            temperature=LOCAL_TEMPERATURE if temperature is None else temperature,
            top_p=top_p,
        )

    # provider == "hf"
    return _huggingface(model, temperature=temperature, top_p=top_p, max_tokens=max_tokens, device=device)


def _huggingface(
    path: str, *, temperature: float | None, top_p: float, max_tokens: int, device: str | int
) -> BaseChatModel:
    """A :class:`~opinio_agents.llm.local.LocalChatModel` from a folder or a ``.gguf`` file (greedy by default)."""
    from opinio_agents.llm.local import LocalChatModel

    index = hf_device_index(device)
    return LocalChatModel.load(
        path,
        device="cpu" if index < 0 else f"cuda:{index}",
        max_new_tokens=max_tokens,
        temperature=LOCAL_TEMPERATURE if temperature is None else temperature,
        top_p=top_p,
    )


def model_name_of(model: Any) -> str:
    """A readable model name for run metadata, e.g. ``'gpt-4o-mini'``."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def without_client_retries(model: BaseChatModel, *, timeout: float | None = None) -> BaseChatModel:
    """``model`` with its provider client's own retries off (and its timeout capped at ``timeout``).

    :class:`~opinio_agents.llm.retry.RetryPolicy` is the package's one retry layer; a
    client that retried on its own as well would multiply the requests (4 x 4 = 16
    for an always-500 server) and make ``attempts`` untrue. OpenAI-style models
    (``max_retries`` plus an ``openai`` client with ``with_options``) get a shallow copy
    with rebuilt clients; the original is not modified. Models without client retries
    are returned unchanged.

    Args:
        model: Any LangChain chat model.
        timeout: Upper bound of the per-request timeout in seconds (e.g. the query's
            total deadline), or None to keep the model's timeout.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> fake = FakeListChatModel(responses=["x"])
        >>> without_client_retries(fake) is fake
        True
    """
    root = getattr(model, "root_client", None)
    retries = getattr(model, "max_retries", None)
    current = getattr(model, "request_timeout", None)
    capped = current
    if timeout is not None and (not isinstance(current, (int, float)) or current > timeout):
        capped = timeout
    if root is None or not hasattr(root, "with_options") or (not retries and capped == current):
        return model
    options: dict[str, Any] = {"max_retries": 0}
    if capped is not None:
        options["timeout"] = capped
    update: dict[str, Any] = {"max_retries": 0, "request_timeout": capped}
    sync_root = root.with_options(**options)
    update.update(root_client=sync_root, client=sync_root.chat.completions)
    async_root = getattr(model, "root_async_client", None)
    if async_root is not None and hasattr(async_root, "with_options"):
        async_copy = async_root.with_options(**options)
        update.update(root_async_client=async_copy, async_client=async_copy.chat.completions)
    return model.model_copy(update=update)
