"""A per-run record of every privacy charge, with totals by three composition methods.

``PrivacyLedger`` is the one mutable object of ``dpcd.privacy``: a private
algorithm creates one per run, charges each mechanism it applies, and returns
it with its result. Every entry is an immutable :class:`Charge`.

Semantics (in the spirit of OpenDP's "measurement = input metric + privacy
map"): the ledger states its *neighbouring relation* (``"add/remove"`` or
``"replace"`` one record) and what is assumed *public* (e.g. ``"n"``,
``"domains"``); every charge's ε, δ and sensitivity are meant with respect to
that relation. Totals hold for the adaptive composition of all charges.

Totals
------
``basic``     Σε_i, Σδ_i [DR14, Thm 3.16].
``advanced``  heterogeneous advanced composition at δ' [DRV10; DR14, Thm 3.20;
              KOV15], capped by basic: the smaller ε is returned, with its δ.
``tight``     numerical composition of privacy loss distributions (PLDs) with
              ``dp_accounting`` [MM18; DGKKM22], reported at ``target_delta`` and capped
              by basic.

Sub-sampled Gaussian charges
----------------------------
``kind="subsampled_gaussian"`` records one step of the Poisson-sub-sampled
Gaussian mechanism (each record enters the sub-sample independently with
probability q = ``sampling_rate``; Gaussian noise of standard deviation
``noise_multiplier`` × Δ is added to the query on the sub-sample) [ACGMMTZ16;
MTZ19]. Δ is the *add/remove* sensitivity of the query on sub-samples,
sup |f(S ∪ {x}) − f(S)| — the quantity every sub-sampled-Gaussian analysis
needs, under either ledger relation: under add/remove the pair of output
distributions is (N(0, σ²), (1 − q)N(0, σ²) + qN(Δ, σ²)) and under replace-one
((1 − q)N(0, σ²) + qN(Δ, σ²), (1 − q)N(0, σ²) + qN(−Δ, σ²)) (the replaced
record is sampled in or out), which are dp_accounting's ADD_OR_REMOVE_ONE and
REPLACE_ONE pairs. For basic and advanced composition each step carries the
(ε, δ) of **one** step: δ is stated by the caller (the per-step δ) and ε is the
PLD accountant's (pessimistic) ε of one step at that δ
(:func:`subsampled_gaussian_epsilon`). The tight total composes the steps'
exact PLDs together with every other charge (dp_accounting's PLD accountant
supports ``PoissonSampledDpEvent(GaussianDpEvent)`` under both relations; its
RDP accountant [MTZ19] only under add/remove and without Laplace or generic
(ε, δ) steps, so the PLD is the one used; for a ledger holding only
sub-sampled Gaussian steps under add/remove the RDP accountant gives a valid,
looser bound, see tests/test_privacy.py).

References
----------
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
.. [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. Boosting and Differential Privacy. FOCS 2010.
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. The Composition Theorem for Differential Privacy. ICML 2015.
.. [MM18] S. Meiser, E. Mohammadi. Tight on Budget? Tight Bounds for r-Fold
   Approximate Differential Privacy. CCS 2018.
.. [DGKKM22] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar, P. Manurangsi.
   Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions. PETS 2022.
.. [ACGMMTZ16] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar,
   L. Zhang. Deep Learning with Differential Privacy. CCS 2016 (the moments accountant).
.. [MTZ19] I. Mironov, K. Talwar, L. Zhang. Rényi Differential Privacy of the
   Sampled Gaussian Mechanism. arXiv:1908.10530, 2019.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Literal, Optional

import numpy as np
import pandas as pd

from ..validation import check_delta, check_epsilon, check_int, check_positive
from .gdp import SMALLEST_NORMAL, gdp_epsilon
from .mechanisms import (
    advanced_composition,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
)
from .relation import RELATION_NAMES, RelationName
from .zcdp import zcdp_epsilon

__all__ = [
    "Charge",
    "PrivacyTotal",
    "PrivacyLedger",
    "KINDS",
    "METHODS",
    "subsampled_gaussian_epsilon",
]

Kind = Literal["laplace", "gaussian", "exponential", "bounded_range", "pure", "approx", "subsampled_gaussian"]
Method = Literal["basic", "advanced", "tight"]

KINDS: tuple[str, ...] = ("laplace", "gaussian", "exponential", "bounded_range", "pure", "approx",
                          "subsampled_gaussian")
METHODS: tuple[str, ...] = ("basic", "advanced", "tight")

_PURE_KINDS = ("laplace", "exponential", "bounded_range", "pure")
_REL_TOL = 1e-6  # tolerance when checking that a recorded (ε, δ) matches its noise
_STEP_INTERVAL = 1e-4  # PLD grid of the per-step ε of a sub-sampled Gaussian charge
PLD_MAX_ROUNDS = 20_000
"""Above this many charges (counting repeats) the tight total of charges with a zCDP bound is that bound: the PLD
composition of tens of thousands of rounds takes a minute and 5-7 GB (Priv-PC's worst case on child has 65 360
rounds), and at the grid of 1e-4 it rounds steps of ε ≈ 1e-5 up tenfold, so there it is also far looser (the
calibrated per-test ε of Priv-PC on 20 columns at total ε = 1: 1.5e-5 by the PLD, 1.2e-3 by zCDP)."""




def _inverse_square(m: float) -> float:
    """1/m² as (1/m)·(1/m) (no OverflowError, no division by an underflowed m²), rounded up to the smallest normal
    double where it would fall into subnormals (which lose relative precision, so could under-report a privacy
    loss); 0 only for m = ∞ (no privacy loss at all).

    >>> _inverse_square(2.0), _inverse_square(3e161) == SMALLEST_NORMAL, _inverse_square(math.inf)
    (0.25, True, 0.0)
    """
    inverse = 1.0 / m
    if inverse == 0.0:
        return 0.0
    return max(inverse * inverse, SMALLEST_NORMAL)


def _sum(values) -> float:
    """``math.fsum(values)``, or ∞ where the exact sum exceeds the largest double (fsum raises there)."""
    values = list(values)
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


def _dp_relation(relation: RelationName):
    from dp_accounting import privacy_accountant

    rel = privacy_accountant.NeighboringRelation
    return rel.ADD_OR_REMOVE_ONE if relation == "add/remove" else rel.REPLACE_ONE


def _subsampled_gaussian_pld(noise_multiplier: float, sampling_rate: float, relation: RelationName, interval: float):
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    return pld_lib.from_gaussian_mechanism(
        standard_deviation=noise_multiplier,
        sampling_prob=sampling_rate,
        value_discretization_interval=interval,
        neighboring_relation=_dp_relation(relation),
    )


_HUGE_STEP = 50.0  # a step whose unsampled Gaussian ε exceeds this is not given to the PLD library
_PLD_RELIABLE = 700.0
"""Largest composed ε the PLD library's ε-for-δ is trusted for: it forms Σ e^{−loss}·p and a ratio of masses, which
underflow and overflow once the losses near ln(largest double) ≈ 709.78 (its answer is then that number, below the
true ε); at and above it the tight total is ∞ and the ledger reports basic composition."""


def _gaussian_epsilon(noise_multiplier: float, shift: float, delta: float) -> float:
    """Exact ε at δ of the Gaussian mechanism N(0, σ²) vs N(shift, σ²) (Balle & Wang 2018, Thm 8)."""
    import warnings

    from scipy import optimize

    def excess(log_eps: float) -> float:
        with warnings.catch_warnings():  # quad's round-off notice for negligible noise; the value is still used
            warnings.simplefilter("ignore")
            value = analytic_gaussian_delta(noise_multiplier, sensitivity=shift, epsilon=math.exp(log_eps))
        return value - delta

    if excess(math.log(1e-12)) <= 0:
        return 1e-12  # the point checked: (1e-12, δ) holds, smaller ε were not checked
    hi = 0.0
    while excess(hi) > 0:
        hi += 2.0
        if hi > 708.0:  # the ε at δ is beyond the largest double: ∞ is the (vacuous) bound
            return math.inf
    return float(math.exp(optimize.brentq(excess, -28.0, hi, xtol=1e-12, rtol=1e-12)))


@functools.lru_cache(maxsize=256)
def _subsampled_gaussian_epsilon(noise_multiplier: float, sampling_rate: float, delta: float,
                                 relation: RelationName) -> float:
    shift = 1.0 if relation == "add/remove" else 2.0
    unsampled = _gaussian_epsilon(noise_multiplier, shift, delta)
    if sampling_rate >= 1.0 or unsampled > _HUGE_STEP:
        # q = 1: exact. Otherwise a valid bound: by joint convexity of the hockey-stick divergence the
        # sub-sampled pair's δ(ε) is at most q times the unsampled pair's.
        return unsampled
    interval = max(_STEP_INTERVAL, 1e-3 * unsampled)
    pld = _subsampled_gaussian_pld(noise_multiplier, sampling_rate, relation, interval)
    return float(min(pld.get_epsilon_for_delta(delta), unsampled))


def subsampled_gaussian_epsilon(
    noise_multiplier: float, sampling_rate: float, delta: float, *, relation: RelationName = "add/remove"
) -> float:
    """ε at ``delta`` of **one** step of the Poisson-sub-sampled Gaussian mechanism.

    ``noise_multiplier`` = σ/Δ with Δ the add/remove sensitivity of the query
    on sub-samples (see the module docstring); ``sampling_rate`` = q ∈ (0, 1];
    ``neighbouring`` selects dp_accounting's ADD_OR_REMOVE_ONE or REPLACE_ONE
    pair. q = 1: the exact Gaussian ε (Balle & Wang 2018, Thm 8; shift Δ under
    add/remove, 2Δ under replace-one). q < 1: dp_accounting's PLD
    (connect-the-dots, pessimistic rounding, grid max(1e-4, 1e-3·ε₁) with ε₁
    the unsampled ε), an upper bound on the exact ε of the step [DGKKM22],
    never above ε₁; when ε₁ > 50 (negligible noise) ε₁ itself, a valid but
    unamplified bound. Returns 0.0 when the step is (0, δ)-DP.
    """
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    sampling_rate = check_positive(sampling_rate, "sampling_rate")
    if sampling_rate > 1.0:
        raise ValueError(f"sampling_rate must lie in (0, 1], got {sampling_rate}")
    delta = check_delta(delta)
    if relation not in RELATION_NAMES:
        raise ValueError(f"relation must be one of {RELATION_NAMES}, got {relation!r}")
    return _subsampled_gaussian_epsilon(float(noise_multiplier), float(sampling_rate), float(delta), relation)


@dataclass(frozen=True)
class Charge:
    """One charged mechanism, applied ``count`` times with the same parameters.

    Attributes
    ----------
    mechanism : name of the step (e.g. ``"ci_test"``, ``"sieve"``).
    epsilon, delta : the privacy of one application, w.r.t. the ledger's relation.
    count : number of applications (each charged ε, δ).
    kind : ``"laplace"`` (ε-DP Laplace noise), ``"gaussian"`` ((ε, δ)-DP Gaussian
        noise), ``"exponential"`` (ε-DP exponential mechanism), ``"bounded_range"``
        (an exponential mechanism with weights exp(ε q / (2Δ)) recorded with its
        ε-bounded-range property, hence ε²/8-zCDP, Cesar & Rogers 2021), ``"pure"`` (any
        other ε-DP step, e.g. a sparse vector or a sub-sampled step),
        ``"approx"`` (any other (ε, δ)-DP step) or ``"subsampled_gaussian"``
        (a Poisson-sub-sampled Gaussian step; ε, δ are one step's, see the
        module docstring).
    sensitivity, scale : the query's sensitivity (L1 for Laplace, L2 for
        Gaussian) and the noise scale (Laplace b or Gaussian σ), when recorded.
    noise_multiplier : scale/sensitivity used by the tight accountant (Laplace,
        Gaussian and sub-sampled Gaussian only): recorded values if given, otherwise
        1/ε for Laplace and the analytic-Gaussian σ/Δ for (ε, δ) (Balle & Wang
        2018) — the least noise consistent with the charge, hence a conservative
        assumption. Required for sub-sampled Gaussian charges.
    note : free text (e.g. which paper's calibration).
    sampling_rate : the Poisson sampling probability q of a sub-sampled
        Gaussian charge (None for the other kinds).
    """

    mechanism: str
    epsilon: float
    delta: float
    count: int
    kind: str
    sensitivity: Optional[float]
    scale: Optional[float]
    noise_multiplier: Optional[float]
    note: str = ""
    sampling_rate: Optional[float] = None


@dataclass(frozen=True)
class PrivacyTotal:
    """Total privacy of a ledger by one composition method.

    ``method`` is the method asked for; ``bound`` is the bound whose value was
    returned (e.g. ``method="advanced", bound="basic"`` when basic composition
    was smaller). ``target_delta`` is the δ at which the tight accountant was
    evaluated (None for the other methods). ``not_dp`` is empty for a run of
    proven mechanisms; otherwise it says why the total is **not** a guarantee
    (the run used a published-but-unproven variant, :meth:`PrivacyLedger.mark_not_dp`).
    """

    epsilon: float
    delta: float
    method: str
    bound: str
    target_delta: Optional[float] = None
    not_dp: str = ""

    @property
    def differentially_private(self) -> bool:
        """Whether this total is a differential-privacy guarantee (no unproven variant was used)."""
        return not self.not_dp

    def as_dict(self) -> dict:
        return asdict(self)


def _name(value, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty string, got {value!r}")
    return value


class PrivacyLedger:
    """Mutable per-run recorder of privacy charges.

    Parameters
    ----------
    neighbouring : ``"add/remove"`` (default) or ``"replace"`` one record: the
        relation under which every charge's sensitivity and (ε, δ) are stated.
    public : what the guarantees assume public, e.g. ``("n", "domains")``.

    Examples
    --------
    >>> ledger = PrivacyLedger(public=("n",))
    >>> _ = ledger.charge("ci_test", epsilon=0.1, count=20, kind="laplace")
    >>> round(ledger.total("basic").epsilon, 6)
    2.0
    """

    def __init__(self, relation: RelationName = "add/remove", public: tuple[str, ...] = ()) -> None:
        if relation not in RELATION_NAMES:
            raise ValueError(f"relation must be one of {RELATION_NAMES}, got {relation!r}")
        if isinstance(public, str):
            raise TypeError("public must be a tuple of strings, e.g. ('n',), not a single string")
        public = tuple(public)
        for item in public:
            _name(item, "each entry of public")
        self._relation = relation
        self._public = tuple(dict.fromkeys(public))
        self._entries: list[Charge] = []
        self._not_dp: list[str] = []

    # ------------------------------------------------------------------ recording

    def charge(
        self,
        mechanism: str,
        *,
        epsilon: Optional[float] = None,
        delta: float = 0.0,
        count: int = 1,
        kind: Kind = "laplace",
        sensitivity: Optional[float] = None,
        scale: Optional[float] = None,
        note: str = "",
        sampling_rate: Optional[float] = None,
        noise_multiplier: Optional[float] = None,
    ) -> Charge:
        """Record ``count`` applications of one (ε, δ)-DP mechanism and return the entry.

        Checks: ε > 0; δ = 0 for the ε-DP kinds ("laplace", "exponential",
        "pure"), δ ∈ (0, 1) for "gaussian", δ ∈ [0, 1) for "approx"; ``sensitivity``
        and ``scale`` are given together or not at all. For "laplace" with both
        given, ε must equal sensitivity/scale [DR14, Thm 3.6] (record an
        amplified or otherwise derived ε as kind="pure"); for "gaussian" with both
        given, the Gaussian with σ/Δ = scale/sensitivity must really be (ε, δ)-DP
        by Balle & Wang's exact condition (BW18, Thm 8).

        ``kind="subsampled_gaussian"`` needs ``sampling_rate`` (q ∈ (0, 1]),
        ``noise_multiplier`` (σ/Δ, Δ the add/remove sensitivity on sub-samples;
        or ``sensitivity`` and ``scale``, whose ratio it is) and the per-step
        ``delta`` ∈ (0, 1); ``epsilon`` may be left None and is then one step's ε
        at ``delta`` by :func:`subsampled_gaussian_epsilon` under the ledger's
        relation; a given ``epsilon`` must not be below it. ``epsilon`` is
        required for every other kind, and ``sampling_rate`` /
        ``noise_multiplier`` are accepted only for this kind.
        """
        mechanism = _name(mechanism, "mechanism")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if kind == "subsampled_gaussian":
            return self._charge_subsampled_gaussian(
                mechanism, epsilon=epsilon, delta=delta, count=count, sensitivity=sensitivity, scale=scale,
                note=note, sampling_rate=sampling_rate, noise_multiplier=noise_multiplier,
            )
        if sampling_rate is not None or noise_multiplier is not None:
            raise ValueError(
                f"sampling_rate and noise_multiplier are for kind='subsampled_gaussian' only, not kind={kind!r}"
            )
        if epsilon is None:
            raise TypeError(f"epsilon is required for kind={kind!r}")
        epsilon = check_epsilon(epsilon)
        count = check_int(count, "count", minimum=1)
        if not isinstance(note, str):
            raise TypeError(f"note must be a string, got {type(note).__name__}")
        if kind in _PURE_KINDS:
            delta = check_delta(delta, allow_zero=True)
            if delta != 0.0:
                raise ValueError(
                    f"delta must be 0 for kind={kind!r} (an epsilon-DP mechanism), got {delta}; "
                    "use kind='approx' or 'gaussian' for (epsilon, delta)-DP steps"
                )
        elif kind == "gaussian":
            delta = check_delta(delta)
        else:
            delta = check_delta(delta, allow_zero=True)
        if (sensitivity is None) != (scale is None):
            raise ValueError("sensitivity and scale must be given together (or both left as None)")
        if sensitivity is not None:
            sensitivity = check_positive(sensitivity, "sensitivity")
            scale = check_positive(scale, "scale")
        multiplier: Optional[float] = None
        if kind == "laplace":
            if sensitivity is None:
                multiplier = 1.0 / epsilon
            else:
                multiplier = scale / sensitivity
                if not math.isclose(epsilon, sensitivity / scale, rel_tol=_REL_TOL):
                    raise ValueError(
                        f"epsilon={epsilon} does not match sensitivity/scale={sensitivity / scale} of the "
                        "Laplace mechanism; record derived charges (e.g. after sub-sampling) as kind='pure'"
                    )
        elif kind == "gaussian":
            if sensitivity is None:
                multiplier = analytic_gaussian_sigma(1.0, epsilon, delta)
            else:
                multiplier = scale / sensitivity
                actual = analytic_gaussian_delta(multiplier, sensitivity=1.0, epsilon=epsilon)
                if actual > delta * (1.0 + _REL_TOL):
                    raise ValueError(
                        f"a Gaussian with sigma/sensitivity={multiplier:.6g} is not ({epsilon}, {delta})-DP "
                        f"(its delta at this epsilon is {actual:.3g}); record the true (epsilon, delta)"
                    )
        entry = Charge(
            mechanism=mechanism,
            epsilon=epsilon,
            delta=delta,
            count=count,
            kind=kind,
            sensitivity=sensitivity,
            scale=scale,
            noise_multiplier=multiplier,
            note=note,
        )
        self._entries.append(entry)
        return entry

    def _charge_subsampled_gaussian(self, mechanism: str, *, epsilon, delta, count, sensitivity, scale, note,
                                    sampling_rate, noise_multiplier) -> Charge:
        count = check_int(count, "count", minimum=1)
        if not isinstance(note, str):
            raise TypeError(f"note must be a string, got {type(note).__name__}")
        if sampling_rate is None:
            raise ValueError("sampling_rate is required for kind='subsampled_gaussian'")
        sampling_rate = check_positive(sampling_rate, "sampling_rate")
        if sampling_rate > 1.0:
            raise ValueError(f"sampling_rate must lie in (0, 1], got {sampling_rate}")
        delta = check_delta(delta)
        if (sensitivity is None) != (scale is None):
            raise ValueError("sensitivity and scale must be given together (or both left as None)")
        if sensitivity is not None:
            sensitivity = check_positive(sensitivity, "sensitivity")
            scale = check_positive(scale, "scale")
            ratio = scale / sensitivity
            if noise_multiplier is None:
                noise_multiplier = ratio
            elif not math.isclose(check_positive(noise_multiplier, "noise_multiplier"), ratio, rel_tol=_REL_TOL):
                raise ValueError(f"noise_multiplier={noise_multiplier} does not match scale/sensitivity={ratio}")
        if noise_multiplier is None:
            raise ValueError("noise_multiplier (or sensitivity and scale) is required for kind='subsampled_gaussian'")
        noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
        step = subsampled_gaussian_epsilon(noise_multiplier, sampling_rate, delta, relation=self._relation)
        if epsilon is None:
            if step <= 0.0:
                raise ValueError(
                    f"one step with noise_multiplier={noise_multiplier}, sampling_rate={sampling_rate} is "
                    f"(0, {delta})-DP; charge a smaller delta"
                )
            epsilon = step
        else:
            epsilon = check_epsilon(epsilon)
            if epsilon < step * (1.0 - _REL_TOL):
                raise ValueError(
                    f"epsilon={epsilon} is below the epsilon {step:.6g} of one sub-sampled Gaussian step "
                    f"(noise_multiplier={noise_multiplier}, sampling_rate={sampling_rate}) at delta={delta}"
                )
        entry = Charge(
            mechanism=mechanism, epsilon=float(epsilon), delta=delta, count=count, kind="subsampled_gaussian",
            sensitivity=sensitivity, scale=scale, noise_multiplier=noise_multiplier, note=note,
            sampling_rate=sampling_rate,
        )
        self._entries.append(entry)
        return entry

    def mark_not_dp(self, reason: str) -> None:
        """Record that this run is **not** differentially private, and why (e.g. an unproven sensitivity).

        Every total and the summary then carry the reason: the charges still
        add up, but they are not a guarantee.

        >>> ledger = PrivacyLedger()
        >>> _ = ledger.charge("ci_test", epsilon=0.5)
        >>> ledger.mark_not_dp("sensitivity 6/sqrt(n) is not proven for conditional tests")
        >>> ledger.total("basic").differentially_private, ledger.differentially_private
        (False, False)
        """
        reason = _name(reason, "reason")
        if reason not in self._not_dp:
            self._not_dp.append(reason)

    def extend(self, other: "PrivacyLedger") -> None:
        """Append every charge of ``other`` (a sub-ledger of the same run).

        Both ledgers must use the same neighbouring relation; the public
        assumptions of ``other`` are added to this ledger's (the merged run
        relies on both).
        """
        if not isinstance(other, PrivacyLedger):
            raise TypeError(f"other must be a PrivacyLedger, got {type(other).__name__}")
        if other.relation != self._relation:
            raise ValueError(
                f"cannot merge a {other.relation!r} ledger into a {self._relation!r} ledger: "
                "the charges are stated under different neighbouring relations"
            )
        if other is self:
            self._entries.extend(list(self._entries))
            return
        self._public = tuple(dict.fromkeys(self._public + other.public))
        self._entries.extend(other.entries)
        for reason in other.not_dp:
            self.mark_not_dp(reason)

    # ------------------------------------------------------------------ views

    @property
    def relation(self) -> str:
        return self._relation

    @property
    def public(self) -> tuple[str, ...]:
        return self._public

    @property
    def not_dp(self) -> tuple[str, ...]:
        """Why this run is not differentially private (empty when every charge is proven)."""
        return tuple(self._not_dp)

    @property
    def differentially_private(self) -> bool:
        return not self._not_dp

    @property
    def entries(self) -> tuple[Charge, ...]:
        return tuple(self._entries)

    @property
    def n_charges(self) -> int:
        """Number of charged applications (sum of counts)."""
        return sum(entry.count for entry in self._entries)

    def epsilons(self) -> np.ndarray:
        """ε of every application, expanded per count (in charging order)."""
        if not self._entries:
            return np.zeros(0)
        return np.repeat([e.epsilon for e in self._entries], [e.count for e in self._entries]).astype(float)

    def deltas(self) -> np.ndarray:
        """δ of every application, expanded per count (in charging order)."""
        if not self._entries:
            return np.zeros(0)
        return np.repeat([e.delta for e in self._entries], [e.count for e in self._entries]).astype(float)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return (
            f"PrivacyLedger(relation={self._relation!r}, public={self._public!r}, "
            f"entries={len(self._entries)}, n_charges={self.n_charges})"
        )

    # ------------------------------------------------------------------ totals

    def total(
        self,
        method: Method = "basic",
        *,
        delta_prime: float = 1e-6,
        target_delta: Optional[float] = None,
        value_discretization_interval: float = 1e-4,
    ) -> PrivacyTotal:
        """Total (ε, δ) of all charges by ``method`` (see the module docstring); its ``not_dp`` says when it is
        not a guarantee (:meth:`mark_not_dp`).

        Parameters
        ----------
        method : ``"basic"``, ``"advanced"`` or ``"tight"``.
        delta_prime : the slack δ' of advanced composition (δ_total = Σδ_i + δ'),
            and the default slack of the tight accountant.
        target_delta : δ at which the tight accountant reports ε. Default
            Σδ_i + ``delta_prime``, i.e. the same δ as advanced composition, so
            the two are directly comparable.
        value_discretization_interval : PLD grid width; the accountant rounds
            pessimistically, so coarser grids give valid but looser ε.

        Tight accounting (``dp_accounting`` PLDs, pessimistic estimates, i.e. an
        upper bound on ε): Laplace charges use the Laplace PLD with parameter
        ``noise_multiplier``; Gaussian charges use the Gaussian PLD with
        σ = ``noise_multiplier`` (δ_i is not needed: the PLD is exact); every other
        charge (exponential, pure, approx) uses the worst-case PLD of a generic
        (ε_i, δ_i)-DP mechanism — randomized response with infinite loss of mass
        δ_i — which makes the composition of those charges the optimal
        composition of Kairouz et al. (2015). Because each charge's sensitivity is
        stated under the ledger's relation, the dominating pair of a noise
        mechanism is (noise, noise shifted by one sensitivity) under either
        relation. Sub-sampled Gaussian charges use the PLD of the Poisson-sub-sampled
        Gaussian with their sampling rate and noise multiplier under the ledger's
        relation (ADD_OR_REMOVE_ONE or REPLACE_ONE pair; the per-step δ is not
        used). A ledger of Gaussian charges only is composed exactly instead, as
        one Gaussian with μ = √(Σ 1/m_i²) (μ-GDP, Dong, Roth & Su 2022). When every
        charge has a zCDP bound (:meth:`_zcdp_rho`), that bound replaces the PLD
        above :data:`PLD_MAX_ROUNDS` charges, and with bounded-range charges the
        smaller of the two is returned. The result is capped by basic composition
        (``bound`` says which was returned).

        Empty ledger: (0, 0) for every method.
        """
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        delta_prime = check_delta(delta_prime, "delta_prime")
        if target_delta is not None:
            target_delta = check_delta(target_delta, "target_delta")
        value_discretization_interval = check_positive(
            value_discretization_interval, "value_discretization_interval"
        )
        if not self._entries:
            return self._marked(PrivacyTotal(0.0, 0.0, method, method, None))
        eps = self.epsilons()
        dls = self.deltas()
        basic = PrivacyTotal(_sum(eps), min(_sum(dls), 1.0), method, "basic")
        if method == "basic":
            return self._marked(basic)
        if method == "advanced":
            adv_eps, adv_delta = advanced_composition(eps, dls, delta_prime)
            if adv_eps < basic.epsilon:
                return self._marked(PrivacyTotal(adv_eps, min(adv_delta, 1.0), method, "advanced"))
            return self._marked(basic)
        if target_delta is None:
            target_delta = _sum(dls) + delta_prime
            if target_delta >= 1.0:
                return self._marked(PrivacyTotal(basic.epsilon, basic.delta, method, "basic", target_delta))
        tight_eps = self._tight_epsilon(target_delta, value_discretization_interval)
        if tight_eps < basic.epsilon:
            return self._marked(PrivacyTotal(tight_eps, target_delta, method, "tight", target_delta))
        return self._marked(PrivacyTotal(basic.epsilon, basic.delta, method, "basic", target_delta))

    def _marked(self, total: PrivacyTotal) -> PrivacyTotal:
        return replace(total, not_dp="; ".join(self._not_dp)) if self._not_dp else total

    def _tight_epsilon(self, target_delta: float, interval: float) -> float:
        """ε at ``target_delta`` of the tightest composition the charges allow (an upper bound)."""
        if all(entry.kind == "gaussian" for entry in self._entries):
            # Gaussian charges alone compose exactly to one Gaussian: μ = √(Σ count/m²) [Dong, Roth & Su 2022,
            # Cor. 3.3], and μ-GDP is (ε, δ)-DP on an explicit curve (Cor. 2.13): no discretisation error.
            # each count/m² by _inverse_square (no overflow, never rounded down into subnormals), μ rounded up
            mu = math.nextafter(math.sqrt(_sum(entry.count * _inverse_square(entry.noise_multiplier)
                                               for entry in self._entries)), math.inf)
            return gdp_epsilon(mu, target_delta) if math.isfinite(mu) else math.inf
        rho = self._zcdp_rho()
        if rho is None:
            zcdp = None
        elif not math.isfinite(rho):
            zcdp = math.inf
        else:
            zcdp = zcdp_epsilon(rho, target_delta) if rho > 0 else 0.0
        if zcdp is not None and sum(entry.count for entry in self._entries) > PLD_MAX_ROUNDS:
            return zcdp
        pld = self._pld_epsilon(target_delta, interval)
        if zcdp is not None and any(entry.kind == "bounded_range" for entry in self._entries):
            return min(zcdp, pld)  # the PLD treats a bounded-range step as any ε-DP step; zCDP knows better
        return pld

    def _zcdp_rho(self) -> Optional[float]:
        """Σ ρ_i when every charge has a zCDP bound, else None.

        A Gaussian with multiplier m is 1/(2m²)-zCDP (Bun & Steinke 2016,
        Prop. 1.6), an ε-bounded-range step ε²/8 (Cesar & Rogers 2021), any other
        pure ε-DP step (Laplace, exponential, pure) ε²/2 (Bun & Steinke 2016,
        Prop. 1.4); (ε, δ) steps with δ > 0 and sub-sampled Gaussians have none here.
        Squares are formed as products, which overflow to ∞ (returned as ρ = ∞, no
        guarantee) where ``x ** 2`` would raise ``OverflowError``, and 1/m² by
        :func:`_inverse_square`, which neither divides by an underflowed m² nor
        rounds a tiny ρ down into subnormal numbers.
        """
        total = []
        for entry in self._entries:
            if entry.kind == "gaussian":
                total.append(entry.count * 0.5 * _inverse_square(entry.noise_multiplier))
            elif entry.kind == "bounded_range":
                total.append(entry.count * entry.epsilon * entry.epsilon / 8.0)
            elif entry.kind in _PURE_KINDS:
                total.append(entry.count * entry.epsilon * entry.epsilon / 2.0)
            else:
                return None
        if not all(math.isfinite(value) for value in total):
            return math.inf
        return _sum(total)

    def _pld_epsilon(self, target_delta: float, interval: float) -> float:
        """ε at ``target_delta`` of the PLD composition of all charges (upper bound)."""
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        # Charges with identical parameters are composed by one self-composition.
        groups: Counter = Counter()
        for entry in self._entries:
            if entry.kind in ("laplace", "gaussian"):
                key = (entry.kind, entry.noise_multiplier, 0.0)
            elif entry.kind == "subsampled_gaussian":
                key = (entry.kind, entry.noise_multiplier, entry.sampling_rate)
            else:
                key = ("generic", entry.epsilon, entry.delta)
            groups[key] += entry.count
        for (kind, a, b) in groups:
            if kind == "subsampled_gaussian" and _gaussian_epsilon(a, 2.0, 1e-12) > _HUGE_STEP:
                return math.inf  # negligible noise: beyond the PLD grid; the caller caps by basic composition
        total = None
        for (kind, a, b), count in sorted(groups.items()):
            if kind == "laplace":
                pld = pld_lib.from_laplace_mechanism(
                    parameter=a, value_discretization_interval=interval
                ).self_compose(count)
            elif kind == "subsampled_gaussian":
                pld = _subsampled_gaussian_pld(a, b, self._relation, interval).self_compose(count)
            elif kind == "gaussian":
                # k Gaussians with noise multiplier m compose exactly to one with m/√k.
                pld = pld_lib.from_gaussian_mechanism(
                    standard_deviation=a / math.sqrt(count), value_discretization_interval=interval
                )
            else:
                pld = pld_lib.from_privacy_parameters(
                    common.DifferentialPrivacyParameters(epsilon=a, delta=b),
                    value_discretization_interval=interval,
                ).self_compose(count)
            total = pld if total is None else total.compose(pld)
        with np.errstate(over="ignore", divide="ignore"):  # e^{-loss} underflows for losses near 709: see below
            epsilon = float(total.get_epsilon_for_delta(target_delta))
        if not epsilon < _PLD_RELIABLE:
            return math.inf  # the library clips ε near 709.78 there: not an upper bound
        return epsilon

    # ------------------------------------------------------------------ reports

    def summary(self, *, delta_prime: float = 1e-6, target_delta: Optional[float] = None) -> dict:
        """JSON-serialisable report: relation, public assumptions, per-mechanism
        aggregated charges and the totals by every method."""
        mechanisms: dict[tuple[str, str], dict] = {}
        for entry in self._entries:
            key = (entry.mechanism, entry.kind)
            row = mechanisms.setdefault(
                key,
                {"mechanism": entry.mechanism, "kind": entry.kind, "count": 0, "epsilon": 0.0, "delta": 0.0},
            )
            row["count"] += entry.count
            row["epsilon"] += entry.epsilon * entry.count
            row["delta"] += entry.delta * entry.count
        totals = {
            m: self.total(m, delta_prime=delta_prime, target_delta=target_delta).as_dict() for m in METHODS
        }
        return {
            "relation": self._relation,
            "public": list(self._public),
            "differentially_private": self.differentially_private,
            "not_dp": list(self._not_dp),
            "n_charges": int(self.n_charges),
            "delta_prime": float(delta_prime),
            "mechanisms": [
                {k: (float(v) if isinstance(v, numbers.Real) and not isinstance(v, int) else v) for k, v in r.items()}
                for r in mechanisms.values()
            ],
            "totals": totals,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per charge (columns = the :class:`Charge` fields)."""
        columns = list(Charge.__dataclass_fields__)
        return pd.DataFrame([asdict(entry) for entry in self._entries], columns=columns)
