"""Fusion and aggregation: weighted reciprocal-rank fusion of chunk rankings, rolled up to resources.

Chunk ranks are fused first (BM25 and dense agree on passages, not just on documents), then each resource
gets a score from its passages (`aggregate`): its best fused passage, plus a decaying share of the next ones
(`index.fusion_passages`, `index.fusion_decay`), so a resource with several matching passages beats one with a
single lucky passage. Both knobs are chosen by grouped cross-validation (tools/tune_retrieval.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np


def rrf(rankings: Sequence[tuple[Sequence[Hashable], float]], k: int = 60) -> dict[Hashable, float]:
    """Weighted reciprocal-rank fusion: score(x) = Σ weight / (k + rank of x), ranks starting at 1."""
    fused: dict[Hashable, float] = {}
    for ranking, weight in rankings:
        if weight == 0:
            continue
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def ranked(scores: Mapping[Hashable, float]) -> list[Hashable]:
    """Keys by descending score; ties keep insertion order (stable)."""
    return [key for key, _ in sorted(scores.items(), key=lambda kv: -kv[1])]


def rrf_rows(rankings: Sequence[tuple[np.ndarray, float]], k: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """`rrf` over integer rows, vectorised: (rows, fused scores) in order of first appearance (the order the
    dict version keeps), each row's contributions added in the rankings' order (so the sums are the same)."""
    parts = [(np.asarray(r, dtype=np.int64), w) for r, w in rankings if w != 0 and len(r)]
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    keys = np.concatenate([r for r, _ in parts])
    contrib = np.concatenate([w / (k + np.arange(1, len(r) + 1, dtype=np.float64)) for r, w in parts])
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    sums = np.zeros(len(uniq), dtype=np.float64)
    np.add.at(sums, inverse, contrib)
    order = np.argsort(first, kind="stable")
    return uniq[order], sums[order]


def best_per_group(rows: np.ndarray, scores: np.ndarray, groups: np.ndarray) -> dict[int, float]:
    """Max score per group (resource) over the given rows, groups in order of their first row; rows of group
    -1 (unknown resource) are dropped."""
    g = groups[np.asarray(rows, dtype=np.int64)]
    keep = g >= 0
    g, s = g[keep], np.asarray(scores, dtype=np.float64)[keep]
    if len(g) == 0:
        return {}
    uniq, first, inverse = np.unique(g, return_index=True, return_inverse=True)
    best = np.full(len(uniq), -np.inf)
    np.maximum.at(best, inverse, s)
    order = np.argsort(first, kind="stable")
    return dict(zip(uniq[order].tolist(), best[order].tolist(), strict=True))


def aggregate(
    rows: np.ndarray, scores: np.ndarray, groups: np.ndarray, passages: int = 1, decay: float = 0.0
) -> dict[int, float]:
    """Score per group (resource) from its passages: best + decay·second + decay²·third … over the best
    `passages` rows; `passages` 1 or `decay` 0 is the best passage alone. Rows of group -1 are dropped."""
    if passages <= 1 or decay == 0:
        return best_per_group(rows, scores, groups)
    out: dict[int, float] = {}
    taken: dict[int, int] = {}
    for i in np.argsort(-scores, kind="stable").tolist():
        group = int(groups[int(rows[i])])
        n = taken.get(group, 0)
        if group < 0 or n >= passages:
            continue
        out[group] = out.get(group, 0.0) + float(scores[i]) * decay**n
        taken[group] = n + 1
    return out


def top_rows(scores: np.ndarray, n: int, mask: np.ndarray | None = None, positive_only: bool = False) -> np.ndarray:
    """Indices of the n highest scores, best first, restricted to `mask` (and to scores > 0 if asked)."""
    keep = np.ones(len(scores), dtype=bool) if mask is None else mask.copy()
    if positive_only:
        keep &= scores > 0
    candidates = np.flatnonzero(keep)
    if len(candidates) > n:
        part = np.argpartition(-scores[candidates], n - 1)[:n]
        candidates = candidates[part]
    return candidates[np.argsort(-scores[candidates], kind="stable")]
