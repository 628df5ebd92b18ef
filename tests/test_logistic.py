"""The one logistic fit (core/logistic.py) the scope and routing models are fitted with."""

from __future__ import annotations

import numpy as np

from core.logistic import fit_logistic, logistic


def _generated(seed: int, n: int = 4000) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.normal(0.4, 0.2, n), rng.integers(0, 2, n), rng.normal(5.0, 2.0, n)])
    truth, intercept = np.array([4.0, -1.5, 0.3]), -2.0
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ truth + intercept)))).astype(float)
    return x, y, truth, intercept


def test_the_fit_recovers_known_weights_on_generated_data() -> None:
    x, y, truth, intercept = _generated(seed=7)
    weights, b = fit_logistic(x, y, l2=1e-6)
    assert np.allclose(weights, truth, atol=0.35)
    assert abs(b - intercept) < 0.5


def test_weights_come_back_on_the_raw_feature_scale() -> None:
    x, y, _, _ = _generated(seed=3)
    w1, b1 = fit_logistic(x, y, l2=1e-6)
    w10, b10 = fit_logistic(x * [1, 1, 10], y, l2=1e-6)
    assert np.allclose(w10 * [1, 1, 10], w1, rtol=1e-4) and abs(b10 - b1) < 1e-4


def test_a_larger_penalty_shrinks_the_weights() -> None:
    x, y, _, _ = _generated(seed=5)
    loose, _ = fit_logistic(x, y, l2=1e-6)
    tight, _ = fit_logistic(x, y, l2=1000.0)
    assert np.abs(tight).sum() < np.abs(loose).sum()


def test_balanced_classes_put_the_rare_class_at_even_odds() -> None:
    """With no informative feature, a balanced fit says 0.5 however rare the positives; a plain fit says their share."""
    x = np.zeros((100, 1))
    y = np.array([1.0] * 10 + [0.0] * 90)
    _, plain = fit_logistic(x, y, l2=1.0)
    _, balanced = fit_logistic(x, y, l2=1.0, balanced=True)
    assert abs(logistic(plain) - 0.1) < 1e-6
    assert abs(logistic(balanced) - 0.5) < 1e-6


def test_separable_rows_still_give_finite_weights_under_a_penalty() -> None:
    x = np.array([[0.0], [1.0]] * 10)
    weights, b = fit_logistic(x, x[:, 0], l2=0.2)
    assert np.isfinite(weights).all() and weights[0] > 0 > b


def test_the_probability_never_overflows() -> None:
    assert logistic(-1000.0) == 0.0 and logistic(1000.0) == 1.0 and logistic(0.0) == 0.5
