"""Sub-sampled Gaussian PC: the "SG with moments accountant" baseline of Wang, Pang & Song (2020, Sec. 4.2).

Every CI test of the PC skeleton search is answered by the Poisson-sub-sampled
Gaussian mechanism: draw a fresh Poisson sub-sample of the rows (each row kept
independently with probability q = ``sampling_rate``), compute the one-sided
conditional Kendall p-value on it (the query of :mod:`dpcd.discovery.priv_pc`,
:class:`~dpcd.discovery.priv_pc.KendallPValueQuery`), add N(0, (σΔ)²) noise and
declare independence (remove the edge) when the noisy p-value exceeds α. Every
test is charged, so the cost grows with the number of tests; the accumulated
cost is composed tightly (the role of the moments accountant in the paper).
The paper reports only that this baseline is "typically worse than EM-PC and
SVT-PC, not to mention Priv-PC" and gives no parameters; q and the mapping of
the per-test privacy parameter to σ are ours (see :func:`run_cell` in
:mod:`dpcd.discovery.priv_pc`).

Sensitivity under sub-sampling
------------------------------
Poisson sub-sampling analyses (Abadi et al. 2016; Mironov et al. 2019;
dp_accounting) need Δ ≥ |f(S ∪ {x}) − f(S)| for every sub-sample S the other
records can form and every record x — an add/remove bound *on the sub-sample*,
under either relation on the full data. For replace-one neighbours of the
full data the output pair, given the other records' coins, is
((1 − q)N(f(S), σ²Δ²) + qN(f(S ∪ {x}), σ²Δ²), (1 − q)N(f(S), σ²Δ²) + qN(f(S ∪ {x'}), σ²Δ²)),
dominated by dp_accounting's REPLACE_ONE pair with shift Δ. The p-value
sensitivity depends on the sub-sample size |S|, which is random: Δ is
:func:`~dpcd.privacy.sensitivity.one_sided_kendall_pvalue_sensitivity` at a public lower
bound m_lo of |S| (the β-quantile of Binomial(n − 1, q), β = 1e-12;
``info["subsample_min"]``). That function's replace-one bound on m_lo rows
(2c_τ/√(m_lo − 1 − k) in the z-scale, ``"proven"``) is at least the add/remove
bound c_τ/√(m − k) of a pair with (m, m + 1) rows for every m ≥ m_lo, so it is
valid (conservative by up to a factor 2 in the z-scale); the ``"reference"``
value Φ(6/√m_lo) − ½ is the authors' unproven calibration. A sub-sample
smaller than m_lo (probability β per test, by the exact binomial tail) voids
the bound for that test; by convexity of the hockey-stick divergence this adds
β to δ per test.

Privacy guarantee
-----------------
Neighbouring relation: replace one record; public: n and the variables'
domains. Each test is one Poisson-sub-sampled Gaussian step with sampling
rate q and noise multiplier σ, charged to a replace-one ledger as
``kind="subsampled_gaussian"`` (one charge per test); the run is their
adaptive composition. Its guarantee is :func:`worst_case`'s: that composition
over the most tests any run can make, with their β's added to δ. The ledger's
ε_tot = ``privacy_totals(result.ledger, delta)["epsilon_tight"]`` (PLD
accountant at δ; Koskela et al. / Doroshenko et al., tighter than the moments
accountant's RDP bound, which dp_accounting does not offer under replace-one),
with δ + n_tests·β, is what this run spent — at most the worst case, and not a
guarantee by itself (how many tests a run makes depends on the data).
For basic/advanced composition each charge carries one step's ε at the
per-step δ_step = δ / T_max, with T_max = p(p − 1)Σ_{k ≤ max order} C(p − 2, k)
a public bound on the number of tests, so Σδ_step ≤ δ.

References
----------
.. [WPS20] L. Wang, Q. Pang, D. Song. Towards practical differentially private
   causal graph discovery. NeurIPS 2020, Sec. 4.2.
.. [ACGMMTZ16] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar,
   L. Zhang. Deep Learning with Differential Privacy. CCS 2016 (moments accountant).
.. [MTZ19] I. Mironov, K. Talwar, L. Zhang. Rényi Differential Privacy of the
   Sampled Gaussian Mechanism. arXiv:1908.10530, 2019.
.. [DGKKM22] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi. Connect the
   Dots: Tighter Discrete Approximations of Privacy Loss Distributions. PETS 2022.

Examples
--------
>>> SG = SUBSAMPLED_GAUSSIAN
>>> SG.name, SG.relation.name, SG.budget_arg, SG.extra["sampling_rate"], SG.differentially_private
('subsampled_gaussian', 'replace', 'sigma', 0.1, True)
>>> SG.privacy_map(sigma=50.0, sampling_rate=0.1, delta=1e-6, p=4, n=1000, max_order=1).epsilon < 1
True
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

import numpy as np
from scipy import stats

from ..privacy.gdp import SMALLEST_NORMAL
from ..privacy.ledger import PrivacyLedger, subsampled_gaussian_epsilon
from ..privacy.mechanisms import gaussian_noise
from ..privacy.relation import WorstCase
from ..privacy.sensitivity import one_sided_kendall_pvalue_sensitivity
from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_int,
    check_positive,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .kendall_family import (
    PUBLIC,
    RELATION,
    KendallPValueQuery,
    kendall_ledger,
    kendall_run_setup,
    privacy_totals,
)
from .pc import Decider, PCResult, run_pc, worst_case_tests

__all__ = ["SUBSAMPLED_GAUSSIAN", "subsampled_gaussian_pc", "SubsampledGaussianDecider", "subsample_size_lower_bound",
           "worst_case", "RELATION", "PUBLIC"]

#: probability per test that the Poisson sub-sample is smaller than its public lower bound m_lo
SIZE_FAILURE = 1e-12
#: ε recorded for a step that is already (0, δ_step)-DP (noise so large that δ_step is met at ε = 0): such a step
#: is (ε, δ_step)-DP for every ε > 0, and a ledger charge needs ε > 0; the smallest positive normal double
_NEGLIGIBLE_STEP_EPSILON = SMALLEST_NORMAL


def _step_epsilon(sigma: float, sampling_rate: float, step_delta: float) -> float:
    """ε of one replace-one sub-sampled Gaussian step at ``step_delta``
    (:func:`~dpcd.privacy.ledger.subsampled_gaussian_epsilon`), at least :data:`_NEGLIGIBLE_STEP_EPSILON`."""
    return max(subsampled_gaussian_epsilon(sigma, sampling_rate, step_delta, relation="replace"),
               _NEGLIGIBLE_STEP_EPSILON)


def subsample_size_lower_bound(n: int, sampling_rate: float, beta: float = SIZE_FAILURE) -> tuple[int, float]:
    """(m_lo, P(Binomial(n − 1, q) < m_lo)): the largest m_lo whose lower tail is at most ``beta``."""
    if sampling_rate >= 1.0:
        return n, 0.0
    m_lo = int(stats.binom.ppf(beta, n - 1, sampling_rate))
    while m_lo > 0 and stats.binom.cdf(m_lo - 1, n - 1, sampling_rate) > beta:
        m_lo -= 1
    tail = float(stats.binom.cdf(m_lo - 1, n - 1, sampling_rate)) if m_lo > 0 else 0.0
    return m_lo, tail


class SubsampledGaussianDecider(Decider):
    """Per-test decider: noisy p-value on a fresh Poisson sub-sample, independent when above α."""

    def __init__(self, query: KendallPValueQuery, *, sampling_rate: float, noise_sd: float, threshold: float,
                 rng: np.random.Generator, ledger: PrivacyLedger, noise_multiplier: float, step_delta: float,
                 step_epsilon: float):
        self.query = query
        self.sampling_rate = sampling_rate
        self.noise_sd = noise_sd
        self.threshold = threshold  # on the one-sided p-value
        self.rng = rng
        self.ledger = ledger
        self.noise_multiplier = noise_multiplier
        self.step_delta = step_delta
        self.step_epsilon = step_epsilon
        self.subsample_sizes: list[int] = []
        self._rows: np.ndarray | None = None  # kept alive so the query's per-row-set memo never sees a reused id

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        """One test on a Poisson sub-sample of rate ``sampling_rate``: the one-sided p-value plus N(0, noise_sd²),
        charged as one sub-sampled Gaussian step; dependent when the noisy value is above the threshold."""
        n = self.query.n
        if self.sampling_rate >= 1.0:
            rows = np.arange(n)
        else:
            rows = np.flatnonzero(self.rng.random(n) < self.sampling_rate)
        self._rows = rows
        self.subsample_sizes.append(len(rows))
        # with fewer than 3 rows there is no evidence against independence: p = ½ (data-independent)
        value = self.query.on_rows(rows)(x, y, S) if len(rows) >= 3 else 0.5
        noisy = value + gaussian_noise(self.noise_sd, rng=self.rng)
        self.ledger.charge("ci_test", kind="subsampled_gaussian", sampling_rate=self.sampling_rate,
                           noise_multiplier=self.noise_multiplier, delta=self.step_delta,
                           epsilon=self.step_epsilon)
        return bool(noisy > self.threshold)


def worst_case(*, sigma: float, sampling_rate: float, delta: float, p: int, n: int,
               max_order: int | None = None) -> WorstCase:
    """The data-independent guarantee of any :func:`subsampled_gaussian_pc` run.

    At most :func:`~dpcd.discovery.pc.worst_case_tests` sub-sampled Gaussian
    steps T, composed by the PLD accountant at δ − T·β, so that with the
    sub-sample-size failure probability β of every possible test the total is
    (ε, δ).

    >>> worst_case(sigma=50.0, sampling_rate=0.1, delta=1e-6, p=3, n=1000).relation.name
    'replace'
    """
    sigma = check_positive(sigma, "sigma")
    delta = check_delta(delta)
    p, n = check_int(p, "p", minimum=2), check_int(n, "n", minimum=2)
    order = max(p - 2, 0) if max_order is None else check_int(max_order, "max_order", minimum=0)
    rounds = worst_case_tests(p, order)
    _, failure = subsample_size_lower_bound(n, sampling_rate)
    accountant_delta = delta - rounds * failure
    if accountant_delta <= 0:
        raise ValueError(f"delta={delta:g} does not cover the sub-sample-size failure probability of {rounds} tests "
                         f"({rounds * failure:.3g} in all); raise delta above it or lower max_order")
    ledger = PrivacyLedger("replace", public=PUBLIC)
    ledger.charge("ci_test", kind="subsampled_gaussian", sampling_rate=sampling_rate, noise_multiplier=sigma,
                  delta=accountant_delta / rounds, count=rounds,
                  epsilon=_step_epsilon(sigma, sampling_rate, accountant_delta / rounds))
    epsilon = privacy_totals(ledger, accountant_delta)["epsilon_tight"]
    return WorstCase("subsampled_gaussian", RELATION, epsilon, delta, PUBLIC,
                     "Poisson-sub-sampled Gaussian per test (Abadi et al. 2016; Mironov, Talwar & Zhang 2019), "
                     "worst-case test count composed "
                     "by the PLD accountant (Doroshenko et al. 2022)", "tight", ledger,
                     {"sigma": sigma, "sampling_rate": sampling_rate, "rounds": rounds})


def subsampled_gaussian_pc(data, *, levels, sigma: float, sampling_rate: float, delta: float = 1e-6,
                           alpha: float = 0.20, rng: RngLike, max_order: int | None = None,
                           node_names: Sequence[str] | None = None,
                           max_tests: int | None = None, unproven: Mapping[str, str] | None = None) -> PCResult:
    """PC with a Poisson-sub-sampled Gaussian mechanism on every CI test (see the module docstring).

    Parameters
    ----------
    data : rows × variables of integer category codes (array or DataFrame).
    levels : the public domain sizes (sequence, mapping or :class:`~dpcd.schema.Schema`).
    sigma : the noise multiplier σ = (noise standard deviation)/Δ.
    sampling_rate : q ∈ (0, 1], the Poisson sampling probability of each row (fresh per test).
    delta : δ of the reported total (tight accountant's target δ; basic/advanced
        use δ_step = δ/T_max per charge).
    alpha : two-sided significance level; the edge is removed when the noisy one-sided p-value exceeds α/2.
    rng : Generator or seed (sub-samples and noise).
    max_order : largest conditioning set; None = no limit (the authors' cap is
        :func:`~dpcd.discovery.kendall_family.reference_max_order`).
    max_tests : cap on the run's CI decisions (None = none): an order starts only if it cannot exceed it
        (:func:`dpcd.discovery.pc.pc_skeleton`); a function of earlier private decisions, so it costs no budget.
    node_names : variable names (default: DataFrame columns or X1..Xp).
    unproven : ``{"sensitivity": "reference"}``, the authors' unproven calibration (see
        :func:`dpcd.discovery.priv_pc.priv_pc`); the ledger then marks the run not DP.

    Returns a :class:`PCResult` whose replace-one ``ledger`` holds one
    ``"subsampled_gaussian"`` charge per CI test; ``info`` holds σ, q, Δ, the
    sub-sample lower bound m_lo, its failure probability per test and in total
    (``delta_size_failure`` = n_tests·β), the per-step (ε, δ) and the test counts.

    Privacy: (ε, δ)-DP under replace-one neighbours with n and domains public,
    (ε, δ) being :func:`worst_case`'s (the most tests any run can make)
    [ACGMMTZ16; MTZ19; DGKKM22]. ``privacy_totals(result.ledger,
    delta)["epsilon_tight"]``, with δ + n_tests·β, is what this run spent: at
    most that, and not a guarantee by itself (the number of tests depends on
    the data).

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("cancer", 5000, rng=0)
    >>> result = subsampled_gaussian_pc(data.data, levels=data.levels, sigma=5.0, sampling_rate=0.2, rng=1)
    >>> {e.kind for e in result.ledger.entries}
    {'subsampled_gaussian'}
    """
    sigma = check_positive(sigma, "sigma")
    sampling_rate = check_positive(sampling_rate, "sampling_rate")
    if sampling_rate > 1.0:
        raise ValueError(f"sampling_rate must lie in (0, 1], got {sampling_rate}")
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    codes, names, max_order, query = kendall_run_setup(data, node_names, max_order, levels)
    ledger, sensitivity = kendall_ledger(unproven, algorithm="subsampled_gaussian_pc")
    n, p = codes.shape
    generator = as_rng(rng)
    order_cap = min(max_order, max(p - 2, 0))
    subsample_min, size_failure = subsample_size_lower_bound(n, sampling_rate)
    if subsample_min < 2:
        raise ValueError(f"sampling_rate={sampling_rate} is too small for n={n}: the sub-sample's public lower "
                         f"bound is {subsample_min} rows")
    p_sensitivity = one_sided_kendall_pvalue_sensitivity(subsample_min, query.levels, order_cap, mode=sensitivity)
    step_delta = delta / worst_case_tests(p, order_cap)
    step = _step_epsilon(sigma, sampling_rate, step_delta)
    decider = SubsampledGaussianDecider(query, sampling_rate=sampling_rate, noise_sd=sigma * p_sensitivity,
                                        threshold=alpha / 2.0, rng=generator, ledger=ledger, noise_multiplier=sigma,
                                        step_delta=step_delta, step_epsilon=step)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    sizes = np.asarray(decider.subsample_sizes)
    info = {
        "algorithm": "subsampled_gaussian", "sigma": sigma, "sampling_rate": sampling_rate, "delta": delta,
        "alpha": alpha, "n": n, "max_order": max_order, "sensitivity_mode": sensitivity,
        "sensitivity": p_sensitivity, "noise_sd": sigma * p_sensitivity, "subsample_min": subsample_min,
        "size_failure_per_test": size_failure, "delta_size_failure": result.n_tests * size_failure,
        "step_delta": step_delta, "step_epsilon": step,
        "mean_subsample_size": float(sizes.mean()) if len(sizes) else float("nan"),
        "n_full_tests": query.tester.n_computed, "n_subsample_tests": query.n_subsample_tests,
    }
    return replace(result, info=info)


SUBSAMPLED_GAUSSIAN = PrivateAlgorithm(
    name="subsampled_gaussian", label="Sub-sampled Gaussian PC", data="categorical", relation=RELATION,
    public=PUBLIC, budget="noise", budget_arg="sigma", run=subsampled_gaussian_pc, privacy_map=worst_case,
    delta_arg="delta", theorem="Wang, Pang & Song 2020, Sec. 4.2 (baseline)", extra={"sampling_rate": 0.1})
"""The sub-sampled Gaussian baseline as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""
