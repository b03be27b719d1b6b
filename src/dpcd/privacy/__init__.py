"""Privacy: mechanisms, sensitivities, the sieve, the ledger, neighbouring relations, worst cases and calibration.

``mechanisms``: Laplace, Gaussian, exponential, sparse vector, amplification, advanced composition
``sensitivity``: one function per statistic and meaning (Kendall, Spearman, their p-values), each with its relation
``interactions``: every pair table released as its interaction and its margins, with the attained sensitivity
``sieve``: Priv-PC's sieve-and-examine; ``ledger``: :class:`PrivacyLedger`, totals by basic, advanced, tight (PLD)
``relation``: add/remove vs replace-one, their conversion, :class:`~dpcd.privacy.relation.WorstCase`.
``gdp``: Gaussian differential privacy (μ-GDP): composition and conversion to (ε, δ); ``zcdp``: zero-concentrated DP.
``calibration``: the one search from a privacy map and a target ε to an algorithm's parameter.
"""

from .ledger import (
    KINDS,
    METHODS,
    Charge,
    PrivacyLedger,
    PrivacyTotal,
)
from .mechanisms import (
    SparseVector,
    SparseVectorExhausted,
    advanced_composition,
    advanced_composition_k,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    epsilon_for_subsampled,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_mechanism,
    gaussian_noise,
    gaussian_sigma,
    gdp_gaussian_mechanism,
    laplace_mechanism,
    laplace_noise,
    laplace_scale,
    report_noisy_max,
    subsampled_epsilon,
)
from .relation import RELATION_NAMES

__all__ = [
    "Charge",
    "KINDS",
    "METHODS",
    "RELATION_NAMES",
    "PrivacyLedger",
    "PrivacyTotal",
    "SparseVector",
    "SparseVectorExhausted",
    "advanced_composition",
    "advanced_composition_k",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "epsilon_for_subsampled",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gaussian_mechanism",
    "gaussian_sigma",
    "gdp_gaussian_mechanism",
    "laplace_mechanism",
    "laplace_noise",
    "gaussian_noise",
    "laplace_scale",
    "report_noisy_max",
    "subsampled_epsilon",
]

from .sensitivity import (  # noqa: E402  (rank-statistic sensitivities, Wang et al. 2020 App. D-E)
    conditional_kendall_pvalue_sensitivity,
    conditional_kendall_sensitivity,
    conditional_spearman_sensitivity,
    kendall_tau_sensitivity,
    pvalue_sensitivity,
    reference_pvalue_sensitivity,
    spearman_sensitivity,
)

__all__ += [
    "conditional_kendall_pvalue_sensitivity",
    "conditional_kendall_sensitivity",
    "conditional_spearman_sensitivity",
    "kendall_tau_sensitivity",
    "pvalue_sensitivity",
    "reference_pvalue_sensitivity",
    "spearman_sensitivity",
]

from .sieve import SieveAndExamine, optimal_subsample_size, sieve_epsilon  # noqa: E402  (Wang et al. 2020, Alg. 1)

__all__ += ["SieveAndExamine", "optimal_subsample_size", "sieve_epsilon"]

from .gdp import compose_gdp, gdp_delta, gdp_epsilon, gdp_mu  # noqa: E402  (Dong, Roth & Su 2022)

__all__ += ["compose_gdp", "gdp_delta", "gdp_epsilon", "gdp_mu"]
