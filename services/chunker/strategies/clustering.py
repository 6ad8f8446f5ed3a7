"""Consecutive pieces grouped by dynamic programming: the engine under the
cluster strategies (Chroma's ClusterSemanticChunker, ADR 0056).

A group's reward is the sum, over its pairs of pieces, of their cosine
similarity minus the document's mean pairwise similarity: a pair more alike
than the document's average pulls its pieces together, a pair less alike
pushes them apart (without the mean every pair is positive and the largest
groups always win). The segmentation of the pieces into groups that each fit
the token limit with the largest total reward is found exactly.

Bounded: for each last piece the DP grows its group backwards only while it
fits, so the work is O(n * pieces per group) vector products, never n².
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def mean_pairwise_similarity(vectors: np.ndarray) -> float:
    """Mean of v_a . v_b over all pairs a < b, from the sum vector alone:
    sum over a != b of v_a . v_b = |sum v|^2 - sum |v_a|^2."""
    n = len(vectors)
    if n < 2:
        return 0.0
    total = vectors.sum(axis=0, dtype=np.float64)
    squares = float(np.einsum("ij,ij->", vectors, vectors, dtype=np.float64))
    return (float(total @ total) - squares) / (n * (n - 1))


def group_reward(vectors: np.ndarray, start: int, end: int, mean: float) -> float:
    """Sum over pairs a < b in [start, end) of v_a . v_b - mean (the
    definition the DP maximises; a group of one piece scores 0)."""
    block = vectors[start:end].astype(np.float64) @ vectors[start:end].T.astype(np.float64)
    size = end - start
    return float((block.sum() - np.trace(block)) / 2 - mean * size * (size - 1) / 2)


def optimal_groups(vectors: np.ndarray, fits: Callable[[int, int], bool]) -> list[tuple[int, int]]:
    """Piece ranges [start, end) in order, covering every piece, maximising
    the total group_reward, each group with fits(start, end) true.

    fits(start, end) must hold for every single piece (end = start + 1); a
    group is grown backwards from its last piece until it no longer fits
    (token counts grow with the text), which bounds the work. Ties go to the
    smaller last group.
    """
    n = len(vectors)
    if n == 0:
        return []
    rows = np.asarray(vectors, dtype=np.float64)
    mean = mean_pairwise_similarity(rows)
    best = np.full(n + 1, -np.inf)
    best[0] = 0.0
    cut = np.zeros(n + 1, dtype=np.int64)  # cut[end]: start of the last group of the best [0, end)
    for end in range(1, n + 1):
        running = np.zeros(rows.shape[1])  # sum of the group's vectors after `start`
        reward = 0.0
        for start in range(end - 1, -1, -1):
            if start < end - 1 and not fits(start, end):
                break
            reward += float(rows[start] @ running) - mean * (end - 1 - start)
            running += rows[start]
            total = best[start] + reward
            if total > best[end]:
                best[end], cut[end] = total, start
    groups: list[tuple[int, int]] = []
    end = n
    while end > 0:
        groups.append((int(cut[end]), end))
        end = int(cut[end])
    return groups[::-1]


def total_reward(vectors: np.ndarray, groups: Sequence[tuple[int, int]]) -> float:
    """The objective of a segmentation (what optimal_groups maximises)."""
    mean = mean_pairwise_similarity(np.asarray(vectors, dtype=np.float64))
    return sum(group_reward(vectors, a, b, mean) for a, b in groups)
