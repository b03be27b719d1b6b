"""PCD's hot spots at the sizes of the notebook's full profile, each against the code it replaced.

* KRR on a conditioning set of 5 variables at m = 8000 (Fig. 2, n = 8000):
  before, ``krr_factor(method="auto")`` built an incomplete Cholesky factor up
  to m/4 = 2000 columns and, short of 1e-10, factored the 8000 × 8000 system
  (Cholesky); now it gives up early on the factor and solves by conjugate
  gradients preconditioned by it, in a reused m × m buffer.
* The HSIC permutation scores at m = 8000 with a wide x-factor (Sachs-like
  heavy tails): before, the x-factor was always the one permuted, all
  permutations in one 100 × wider product; now the narrower factor is.
* Permutation tests at m = 2000 and 8000 with the ranks of Fig. 2's residual
  factors (r ≈ 15–35): before, the 100 permutations were the ``argsort`` of a
  uniform draw and each 16 MB chunk was gathered through a strided index
  array; now they are Fisher–Yates shuffles, the indices are copied into a
  contiguous buffer and a chunk is 2 MB (scores for given permutations equal
  within the rounding of the product's sums, ~1e-15 relative).
* Kendall's τ baseline on child (Fig. 2): before, PC asked every conditional
  test, each answered "no usable stratum, dependent"; now they are settled in
  bulk (up to order 2 here; the unlimited order of the notebook has millions).
* Unconditional Kendall's τ on 1000 tie-free rows: contingency-table route
  (an n × n table) against the exact discordant-pair count.

``cpu_s`` are process CPU times (user + system) of the best run, less
sensitive than wall-clock time to other load on the machine. Run with one
BLAS thread (``OPENBLAS_NUM_THREADS=1``), as the notebook's workers do.
"""

import math
import os

import numpy as np
import pytest
from scipy import linalg

from dpcd import kernels
from dpcd.ci.discrete import kendall_tau
from dpcd.ci.rcit import _untied_tau_a
from dpcd.datasets import bnlearn_dag, sample_nonlinear
from dpcd.discovery.pc import run_pc
from dpcd.discovery.pcd import PCDDecider, make_tester
from test_kernels import _former_stacked_scores  # tests/ is on sys.path through its conftest.py


def _cpu_seconds(fn, repeat: int = 3):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = os.times()
        result = fn()
        end = os.times()
        best = min(best, (end.user - start.user) + (end.system - start.system))
    return result, best


def _network_data(name: str, n: int, seed: int = 0) -> np.ndarray:
    return sample_nonlinear(bnlearn_dag(name), n, np.random.default_rng(seed)).data.to_numpy()


def _old_auto_krr_residuals(z: np.ndarray, targets: np.ndarray, lam: float = 1.0, tol: float = 1e-10) -> np.ndarray:
    """``krr_factor(z, method="auto").residuals(targets)`` as it was: factor up to m/4 columns, else Cholesky."""
    m = z.shape[0]
    c = m * lam / 2.0
    sigma = kernels.median_bandwidth(z)
    F, rest = kernels._pivoted_cholesky(z, sigma, tol, max(1, m // 4))
    if rest <= tol:
        core = F.T @ F
        core[np.diag_indices_from(core)] += c
        cho = linalg.cho_factor(core, lower=True, overwrite_a=True, check_finite=False)
        return targets - F @ linalg.cho_solve(cho, F.T @ targets, check_finite=False)
    system = kernels.pairwise_sq_dists(z)
    system *= -0.5 / sigma**2
    np.exp(system, out=system)
    system[np.diag_indices(m)] += c
    cho = linalg.cho_factor(system.T, lower=True, overwrite_a=True, check_finite=False)
    return c * linalg.cho_solve(cho, targets, check_finite=False)


@pytest.mark.benchmark
def test_krr_m8000_conditioning_set_of_5(report):
    data = np.asfortranarray(_network_data("asia", 8000))
    z = data[:, [0, 2, 3, 5, 6]]
    workspace = np.empty((8000, 8000))
    kernels.krr_factor(z, method="auto", workspace=workspace)  # map the buffer once, as a tester does
    new, t_new = _cpu_seconds(lambda: kernels.krr_factor(z, method="auto", workspace=workspace).residuals(data))
    old, t_old = _cpu_seconds(lambda: _old_auto_krr_residuals(z, data), repeat=1)
    c = 8000 / 2
    error = float(np.max(np.linalg.norm(new - old, axis=0) / (1e-10 / c * np.linalg.norm(data, axis=0))))
    report("KRR m=8000 |S|=5, 8 targets", old_cpu_s=t_old, new_cpu_s=t_new, ratio=t_old / t_new,
           error_over_bound=error)
    assert error <= 1.0 + 1e-3  # the old route is a Cholesky solve, itself within rounding of the exact one


def _old_lowrank_scores(Fc: np.ndarray, Gc: np.ndarray, perms: np.ndarray, chunk_bytes: int = 1 << 27) -> np.ndarray:
    """The permuted scores as they were: Fc always gathered, all permutations in one stacked product."""
    m, r = Fc.shape
    s = Gc.shape[1]
    Gt = np.ascontiguousarray(Gc.T)
    chunk = max(1, chunk_bytes // max(m * r * 8, 1))
    scores = np.empty(perms.shape[0])
    for start in range(0, perms.shape[0], chunk):
        block = perms[start:start + chunk]
        stacked = Fc[block.T].reshape(m, len(block) * r)
        cross = (Gt @ stacked).reshape(s, len(block), r)
        scores[start:start + chunk] = np.einsum("skr,skr->k", cross, cross)
    return scores


@pytest.mark.benchmark
def test_hsic_scores_m8000_wide_x_factor(report):
    rng = np.random.default_rng(1)
    m = 8000
    x = np.exp(1.2 * rng.normal(size=m))  # heavy tail: a wide factor
    y = np.sin(np.log(x)) + rng.normal(size=m)
    fx, fy = kernels.hsic_factor(x), kernels.hsic_factor(y, name="y")
    perms = kernels.random_permutations(100, m, rng=rng)
    new, t_new = _cpu_seconds(lambda: kernels._lowrank_scores(fx.centred, fy.centred, perms))
    old, t_old = _cpu_seconds(lambda: _old_lowrank_scores(fx.centred, fy.centred, perms))
    report("HSIC permuted scores m=8000 k=100", rank_x=fx.centred.shape[1], rank_y=fy.centred.shape[1],
           old_cpu_s=t_old, new_cpu_s=t_new, ratio=t_old / t_new,
           max_rel_diff=float(np.max(np.abs(new - old) / old)))
    np.testing.assert_allclose(new, old, rtol=1e-12)


@pytest.mark.benchmark
@pytest.mark.parametrize(("m", "ranks"), [(8000, (15, 33)), (8000, (25, 25)), (2000, (15, 33))])
def test_permutation_tests_draw_and_gather(report, m, ranks):
    rng = np.random.default_rng(7)
    k = 100
    Fc, Gc = rng.normal(size=(m, ranks[0])), rng.normal(size=(m, ranks[1]))

    def new():  # ten tests, so that the CPU clock's ticks are small beside the time
        draws = np.random.default_rng(3)
        return [kernels._stacked_scores(Fc, Gc, kernels.random_permutations(k, m, rng=draws)) for _ in range(10)]

    def old():
        draws = np.random.default_rng(3)
        return [_former_stacked_scores(Fc, Gc, np.argsort(draws.random((k, m)), axis=1)) for _ in range(10)]

    _, t_new = _cpu_seconds(new, repeat=5)
    _, t_old = _cpu_seconds(old, repeat=5)
    perms = kernels.random_permutations(k, m, rng=4)
    scores, former = kernels._stacked_scores(Fc, Gc, perms), _former_stacked_scores(Fc, Gc, perms)
    report(f"10 permutation tests m={m} k=100 r={ranks[0]} s={ranks[1]} (draw + scores)", old_cpu_s=t_old,
           new_cpu_s=t_new, ratio=t_old / t_new, max_rel_diff=float(np.max(np.abs(scores - former) / former)))
    np.testing.assert_allclose(scores, former, rtol=1e-12)


class _AskEveryTest(PCDDecider):
    def dependent_for_all(self, x, y, candidates, order):
        return False


@pytest.mark.benchmark
def test_kendall_pcd_child_bulk_decisions(report):
    data = _network_data("child", 2000, 2)
    names = [str(i) for i in range(data.shape[1])]

    def run(kind):
        tester = make_tester(data, "kendall", rng=0)
        return [run_pc(names, kind(tester, epsilon=epsilon, alpha=0.05, rng=3, continuous=True), max_order=2).n_tests
                for epsilon in (0.1, 1.0, math.inf)]

    new, t_new = _cpu_seconds(lambda: run(PCDDecider))
    old, t_old = _cpu_seconds(lambda: run(_AskEveryTest), repeat=1)
    report("Kendall PCD child n=2000 max_order=2, 3 eps", tests=sum(new), old_cpu_s=t_old, new_cpu_s=t_new,
           ratio=t_old / t_new)
    assert new == old


@pytest.mark.benchmark
def test_unconditional_kendall_tau_1000_rows(report):
    rng = np.random.default_rng(4)
    a = rng.normal(size=1000)
    b = 0.5 * a + rng.normal(size=1000)
    new, t_new = _cpu_seconds(lambda: [_untied_tau_a(a, b) for _ in range(20)])
    old, t_old = _cpu_seconds(lambda: [kendall_tau(a, b, "a") for _ in range(20)])
    report("Kendall tau-a n=1000 (20 calls)", old_cpu_s=t_old, new_cpu_s=t_new, ratio=t_old / t_new)
    assert new == old
