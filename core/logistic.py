"""The one logistic model: its probability and its fit, shared by the scope model (index/scope.py, fitted by
tools/calibrate_scope.py) and the routing model (assistant/route.py, fitted by bench/next_reads.py --calibrate).

Why one fit: both are a handful of features over a few hundred labelled questions, where Newton's method finds
the exact optimum of the penalised log-loss in a few steps (plain gradient descent stops wherever its step
budget ends). Features are rescaled for the fit so one ridge penalty treats them alike; the weights come back
on the raw scale, so the settings hold plain log-odds weights per feature.
"""

from __future__ import annotations

import math

import numpy as np


def logistic(z: float) -> float:
    """1 / (1 + e^-z), without overflow for any z."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def logistic_array(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, *, balanced: bool = False,
                 scale: np.ndarray | None = None, max_steps: int = 100) -> tuple[np.ndarray, float]:
    """Weights (raw feature scale) and intercept minimising Σ s_i·logloss_i + l2/2·‖w·scale‖², by Newton's method.

    `balanced`: s_i weighs each class as much as the other (they sum to n); else s_i = 1. `scale`: the
    per-feature divisor the penalty is measured in (default: the standard deviation). The intercept is not
    penalised."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean = x.mean(axis=0)
    div = x.std(axis=0) if scale is None else np.asarray(scale, dtype=np.float64).copy()
    div[div < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / div])
    if balanced:
        sample = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1)) * len(y)
    else:
        sample = np.ones(len(y))
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], float(l2))
    penalty[0] = 0.0
    for _ in range(max_steps):
        p = logistic_array(z @ w)
        grad = z.T @ (sample * (p - y)) + penalty * w
        hess = (z * (sample * p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    raw = w[1:] / div
    return raw, float(w[0] - (raw * mean).sum())
