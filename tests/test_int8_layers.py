"""Which MatMuls the int8 encoder keeps in fp32 (the feed-forward down-projections), on a tiny graph."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from opinio_agents.embeddings.onnx import sensitive_matmuls  # noqa: E402


def _graph() -> object:
    from onnx import TensorProto, helper, numpy_helper

    weights = {"w_up": (4, 8), "w_down": (8, 4), "w_square": (4, 4)}
    inits = [numpy_helper.from_array(np.zeros(shape, np.float32), name) for name, shape in weights.items()]
    nodes = [
        helper.make_node("MatMul", ["x", "w_square"], ["a"], name="attention/query/MatMul"),
        helper.make_node("MatMul", ["a", "w_up"], ["b"], name="intermediate/dense/MatMul"),
        helper.make_node("MatMul", ["b", "w_down"], ["c"], name="output/dense/MatMul"),
        helper.make_node("MatMul", ["c", "a"], ["y"], name="activations/MatMul"),  # no weight: never kept
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        initializer=inits,
    )
    return helper.make_model(graph)


def test_only_the_narrowing_weight_matmuls_stay_fp32() -> None:
    assert sensitive_matmuls(_graph()) == ["output/dense/MatMul"]
