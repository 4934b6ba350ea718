"""The key/value cache layer of ``hf:`` models (preallocated buffers) holds what transformers' own holds."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
cache_utils = pytest.importorskip("transformers.cache_utils")


def test_growing_layer_returns_the_keys_and_values_of_concatenation() -> None:
    from opinio_agents.llm.local import _growing_layer

    layer_class = _growing_layer()
    if layer_class is None:
        pytest.skip("transformers before DynamicLayer")
    growing, reference = layer_class(), cache_utils.DynamicLayer()
    generator = torch.Generator().manual_seed(0)
    # a prompt, tokens one at a time past the spare room (a reallocation), a crop, and writes after it
    for step, length in enumerate([40, *[1] * 300, -100, 5, 1, -3, 2]):
        if length < 0:
            growing.crop(length)
            reference.crop(length)
            continue
        keys, values = (torch.randn(1, 3, length, 8, generator=generator) for _ in range(2))
        got = growing.update(keys, values)
        want = reference.update(keys, values)
        assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True)), step
    assert growing.get_seq_length() == reference.get_seq_length() == 245
    assert growing.key_buffer.shape[-2] >= 245 and growing.keys.data_ptr() == growing.key_buffer.data_ptr()
