"""The trend statistics computed without importing scipy.stats are SciPy's, to the bit.

``trends.mann_kendall`` and ``trends.pettitt`` run for every highlight; importing
``scipy.stats`` costs about a second of a cold process, so Kendall's tau-b (asymptotic
p-value) and average ranks are computed with the same steps in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from opinio_agents.trends import _average_ranks, _kendall_tau_b, mann_kendall, pettitt


def _same(a: float, b: float) -> bool:
    return a == b or (np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("seed", range(4))
def test_tau_b_and_p_equal_scipy_bit_for_bit(seed: int) -> None:
    from scipy.stats import kendalltau, rankdata

    rng = np.random.default_rng(seed)
    checked = 0
    for trial in range(60):
        n = int(rng.integers(3, 400))
        x = rng.integers(0, int(rng.integers(1, n + 1)), n).astype(float) * 86400.0
        y = rng.choice([-1.0, 0.0, 1.0], n) if trial % 2 else rng.integers(0, int(rng.integers(1, 60)), n) * 0.5
        found = _kendall_tau_b(x, y)
        assert found is not None
        expected = kendalltau(x, y, variant="b", method="asymptotic")
        assert _same(found[0], float(expected.statistic)) and _same(found[1], float(expected.pvalue))
        assert np.array_equal(_average_ranks(y), rankdata(y))
        checked += 1
    assert checked == 60


def test_many_distinct_values_fall_back_to_scipy() -> None:
    from scipy.stats import kendalltau

    rng = np.random.default_rng(9)
    x, y = rng.normal(size=200), rng.normal(size=200)
    assert _kendall_tau_b(x, y) is None
    expected = kendalltau(x, y, variant="b", method="asymptotic")
    assert mann_kendall(x, y) == (float(expected.statistic), float(expected.pvalue))


def test_pettitt_uses_average_ranks() -> None:
    assert pettitt([0, 0, 0, 1, 1, 1, 1]) == (3, 12.0)
    assert pettitt([1, 1, 2, 2, 2, 0, 0]) == pettitt(list(_average_ranks(np.array([1, 1, 2, 2, 2, 0, 0.0]))))
