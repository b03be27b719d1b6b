"""Linear NOTEARS: acyclicity and recovery of small linear-Gaussian DAGs."""

import numpy as np
import pytest

from dpcd.datasets import random_dag, sample_linear_gaussian
from dpcd.discovery.notears import acyclicity, encode_ordinal, notears, score_result


def test_acyclicity_is_zero_exactly_on_dags_and_gradient_matches():
    W = np.array([[0, 1.0, 0], [0, 0, 0.5], [0, 0, 0]])
    assert acyclicity(W)[0] == pytest.approx(0.0, abs=1e-12)
    W[2, 0] = 0.7
    h, g = acyclicity(W)
    assert h > 0.01
    eps = 1e-6
    E = np.zeros_like(W)
    E[1, 2] = eps
    assert (acyclicity(W + E)[0] - acyclicity(W - E)[0]) / (2 * eps) == pytest.approx(g[1, 2], rel=1e-5)


@pytest.mark.parametrize("seed", [1, 2])
def test_notears_recovers_small_linear_gaussian_dag(seed):
    dag = random_dag(10, 0.3, rng=seed)
    ds = sample_linear_gaussian(dag, 1000, rng=seed + 10, weight_range=(0.5, 2.0))
    W, info = notears(ds.data.to_numpy(), return_info=True)
    assert info["h"] <= 1e-8
    result = score_result(W, list(ds.data.columns))
    true, est = set(dag.edges()), set(result.dag.edges())
    f1 = 2 * len(true & est) / (len(true) + len(est))
    assert f1 >= 0.9  # Zheng et al. (2018), Fig. 3: near-perfect recovery at n = 1000, d = 10


def test_encode_ordinal_uses_the_domain_only():
    codes = np.array([[0, 2, 1], [1, 0, 1], [0, 1, 1]])
    out = encode_ordinal(codes, levels=[2, 3, 1])
    assert np.allclose(out[:, 0], [-1, 1, -1]) and np.allclose(out[:, 1], [1, -1, 0]) and np.allclose(out[:, 2], 0)
    # a wider public domain changes the encoding although the data are the same: nothing is read from the codes
    wider = encode_ordinal(codes, levels=[3, 3, 1])
    assert np.allclose(wider[:, 0], [-1, 0, -1]) and np.allclose(wider[:, 1], out[:, 1])


def test_encode_ordinal_requires_the_public_levels():
    codes = np.array([[0, 2], [1, 0]])
    with pytest.raises(TypeError):
        encode_ordinal(codes)  # levels is a required argument
    with pytest.raises(TypeError, match="levels"):
        encode_ordinal(codes, None)
    with pytest.raises(ValueError, match="levels"):
        encode_ordinal(codes, [2, 3, 4])


def test_notears_rejects_bad_input():
    with pytest.raises(ValueError, match="lambda1"):
        notears(np.zeros((10, 3)), lambda1=-1)
    with pytest.raises((ValueError, TypeError), match="X"):
        notears(np.array([[np.nan, 1.0], [1.0, 2.0], [0.0, 1.0]]))
