"""Language-model plumbing: providers, response cache, retries, token accounting, JSON parsing."""

from opinio_agents.llm.cache import CACHE_HIT_KEY, SQLiteResponseCache, attach_cache, enable_cache, is_cache_hit
from opinio_agents.llm.json_parsing import extract_blocks, iter_json_candidates, parse_json_output, repair_json_text
from opinio_agents.llm.providers import (
    ACCEPTED_FORMS,
    LOCAL_API_KEY_PLACEHOLDER,
    OLLAMA_OPENAI_URL,
    model_name_of,
    parse_spec,
    resolve_chat_model,
)
from opinio_agents.llm.retry import RetryPolicy, acall_with_retry, call_with_retry, is_retryable, status_code_of
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
    "model_name_of",
    "parse_spec",
    "resolve_chat_model",
    "RetryPolicy",
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
