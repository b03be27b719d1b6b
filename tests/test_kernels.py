"""Gaussian kernels, HSIC and its permutation null, kernel ridge regression."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcd import kernels


def _reference_hsic(K: np.ndarray, L: np.ndarray) -> float:
    """tr(K H L H) / (m-1)^2 with an explicit centring matrix H."""
    m = K.shape[0]
    H = np.eye(m) - np.ones((m, m)) / m
    return float(np.trace(K @ H @ L @ H)) / (m - 1) ** 2


def _reference_gram(x: np.ndarray, sigma: float) -> np.ndarray:
    x = x.reshape(len(x), -1)
    out = np.empty((len(x), len(x)))
    for i in range(len(x)):
        out[i] = np.exp(-np.sum((x - x[i]) ** 2, axis=1) / (2 * sigma**2))
    return out


def test_median_bandwidth_matches_definition():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    dists = [np.linalg.norm(x[i] - x[j]) for i in range(40) for j in range(i + 1, 40)]
    assert kernels.median_bandwidth(x) == pytest.approx(np.median(dists), rel=1e-12)
    assert kernels.median_bandwidth(np.ones(5)) == 1.0


def _reference_median(x: np.ndarray) -> float:
    """np.median of the square roots of the positive squared distances over pairs i < j."""
    x = x.reshape(len(x), -1)
    dist = kernels.pairwise_sq_dists(x)
    upper = dist[np.triu_indices(len(x), k=1)]
    return float(np.median(np.sqrt(upper[upper > 0])))


@pytest.mark.parametrize("m", [2, 3, 9, 10, 301, 1200])
def test_median_bandwidth_is_exactly_the_reference_median(m):
    # the 1-D selection (bisection + candidate listing) and the 2-D upper-triangle route return the
    # same floating-point number as np.median over all pairs: ties, heavy tails, squares below the
    # smallest normal number (dropped as zero by both), even and odd numbers of pairs
    rng = np.random.default_rng(m)
    cases = [rng.normal(size=m), rng.standard_cauchy(size=m), rng.integers(0, 3, size=m).astype(float),
             np.round(rng.normal(size=m), 1), 1e-160 * rng.normal(size=m), np.exp(20 * rng.normal(size=m)),
             rng.normal(size=(m, 2))]
    for x in cases:
        if np.ptp(x) == 0:
            continue
        assert kernels.median_bandwidth(x) == _reference_median(x)
    assert kernels.median_bandwidth(np.full(m, 3.0)) == 1.0


def test_gaussian_gram_matches_reference():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 2))
    np.testing.assert_allclose(kernels.gaussian_gram(x, bandwidth=0.7), _reference_gram(x, 0.7), atol=1e-13)
    one_d = rng.normal(size=30)
    np.testing.assert_allclose(kernels.gaussian_gram(one_d, bandwidth=1.3), _reference_gram(one_d, 1.3), atol=1e-13)


def test_hsic_equals_direct_formula():
    rng = np.random.default_rng(2)
    x = rng.normal(size=50)
    y = x**2 + rng.normal(size=50)
    K = kernels.gaussian_gram(x)
    L = kernels.gaussian_gram(y)
    assert kernels.hsic(K, L) == pytest.approx(_reference_hsic(K, L), rel=1e-12)
    result = kernels.hsic_permutation_test(x, y, rng=0, method="exact")
    assert result.statistic == pytest.approx(_reference_hsic(K, L), rel=1e-12)


def test_permutation_scores_are_hsic_of_permuted_data():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = np.sin(2 * x) + 0.5 * rng.normal(size=40)
    result = kernels.hsic_permutation_test(x, y, n_permutations=7, rng=11, method="exact")
    perms = kernels.random_permutations(7, 40, rng=np.random.default_rng(11))
    L = kernels.gaussian_gram(y, bandwidth=result.bandwidth_y)
    for perm, score in zip(perms, result.permuted):
        K = kernels.gaussian_gram(x[perm], bandwidth=result.bandwidth_x)
        assert score == pytest.approx(_reference_hsic(K, L), rel=1e-10)
    assert result.p_value == np.mean(result.statistic < result.permuted)


@pytest.mark.parametrize("m", [60, 400])
def test_lowrank_scores_match_exact(m):
    rng = np.random.default_rng(m)
    x = rng.normal(size=m)
    y = np.cos(x) + rng.normal(size=m)
    exact = kernels.hsic_permutation_test(x, y, n_permutations=20, rng=5, method="exact")
    low = kernels.hsic_permutation_test(x, y, n_permutations=20, rng=5, method="lowrank")
    assert low.method == "lowrank" and exact.method == "exact"
    # neglected trace <= 1e-10 per factor, ||HLH||_2 <= m: error <= 2e-10 * m / (m-1)^2
    bound = 2e-10 * m / (m - 1) ** 2 + 1e-15
    assert abs(low.statistic - exact.statistic) <= bound
    assert np.max(np.abs(low.permuted - exact.permuted)) <= bound
    assert low.p_value == exact.p_value


def test_incomplete_cholesky_reconstructs_gram():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 1))
    F = kernels.incomplete_cholesky(x, bandwidth=1.0, tol=1e-10)
    K = kernels.gaussian_gram(x, bandwidth=1.0)
    assert F.shape[1] < 200
    residual = K - F @ F.T
    assert np.trace(residual) <= 1e-10
    assert np.linalg.eigvalsh(residual).min() > -1e-10  # PSD up to rounding


def test_permutation_p_value_uniform_under_independence():
    rng = np.random.default_rng(5)
    p_values = []
    for _ in range(300):
        x = rng.normal(size=50)
        y = rng.uniform(size=50)
        p_values.append(kernels.hsic_permutation_test(x, y, n_permutations=100, rng=rng).p_value)
    p_values = np.asarray(p_values)
    # p takes values j/100; compare with the uniform law (the discreteness adds <= 0.01 to the KS distance)
    ks = stats.kstest(p_values, "uniform")
    assert ks.statistic < 1.36 / np.sqrt(len(p_values)) + 0.01
    assert 0.02 <= np.mean(p_values <= 0.05) <= 0.09  # binomial(300, 0.05): mean 0.05, sd 0.0126


def test_permutation_p_value_small_under_dependence():
    rng = np.random.default_rng(6)
    x = rng.uniform(-2, 2, size=200)
    y = x**2 + 0.2 * rng.normal(size=200)  # uncorrelated but strongly dependent
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.2
    assert kernels.hsic_permutation_test(x, y, rng=0).p_value == 0.0


def test_krr_residuals_match_closed_form_and_sklearn():
    rng = np.random.default_rng(7)
    m = 120
    z = rng.normal(size=(m, 2))
    targets = np.column_stack([np.sin(z.sum(axis=1)), z[:, 0] ** 2]) + 0.1 * rng.normal(size=(m, 2))
    lam = 1.0
    factor = kernels.krr_factor(z, lam=lam)
    residuals = factor.residuals(targets)
    K = kernels.gaussian_gram(z, bandwidth=factor.bandwidth)
    alpha = np.linalg.solve(K + m * lam / 2 * np.eye(m), targets)
    np.testing.assert_allclose(residuals, targets - K @ alpha, atol=1e-10)
    np.testing.assert_allclose(kernels.krr_residuals(z, targets[:, 0], lam=lam), residuals[:, 0], atol=1e-12)
    sklearn = pytest.importorskip("sklearn.kernel_ridge")
    model = sklearn.KernelRidge(alpha=m * lam / 2, kernel="rbf", gamma=1 / (2 * factor.bandwidth**2))
    model.fit(z, targets)
    np.testing.assert_allclose(residuals, targets - model.predict(z), atol=1e-8)


@pytest.mark.parametrize("lam_of_m", [lambda m: 1.0, lambda m: 2.0 / m])
def test_lowrank_krr_within_its_bound_of_exact_and_sklearn(lam_of_m):
    # residuals of the incomplete-Cholesky KRR differ from the exact ones by <= (tol / c) ||t||_2
    rng = np.random.default_rng(9)
    m = 600
    z = rng.uniform(-0.5, 0.5, size=(m, 2))
    targets = np.column_stack([np.sin(z.sum(axis=1)), z[:, 0] ** 2]) + 0.3 * rng.uniform(-0.5, 0.5, size=(m, 2))
    lam = lam_of_m(m)
    exact = kernels.krr_factor(z, lam=lam)
    for method in ("lowrank", "auto"):
        low = kernels.krr_factor(z, lam=lam, method=method, tol=1e-10)
        assert low.method == "lowrank" and low.lowrank.shape[1] <= m // 4
        assert low.bandwidth == exact.bandwidth and low.c == exact.c == m * lam / 2
        bound = 1e-10 / low.c * np.linalg.norm(targets, axis=0)
        error = np.linalg.norm(low.residuals(targets) - exact.residuals(targets), axis=0)
        assert np.all(error <= bound)
    sklearn = pytest.importorskip("sklearn.kernel_ridge")
    model = sklearn.KernelRidge(alpha=m * lam / 2, kernel="rbf", gamma=1 / (2 * exact.bandwidth**2))
    model.fit(z, targets)
    reference = targets - model.predict(z)
    # KernelRidge solves K + cI itself; agreement up to the conditioning of the m x m system
    np.testing.assert_allclose(low.residuals(targets), reference, atol=1e-8)
    np.testing.assert_allclose(exact.residuals(targets), reference, atol=1e-8)
    # with more columns than m/4 would be needed, "auto" turns to conjugate gradients at lambda = 1
    # (condition number <= 3) and to the Cholesky factor at c = 1
    wide = rng.normal(size=(200, 6))
    assert kernels.krr_factor(wide, method="auto").method == "cg"
    assert kernels.krr_factor(wide, lam=2.0 / 200, method="auto").method == "exact"


def test_krr_objective_is_minimised():
    # the residual solution minimises lam/2 ||w||^2 + 1/m sum (f(z_i) - x_i)^2 over f = K a
    rng = np.random.default_rng(8)
    m, lam = 60, 0.5
    z = rng.normal(size=m)
    x = np.tanh(z) + 0.2 * rng.normal(size=m)
    factor = kernels.krr_factor(z, lam=lam)
    K = kernels.gaussian_gram(z, bandwidth=factor.bandwidth)
    a_star = np.linalg.solve(K + m * lam / 2 * np.eye(m), x)

    def objective(a):
        return lam / 2 * a @ K @ a + np.mean((K @ a - x) ** 2)

    best = objective(a_star)
    for _ in range(20):
        assert objective(a_star + 1e-3 * rng.normal(size=m)) >= best
    np.testing.assert_allclose(x - K @ a_star, factor.residuals(x), atol=1e-10)


def test_bad_arguments():
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="x"):
        kernels.hsic_permutation_test(np.array([1.0, np.nan, 2.0]), np.arange(3.0), rng=0)
    with pytest.raises(ValueError, match="same number of rows"):
        kernels.hsic_permutation_test(x, x[:5], rng=0)
    with pytest.raises(ValueError, match="n_permutations"):
        kernels.hsic_permutation_test(x, x, n_permutations=0, rng=0)
    with pytest.raises(ValueError, match="method"):
        kernels.hsic_permutation_test(x, x, rng=0, method="fast")
    with pytest.raises(ValueError, match="bandwidth"):
        kernels.gaussian_gram(x, bandwidth=-1.0)
    with pytest.raises(ValueError, match="lam"):
        kernels.krr_factor(x, lam=0.0)
    with pytest.raises(ValueError, match="method"):
        kernels.krr_factor(x, method="fast")
    with pytest.raises(TypeError, match="rng"):
        kernels.hsic_permutation_test(x, x, rng="seed")
    with pytest.raises(ValueError, match="K and L"):
        kernels.hsic(np.eye(3), np.eye(4))


# ---------------------------------------------------------------------------
# The faster routes against the computations they replace


def _reference_permuted_scores(x: np.ndarray, y: np.ndarray, sx: float, sy: float, perms: np.ndarray) -> np.ndarray:
    """tr(K[psi, psi] H L H) for every permutation, from the Gram matrices (the definition, times (m-1)^2)."""
    Kc = kernels.center_gram(kernels.gaussian_gram(x, bandwidth=sx))
    Lc = kernels.center_gram(kernels.gaussian_gram(y, bandwidth=sy))
    return np.array([np.vdot(Kc[np.ix_(p, p)], Lc) for p in perms])


@pytest.mark.parametrize("swap", [False, True])
def test_lowrank_scores_gather_the_narrower_factor(swap):
    # the factor with fewer columns is permuted (by the inverse permutation when it is G): same scores
    rng = np.random.default_rng(21)
    m = 300
    narrow = rng.normal(size=m)
    wide = np.exp(1.5 * rng.normal(size=m))  # heavy tail: many more pivots
    x, y = (wide, narrow) if swap else (narrow, wide)
    fx, fy = kernels.hsic_factor(x), kernels.hsic_factor(y, name="y")
    assert (fx.centred.shape[1] > fy.centred.shape[1]) == swap
    perms = kernels.random_permutations(15, m, rng=rng)
    scores = kernels._lowrank_scores(fx.centred, fy.centred, perms)
    direct = np.array([np.sum((fx.centred[p].T @ fy.centred) ** 2) for p in perms])
    np.testing.assert_allclose(scores, direct, rtol=1e-12)
    if not swap:  # the former route (one chunk at this size), bit for bit
        assert np.array_equal(scores, _former_stacked_scores(fx.centred, fy.centred, perms))
    reference = _reference_permuted_scores(x, y, fx.bandwidth, fy.bandwidth, perms)
    bound = 2e-10 * m  # neglected trace <= 1e-10 per factor, ||H K H||_2 <= m (scores not yet divided by (m-1)^2)
    assert np.max(np.abs(scores - reference)) <= bound


@pytest.mark.parametrize("method", ["auto", "lowrank", "exact"])
def test_test_from_factors_is_the_permutation_test(method):
    rng = np.random.default_rng(22)
    x = rng.normal(size=120)
    y = np.sin(2 * x) + rng.normal(size=120)
    whole = kernels.hsic_permutation_test(x, y, rng=5, n_permutations=30, method=method)
    parts = kernels.hsic_permutation_test_factors(kernels.hsic_factor(x, method=method),
                                                  kernels.hsic_factor(y, method=method, name="y"),
                                                  rng=5, n_permutations=30)
    assert whole.method == parts.method == ("exact" if method == "exact" else "lowrank")
    assert whole.statistic == parts.statistic and whole.p_value == parts.p_value
    assert np.array_equal(whole.permuted, parts.permuted)
    with pytest.raises(ValueError, match="same number of rows"):
        kernels.hsic_permutation_test_factors(kernels.hsic_factor(x), kernels.hsic_factor(y[:50]), rng=0)


def test_pivoted_cholesky_gives_up_only_on_factors_it_would_discard():
    rng = np.random.default_rng(23)
    z = rng.normal(size=(1200, 6))  # needs far more than 300 columns at 1e-10
    sigma = kernels.median_bandwidth(z)
    full, rest_full = kernels._pivoted_cholesky(z, sigma, 1e-10, 300)
    early, rest_early = kernels._pivoted_cholesky(z, sigma, 1e-10, 300, give_up=True)
    assert rest_full > 1e-10 and early.shape[1] < full.shape[1]
    np.testing.assert_array_equal(early, full[:, :early.shape[1]])  # the same columns, fewer of them
    narrow = rng.normal(size=(1200, 1))  # reaches 1e-10 with a few dozen columns: never given up
    a, _ = kernels._pivoted_cholesky(narrow, 1.0, 1e-10, 300)
    b, rest_b = kernels._pivoted_cholesky(narrow, 1.0, 1e-10, 300, give_up=True)
    assert np.array_equal(a, b) and rest_b <= 1e-10


def test_blocked_gram_is_the_gram_matrix():
    # more rows than one block, a last block that is not full, and into a caller's buffer
    rng = np.random.default_rng(24)
    for d in (1, 3):
        z = rng.normal(size=(300, d))
        out = np.full((300, 300), np.nan)
        gram = kernels.gaussian_gram(z, bandwidth=1.3, out=out)
        assert gram is out
        np.testing.assert_allclose(gram, _reference_gram(z, 1.3), atol=1e-14)
        y = rng.normal(size=(7, d))
        reference = ((z[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
        np.testing.assert_allclose(kernels.pairwise_sq_dists(z, y), reference, atol=1e-12)
    with pytest.raises(ValueError, match="out must be"):
        kernels.gaussian_gram(z, bandwidth=1.3, out=np.empty((300, 299)))
    with pytest.raises(ValueError, match="workspace must be"):
        kernels.krr_factor(z, method="cg", workspace=np.empty((300, 300), dtype=np.float32))


@pytest.mark.parametrize("d", [3, 5])
def test_cg_krr_within_its_bound_of_the_cholesky_solution(d):
    # (tol / c) ||t||_2 on every column; the bound is met, and a loose tolerance shows it is not vacuous
    rng = np.random.default_rng(25 + d)
    m = 700
    z = rng.uniform(-0.5, 0.5, size=(m, d))
    targets = np.column_stack([np.sin(z.sum(axis=1)), z[:, 0] ** 2, rng.normal(size=m)])
    exact = kernels.krr_factor(z, method="exact")
    reference = exact.residuals(targets)
    K = _reference_gram(z, exact.bandwidth)
    alpha = np.linalg.solve(K + exact.c * np.eye(m), targets)
    np.testing.assert_allclose(reference, targets - K @ alpha, atol=1e-10)
    auto = kernels.krr_factor(z, method="auto")
    assert auto.method == "cg" and auto.lowrank is not None  # preconditioned by the coarse factor
    for factor in (auto, kernels.krr_factor(z, method="cg")):
        error = np.linalg.norm(factor.residuals(targets) - reference, axis=0)
        assert np.all(error <= 1e-10 / factor.c * np.linalg.norm(targets, axis=0))
        np.testing.assert_allclose(factor.residuals(targets[:, 0]), factor.residuals(targets)[:, 0], atol=1e-12)
    loose = kernels.krr_factor(z, method="cg", tol=1e-2 * exact.c)
    error = np.linalg.norm(loose.residuals(targets) - reference, axis=0)
    assert np.all(error <= 1e-2 * np.linalg.norm(targets, axis=0)) and error.max() > 1e-9


@pytest.mark.parametrize("preconditioned", [False, True])
def test_cg_krr_returns_only_answers_that_meet_its_stopping_rule(preconditioned):
    # whatever the iteration cap, an answer U = c w has ||t - (K + c I) w||_2 <= (tol / c) ||t||_2 on every column
    # (the rule the error bound rests on), and fewer iterations give None rather than an answer outside it
    rng = np.random.default_rng(28)
    m, tol = 500, 1e-10
    z = rng.uniform(-1.0, 1.0, size=(m, 4))
    targets = np.column_stack([np.sin(3.0 * z.sum(axis=1)), rng.normal(size=m)])
    auto = kernels.krr_factor(z, method="auto")
    assert auto.method == "cg" and auto.lowrank is not None
    preconditioner = (auto.lowrank, auto.cho) if preconditioned else None
    limit = tol / auto.c * np.linalg.norm(targets, axis=0)
    outcomes = []
    for max_iter in range(1, 30):
        out = kernels._cg_krr_residuals(auto.gram, auto.c, targets, tol, preconditioner, max_iter=max_iter)
        outcomes.append(out is not None)
        if out is not None:
            w = out / auto.c
            residual = np.linalg.norm(targets - auto.gram @ w - auto.c * w, axis=0)
            assert np.all(residual <= limit * (1 + 1e-9)), (max_iter, residual / limit)
    assert not outcomes[0] and outcomes[-1]  # the sweep crosses the stopping point


def test_cg_krr_gives_up_below_the_rounding_floor_of_its_true_residual():
    # the recursion's residual keeps shrinking geometrically while the recomputed one stops at about
    # eps_mach ||K|| ||w||: a tolerance far below that floor is never met, so CG returns None (the caller then
    # solves by Cholesky) instead of trusting the recursion
    rng = np.random.default_rng(29)
    z = rng.normal(size=(300, 4))
    t = np.cos(z[:, 0] * z[:, 1])
    factor = kernels.krr_factor(z, method="cg")
    assert kernels._cg_krr_residuals(factor.gram, factor.c, t, 1e-10) is not None
    assert kernels._cg_krr_residuals(factor.gram, factor.c, t, 1e-22) is None


def test_cg_krr_accepts_convergence_on_its_last_iteration():
    # t an eigenvector of K: one CG step is exact, so max_iter = 1 must return the answer, not give up
    gram, c = np.diag([3.0, 1.0, 0.5]), 2.0
    t = np.array([1.0, 0.0, 0.0])
    out = kernels._cg_krr_residuals(gram, c, t, 1e-12, max_iter=1)
    assert out is not None
    np.testing.assert_allclose(out, c * t / (3.0 + c), rtol=1e-14)
    assert kernels._cg_krr_residuals(gram, c, np.array([1.0, 1.0, 0.0]), 1e-12, max_iter=1) is None


def test_cg_krr_without_preconditioner_and_its_cholesky_fallback():
    rng = np.random.default_rng(26)
    m = 400
    z = rng.normal(size=(m, 4))
    t = np.cos(z[:, 0] * z[:, 1]) + 0.1 * rng.normal(size=m)
    exact = kernels.krr_factor(z, method="exact").residuals(t)
    factor = kernels.krr_factor(z, method="cg")
    plain = kernels._cg_krr_residuals(factor.gram, factor.c, t, 1e-10)
    assert np.linalg.norm(plain - exact) <= 1e-10 / factor.c * np.linalg.norm(t)
    assert kernels._cg_krr_residuals(factor.gram, factor.c, t, 1e-10, max_iter=1) is None
    assert kernels._cg_krr_residuals(factor.gram, factor.c, np.zeros(m), 1e-10) is not None  # a zero target
    stubborn = kernels.KRRFactor(cho=None, c=factor.c, lam=1.0, bandwidth=factor.bandwidth, m=m, method="cg",
                                 tol=0.0, gram=factor.gram)  # tol = 0 cannot be met: the Cholesky fallback
    np.testing.assert_allclose(stubborn.residuals(t), exact, atol=1e-12)


def test_krr_workspace_holds_the_gram_matrix():
    rng = np.random.default_rng(27)
    z = rng.normal(size=(300, 4))
    t = np.sin(z.sum(axis=1))
    workspace = np.full((300, 300), np.nan)
    factor = kernels.krr_factor(z, method="cg", workspace=workspace)
    assert factor.gram is workspace
    np.testing.assert_allclose(workspace, _reference_gram(z, factor.bandwidth), atol=1e-14)
    assert np.array_equal(factor.residuals(t), kernels.krr_factor(z, method="cg").residuals(t))
    with pytest.raises(ValueError, match="workspace"):
        kernels.krr_factor(z, method="cg", workspace=np.empty((300, 299)))


def _former_stacked_scores(Fc, Gc, perms, chunk_bytes=1 << 24):
    """``_stacked_scores`` before the contiguous index buffer: each chunk gathered through ``block.T``."""
    m, r = Fc.shape
    s = Gc.shape[1]
    Gt = np.ascontiguousarray(Gc.T)
    chunk = max(1, min(perms.shape[0], chunk_bytes // max(m * r * 8, 1)))
    stacked = np.empty((m, chunk, r))
    cross = np.empty((s, chunk * r))
    scores = np.empty(perms.shape[0])
    for start in range(0, perms.shape[0], chunk):
        block = perms[start:start + chunk]
        c = len(block)
        gathered = stacked[:, :c]
        np.take(Fc, block.T, axis=0, out=gathered)
        product = cross[:, :c * r]
        np.matmul(Gt, gathered.reshape(m, c * r), out=product)
        product = product.reshape(s, c, r)
        scores[start:start + c] = np.einsum("skr,skr->k", product, product)
    return scores


@pytest.mark.parametrize(("m", "r", "s", "k", "chunk_bytes"),
                         [(300, 3, 7, 20, 1 << 24), (500, 16, 9, 37, 500 * 16 * 8 * 5), (200, 40, 40, 11, 1)])
def test_stacked_scores_equal_the_former_gather_bit_for_bit(m, r, s, k, chunk_bytes):
    # full chunks, a short last chunk (37 = 7 * 5 + 2) and one permutation per chunk
    rng = np.random.default_rng(m + r)
    Fc, Gc = rng.normal(size=(m, r)), rng.normal(size=(m, s))
    perms = kernels.random_permutations(k, m, rng=rng)
    assert np.array_equal(kernels._stacked_scores(Fc, Gc, perms, chunk_bytes),
                          _former_stacked_scores(Fc, Gc, perms, chunk_bytes))


@pytest.mark.parametrize(("m", "r", "s"), [(2000, 15, 33), (1000, 40, 8)])
def test_stacked_scores_at_the_new_chunk_size_within_rounding_of_the_former(m, r, s):
    # the default chunk changed from 16 MB to 2 MB: only the order of the sums in the product moves.
    # Each entry P_ab of Fc[psi]^T Gc is a sum of m products; two orders differ by at most
    # 2 gamma_m C_ab, C_ab = ||F_a|| ||G_b|| >= sum_i |F_ia G_ib| (Cauchy-Schwarz), gamma_m = m u / (1 - m u);
    # the score sum_ab P_ab^2 then by at most sum_ab 2 gamma C_ab (2 |P_ab| + 2 gamma C_ab), and its own
    # r*s-term sum of squares by 2 r s u * score on each side.
    rng = np.random.default_rng(m + r)
    Fc, Gc = rng.normal(size=(m, r)), rng.normal(size=(m, s))
    Fc[:, 0] *= 50.0  # unequal column scales, as in a pivoted Cholesky factor
    perms = kernels.random_permutations(30, m, rng=rng)
    former = _former_stacked_scores(Fc, Gc, perms, chunk_bytes=1 << 24)
    new = kernels._stacked_scores(Fc, Gc, perms)
    assert (1 << 24) // (m * r * 8) != (1 << 21) // (m * r * 8)  # the chunks really differ
    u = np.finfo(float).eps / 2
    gamma = m * u / (1 - m * u)
    C = np.outer(np.linalg.norm(Fc, axis=0), np.linalg.norm(Gc, axis=0))
    bound = 4 * gamma * np.sum(C * (C + gamma * C)) + 4 * r * s * u * np.maximum(former, new)
    assert np.all(np.abs(new - former) <= bound)
    assert np.max(np.abs(new - former) / former) < 1e-13  # what it is in practice


def test_random_permutations_are_independent_uniform_permutations():
    perms = kernels.random_permutations(60_000, 4, rng=2)
    assert perms.dtype == np.intp and perms.shape == (60_000, 4) and perms.flags["C_CONTIGUOUS"]
    assert np.array_equal(np.sort(perms, axis=1), np.broadcast_to(np.arange(4), perms.shape))
    # all 24 permutations of 4 items equally likely: chi-square at the 1e-6 level
    codes = perms @ np.array([64, 16, 4, 1])
    counts = np.unique(codes, return_counts=True)[1]
    assert len(counts) == 24
    assert stats.chisquare(counts).pvalue > 1e-6
    # consecutive rows independent: the pair (first item of row i, of row i + 1) is uniform on 4 x 4
    pairs = np.bincount(4 * perms[:-1, 0] + perms[1:, 0], minlength=16)
    assert stats.chisquare(pairs).pvalue > 1e-6
    assert np.array_equal(perms, kernels.random_permutations(60_000, 4, rng=2))
    assert kernels.random_permutations(0, 5, rng=0).shape == (0, 5)
    assert kernels.random_permutations(3, 0, rng=0).shape == (3, 0)
    with pytest.raises(ValueError, match="k"):
        kernels.random_permutations(-1, 5, rng=0)
