"""Triplet extraction with a local seq2seq checkpoint (InstructABSA-style).

The model gets ``prompt + sentence`` and is expected to write triplets such as
``aspect:opinion:positive, aspect:opinion:negative``; the output is parsed by
:func:`~opinio_agents.triplets.parsing.parse_triplet_text`, which also accepts
tuple forms. transformers is imported lazily and nothing is downloaded
(``local_files_only=True``).

Example:
    >>> extractor = TransformersTripletExtractor("/models/instructabsa-aste")  # doctest: +SKIP
    >>> extractor.extract_one("The pool was cold.")                            # doctest: +SKIP
    [Triplet(aspect='pool', opinion='cold', sentiment=-1)]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opinio_agents.embeddings.local import quiet_transformers
from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.triplets.base import Triplet, TripletExtractor
from opinio_agents.triplets.parsing import parse_triplet_text

__all__ = ["DEFAULT_PROMPT", "TransformersTripletExtractor"]

DEFAULT_PROMPT = "Extract aspect-opinion-sentiment triplets: "
_MODELS: dict[str, tuple[Any, Any]] = {}
_LOCK = threading.Lock()


class TransformersTripletExtractor(TripletExtractor):
    """Triplets from a local seq2seq (e.g. T5/Flan-T5) checkpoint directory.

    Args:
        model_path: Directory holding the model and its tokenizer.
        prompt: Text prepended to each sentence.
        batch_size: Sentences per ``generate`` call.
        max_new_tokens: Generation budget per sentence.
        num_beams: Beam size (1 = greedy).
        max_input_tokens: Inputs are truncated to this many tokens.

    Raises:
        ConfigError: When ``model_path`` does not exist or an argument is invalid.

    Example:
        >>> TransformersTripletExtractor("/no/such/dir")
        Traceback (most recent call last):
        ...
        opinio_agents.errors.ConfigError: seq2seq triplet model path '/no/such/dir' ...
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        prompt: str = DEFAULT_PROMPT,
        batch_size: int = 8,
        max_new_tokens: int = 128,
        num_beams: int = 1,
        max_input_tokens: int = 512,
    ) -> None:
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise ConfigError(
                f"seq2seq triplet model path {str(model_path)!r} does not exist; pass a local "
                "directory containing a transformers seq2seq model and tokenizer"
            )
        for name, value in (
            ("batch_size", batch_size),
            ("max_new_tokens", max_new_tokens),
            ("num_beams", num_beams),
            ("max_input_tokens", max_input_tokens),
        ):
            if value < 1:
                raise ConfigError(f"{name} must be >= 1, got {value}")
        self.model_path = str(path)
        self.prompt = prompt
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.num_beams = num_beams
        self.max_input_tokens = max_input_tokens

    def _load(self) -> tuple[Any, Any]:
        with _LOCK:
            if self.model_path not in _MODELS:
                try:
                    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
                except ImportError as exc:  # pragma: no cover - core dependency
                    raise MissingDependencyError(
                        "transformers", purpose="seq2seq triplet extraction"
                    ) from exc
                quiet_transformers()
                tokenizer = AutoTokenizer.from_pretrained(self.model_path, local_files_only=True)
                model = AutoModelForSeq2SeqLM.from_pretrained(
                    self.model_path, local_files_only=True
                )
                model.eval()
                _MODELS[self.model_path] = (tokenizer, model)
            return _MODELS[self.model_path]

    def generate_text(self, sentences: Sequence[str]) -> list[str]:
        """Raw model outputs, one string per sentence."""
        import torch

        tokenizer, model = self._load()
        outputs: list[str] = []
        for start in range(0, len(sentences), self.batch_size):
            chunk = [self.prompt + s for s in sentences[start : start + self.batch_size]]
            batch = tokenizer(
                chunk,
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.max_input_tokens,
            )
            with torch.inference_mode():
                ids = model.generate(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    max_new_tokens=self.max_new_tokens,
                    num_beams=self.num_beams,
                    do_sample=False,
                )
            outputs.extend(tokenizer.batch_decode(ids, skip_special_tokens=True))
        return outputs

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        """Generate and parse triplets for every sentence."""
        if isinstance(sentences, str):
            raise ConfigError(
                "extract() takes a sequence of sentences; use extract_one() for one string"
            )
        results: list[list[Triplet]] = [[] for _ in sentences]
        todo = [i for i, s in enumerate(sentences) if s.strip()]
        texts = self.generate_text([sentences[i] for i in todo]) if todo else []
        for i, text in zip(todo, texts, strict=True):
            results[i] = parse_triplet_text(text)
        return results
