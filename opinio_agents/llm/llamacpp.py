"""GGUF chat models run in-process by llama.cpp (``--llm gguf:PATH``), with schema-constrained JSON.

:class:`LlamaCppChatModel` is a LangChain chat model over a ``.gguf`` file loaded by
`llama-cpp-python <https://github.com/abetlen/llama-cpp-python>`_ (extra ``gguf``). It
answers what :class:`~opinio_agents.llm.local.LocalChatModel` (``hf:``, transformers)
answers, but runs the quantised weights as they are instead of dequantising them to
fp32: on two CPU cores SmolLM2-135M-Instruct answers a highlight query several times
faster (``benchmarks/real_llm.py`` reports both in one run). What it adds:

* **JSON the model cannot break.** ``with_structured_output(schema, method="json_schema")``
  turns the JSON schema into a llama.cpp grammar (``LlamaGrammar.from_json_schema``),
  applied to every sampled token. Whitespace between JSON tokens is limited to one space
  (the converter's default allows runs of newlines and tabs, which a small model can
  fill its budget with). Bounds (``maxItems``, ``maxLength``, ``minItems``) hold.
* **The same settings as** ``hf:`` **models**: greedy decoding by default, the repetition
  penalty :data:`~opinio_agents.llm.local_common.DEFAULT_REPETITION_PENALTY` over the answer's
  tokens, the same token budget.
* **The static prompt prefix computed once.** llama.cpp keeps the key/value cache of the
  last call and evaluates only the tokens after the longest prefix shared with it (the
  system message, task and exemplars, byte-identical across the queries of a run);
  ``prefix_cache=False`` evaluates every prompt from the start.
* **Exact token usage** on every message (``usage_metadata``), and streaming.

Calls on one model are serialised (a lock): the key/value cache is one piece of state and
parallel generations would only compete for the same cores.

Example:
    >>> LlamaCppChatModel.check_path("/models/smollm2")
    Traceback (most recent call last):
    ...
    opinio_agents.errors.ConfigError: llm='gguf:/models/smollm2': ...
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_messages
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from opinio_agents.errors import ConfigError, LLMError, MissingDependencyError
from opinio_agents.llm.local_common import (
    DEFAULT_REPETITION_PENALTY,
    InProcessChatModel,
    count_call,
    default_threads,
    message_role,
    message_text,
    stop_at,
)

__all__ = ["LlamaCppChatModel", "llama_cpp_available", "default_threads", "model_params_for_this_cpu"]

#: Answer tokens the repetition penalty looks back over (llama.cpp penalises the last N sampled tokens):
#: the whole of an answer within the default budget of 256, as transformers' penalty does.
_PENALTY_WINDOW = 256
#: The whitespace rule of llama.cpp's JSON-schema grammars, replaced by at most one space.
_SPACE_RULE = re.compile(r"^space ::= .*$", re.MULTILINE)


def llama_cpp_available() -> bool:
    """Whether ``llama-cpp-python`` (extra ``gguf``) is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def cpu_has_amx() -> bool:
    """Whether llama.cpp's CPU backend reports Intel AMX (``AMX_INT8 = 1`` in its system info)."""
    from llama_cpp import llama_cpp as bindings

    return "AMX_INT8 = 1" in bindings.llama_print_system_info().decode("utf-8", "replace")


@contextmanager
def model_params_for_this_cpu() -> Iterator[None]:
    """While active, llama.cpp models load without extra weight buffer types on a CPU with AMX.

    The AMX buffer type of llama-cpp-python 0.3.36's prebuilt wheel crashes the process (SIGSEGV in
    ``llama_decode``) on the first batch of more than one token on Xeons with AMX (SmolLM2-135M Q4_1;
    a one-token prompt decodes): ``use_extra_bufts=False`` keeps the weights in the plain CPU
    buffers, which decode the same tokens. ``Llama()`` takes its model parameters from
    ``llama_model_default_params`` with no argument for it, so that function is wrapped while the
    model loads (callers hold :data:`_LOADED_LOCK`; the server launcher of the real-model tests
    keeps it for its whole process). Nothing changes on a CPU without AMX.
    """
    from llama_cpp import llama_cpp as bindings

    if not cpu_has_amx():
        yield
        return
    default = bindings.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        bindings.llama_model_default_params = default


class _Engine:
    """One loaded GGUF file: the llama.cpp model and context, its chat template, compiled grammars, a lock."""

    def __init__(self, llama: Any, formatter: Any, threads: int) -> None:
        self.llama = llama
        self.threads = threads
        self.formatter = formatter
        self.lock = threading.Lock()
        self.grammars: dict[str, Any] = {}


#: Models loaded in this process, by resolved path: a second chat model over the same file (another
#: feature, other settings) shares its weights and key/value cache instead of loading them again.
_LOADED: dict[str, _Engine] = {}
_LOADED_LOCK = threading.Lock()






class LlamaCppChatModel(InProcessChatModel):
    """A chat model over a ``.gguf`` file run by llama.cpp in this process, see the module docstring.

    Build it with :meth:`load` (or ``resolve_chat_model("gguf:PATH")``).

    Attributes:
        model_path: The ``.gguf`` file (resolved).
        max_new_tokens: Token budget of one answer.
        temperature: 0 for greedy decoding (default), else sampling with ``top_p``.
        top_p: Nucleus sampling when ``temperature > 0``.
        repetition_penalty: Logit penalty on tokens already in the answer (1.0: off).
        prefix_cache: Reuse the key/value cache of the prompt prefix shared with the previous call.
        threads: CPU threads of llama.cpp (fixed when the file is first loaded in this process).
    """

    threads: int = 1

    _engine: _Engine | None = PrivateAttr(default=None)

    # -- loading -------------------------------------------------------------------------------------
    @staticmethod
    def check_path(path: str | Path) -> Path:
        """``path`` as an existing ``.gguf`` file.

        Raises:
            ConfigError: It is not a ``.gguf`` file or does not exist.
        """
        source = Path(path).expanduser()
        if source.suffix.lower() != ".gguf" or not source.is_file():
            raise ConfigError(
                f"llm='gguf:{path}': {str(source)!r} is not an existing .gguf file; give the path of a local GGUF "
                "model (models are never downloaded), or 'hf:FOLDER' for a Hugging Face folder"
            )
        return source

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 0.9,
        repetition_penalty: float | None = None,
        prefix_cache: bool = True,
        threads: int | None = None,
    ) -> LlamaCppChatModel:
        """Load the GGUF file at ``path`` with llama.cpp (its full training context, every core).

        Args:
            path: A ``.gguf`` file with a chat template.
            max_new_tokens: Token budget of one answer.
            temperature: 0 for greedy decoding.
            top_p: Nucleus sampling when ``temperature > 0``.
            repetition_penalty: Logit penalty on repeated tokens (None: the ``hf:`` models' default).
            prefix_cache: Reuse the key/value cache of the shared prompt prefix.
            threads: CPU threads (None: :func:`default_threads`); a file already loaded in this
                process keeps the threads it was loaded with.

        Raises:
            ConfigError: The path is no ``.gguf`` file, llama.cpp cannot load it, or it has no chat template.
            MissingDependencyError: ``llama-cpp-python`` is not installed.
        """

        source = cls.check_path(path)
        if not llama_cpp_available():
            raise MissingDependencyError("llama_cpp", "gguf", "running .gguf models in-process with llama.cpp")
        if threads is not None and threads < 1:
            raise ConfigError(f"threads={threads} must be >= 1")
        key = str(source.resolve())
        with _LOADED_LOCK:
            engine = _LOADED.get(key)
            if engine is None:
                engine = _LOADED[key] = cls._load_engine(source, str(path), threads or default_threads())
        chat = cls(
            model_path=key,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            repetition_penalty=DEFAULT_REPETITION_PENALTY if repetition_penalty is None else repetition_penalty,
            prefix_cache=prefix_cache,
            threads=engine.threads,
        )
        chat._engine = engine
        chat.profile = {"structured_output": True}
        return chat

    @staticmethod
    def _load_engine(source: Path, spec: str, threads: int) -> _Engine:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        try:
            with model_params_for_this_cpu():
                llama = Llama(
                    model_path=str(source),
                    n_ctx=0,  # the model's training context
                    n_threads=threads,
                    n_threads_batch=threads,
                    last_n_tokens_size=_PENALTY_WINDOW,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ConfigError(
                f"llm='gguf:{spec}': llama.cpp cannot load {str(source)!r} ({type(exc).__name__}: {str(exc)[:300]})"
            ) from exc
        metadata = llama.metadata
        template = metadata.get("tokenizer.chat_template")
        if not template:
            raise ConfigError(f"llm='gguf:{spec}': {str(source)!r} has no chat template; an instruct model is needed")

        def token(key: str) -> str:
            value = metadata.get(key)
            return llama.detokenize([int(value)], special=True).decode("utf-8", "ignore") if value else ""

        formatter = Jinja2ChatFormatter(
            template, eos_token=token("tokenizer.ggml.eos_token_id"), bos_token=token("tokenizer.ggml.bos_token_id")
        )
        return _Engine(llama, formatter, threads)

    def _loaded(self) -> _Engine:
        if self._engine is None:
            raise ConfigError("LlamaCppChatModel has no model; build it with LlamaCppChatModel.load(path)")
        return self._engine

    @property
    def llama(self) -> Any:
        """The ``llama_cpp.Llama`` instance."""
        return self._loaded().llama

    @property
    def context_length(self) -> int:
        """The most tokens one call (prompt and answer) can hold."""
        return int(self._loaded().llama.n_ctx())

    @property
    def _llm_type(self) -> str:
        return "opinio-llama-cpp"

    def _grammar(self, schema: str) -> Any:
        """The llama.cpp grammar of ``schema`` (converted once per schema text), one space at most between tokens."""
        engine = self._loaded()
        grammar = engine.grammars.get(schema)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

            try:
                gbnf = json_schema_to_gbnf(schema)
            except (ValueError, KeyError, TypeError, NotImplementedError) as exc:
                raise NotImplementedError(
                    f"llama.cpp cannot turn this JSON schema into a grammar ({type(exc).__name__}: {exc}); "
                    "ask for JSON in text instead"
                ) from exc
            grammar = LlamaGrammar.from_string(_SPACE_RULE.sub('space ::= " "?', gbnf), verbose=False)
            engine.grammars[schema] = grammar
        return grammar

    # -- generation -----------------------------------------------------------------------------------
    def prompt_ids(self, messages: Sequence[Any]) -> list[int]:
        """The token ids of ``messages`` (chat messages or ``(role, text)`` pairs) under the model's
        chat template, ready for the answer."""
        engine = self._loaded()
        conversation = [{"role": message_role(m), "content": message_text(m)} for m in convert_to_messages(messages)]
        prompt = engine.formatter(messages=conversation).prompt
        return list(engine.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def _tokens(
        self, ids: list[int], schema: str | None, budget: int, out: dict[str, Any]
    ) -> Iterator[int]:
        """Yield the answer's tokens for the prompt ``ids`` (the caller holds the lock); ``out`` gets
        ``reused`` (prompt tokens taken from the cache) and ``finish`` (``"stop"``/``"length"``)."""
        import llama_cpp

        llama = self._loaded().llama
        if len(ids) + budget > llama.n_ctx():
            raise LLMError(
                f"{Path(self.model_path).name}: the prompt ({len(ids)} tokens) and the answer's budget ({budget}) "
                f"exceed the model's context of {llama.n_ctx()} tokens; send less evidence"
            )
        if not self.prefix_cache:
            llama.reset()
        cached = list(llama._input_ids[: llama.n_tokens]) if llama.n_tokens else []
        shared = 0
        for a, b in zip(cached, ids):
            if a != b:
                break
            shared += 1
        out["reused"] = min(shared, len(ids) - 1) if shared else 0
        out["finish"] = "length"
        grammar = self._grammar(schema) if schema is not None else None
        vocab = llama._model.vocab
        count = 0
        for token in llama.generate(
            ids,
            top_k=0,
            top_p=self.top_p,
            min_p=0.0,
            temp=self.temperature,
            repeat_penalty=self.repetition_penalty,
            grammar=grammar,
        ):
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                out["finish"] = "stop"
                return
            yield int(token)
            count += 1
            if count >= budget:
                return

    def _count(self, ids: list[int], answer: list[int], reused: int, schema: str | None, seconds: float) -> None:
        count_call(self._stats, prompt=len(ids), reused=reused, completion=len(answer),
                   constrained=schema is not None, seconds=seconds)

    def _decode(self, answer: list[int]) -> str:
        return bytes(self._loaded().llama.detokenize(answer)).decode("utf-8", errors="ignore")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        engine = self._loaded()
        ids = self.prompt_ids(messages)
        schema = kwargs.get("json_schema")
        budget = kwargs.get("max_new_tokens") or self.max_new_tokens
        out: dict[str, Any] = {}
        start = time.perf_counter()
        with engine.lock:
            answer = list(self._tokens(ids, schema, budget, out))
        self._count(ids, answer, out["reused"], schema, time.perf_counter() - start)
        text = stop_at(self._decode(answer), stop)
        usage = {"input_tokens": len(ids), "output_tokens": len(answer), "total_tokens": len(ids) + len(answer)}
        message = AIMessage(
            content=text,
            usage_metadata=usage,  # type: ignore[arg-type]
            response_metadata={
                "model_name": self.model_path,
                "finish_reason": out["finish"],
                "reused_prefix_tokens": out["reused"],
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        engine = self._loaded()
        ids = self.prompt_ids(messages)
        schema = kwargs.get("json_schema")
        budget = kwargs.get("max_new_tokens") or self.max_new_tokens
        out: dict[str, Any] = {}
        answer: list[int] = []
        emitted = ""
        start = time.perf_counter()
        with engine.lock:  # a reader that stops reading closes this generator and frees the model
            for token in self._tokens(ids, schema, budget, out):
                answer.append(token)
                try:  # a character split over tokens waits for its last byte
                    text = bytes(engine.llama.detokenize(answer)).decode("utf-8")
                except UnicodeDecodeError:
                    continue
                kept = stop_at(text, stop)
                new = kept[len(emitted) :]
                emitted = kept
                if new:
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=new))
                    if run_manager is not None:
                        run_manager.on_llm_new_token(new, chunk=chunk)
                    yield chunk
                if len(kept) < len(text):  # a stop sequence was reached
                    break
        self._count(ids, answer, out.get("reused", 0), schema, time.perf_counter() - start)
        usage = {"input_tokens": len(ids), "output_tokens": len(answer), "total_tokens": len(ids) + len(answer)}
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=usage,  # type: ignore[arg-type]
                response_metadata={"model_name": self.model_path, "finish_reason": out.get("finish", "stop")},
            )
        )
