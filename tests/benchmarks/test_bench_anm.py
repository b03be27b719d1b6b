"""ANM on one Tübingen-sized pair (m = 2 000 test points): ours vs scikit-learn KRR + scipy scores, same process."""

import numpy as np
import pytest
from scipy import stats
from sklearn.kernel_ridge import KernelRidge
from threadpoolctl import threadpool_limits

from dpcd.bivariate import anm
from dpcd.kernels import gaussian_gram, hsic


def _peer(x, y, lam, bandwidth_x, bandwidth_y):
    """The same Alg. 1 fit and scores with scikit-learn's KernelRidge and scipy's rank statistics."""
    n = x.size // 2
    gamma_x, gamma_y = 1 / (2 * bandwidth_x**2), 1 / (2 * bandwidth_y**2)
    f = KernelRidge(alpha=n * lam / 2, kernel="rbf", gamma=gamma_x).fit(x[:n, None], y[:n])
    g = KernelRidge(alpha=n * lam / 2, kernel="rbf", gamma=gamma_y).fit(y[:n, None], x[:n])
    xt, yt = x[n:], y[n:]
    ry, rx = yt - f.predict(xt[:, None]), xt - g.predict(yt[:, None])
    return {
        "spearman": (abs(stats.spearmanr(xt, ry).statistic), abs(stats.spearmanr(yt, rx).statistic)),
        "kendall": (abs(stats.kendalltau(xt, ry).statistic), abs(stats.kendalltau(yt, rx).statistic)),
        "hsic": (hsic(gaussian_gram(xt), gaussian_gram(ry)), hsic(gaussian_gram(yt), gaussian_gram(rx))),
    }


@pytest.mark.benchmark
def test_anm_4000_points_against_sklearn(report, best_of):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 4000)
    y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, 4000)
    with threadpool_limits(1):
        ours, t_ours = best_of(lambda: anm.anm(x, y, rng=1), repeat=3)
        fit = ours.fit
        xs = anm.scale_to_unit(x)[np.r_[fit.train_index, fit.test_index]]
        ys = anm.scale_to_unit(y)[np.r_[fit.train_index, fit.test_index]]
        theirs, t_peer = best_of(lambda: _peer(xs, ys, fit.lam, fit.bandwidths["x"], fit.bandwidths["y"]), repeat=3)
        private, t_private = best_of(lambda: anm.private_anm_test_set(x, y, epsilon=1.0, rng=1), repeat=3)
    same = all(ours.decisions[s] == ("x->y" if theirs[s][0] < theirs[s][1] else "y->x")
               for s in ("spearman", "kendall"))
    report("ANM n=4000 (4 scores)", ours_s=t_ours, sklearn_scipy_s=t_peer, ratio=t_peer / t_ours,
           private_test_set_s=t_private, same_rank_decisions=same)
    assert same
