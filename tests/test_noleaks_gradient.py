"""The clipped least-squares gradient of NOLEAKS / CURATE-SB: the fast path equals the tensor computation."""

from __future__ import annotations

import numpy as np
import pytest

from dpcd.discovery.noleaks import clipped_gradient


def reference(X, W, clip, counts=None):
    """The definition, one row at a time: mean over rows of clip(−x_i (x − xW)_j, −s, s)."""
    weights = np.ones(len(X)) if counts is None else np.asarray(counts, float)
    total = np.zeros((X.shape[1], X.shape[1]))
    for x, w in zip(X, weights):
        total += w * np.clip(-np.outer(x, x - x @ W), -clip, clip)
    return total / weights.sum()


@pytest.mark.parametrize("scale", [0.05, 0.5, 3.0])  # from no clipped row to most rows clipped
@pytest.mark.parametrize("with_counts", [False, True])
def test_fast_path_equals_the_tensor_path_and_the_definition(scale, with_counts):
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(3000, 6))
    X[::97] *= 4.0  # some rows outside [-1, 1]: they reach the clip
    W = rng.normal(0, scale, size=(6, 6))
    np.fill_diagonal(W, 0.0)
    counts = rng.integers(1, 5, size=len(X)) if with_counts else None
    fast = clipped_gradient(X, W, 2.0, counts, chunk=512)
    tensor = clipped_gradient(X, W, 2.0, counts, chunk=512, method="tensor")
    np.testing.assert_allclose(fast, tensor, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fast, reference(X, W, 2.0, counts), rtol=1e-12, atol=1e-15)


def test_the_clip_still_binds():
    X = np.array([[1.0, 1.0], [10.0, -10.0]])
    W = np.zeros((2, 2))
    # row 2: −x_i x_j = ±100, clipped to ±2; without the clip the mean would be far larger
    expected = (-np.outer(X[0], X[0]) + np.clip(-np.outer(X[1], X[1]), -2, 2)) / 2
    np.testing.assert_array_equal(clipped_gradient(X, W, 2.0), expected)
    with pytest.raises(ValueError, match="method"):
        clipped_gradient(X, W, 2.0, method="fast")
