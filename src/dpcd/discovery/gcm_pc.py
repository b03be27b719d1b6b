"""GCM-PC: PC with a private generalised covariance measure on bounded features (numeric, nonlinear data).

Every column is mapped onto [−1, 1] by its **public** bounds (values outside
are clamped by the schema) and expanded into its Chebyshev features
T_1..T_d (:func:`dpcd.ci.gcm.chebyshev_features`, all in [−1, 1]; d =
``conditioning_degree``). The sums and second moments of the p·d features are
released **once** by one Gaussian mechanism, and every CI test of the PC
search is the max-type generalised covariance measure (Shah & Peters 2020)
computed from them (:func:`dpcd.ci.gcm.noisy_gcm_test`): least-squares
regressions of the first ``degree`` features of X and of Y on the features of
S — an additive polynomial regression — need only second moments, the
normalised residual covariances are the statistic, and its null distribution
is drawn by a parametric bootstrap that adds the release's own noise. So the
number of tests costs nothing, as in Moment-PC, which this extends from linear
to polynomial relations (Moment-PC is the case d = 1). Given two or more
conditioning columns a test reads only the residual products with X's or Y's
T_1 (:func:`dpcd.ci.gcm.product_mask`): the additive regression of a
higher feature is misspecified there even on linear data. For the same reason
the spread stage's default map (``spread_map="split"``) keeps each column's
T_1 **linear** — the column clamped to a box :data:`SPLIT_WIDTH` times wider
than its narrowed one — and takes only T_2, T_3, … from the smooth tanh map:
tanh of a linear X = a·S + e is not additive in S, so with T_1 from tanh the
test lost its level on linear data with shared parents (five parents, exact
moments, 200 draws at α = 0.05: 0.055 / 0.145 rejections at n = 500 / 2 000
with tanh, 0.040 / 0.050 with the split map at its first width of three private sd, 0.050 / 0.055 on other
draws at the default two, :data:`SPLIT_WIDTH`).

Relation to PrivGCM (Kalemaj, Kasiviswanathan & Ramdas, AISTATS 2024): the
same statistic made private, but by a different route — here the regressions'
dependence on a record is bounded because they are functions of released
moments, not by their stability, so one release serves every test of the
search instead of a budget per test. The construction and its proof are this
package's.

Privacy
-------
Relation: replace one record (n public). Public: n, the column bounds,
``degree``, ``conditioning_degree``, ``feature_weight``, ``spread_share``,
``spread_k``, ``spread_map``, ``norm_clip``, ``dependence`` (the holder's
statement), ε, δ and the test settings (``"auto"`` values of
``conditioning_degree`` and ``feature_weight`` are :func:`auto_features` of p,
n, ε, δ, ``dependence`` and the settings; of ``norm_clip``,
:func:`auto_norm_clip` of p and the settings: public too).

**Theorem.** Any run of :func:`gcm_pc` with ``epsilon_total`` = ε and ``delta``
= δ is (ε, δ)-DP under replace-one.

*Proof.* Let μ = ``gdp_mu(ε, δ)``. With ``spread_share`` = s > 0 the run first
narrows every column's box by :func:`dpcd.privacy.spread.private_spread_box`
at μ₁ = μ√s (μ₁-GDP, that module's Theorem), and the feature moments below are
released at μ₂ = μ√(1 − s) from the records mapped through the narrowed box —
a box fixed by the first release, so the second is μ₂-GDP for every value of
it; the two compose to √(μ₁² + μ₂²) = μ-GDP [DRS22, Cor. 3.3]. With s = 0,
μ₂ = μ and the box is the public one. In either case a record is mapped to
f ∈ [−1, 1]^D, D = p·d, by :func:`dpcd.privacy.spread.spread_map` (tanh or
clamp; its values lie in [−1, 1] for every box) and the Chebyshev polynomials
(|T_k(u)| ≤ 1 on [−1, 1]) — with ``"split"``, T_1 is instead the column clamped
to a box and scaled onto [−1, 1] (:func:`mapped_features`), in [−1, 1] too —
and weighted by the public weights w (1 for T_1, ``feature_weight`` for the others,
:func:`feature_weights`): v = w ∘ f, |v_i| ≤ w_i. The released vector
(Σ v_i; Σ v_i v_j, i ≤ j) changes, when one record is replaced, by at most 2w_i
in each sum, 2w_i w_j in each cross moment and w_i² in each square, so its L2
sensitivity is at most √(4S₂ + 2S₂² − S₄), S₂ = Σ w_i², S₄ = Σ w_i⁴
(:func:`dpcd.privacy.moments.weighted_moment_sensitivity`; √(2D² + 3D) with all
weights 1). Every v is then scaled onto the ball ‖v‖₂ ≤ R = √(c·S₂), c =
``norm_clip`` (:func:`dpcd.privacy.moments.clip_record_norms`, a fixed map of
one record that keeps |v_i| ≤ w_i ≤ 1; with c = 1 no record moves, as ‖v‖₂² ≤
S₂ already), and the sensitivity is also at most
√(4R² + R⁴ + R²) (:func:`dpcd.privacy.moments.norm_moment_sensitivity` with
coordinate bound max w_i = 1, proved in :mod:`dpcd.privacy.moments`); Δ is the
smaller bound (:func:`dpcd.privacy.moments.release_sensitivity`). c is public:
a number, or :func:`auto_norm_clip` of public settings. N(0, (Δ/μ₂)²) per
number is μ₂-GDP [DRS22, Thm. 2.7], the run is
μ-GDP by the composition above, and μ = ``gdp_mu(ε, δ)`` makes it (ε, δ)-DP
[DRS22, Cor. 2.13]. Dividing the
released sums back by w_i and w_i w_j is post-processing. The covariance, the regressions, the tests and
their bootstrap draws, and the orientation read only the release and public
values: post-processing. ∎

The worst case is the plan itself (:func:`worst_case`). Only the graph leaves
a run; the noisy moments stay inside it.

**The norm clip and conditional independence.** Scaling a record down
multiplies all its features, X's and Y's included, by one factor that depends
on every column; over the whole sample that shared factor can create a
dependence of X and Y — given S, and even marginally, through columns outside
{X, Y, S} — that the data do not have. It stays small while few records lie
beyond the ball. :func:`auto_norm_clip` puts the squared radius five standard
deviations above the typical squared norm of p *independent* columns through
the run's spread map (a Gaussian reference: no data are read); dependent
columns spread the norms more and put more records beyond it (on trial draws of
PCD's nonlinear networks at n = 8 000 and of 20 linear-Gaussian or nonlinear
columns, 0.02–1.7 % of them at radii near these; 7–8 % with twelve columns all
driven by one). A ``norm_clip`` well below the automatic one shrinks many
records and can bias the tests (a hand-made table with 64 % of its records
shrunk, at n = 3·10⁵: the true X ⫫ Y | Z rejected at p ≈ 0.005 in four of five
draws). In exchange the noise falls, against the coordinate-wise bound: σ ×
0.35 on alarm's 37 columns, × 0.41 on 20, × 0.68 on 5 with the default split
map, whose T_1 reaches ±1 only beyond two private sd (× 0.46, × 0.53, × 0.81
with tanh for every feature; the norm bound alone, c = 1, gives × 0.73, × 0.75,
× 0.85). The radii and the shares above were measured with the tanh map.

References
----------
.. [DRS22] J. Dong, A. Roth, W. J. Su. *Gaussian Differential Privacy.* JRSS-B 84(1), 2022.
R. D. Shah, J. Peters. *The hardness of conditional independence testing and the generalised covariance
measure.* Annals of Statistics 48(3), 2020.
I. Kalemaj, S. P. Kasiviswanathan, A. Ramdas. *Differentially private conditional independence testing.*
AISTATS 2024.

Examples
--------
>>> from dpcd.datasets import random_dag, sample_nonlinear
>>> from dpcd.graphs import dag_to_cpdag, skeleton_prf
>>> sample = sample_nonlinear(random_dag(5, 0.5, 3), 50_000, 4)
>>> result = gcm_pc(sample.data, bounds=sample.schema(), epsilon_total=1.0, rng=0)
>>> round(result.ledger.total("tight", target_delta=1e-6).epsilon, 6) <= 1.0
True
>>> GCM_PC.name, GCM_PC.relation.name, GCM_PC.data, GCM_PC.differentially_private
('gcm_pc', 'replace', 'numeric', True)
>>> worst = GCM_PC.privacy_map(epsilon_total=1.0, delta=1e-6)
>>> worst.epsilon, worst.delta, worst.accountant
(1.0, 1e-06, 'gdp')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..ci.gcm import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONDITIONING_DEGREE,
    DEFAULT_DEGREE,
    chebyshev_features,
    noisy_gcm_test,
)
from ..privacy import PrivacyLedger
from ..privacy.gdp import gdp_epsilon, gdp_mu
from ..privacy.moments import clip_record_norms, moment_release_worst_case, noisy_moments, release_sensitivity
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..privacy.spread import SPREAD_MAPS as RECORD_MAPS
from ..privacy.spread import check_spread_map as check_record_map
from ..privacy.spread import narrow_and_charge, private_spread_box, spread_map
from ..schema import public_bounds, scale_to_box
from ..statements import check_dependence
from ..validation import (
    RngLike,
    as_data_matrix,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = ["GCM_PC", "GCMDecider", "FeatureRelease", "gcm_pc", "feature_release", "release_decider",
           "feature_weights", "worst_case", "auto_norm_clip", "auto_features", "RELATION", "PUBLIC",
           "DEFAULT_FEATURE_WEIGHT", "RICH_FEATURES", "SPARSE_FEATURES", "NOISE_SWITCH", "NONLINEAR_NOISE_SWITCH",
           "NOISE_SWITCHES", "DEFAULT_SPREAD_SHARE", "DEFAULT_SPREAD_K",
           "DEFAULT_NORM_CLIP", "NORM_CLIP_SDS", "SPREAD_CHARGE", "SPREAD_MAPS", "DEFAULT_SPREAD_MAP", "SPLIT_WIDTH",
           "mapped_features"]

RELATION = REPLACE_ONE
PUBLIC = ("n", "bounds")
DEFAULT_FEATURE_WEIGHT = 0.25
"""Weight of the features T_2, T_3, … in the release of the rich basis (:data:`RICH_FEATURES`): most of the
sensitivity goes to the columns themselves, so linear dependence is measured about as well as by Moment-PC and the
nonlinear features add what the budget allows."""
RICH_FEATURES = (DEFAULT_CONDITIONING_DEGREE, DEFAULT_FEATURE_WEIGHT)
"""(conditioning_degree, feature_weight) of ``"auto"`` where the release's noise is small (:func:`auto_features`)."""
SPARSE_FEATURES = (3, 0.5)
"""(conditioning_degree, feature_weight) of ``"auto"`` where the release's noise is large: fewer features of each
conditioning column, and X's and Y's T_2 measured with a quarter of the rich basis's relative noise."""
NOISE_SWITCH = 0.016
"""σ/n of the rich basis's release (noise per released mean) above which ``"auto"`` takes the sparse basis. Chosen
before the notebooks' runs from trial draws with their own seeds (PCD's nonlinear networks at n = 8 000, ε = 0.4–4;
20 columns of PCD's nonlinear model and linear-Gaussian at n = 10⁵, ε = 0.05–10), by a rule fixed before the trials:
the smallest of 0.002, 0.004, 0.008, 0.016 above which the sparse basis is within 0.01 of the rich one's skeleton F1
(or better) in every trial setting. On the nonlinear data it was better at every noise level tried from σ/n = 0.002
on (alarm, ε = 1, σ/n = 0.017: 0.63 against 0.57; child, ε = 0.4, 0.025: 0.42 against 0.31; asia, ε = 2, 0.003:
0.88 against 0.83) and worse without noise (alarm 0.67 against 0.73: a cubic fit of each conditioning column
leaves more of a nonlinear parent in the residuals); on the linear-Gaussian columns at n = 10⁵ it was worse up to
σ/n = 0.014 (ε = 0.1, 0.007: 0.89 against 0.93; ε = 0.05, 0.014: 0.84 against 0.86), which puts the switch at
0.016: on nonlinear data the sparse basis would also help at lower noise (:data:`NONLINEAR_NOISE_SWITCH`)."""
NONLINEAR_NOISE_SWITCH = 0.002
"""σ/n above which ``"auto"`` takes the sparse basis when the data holder states ``dependence="nonlinear"`` (a public
statement about the data, as for the forecasts' synthetic data). The same rule and the same trials as
:data:`NOISE_SWITCH`, with the rule applied to the nonlinear trial settings alone: the sparse basis was better in
every one of them above σ/n = 0.002 (cancer, ε = 1, 0.004: 0.81 against 0.75; asia, ε = 1, 0.006: 0.84 against 0.79;
20 columns at n = 10⁵, ε = 0.4, 0.002: 0.87 against 0.85) and worse below it (20 columns, ε = 1, 0.0009: 0.86
against 0.91). The split by statement was made after the notebooks had run with one switch for all data, and
before their runs with it. Both switches were chosen with tanh for every feature; under the split map
(:data:`DEFAULT_SPREAD_MAP`) the ``"auto"`` ball is smaller, so the same release has a smaller σ/n, while T_1's
variance is smaller too (about 0.11 against 0.39 for a normal column), so the same σ/n is more noise relative to
T_1. The split map's trials ran with the switches as they are."""
NOISE_SWITCHES = {"linear": NOISE_SWITCH, "nonlinear": NONLINEAR_NOISE_SWITCH}
"""The switch of ``"auto"`` by the holder's ``dependence`` statement (the keys of :data:`dpcd.statements.DEPENDENCE`)."""
DEFAULT_SPREAD_SHARE = 0.1
"""Share of μ² spent on the columns' private spreads (:mod:`dpcd.privacy.spread`) before the feature moments."""
DEFAULT_SPREAD_K = 1.0
"""Half-width, in private standard deviations, of the narrowed box of every column; with the smooth map
(:data:`dpcd.privacy.spread.DEFAULT_SPREAD_MAP`) the box's edges go to ±tanh 1 and values beyond it are compressed,
not lost. Chosen from trial runs on data sets other than the notebooks' draws (PCD's Fig. 2 networks at n = 8 000,
ε = 1; 20 columns, linear-Gaussian at n = 10⁵ and PCD's nonlinear model at n = 2·10⁴, ε = 1 and 10)."""
SPREAD_MAPS = ("split",) + RECORD_MAPS
"""How GCM-PC's features see a column through its narrowed box: ``"split"`` (T_1 linear, clamped to the box widened
:data:`SPLIT_WIDTH` times; T_2, T_3, … of the tanh map) or one map for all features, ``"tanh"`` or ``"clamp"``
(:func:`dpcd.privacy.spread.spread_map`)."""
DEFAULT_SPREAD_MAP = "split"
"""Keeps an additive conditional mean additive in T_1 (module docstring). Chosen over ``"tanh"`` (at a
:data:`SPLIT_WIDTH` of 3) by a rule fixed before trials on draws apart from the notebooks' (linear X, Y with five
shared parents, exact moments, 200 draws: rejections of the true null ≤ 0.07 at n = 500 and 2 000 — 0.040 and
0.050, tanh 0.055 and 0.145; skeleton F1 at ε = 1, three draws each, of 20 linear-Gaussian and 20 nonlinear
columns at n = 10⁵ and PCD's Fig. 2 networks at n = 8 000: no lower than tanh's by more than 0.01 on average and
0.05 on any set — +0.000 on average, from −0.038 (cancer) to +0.056 (asia); and no fall from ε = 1 to ε = 10 of
more than 0.02 on the 20-column sets — 0.969 → 0.981 and 0.921 → 0.926)."""
SPLIT_WIDTH = 2.0
"""With ``spread_map="split"``, T_1 of a column is the column clamped to its narrowed box (mean ± ``spread_k``
private sd) widened this many times about its centre, scaled onto [−1, 1]: linear within ± 2 sd at ``spread_k`` = 1.
Chosen over 3 (the first choice, fixed before any trial) by a rule written before a trial on draws apart from the
notebooks': mean skeleton F1 at ε = 1 over PCD's four Fig. 2 networks (n = 8 000, 10 draws each) and the benchmark's
two 20-column sets (n = 10⁵, 3 draws each) higher by at least 0.01, no set lower by more than 0.05, and the exact
test's level on five shared linear parents at most 0.07 at n = 500 and 2 000 (200 draws) — 0.747 against 0.734
(alarm 0.619 / 0.601, asia 0.727 / 0.725, cancer 0.837 / 0.748, child 0.555 / 0.567, linear-Gaussian 0.947 /
0.947, nonlinear 0.798 / 0.812), level 0.050 / 0.055 (3: 0.060 / 0.030). A narrower box gives T_1 more variance
against the same noise; it clamps more of each column (4.6 % of a Gaussian one beyond ± 2 sd, 0.3 % beyond ± 3), and
a clamped T_1 is not additive in S."""
DEFAULT_NORM_CLIP = "auto"
"""Squared radius of the norm clip as a share of its largest possible value: ``"auto"`` (:func:`auto_norm_clip`) or
a number in (0, 1] (1: no clip)."""
NORM_CLIP_SDS = 5.0
"""Standard deviations of the reference squared norm between its mean and the ``"auto"`` radius; chosen on the trial
draws named in the module docstring (at 3, c = 0.73 and 0.66 on cancer's and asia's columns, the clip caught about
3–5 % of their records)."""
SPREAD_CHARGE = "GCM-PC column spreads"
THEOREM = ("two Gaussian mechanisms composed to mu-GDP (Dong, Roth & Su 2022, Thm. 2.7, Cor. 3.3 and 2.13): the "
           "columns' sums and sums of squares in the public box (L2 sensitivity 2 sqrt(p), mu sqrt(spread_share)), "
           "which fix each column's box, then the sums and second moments of the weighted features (each in "
           "[-1, 1]: Chebyshev polynomials of the records mapped by that box, T_1 of the 'split' map the record "
           "clamped to the box widened 2 times) scaled onto a public L2 ball of radius R (L2 sensitivity "
           "min(sqrt(4 S2 + 2 S2^2 - S4) of the weights, sqrt(4 R^2 + R^4 + R^2)), "
           "mu sqrt(1 - spread_share)) "
           "under replace-one; the GCM tests, their bootstrap and the orientation are post-processing")


def worst_case(*, epsilon_total: float, delta: float, max_order: int | None = None,
               spread_share: float = DEFAULT_SPREAD_SHARE) -> WorstCase:
    """The data-independent guarantee of any :func:`gcm_pc` run: (``epsilon_total``, ``delta``) under replace-one
    (the column spreads and the feature moments as two Gaussian charges that compose to μ-GDP).

    >>> worst_case(epsilon_total=1.0, delta=1e-6).accountant
    'gdp'
    """
    return moment_release_worst_case("gcm_pc", "GCM-PC feature moments", epsilon_total=epsilon_total, delta=delta,
                                     public=PUBLIC, theorem=THEOREM, spread_share=spread_share,
                                     spread_charge=SPREAD_CHARGE)


def auto_features(p: int, n: int, *, epsilon_total: float, delta: float,
                  spread_share: float = DEFAULT_SPREAD_SHARE, spread_k: float = DEFAULT_SPREAD_K,
                  spread_map: str = DEFAULT_SPREAD_MAP, norm_clip: float | str = DEFAULT_NORM_CLIP,
                  dependence: str = "linear") -> tuple[int, float]:
    """(conditioning_degree, feature_weight) of ``"auto"``: :data:`SPARSE_FEATURES` when the release of the rich
    basis (:data:`RICH_FEATURES`) would add noise of more than the switch of ``dependence``
    (:data:`NOISE_SWITCHES`: :data:`NOISE_SWITCH` for ``"linear"``, :data:`NONLINEAR_NOISE_SWITCH` for
    ``"nonlinear"``) to each released mean (σ/n, σ the noise of each released sum at μ√(1 − ``spread_share``)),
    :data:`RICH_FEATURES` otherwise and without noise (``epsilon_total = inf``, exact moments: a diagnostic, not
    private).

    A function of p, n (public under replace-one), the budget, the settings and the holder's public ``dependence``
    statement: no data are read. The more noise, the fewer features the regressions on S can use before their noise
    outweighs what they fit.

    >>> auto_features(37, 8_000, epsilon_total=0.4, delta=1e-6)
    (3, 0.5)
    >>> auto_features(5, 8_000, epsilon_total=1.0, delta=1e-6), auto_features(5, 8_000, epsilon_total=1.0, delta=1e-6,
    ...                                                                       dependence="nonlinear")
    ((5, 0.25), (3, 0.5))
    """
    p = check_int(p, "p", minimum=1)
    n = check_int(n, "n", minimum=1)
    dependence = check_dependence(dependence)
    if epsilon_total == math.inf:
        return RICH_FEATURES
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    spread_share = check_probability(spread_share, "spread_share", open_low=False)
    if spread_share == 1.0:
        raise ValueError("spread_share must be below 1: the feature moments need a share of the budget")
    degree, weight = RICH_FEATURES
    weights = feature_weights(p, degree, weight)
    clip = _norm_clip(norm_clip, p, degree, weight, spread_k, spread_map, spread_share)
    sensitivity = release_sensitivity(weights, _ball_radius(clip, weights))
    noise = sensitivity / (gdp_mu(epsilon_total, delta) * math.sqrt(1.0 - spread_share)) / n
    return SPARSE_FEATURES if noise > NOISE_SWITCHES[dependence] else RICH_FEATURES


def _ball_radius(clip: float, weights: np.ndarray) -> float:
    """Radius √(c · S₂) of the public ball of the weighted feature records (c = 1: no record moves)."""
    return math.sqrt(clip * float(np.sum(weights ** 2)))


def _check_basis(conditioning_degree: int, degree: int) -> None:
    """The regressions on S need X's and Y's ``degree`` features among the basis."""
    if conditioning_degree < degree:
        raise ValueError(f"conditioning_degree must be at least degree = {degree}, got {conditioning_degree}")


def _features(conditioning_degree: int | str, feature_weight: float | str, p: int, n: int, *, epsilon_total: float,
              delta: float, spread_share: float, spread_k: float, spread_map: str,
              norm_clip: float | str, dependence: str) -> tuple[int, float]:
    """The run's basis: ``"auto"`` entries from :func:`auto_features`, numbers checked."""
    dependence = check_dependence(dependence)  # checked with a given basis too
    auto = None
    if isinstance(conditioning_degree, str) or isinstance(feature_weight, str):
        for name, value in (("conditioning_degree", conditioning_degree), ("feature_weight", feature_weight)):
            if isinstance(value, str) and value != "auto":
                raise ValueError(f"{name} must be 'auto' or a number, got {value!r}")
        auto = auto_features(p, n, epsilon_total=epsilon_total, delta=delta, spread_share=spread_share,
                             spread_k=spread_k, spread_map=spread_map, norm_clip=norm_clip, dependence=dependence)
    degree = auto[0] if conditioning_degree == "auto" else check_int(conditioning_degree, "conditioning_degree",
                                                                       minimum=1)
    weight = auto[1] if feature_weight == "auto" else check_probability(feature_weight, "feature_weight",
                                                                        open_high=False)
    return degree, weight


def auto_norm_clip(p: int, conditioning_degree: int = DEFAULT_CONDITIONING_DEGREE,
                   feature_weight: float = DEFAULT_FEATURE_WEIGHT, spread_k: float = DEFAULT_SPREAD_K,
                   spread_map: str = DEFAULT_SPREAD_MAP) -> float:
    """The public norm clip of ``norm_clip="auto"``: c = min(1, m + :data:`NORM_CLIP_SDS` · s / √p).

    m and s are the mean and standard deviation of one column's share q(u) = Σ_k w_k² T_k(u)² / Σ_k w_k² of its
    largest squared weighted norm, for the features of a standard normal Z through ``spread_map`` with the box
    ± ``spread_k`` (:func:`mapped_features`) — a column at its private mean ± ``spread_k`` sd mapped by the spread
    stage (Gauss–Hermite quadrature, 80 nodes). For p independent such columns the squared norm of a record over its largest value S₂
    has mean m and sd s/√p, so the squared radius c·S₂ lies :data:`NORM_CLIP_SDS` sd above the mean. A function of
    public settings only: no data are read.

    >>> round(auto_norm_clip(37), 3), round(auto_norm_clip(5), 3), round(auto_norm_clip(1), 3)
    (0.452, 0.752, 1.0)
    """
    p = check_int(p, "p", minimum=1)
    degree = check_int(conditioning_degree, "conditioning_degree", minimum=1)
    spread_k = check_positive(spread_k, "spread_k")
    spread_map = check_spread_map(spread_map, "spread_map")
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    reach = float(np.abs(nodes).max())   # a public box that holds every node, the narrowed box ± spread_k in it
    features = mapped_features((nodes / reach)[:, None], np.array([[-spread_k / reach, spread_k / reach]]),
                               how=spread_map, degree=degree)
    w2 = feature_weights(1, degree, feature_weight) ** 2
    share = (features ** 2) @ w2 / w2.sum()
    mean = float(weights @ share)
    sd = math.sqrt(max(float(weights @ (share - mean) ** 2), 0.0))
    return min(1.0, mean + NORM_CLIP_SDS * sd / math.sqrt(p))


def _norm_clip(norm_clip: float | str, p: int, conditioning_degree: int, feature_weight: float, spread_k: float,
               spread_map: str, spread_share: float) -> float:
    """The clip c of a run: ``"auto"`` is :func:`auto_norm_clip` with the spread stage (its reference assumes the
    columns centred and scaled by it) and 1 without it; a number must lie in (0, 1]."""
    if isinstance(norm_clip, str):
        if norm_clip != "auto":
            raise ValueError(f"norm_clip must be 'auto' or a number in (0, 1], got {norm_clip!r}")
        return auto_norm_clip(p, conditioning_degree, feature_weight, spread_k, spread_map) if spread_share else 1.0
    return check_probability(norm_clip, "norm_clip", open_high=False)


def check_spread_map(how: str, name: str = "spread_map") -> str:
    """``how`` if it is one of :data:`SPREAD_MAPS`, else a ValueError naming the argument ``name``."""
    return check_record_map(how, name, SPREAD_MAPS)


def _record_map(how: str) -> str:
    """The map of :func:`dpcd.privacy.spread.spread_map` behind the features of ``how``."""
    return "tanh" if how == "split" else how


def mapped_features(box: np.ndarray, edges: np.ndarray | None, *, how: str, degree: int,
                    mapped: np.ndarray | None = None) -> np.ndarray:
    """Chebyshev features T_1..T_``degree`` (layout of :func:`dpcd.ci.gcm.chebyshev_features`) of the records of
    ``box`` (in [−1, 1]) seen through the narrowed box ``edges`` (p × 2; None: the public box, no map): ``how`` is
    one of :data:`SPREAD_MAPS`; ``mapped`` may pass the records already through the record map (as the spread stage
    returns them). Every feature lies in [−1, 1]; each record is transformed by itself.

    >>> edges = np.array([[-0.5, 0.5]])
    >>> mapped_features(np.array([[0.5], [1.0]]), edges, how="split", degree=2).round(3).tolist()
    [[0.5, 0.16], [1.0, 0.859]]
    """
    box = np.asarray(box, dtype=np.float64)
    if edges is None:
        return chebyshev_features(box, degree)
    edges = np.asarray(edges, dtype=np.float64)
    if box.ndim != 2 or edges.shape != (box.shape[1], 2) or not np.all(edges[:, 1] > edges[:, 0]):
        raise ValueError(f"edges must be one (lower, upper) pair with lower < upper per column of box "
                         f"({box.shape[-1]} columns), got shape {edges.shape}")
    if mapped is None:
        mapped = spread_map(box, edges, how=_record_map(how))
    features = chebyshev_features(mapped, degree)
    if how == "split":
        centre, half = 0.5 * (edges[:, 0] + edges[:, 1]), 0.5 * (edges[:, 1] - edges[:, 0])
        features[:, ::degree] = np.clip((box - centre) / (SPLIT_WIDTH * half), -1.0, 1.0)
    return features


def feature_weights(p: int, conditioning_degree: int, feature_weight: float) -> np.ndarray:
    """Public weight of each released feature: 1 for T_1 of every column, ``feature_weight`` for T_2.. T_d.

    >>> feature_weights(2, 3, 0.5).tolist()
    [1.0, 0.5, 0.5, 1.0, 0.5, 0.5]
    """
    one = np.full(conditioning_degree, float(feature_weight))
    one[0] = 1.0
    return np.tile(one, p)


class GCMDecider(Decider):
    """PC decisions from one noisy feature covariance: :func:`dpcd.ci.gcm.noisy_gcm_test` at ``alpha``, memoised."""

    def __init__(self, covariance: np.ndarray, mean: np.ndarray, n: int, sigma: float, *, alpha: float,
                 degree: int, conditioning_degree: int, rng: np.random.Generator, n_boot: int,
                 weights: np.ndarray | None = None):
        self.covariance, self.mean, self.n, self.sigma, self.weights = covariance, mean, n, sigma, weights
        self.alpha, self.degree, self.conditioning_degree = alpha, degree, conditioning_degree
        self.rng, self.n_boot = rng, n_boot
        self.p_values: dict[tuple[int, int, tuple[int, ...]], float] = {}

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if key not in self.p_values:
            self.p_values[key] = noisy_gcm_test(self.covariance, self.mean, self.n, self.sigma, key[0], key[1],
                                                key[2], degree=self.degree,
                                                conditioning_degree=self.conditioning_degree,
                                                weights=self.weights, rng=self.rng,
                                                n_boot=self.n_boot)
        return self.p_values[key] > self.alpha


@dataclass(frozen=True)
class FeatureRelease:
    """GCM-PC's release as its tests read it: feature covariance and means, the noise σ per released sum, the
    public weights, the narrowed box (``edges``, None without the spread stage), the run's total μ, the public
    norm clip c (1: none) and the basis (``conditioning_degree`` features per column, ``feature_weight``)."""

    covariance: np.ndarray
    mean: np.ndarray
    sigma: float
    weights: np.ndarray
    edges: np.ndarray | None
    mu: float
    norm_clip: float = 1.0
    conditioning_degree: int = DEFAULT_CONDITIONING_DEGREE
    feature_weight: float = DEFAULT_FEATURE_WEIGHT


def release_decider(release: FeatureRelease, n: int, *, alpha: float, rng: np.random.Generator,
                    n_boot: int = DEFAULT_BOOTSTRAP, degree: int = DEFAULT_DEGREE) -> GCMDecider:
    """The PC decisions of GCM-PC's tests on ``release``: X's and Y's first ``degree`` features regressed on the
    release's basis of S (post-processing of the release)."""
    _check_basis(release.conditioning_degree, degree)
    return GCMDecider(release.covariance, release.mean, n, release.sigma, alpha=alpha, degree=degree,
                      conditioning_degree=release.conditioning_degree, weights=release.weights, rng=rng,
                      n_boot=n_boot)


def feature_release(box: np.ndarray, *, epsilon_total: float, delta: float, rng: np.random.Generator,
                    conditioning_degree: int | str = "auto", feature_weight: float | str = "auto",
                    spread_share: float = DEFAULT_SPREAD_SHARE,
                    spread_k: float = DEFAULT_SPREAD_K, spread_map: str = DEFAULT_SPREAD_MAP,
                    norm_clip: float | str = DEFAULT_NORM_CLIP, dependence: str = "linear",
                    ledger: PrivacyLedger | None = None) -> FeatureRelease:
    """The private steps of :func:`gcm_pc` on records already in the public box: the column spreads (with
    ``spread_share`` > 0), then the weighted Chebyshev feature moments of the records scaled onto the ball of the
    public ``norm_clip`` (module Theorem), charged to ``ledger``. ``"auto"`` bases come from :func:`auto_features`
    with the box's shape (n rows: public under replace-one) and the holder's ``dependence`` statement.

    ``epsilon_total = inf`` gives the same steps without noise (σ = 0, nothing charged): the same test on exact
    moments, not private — a diagnostic for experiments, refused with a ``ledger`` (which would stay empty).
    Values outside [−1, 1] are clamped. ``edges`` stays inside a run: it is a noisy number.
    """
    if epsilon_total == math.inf and ledger is not None:
        raise ValueError("epsilon_total = inf releases exact moments (not private): pass no ledger")
    box = np.asarray(box, dtype=np.float64)
    if box.ndim != 2 or not np.all(np.isfinite(box)):  # the domain's rule, as gcm_pc's own check: before any release
        raise ValueError("box must be a 2-D array of finite values (rows x columns); NaN and infinities are outside "
                         "the domain: fill or drop them in data preparation")
    box = np.clip(box, -1.0, 1.0)
    spread_share = check_probability(spread_share, "spread_share", open_low=False)
    spread_k = check_positive(spread_k, "spread_k")
    spread_map = check_spread_map(spread_map, "spread_map")
    conditioning_degree, feature_weight = _features(
        conditioning_degree, feature_weight, box.shape[1], max(box.shape[0], 1), epsilon_total=epsilon_total,
        delta=delta, spread_share=spread_share, spread_k=spread_k, spread_map=spread_map, norm_clip=norm_clip,
        dependence=dependence)
    weights = feature_weights(box.shape[1], conditioning_degree, feature_weight)
    clip = _norm_clip(norm_clip, box.shape[1], conditioning_degree, feature_weight, spread_k, spread_map,
                      spread_share)
    radius = _ball_radius(clip, weights)
    exact = epsilon_total == math.inf
    mu = math.inf if exact else gdp_mu(epsilon_total, delta)
    edges, mapped = None, None
    if exact:
        if spread_share:
            mapped, edges = private_spread_box(box, mu=math.inf, k=spread_k, rng=rng, how=_record_map(spread_map))
        features = mapped_features(box, edges, how=spread_map, degree=conditioning_degree, mapped=mapped)
        features = clip_record_norms(features * weights, radius) / weights
        sums, second, sigma = features.sum(axis=0), features.T @ features, 0.0
    else:
        ledger = PrivacyLedger("replace", public=PUBLIC) if ledger is None else ledger
        mapped, mu_moments, edges = narrow_and_charge(box, ledger, mu=mu, share=spread_share, k=spread_k,
                                                      delta=delta, rng=rng, charge=SPREAD_CHARGE,
                                                      how=_record_map(spread_map))
        features = mapped_features(box, edges, how=spread_map, degree=conditioning_degree, mapped=mapped)
        sums, second, sigma = noisy_moments(features, mu=mu_moments, rng=rng, weights=weights, radius=radius)
        dimension = features.shape[1]
        ledger.charge("GCM-PC feature moments", epsilon=gdp_epsilon(mu_moments, delta, positive=True), delta=delta,
                      kind="gaussian", sensitivity=release_sensitivity(weights, radius), scale=sigma,
                      note=f"{sums.size + dimension * (dimension + 1) // 2} numbers of {dimension} features"
                           f"{'' if edges is None else f' ({spread_map} map)'}, norm clip {clip:.4g}, "
                           f"{mu_moments:.4g}-GDP")
    n = box.shape[0]
    mean = sums / n
    return FeatureRelease(second / n - np.outer(mean, mean), mean, sigma, weights, edges, mu, clip,
                          conditioning_degree, feature_weight)


def gcm_pc(data, *, bounds, epsilon_total: float, delta: float = 1e-6, alpha: float = 0.05, rng: RngLike,
           degree: int = DEFAULT_DEGREE, conditioning_degree: int | str = "auto",
           feature_weight: float | str = "auto", spread_share: float = DEFAULT_SPREAD_SHARE,
           spread_k: float = DEFAULT_SPREAD_K, spread_map: str = DEFAULT_SPREAD_MAP,
           norm_clip: float | str = DEFAULT_NORM_CLIP, max_order: int | None = None,
           max_tests: int | None = None, n_boot: int = DEFAULT_BOOTSTRAP, dependence: str = "linear",
           node_names: Sequence[str] | None = None) -> PCResult:
    """GCM-PC on numeric ``data`` with public ``bounds``: a CPDAG whose run is (``epsilon_total``, ``delta``)-DP.

    Parameters
    ----------
    data : numbers (rows × variables); values outside ``bounds`` are clamped.
    bounds : public (lower, upper) per column (sequence, mapping or :class:`~dpcd.schema.Schema`).
    epsilon_total, delta : the run's total budget under replace-one (n public).
    alpha : two-sided level of the CI tests.
    rng : Generator or seed of the noise (secret in a release) and the tests' bootstrap.
    degree : Chebyshev features of X and of Y whose residual products each test reads.
    conditioning_degree : Chebyshev features per column of S in the regressions (≥ ``degree``); the release
        holds p · ``conditioning_degree`` features, so a larger value costs noise. ``"auto"``: from
        :func:`auto_features` (5 where the release's noise is small, 3 where it is large; where the switch lies
        depends on ``dependence``).
    feature_weight : public weight of the features T_2, T_3, … in the release (T_1, the column itself, has
        weight 1): the release is of the weighted features, so a small weight spends little of the sensitivity
        on them and measures them with more noise (module docstring). ``"auto"``: from :func:`auto_features`
        (0.25 and 0.5 with the two bases).
    spread_share : share of μ² spent first on the columns' private means and spreads
        (:mod:`dpcd.privacy.spread`); 0 releases the moments in the public box.
    spread_k : the narrowed box of each column is its private mean ± ``spread_k`` private standard deviations
        (within the public bounds).
    spread_map : how the features see each column through its narrowed box (:data:`SPREAD_MAPS`): ``"split"``
        (default: T_1 the column clamped to the box widened :data:`SPLIT_WIDTH` times, linear inside; T_2, T_3, …
        of the tanh map), ``"tanh"`` (all features of tanh((x − c)/h), strictly increasing: keeps the conditional
        independences of the columns as clamped to their public bounds, but bends a linear relation, module
        docstring) or ``"clamp"`` (values outside the box clamped, which can break X ⫫ Y | S through S's tails;
        :func:`dpcd.privacy.spread.spread_map`). With ``conditioning_degree`` = 1 the split map is a clamp at two
        half-widths; from 2 on, T_1's sign and T_2 recover the tanh value, so the features stay one-to-one.
    norm_clip : squared radius of the ball the weighted feature records are scaled onto, as a share of its largest
        possible value (public): ``"auto"`` (:func:`auto_norm_clip` with the spread stage, 1 without) or a number in
        (0, 1]; 1 moves no record. A smaller ball means less noise and more records shrunk (module docstring).
    max_order, max_tests : as in :func:`dpcd.discovery.pc.pc` (the tests cost no budget).
    n_boot : bootstrap draws per test.
    dependence : the data holder's public statement of how the columns depend on each other, ``"linear"``
        (default) or ``"nonlinear"``: where ``"auto"`` switches to the sparse basis (:data:`NOISE_SWITCHES`). Like
        every setting it must not be chosen by looking at the data (or that look must be charged).
    node_names : as in :func:`dpcd.discovery.pc.pc`.

    Privacy: the module's theorem; the ledger holds the Gaussian charges of the spreads and of the moments (the
    moments alone with ``spread_share`` = 0).
    ``info``: ``algorithm``, ``epsilon_total``, ``delta``, ``alpha``, ``degree``,
    ``conditioning_degree`` and ``feature_weight`` (the basis used), ``spread_share``, ``spread_k``, ``spread_map``,
    ``norm_clip`` (the c used), ``features`` (D), ``dependence``,
    ``mu``, ``sigma`` (noise per released sum) and ``n_computed`` (distinct tests) — public numbers only; the narrowed
    box, a noisy number, stays inside the run.
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    degree = check_int(degree, "degree", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    array = as_data_matrix(data, kind="numeric", min_rows=4)  # the test's own minimum, checked before any release
    names = node_names_of(data, node_names)
    conditioning_degree, feature_weight = _features(  # from the table's shape and the settings: public
        conditioning_degree, feature_weight, array.shape[1], max(array.shape[0], 1), epsilon_total=epsilon_total,
        delta=delta, spread_share=spread_share, spread_k=spread_k, spread_map=spread_map, norm_clip=norm_clip,
        dependence=dependence)
    _check_basis(conditioning_degree, degree)
    box = scale_to_box(array, public_bounds(bounds, array.shape[1], names))
    generator = as_rng(rng)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    release = feature_release(box, epsilon_total=epsilon_total, delta=delta, rng=generator,
                              conditioning_degree=conditioning_degree, feature_weight=feature_weight,
                              spread_share=spread_share, spread_k=spread_k, spread_map=spread_map,
                              norm_clip=norm_clip, dependence=dependence, ledger=ledger)
    decider = release_decider(release, box.shape[0], alpha=alpha, rng=generator, n_boot=n_boot, degree=degree)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    return replace(result, info={"algorithm": "gcm_pc", "epsilon_total": epsilon_total, "delta": delta,
                                 "alpha": alpha, "degree": degree, "conditioning_degree": release.conditioning_degree,
                                 "feature_weight": release.feature_weight, "spread_share": spread_share,
                                 "spread_k": spread_k, "spread_map": spread_map, "norm_clip": release.norm_clip,
                                 "features": release.weights.size, "dependence": dependence,
                                 "mu": release.mu, "sigma": release.sigma, "n_computed": len(decider.p_values)})


GCM_PC = PrivateAlgorithm(
    name="gcm_pc", label="GCM-PC", data="numeric", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=gcm_pc, privacy_map=worst_case, delta_arg="delta", alpha_arg="alpha",
    proof="proven", theorem="this package (gcm_pc module theorem; Dong, Roth & Su 2022; Shah & Peters 2020)")
"""GCM-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""
