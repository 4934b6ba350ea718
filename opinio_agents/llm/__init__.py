"""The one LLM-call layer: providers, structured output with repair, cache, retries, tokens, JSON parsing.

* :func:`resolve_chat_model` -- a chat model from ``"openai:..."``, ``"ollama:..."`` or
  ``"hf:/local/dir"`` (through LangChain's ``init_chat_model``).
* :class:`StructuredChat` / :func:`structured_call` -- a pydantic-validated answer:
  native JSON schema where the model has it, JSON in text (App. B.5) otherwise,
  exactly one repair turn, :class:`~opinio_agents.errors.LLMOutputError` with the raw
  outputs and attempts when both fail.
* :class:`SQLiteResponseCache` -- a persistent response cache for any chat model.
"""


from opinio_agents.llm.cache import CACHE_HIT_KEY, SQLiteResponseCache, attach_cache, enable_cache, is_cache_hit
from opinio_agents.llm.json_parsing import extract_blocks, iter_json_candidates, parse_json_output, repair_json_text
from opinio_agents.llm.providers import (
    ACCEPTED_FORMS,
    LOCAL_API_KEY_PLACEHOLDER,
    OLLAMA_OPENAI_URL,
    hf_device_index,
    model_name_of,
    parse_spec,
    resolve_chat_model,
    without_client_retries,
)
from opinio_agents.llm.redact import Redactor
from opinio_agents.llm.retry import (
    Deadline,
    RetryPolicy,
    acall_with_retry,
    call_with_retry,
    describe_error,
    is_retryable,
    status_code_of,
)
from opinio_agents.llm.structured import (
    REPAIR_INSTRUCTION,
    STRUCTURED_MODES,
    OutputInvalid,
    StructuredChat,
    StructuredMode,
    StructuredResult,
    astructured_call,
    check_mode,
    message_text,
    native_support,
    structured_call,
)
from opinio_agents.llm.tokens import (
    HeuristicTokenCounter,
    TokenCounter,
    WordPieceTokenCounter,
    count_message_tokens,
    default_token_counter,
    usage_from_message,
)
from opinio_agents.llm.usage import UsageMeter, prompt_token_ratio

__all__ = [
    "CACHE_HIT_KEY",
    "SQLiteResponseCache",
    "attach_cache",
    "enable_cache",
    "is_cache_hit",
    "extract_blocks",
    "iter_json_candidates",
    "parse_json_output",
    "repair_json_text",
    "ACCEPTED_FORMS",
    "LOCAL_API_KEY_PLACEHOLDER",
    "OLLAMA_OPENAI_URL",
    "hf_device_index",
    "model_name_of",
    "without_client_retries",
    "parse_spec",
    "resolve_chat_model",
    "REPAIR_INSTRUCTION",
    "STRUCTURED_MODES",
    "OutputInvalid",
    "StructuredChat",
    "StructuredMode",
    "StructuredResult",
    "astructured_call",
    "check_mode",
    "message_text",
    "native_support",
    "structured_call",
    "RetryPolicy",
    "Deadline",
    "describe_error",
    "Redactor",
    "acall_with_retry",
    "call_with_retry",
    "is_retryable",
    "status_code_of",
    "HeuristicTokenCounter",
    "TokenCounter",
    "WordPieceTokenCounter",
    "count_message_tokens",
    "default_token_counter",
    "usage_from_message",
    "UsageMeter",
    "prompt_token_ratio",
]
