"""The torch-free (onnx) runtime of the embedded triplet extractor against the torch one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.triplets.cache import extractor_identity
from opinio_agents.triplets.embedded import RUNTIME_ENV, EmbeddedTripletExtractor

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = [
    "The staff was friendly but the room was dirty.",
    "Great location, close to everything, and the breakfast was delicious!",
    "The wifi kept dropping and check-in took over an hour.",
    "Not the cheapest hotel, yet worth every penny.",
    "Beds were comfortable; the bathroom was tiny and the shower had no pressure at all.",
    "Lovely.",
]


@pytest.fixture(scope="module")
def embedded() -> EmbeddedTripletExtractor:
    """The onnx runtime (its graphs exported once per machine, then cached)."""
    return EmbeddedTripletExtractor(batch_size=8, runtime="onnx")


def test_runtime_is_chosen_once_and_named_in_errors(monkeypatch):
    monkeypatch.delenv(RUNTIME_ENV, raising=False)
    assert EmbeddedTripletExtractor().runtime == "onnx"
    assert EmbeddedTripletExtractor(runtime="TORCH").runtime == "torch"
    monkeypatch.setenv(RUNTIME_ENV, "torch")
    assert EmbeddedTripletExtractor().runtime == "torch"
    assert EmbeddedTripletExtractor(runtime="onnx").runtime == "onnx"  # an argument wins over the environment
    with pytest.raises(ConfigError, match=r"runtime='gpu'.*onnx, torch"):
        EmbeddedTripletExtractor(runtime="gpu")
    monkeypatch.setenv(RUNTIME_ENV, "tensorflow")
    with pytest.raises(ConfigError, match=rf"\${RUNTIME_ENV}='tensorflow'"):
        EmbeddedTripletExtractor()


def test_each_runtime_has_its_own_cache_identity():
    # Cached triplets of one runtime are never served for the other (they agree only up to rounding).
    onnx, torch = EmbeddedTripletExtractor(runtime="onnx"), EmbeddedTripletExtractor(runtime="torch")
    assert extractor_identity(onnx) != extractor_identity(torch)
    assert extractor_identity(onnx) == extractor_identity(EmbeddedTripletExtractor(runtime="onnx"))


@pytest.mark.slow
def test_onnx_runtime_gives_the_torch_triplets(embedded):
    assert embedded.runtime == "onnx"
    torch_runtime = EmbeddedTripletExtractor(batch_size=8, runtime="torch")
    assert embedded.extract(SENTENCES) == torch_runtime.extract(SENTENCES)
    # Long sentences are encoded in chunks of max_words words; empty ones give nothing.
    words = [s.split() for s in SENTENCES[:3]] + [[]]
    chunked = EmbeddedTripletExtractor(batch_size=2, max_words=4, runtime="onnx")
    expected = EmbeddedTripletExtractor(batch_size=2, max_words=4, runtime="torch").extract_tokens(words)
    assert chunked.extract_tokens(words) == expected
    assert expected[-1] == [] and any(expected[:3])


@pytest.mark.slow
def test_a_verifying_process_never_imports_torch(embedded, tmp_path):
    embedded.extract(["The exported graphs are cached by now."])
    code = (
        "import sys\n"
        "from opinio_agents.triplets.embedded import EmbeddedTripletExtractor\n"
        "found = EmbeddedTripletExtractor(runtime='onnx').extract_one('The pool was cold.')\n"
        "assert found, found\n"
        "print('torch' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(RUNTIME_ENV, None)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_pair_geometry_is_the_words_between_the_spans():
    """One geometry for both runtimes: brute force over every pair of spans of a 9-word sentence."""
    from opinio_agents.triplets.headconfig import distance_bucket, pair_geometry

    spans = [(i, j) for i in range(9) for j in range(i, min(i + 3, 9))]
    aspects = [a for a in spans for _ in spans]
    opinions = [o for _ in spans for o in spans]
    lo, hi, dists, orders = pair_geometry(aspects, opinions)
    for (a0, a1), (o0, o1), low, high, dist, order in zip(aspects, opinions, lo, hi, dists, orders, strict=True):
        covered = set(range(a0, a1 + 1)) | set(range(o0, o1 + 1))
        between = [w for w in range(min(a0, o0), max(a1, o1) + 1) if w not in covered]
        if max(a0, o0) > min(a1, o1):  # disjoint spans: exactly the gap
            assert list(range(low, high)) == between
        else:  # overlapping spans: nothing between
            assert low == high
        assert dist == distance_bucket(high - low)
        assert order == (0 if a0 <= o0 else 1)


def test_numpy_pair_classifier_matches_the_torch_head():
    """The runtime's NumPy span pairs give the torch head's pair and polarity logits (random weights)."""
    torch = pytest.importorskip("torch")
    from opinio_agents.triplets.head import HeadConfig, TripletHead
    from opinio_agents.triplets.runtime import _Geometry, _Head, _prefix, _Spans

    torch.manual_seed(0)
    head = TripletHead(HeadConfig(hidden=32, span_dim=16, pair_hidden=24)).eval()
    states = torch.randn(2, 7, 32)
    rows = [0, 0, 1, 1, 1]
    aspects = [(0, 1), (5, 5), (2, 2), (6, 6), (0, 0)]
    opinions = [(3, 3), (1, 2), (2, 3), (0, 1), (0, 0)]
    with torch.inference_mode():
        expected = head.pair_logits(states, rows, aspects, opinions).numpy()
        expected_polarity = head.opinion_polarity_logits(states, rows, opinions).numpy()
    numpy_head = _Head(head.config, {k: v.numpy() for k, v in head.state_dict().items()})
    s = states.numpy()
    got = numpy_head.pair_logits(s, _prefix(s), _Spans(rows, aspects), _Spans(rows, opinions),
                                 _Geometry(rows, aspects, opinions))
    polarity = numpy_head.opinion_polarity_logits(s, _prefix(s), _Spans(rows, opinions))
    assert got.shape == expected.shape == (5, 4)
    assert abs(got - expected).max() < 1e-4
    assert abs(polarity - expected_polarity).max() < 1e-4
