"""MST-PC: PC on differentially private synthetic data from MST (McKenna, Miklau & Sheldon 2021).

MST, the winner of the NIST 2018 synthetic-data challenge, measures every
one-way marginal, selects a maximum spanning tree of pairwise dependence with
the exponential mechanism, measures the two-way marginals of the tree's edges,
fits a tree-structured distribution and samples synthetic records from it.
MST-PC then runs non-private PC (G², ``alpha``) on the synthetic records: a
post-processing, so the graph is exactly as private as the synthetic data. It
spends its whole budget on d − 1 well-chosen pairs, which at small budgets on
sparse, tree-like networks beats measuring all pairs (Marginal-PC); its graph
can hold no more dependence than a tree carries, which caps it at larger budgets.

Budget (ρ-zCDP, :mod:`dpcd.privacy.zcdp`): the total (ε, δ) becomes ρ =
``zcdp_rho(ε, δ)``, split in thirds as in the paper:

1. one Gaussian mechanism on all d one-way tables, ρ/3;
2. d − 1 rounds of the exponential mechanism, each over the pairs joining two
   components of the tree so far (Kruskal), quality q_ij = ‖M_ij(D) − n p̂_i p̂_jᵀ‖₁
   against the independent model of the released one-way marginals p̂ — each
   round ρ/(3(d − 1)), i.e. ε_r = √(8ρ/(3(d − 1)));
3. one Gaussian mechanism on the d − 1 tree tables, ρ/3.

Privacy
-------
Relation: replace one record (n public). Public: n, the domain sizes, ε, δ,
``alpha``.

**Theorem.** Any run of :func:`mst_pc` with ``epsilon_total`` = ε and ``delta``
= δ is (ε, δ)-DP under replace-one.

*Proof.* Replacing one record moves one count from one cell to another in
every marginal table, so the d one-way tables move by at most √(2d) in L2 norm
and the d − 1 tree tables by at most √(2(d − 1)): with σ = Δ/√(2ρ/3) each
release is ρ/3-zCDP [BS16, Prop. 1.6] (the tree, chosen in step 2, is fixed
when step 3 runs). The quality q_ij is an L1 distance between the data's table
and a table fixed by released values, so it moves by at most 2: each round of
the exponential mechanism with weights exp(ε_r q / 4) is ε_r-bounded-range and
so ε_r²/8 = ρ/(3(d − 1))-zCDP [CR21, Lemma 3.2]. Composition adds the ρ's
[BS16, Lemma 2.3] to ρ, and ρ-zCDP is (ε, δ)-DP at ρ = zcdp_rho(ε, δ)
[CKS20, Prop. 12]. Fitting the tree, sampling and PC read only released values
and public ones: post-processing. ∎

Deviation from the paper, one sentence: MST fits the tree model with
Private-PGM; here the noisy marginals are made consistent directly — a node's
margin is the inverse-variance average of its one-way measurement and the
margins of its edge tables, negative cells become zero, and each edge table is
fitted to its two node margins by iterative proportional fitting (exact for a
tree without noise; post-processing either way).

References
----------
McKenna, Miklau & Sheldon (2021), "Winning the NIST Contest: A scalable and general approach to differentially
private synthetic data", Journal of Privacy and Confidentiality 11(3).
.. [BS16] Bun & Steinke (2016), TCC. .. [CR21] Cesar & Rogers (2021), ALT. .. [CKS20] Canonne, Kamath & Steinke
(2020), NeurIPS — see :mod:`dpcd.privacy.zcdp`.

Examples
--------
>>> from dpcd.datasets import load_bnlearn
>>> from dpcd.graphs import dag_to_cpdag, skeleton_prf
>>> sample = load_bnlearn("cancer", 20_000, rng=0)
>>> result = mst_pc(sample.data, levels=sample.levels, epsilon_total=1.0, delta=1e-6, rng=1)
>>> result.info["tree_edges"], result.ledger.relation
(4, 'replace')
>>> MST_PC.name, MST_PC.relation.name, MST_PC.budget_arg, MST_PC.differentially_private
('mst_pc', 'replace', 'epsilon_total', True)
>>> worst = MST_PC.privacy_map(epsilon_total=1.0, delta=1e-6, p=5)
>>> worst.epsilon, worst.delta, worst.accountant
(1.0, 1e-06, 'zcdp')
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd

from ..privacy import PrivacyLedger
from ..privacy.mechanisms import exponential_mechanism, gdp_gaussian_mechanism
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..privacy.zcdp import zcdp_epsilon, zcdp_rho
from ..schema import check_codes, public_levels
from ..validation import RngLike, as_rng, check_delta, check_epsilon, check_int, check_probability
from .algorithm import PrivateAlgorithm
from .counted import as_codes, code_rows, marginal_table, named
from .pc import PCResult, node_names_of, pc

__all__ = ["mst_synthetic", "mst_pc", "worst_case", "measure_one_way", "select_tree", "measure_tree",
           "sample_tree_model", "MST_PC", "RELATION", "PUBLIC", "QUALITY_SENSITIVITY"]

RELATION = REPLACE_ONE
PUBLIC = ("n", "domains")
QUALITY_SENSITIVITY = 2.0
"""How far one replaced record moves q_ij = ‖M_ij(D) − fixed table‖₁: one count out of a cell, one into another."""
THEOREM = ("MST (McKenna, Miklau & Sheldon 2021): Gaussian one-way and tree marginals (Bun & Steinke 2016, Prop. 1.6) "
           "and exponential-mechanism tree selection (Cesar & Rogers 2021, Lemma 3.2) composed in zCDP, converted by "
           "Canonne, Kamath & Steinke 2020, Prop. 12; PC on the synthetic records is post-processing")


def _budgets(epsilon_total: float, delta: float, d: int) -> tuple[float, float, float]:
    """(ρ, ε of one selection round, μ of each Gaussian release) for d columns."""
    rho = zcdp_rho(epsilon_total, delta)
    eps_round = math.sqrt(8.0 * rho / 3.0 / (d - 1)) if d > 1 else 0.0
    return rho, eps_round, math.sqrt(2.0 * rho / 3.0)


def worst_case(*, epsilon_total: float, delta: float, p: int) -> WorstCase:
    """The data-independent guarantee of any :func:`mst_pc` run on ``p`` columns: (``epsilon_total``, ``delta``).

    >>> worst = worst_case(epsilon_total=1.0, delta=1e-6, p=8)
    >>> worst.epsilon, worst.accountant, worst.parameters["rounds"]
    (1.0, 'zcdp', 7)
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    p = check_int(p, "p", minimum=2)
    rho, eps_round, mu = _budgets(epsilon_total, delta, p)
    return WorstCase("mst_pc", RELATION, epsilon_total, delta, PUBLIC, THEOREM, "zcdp", None,
                     {"epsilon_total": epsilon_total, "delta": delta, "rho": rho, "rounds": p - 1,
                      "epsilon_per_round": eps_round, "mu_per_release": mu})


def _ipf(table: np.ndarray, rows: np.ndarray, cols: np.ndarray, rounds: int = 50) -> np.ndarray:
    """Scale a non-negative table to row sums ``rows`` and column sums ``cols`` (iterative proportional fitting)."""
    fitted = np.clip(table, 0.0, None) + 1e-9
    for _ in range(rounds):
        fitted *= (rows / np.clip(fitted.sum(axis=1), 1e-12, None))[:, None]
        fitted *= (cols / np.clip(fitted.sum(axis=0), 1e-12, None))[None, :]
    return fitted


def measure_one_way(codes: np.ndarray, levels: np.ndarray, *, mu: float,
                    rng: np.random.Generator) -> tuple[list[np.ndarray], float]:
    """Step 1: every one-way table plus Gaussian noise in one μ-GDP (μ²/2-zCDP) release (L2 sensitivity √(2d),
    replace-one); returns the noisy tables and the per-cell noise σ."""
    d = codes.shape[1]
    exact = np.concatenate([marginal_table(codes, levels, (j,)) for j in range(d)])
    sensitivity = math.sqrt(2.0 * d)
    noisy = gdp_gaussian_mechanism(exact, sensitivity=sensitivity, mu=mu, rng=rng)
    cuts = np.cumsum([0] + [int(k) for k in levels])
    return [noisy[cuts[j]:cuts[j + 1]] for j in range(d)], sensitivity / mu


def select_tree(codes: np.ndarray, levels: np.ndarray, probabilities: Sequence[np.ndarray], *, epsilon_round: float,
                rng: np.random.Generator) -> nx.Graph:
    """Step 2: d − 1 exponential-mechanism rounds (Kruskal), each ``epsilon_round``-bounded-range.

    Quality of the pair (i, j): ‖M_ij(D) − n p_i p_jᵀ‖₁ with ``probabilities``
    released (or public), sensitivity :data:`QUALITY_SENSITIVITY` under replace-one.
    """
    n, d = codes.shape
    tree = nx.Graph()
    tree.add_nodes_from(range(d))
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    quality = {e: float(np.abs(marginal_table(codes, levels, e) - n * np.outer(probabilities[e[0]],
                                                                              probabilities[e[1]])).sum())
               for e in pairs}
    for _ in range(d - 1):
        component = {v: c for c, part in enumerate(nx.connected_components(tree)) for v in part}
        candidates = [e for e in pairs if component[e[0]] != component[e[1]]]
        chosen = exponential_mechanism([quality[e] for e in candidates], epsilon=epsilon_round,
                                       sensitivity=QUALITY_SENSITIVITY, rng=rng)
        tree.add_edge(*candidates[int(chosen)])
    return tree


def measure_tree(codes: np.ndarray, levels: np.ndarray, edges: Sequence[tuple[int, int]], *, mu: float,
                 rng: np.random.Generator) -> tuple[dict[tuple[int, int], np.ndarray], float]:
    """Step 3: the two-way tables of ``edges`` plus Gaussian noise in one μ-GDP release (L2 sensitivity
    √(2 |edges|), replace-one); returns them by edge and the per-cell noise σ (inf when there is no edge)."""
    if not edges:
        return {}, math.inf
    exact = [marginal_table(codes, levels, e) for e in edges]
    sensitivity = math.sqrt(2.0 * len(edges))
    noisy = gdp_gaussian_mechanism(np.concatenate([t.ravel() for t in exact]), sensitivity=sensitivity, mu=mu,
                                   rng=rng)
    sizes = np.cumsum([0] + [t.size for t in exact])
    return {e: noisy[sizes[k]:sizes[k + 1]].reshape(exact[k].shape) for k, e in enumerate(edges)}, sensitivity / mu


def sample_tree_model(levels: np.ndarray, one_way: Sequence[np.ndarray], sigma_one_way: float,
                      tables: dict[tuple[int, int], np.ndarray], sigma_tables: float, tree: nx.Graph, n: int,
                      rng: np.random.Generator) -> np.ndarray:
    """Steps 4–5 (post-processing): a tree model consistent with the noisy tables, and ``n`` records from it.

    A node's margin is the inverse-variance average of its one-way table and
    its edge tables' margins; each edge table, negative cells set to zero, is
    fitted to its two node margins by iterative proportional fitting; records
    are drawn from each component's first node down the tree.
    """
    d = len(levels)
    node = []
    for j in range(d):
        estimates, weights = [np.clip(one_way[j], 0.0, None)], [1.0 / sigma_one_way ** 2]
        for (a, b), t in tables.items():
            if j in (a, b):
                estimates.append(t.sum(axis=1) if a == j else t.sum(axis=0))
                weights.append(1.0 / (sigma_tables ** 2 * t.shape[1 if a == j else 0]))
        m = np.clip(np.average(np.stack(estimates), axis=0, weights=weights), 0.0, None) + 1e-9
        node.append(m / m.sum())
    conditional = {}
    for (a, b), t in tables.items():
        fitted = _ipf(t, node[a] * n, node[b] * n)
        conditional[(a, b)] = fitted / fitted.sum(axis=1, keepdims=True)        # p(b | a)
        conditional[(b, a)] = (fitted / fitted.sum(axis=0, keepdims=True)).T    # p(a | b)
    out = np.zeros((n, d), dtype=np.int64)
    for part in nx.connected_components(tree):
        root = min(part)
        out[:, root] = rng.choice(int(levels[root]), size=n, p=node[root])
        for parent, child in nx.bfs_edges(tree, root):
            cumulative = np.cumsum(conditional[(parent, child)][out[:, parent]], axis=1)
            draws = rng.random(n)[:, None]
            out[:, child] = np.minimum((draws > cumulative).sum(axis=1), int(levels[child]) - 1)
    return out


def mst_synthetic(data, *, levels, epsilon_total: float, delta: float = 1e-6, rng: RngLike,
                  ledger: PrivacyLedger | None = None) -> tuple[pd.DataFrame, nx.Graph]:
    """MST synthetic records (integer codes, n rows, the data's columns) and the selected tree.

    ``ledger``, when given, receives the run's charges (two Gaussian releases
    and the selection rounds as bounded-range steps), whose tight total is the
    zCDP composition of :func:`worst_case`.
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    codes = as_codes(data)
    n, d = codes.shape
    names = node_names_of(data)
    levels = public_levels(levels, d, names)
    check_codes(code_rows(codes), levels)
    generator = as_rng(rng)
    rho, eps_round, mu = _budgets(epsilon_total, delta, d)
    one_way, sigma1 = measure_one_way(codes, levels, mu=mu, rng=generator)
    margins = [np.clip(m, 0.0, None) for m in one_way]
    probabilities = [m / m.sum() if m.sum() > 0 else np.full(len(m), 1.0 / len(m)) for m in margins]
    tree = select_tree(codes, levels, probabilities, epsilon_round=eps_round, rng=generator) if d > 1 else \
        nx.empty_graph(d)
    edges = sorted((min(u, v), max(u, v)) for u, v in tree.edges)
    tables, sigma2 = measure_tree(codes, levels, edges, mu=mu, rng=generator)
    if ledger is not None:
        step_delta = delta / 3.0
        for name, sensitivity, sigma in (("MST one-way marginals", math.sqrt(2.0 * d), sigma1),
                                         ("MST tree marginals", math.sqrt(2.0 * len(edges)), sigma2)):
            if math.isfinite(sigma):
                ledger.charge(name, epsilon=zcdp_epsilon(rho / 3.0, step_delta, positive=True), delta=step_delta,
                              kind="gaussian",
                              sensitivity=sensitivity, scale=sigma, note=f"rho/3 = {rho / 3.0:.4g} zCDP")
        if d > 1:
            ledger.charge("MST tree selection (exponential mechanism)", epsilon=eps_round, count=d - 1,
                          kind="bounded_range", note=f"{eps_round ** 2 / 8:.4g} zCDP per round")
    out = sample_tree_model(levels, one_way, sigma1, tables, sigma2, tree, n, generator)
    return pd.DataFrame(out, columns=names), nx.relabel_nodes(tree, dict(enumerate(names)))


def mst_pc(data, *, levels, epsilon_total: float, delta: float = 1e-6, alpha: float = 0.01, rng: RngLike,
           max_order: int | None = None, max_tests: int | None = None,
           node_names: Sequence[str] | None = None) -> PCResult:
    """PC (G², ``alpha``, two-sided) on MST synthetic records of categorical ``data``: (``epsilon_total``, ``delta``)-DP.

    Parameters as in :func:`dpcd.discovery.marginal_pc.marginal_pc`; the
    privacy is the module's theorem (replace-one, n and the domains public).
    The ledger lists the releases and selection rounds; its tight total
    composes them in zCDP, as :func:`worst_case` does. ``info["tree_edges"]`` is the
    size of the selected tree.
    """
    alpha = check_probability(alpha, "alpha")
    names = node_names_of(data, node_names)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    frame = data if node_names is None else named(data, names)
    synthetic, tree = mst_synthetic(frame, levels=levels, epsilon_total=epsilon_total, delta=delta, rng=rng,
                                    ledger=ledger)
    result = pc(synthetic, ci_test="g2", alpha=alpha, max_order=max_order, max_tests=max_tests, node_names=names)
    return replace(result, ledger=ledger, info={"algorithm": "mst_pc", "epsilon_total": epsilon_total,
                                                "delta": delta, "alpha": alpha, "tree_edges": tree.number_of_edges(),
                                                "n_computed": result.info.get("n_computed")})


def _privacy_map(*, epsilon_total: float, delta: float, p: int, max_order: int | None = None) -> WorstCase:
    return worst_case(epsilon_total=epsilon_total, delta=delta, p=p)


MST_PC = PrivateAlgorithm(
    name="mst_pc", label="MST-PC", data="categorical", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=mst_pc, privacy_map=_privacy_map, delta_arg="delta", alpha_arg="alpha",
    proof="proven", theorem="McKenna, Miklau & Sheldon 2021 (MST), zCDP composition; PC is post-processing")
"""MST-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""
