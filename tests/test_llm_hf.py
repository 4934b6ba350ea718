"""``hf:`` models for real: a tiny randomly initialised GPT-2 built and saved under tmp_path, loaded and run
through the real ``hf:`` path (LocalChatModel over transformers, local files only). The real instruct model
(SmolLM2-135M GGUF) is exercised by the ``local_llm`` tier (tests/test_local_llm.py).

Slow tier: it imports transformers and loads a model (a tiny one, on the CPU).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_fixtures import make_item  # noqa: E402

from opinio_agents.chains import HighlightChain  # noqa: E402
from opinio_agents.errors import ConfigError, LLMOutputError  # noqa: E402
from opinio_agents.hiro import HiroSentGenerator  # noqa: E402
from opinio_agents.llm import RetryPolicy, StructuredChat, model_name_of, native_support, resolve_chat_model  # noqa: E402
from opinio_agents.llm.local import LocalChatModel, constrained_decoding_available  # noqa: E402
from opinio_agents.prompts.highlight import HighlightOutput  # noqa: E402

pytestmark = pytest.mark.slow

CORPUS = [
    "the wifi was fast and free in every room",
    "the pool was cold and the breakfast was great",
    "slow wifi in the evenings",
    "friendly staff and a quiet street",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}assistant : {% endif %}"
)


def build_tiny_model(path: Path) -> Path:
    """A 1-layer GPT-2 (random weights) and a word-level tokenizer with a chat template, saved to ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # word-level tokens joined with spaces
    tok.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=4096, n_embd=16, n_layer=1, n_head=2,
                        bos_token_id=2, eos_token_id=2, pad_token_id=1)
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="module")
def tiny_chat(tiny_dir: Path):  # type: ignore[no-untyped-def]
    return resolve_chat_model(f"hf:{tiny_dir}", device="cpu", temperature=0.0, max_tokens=6)


def test_hf_spec_loads_the_local_model_and_generates(tiny_dir: Path, tiny_chat) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(tiny_chat, LocalChatModel) and model_name_of(tiny_chat) == str(tiny_dir.resolve())
    assert tiny_chat.hf_model.device.type == "cpu" and tiny_chat.hf_model.config.model_type == "gpt2"
    first = tiny_chat.invoke([("system", "answer briefly"), ("human", "the wifi was fast")])
    again = tiny_chat.invoke([("system", "answer briefly"), ("human", "the wifi was fast")])
    assert isinstance(first.content, str) and first.content.strip()
    assert first.content == again.content  # temperature 0: greedy decoding, reproducible
    assert first.usage_metadata["output_tokens"] <= 6  # max_tokens is the new-token budget
    assert first.usage_metadata["input_tokens"] == len(tiny_chat.prompt_ids([("system", "answer briefly"),
                                                                             ("human", "the wifi was fast")]))


def test_auto_device_and_a_folder_without_a_model(tiny_dir: Path, tmp_path: Path) -> None:
    import torch

    auto = resolve_chat_model(str(tiny_dir), temperature=0.0, max_tokens=2)  # a directory alone means hf:
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert auto.hf_model.device.type == expected  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="config.json"):
        resolve_chat_model(f"hf:{tmp_path}", device="cpu")  # nothing is downloaded instead


def test_structured_call_on_a_local_model_in_parser_mode_repairs_once(tiny_chat) -> None:  # type: ignore[no-untyped-def]
    # Constrained decoding exactly when its engine is installed (the word-level toy vocabulary has no
    # JSON characters, so this test asks for JSON in text; tests/test_local_llm.py constrains the real model).
    assert native_support(tiny_chat) is constrained_decoding_available()
    chat = StructuredChat(tiny_chat, HighlightOutput, mode="parser", retry=RetryPolicy(max_retries=0))
    assert chat.active_mode == "parser"
    chain = HighlightChain(tiny_chat, structured_output="parser", retry=RetryPolicy(max_retries=0))
    with pytest.raises(LLMOutputError) as info:  # random weights write no JSON: repaired once, then refused
        chain.invoke(make_item())
    assert info.value.attempts == 2 and len(info.value.outputs) == 2
    assert all(isinstance(o, str) and o.strip() for o in info.value.outputs)  # both are real generations


def test_hiro_sent_generator_runs_on_the_local_model(tiny_chat) -> None:  # type: ignore[no-untyped-def]
    clusters = [["The wifi was slow.", "Slow wifi all week."], ["Great pool.", "The pool was lovely."]]
    out = HiroSentGenerator(tiny_chat, max_concurrency=1).generate(clusters, entity_name="Harbor Inn")
    assert [o.cluster for o in out] == [0, 1]
    assert all(o.text.strip() for o in out) and [e.text for e in out[1].evidence] == clusters[1]


def test_llm_synthesizer_from_an_hf_string_reports_unusable_output_per_query(tiny_dir: Path) -> None:
    from opinio_agents.synthesis.llm import LLMSynthesizer

    synth = LLMSynthesizer(
        f"hf:{tiny_dir}", device="cpu", max_tokens=4, retry=RetryPolicy(max_retries=0), structured_output="parser"
    )
    assert synth.chain.mode == "parser" and synth.model_name == str(tiny_dir.resolve())
    [outcome] = list(synth.synthesize_many([make_item()]))
    assert outcome.failure is not None and "could not parse" in outcome.failure.error
    assert outcome.failure.attempts == 2 and synth.usage.calls == 2  # both generations were counted
