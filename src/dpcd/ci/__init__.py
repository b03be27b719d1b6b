"""Conditional-independence tests: each a function of (data, x, y, S) returning a :class:`CIResult`.

``discrete``  G², χ², conditional Kendall's τ and Spearman's ρ from one ``np.bincount`` table per test
``fisher``    Fisher-z from data or from a (possibly noisy) covariance matrix
``tester``    :class:`CITester`: a test bound to one dataset, memoised, with public ``levels`` for private use
``rcit``      the regression-based kernel test of PCD (KRR + HSIC permutations) and its sensitivities
``distance``  EM-PC's distance score of a G² test: how many records must change before the decision flips
``noisy``     tests on contingency tables released with Gaussian noise (Marginal-PC), calibrated by a bootstrap
"""

from .discrete import (
                       DEGENERATE_CONVENTIONS,
                       check_degenerate,
                       chi2_test,
                       chi2_type_statistic,
                       contingency_table,
                       g2_test,
                       informative_strata,
                       kendall_tau,
                       kendall_tau_test,
                       kendall_weights,
                       marginal_table,
                       observed_levels,
                       spearman_rho_test,
                       spearman_weights,
                       stratified_kendall,
                       stratified_spearman,
)
from .fisher import fisher_z_from_matrix, fisher_z_test, partial_correlation
from .result import CIResult, normal_two_sided_p
from .tester import TESTS, CITester

__all__ = ["CIResult", "CITester", "DEGENERATE_CONVENTIONS", "TESTS", "check_degenerate", "chi2_test",
           "chi2_type_statistic", "contingency_table", "fisher_z_from_matrix", "fisher_z_test", "g2_test",
           "informative_strata", "kendall_tau", "kendall_tau_test", "kendall_weights", "marginal_table",
           "normal_two_sided_p", "observed_levels", "partial_correlation", "spearman_rho_test", "spearman_weights",
           "stratified_kendall", "stratified_spearman"]
