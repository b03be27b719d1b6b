"""Constraint-based CURATE: OPT feasibility/optimality, accounting, decisions."""

import math
from itertools import combinations

import numpy as np
import pytest

from dpcd.datasets import load_bnlearn, random_dag, sample_categorical
from dpcd.discovery import curate as curate_module
from dpcd.discovery.curate import (
    CurateDecider,
    curate,
    error_surrogate,
    optimise_budgets,
    order_leakage,
    order_test_bounds,
    order_worst_case_tests,
    uniform_allocation,
)
from dpcd.discovery.pc import Decider, pc_skeleton
from dpcd.privacy import advanced_composition_k
from dpcd.privacy.sensitivity import two_sided_kendall_pvalue_sensitivity
from dpcd_papers import curate as curate_cells


def test_order_leakage_matches_advanced_composition_theorem():
    for t, eps in [(1, 0.5), (28, 0.01), (300, 0.2)]:
        adv, _ = advanced_composition_k(eps, 0.0, t, 1e-12)
        assert order_leakage(t, eps, delta_prime=1e-12, cap=False) == pytest.approx(adv, rel=1e-12)
        assert order_leakage(t, eps, delta_prime=1e-12) == pytest.approx(min(adv, t * eps), rel=1e-12)
    # the paper's printed form drops (e^eps - 1)/eps >= 1
    assert order_leakage(10, 1.0, delta_prime=1e-12, composition="paper", cap=False) < \
        order_leakage(10, 1.0, delta_prime=1e-12, cap=False)


@pytest.mark.parametrize("seed", range(12))
def test_opt_feasible_monotone_and_not_worse_than_uniform(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 22))
    order = int(rng.integers(0, d - 1))
    n_edges = int(rng.integers(1, d * (d - 1) // 2 + 1))
    budget = float(10 ** rng.uniform(-2, 1.3))
    sens = float(10 ** rng.uniform(-3, -1))
    q = 1.0 if seed % 3 else 0.2
    res = optimise_budgets(budget, n_edges, d, order, sensitivity=sens, subsample_rate=q,
                           beta1=float(rng.uniform(0.05, 0.9)), beta2=float(rng.uniform(0.05, 0.9)))
    assert res.epsilons.shape == (d - 1 - order,)
    assert np.all(res.epsilons >= 0) and np.all(np.diff(res.epsilons) <= 1e-15)
    t = order_test_bounds(n_edges, d, order, d - 2)
    eff = np.log1p(q * np.expm1(res.epsilons))
    leak = float(np.sum(order_leakage(t, eff, delta_prime=1e-12, cap=False)))
    assert leak <= budget * (1 + 1e-9)
    assert res.objective <= res.uniform_objective + 1e-15


def test_opt_front_loads_and_strictly_improves_on_uniform():
    res = optimise_budgets(5.0, 25, 20, 0, sensitivity=0.02)
    assert res.method == "slsqp"
    uniform = np.full(res.epsilons.shape, uniform_allocation(5.0, order_test_bounds(25, 20, 0, 18), delta_prime=1e-12))
    assert error_surrogate(uniform, threshold=0.05, beta1=0.1, beta2=0.1, sensitivity=0.02) == \
        pytest.approx(res.uniform_objective)
    assert res.objective < res.uniform_objective - 1e-9
    assert res.epsilons[0] > res.epsilons[-1]


def test_uniform_allocation_spends_the_budget():
    t = order_test_bounds(10, 6, 0, 4)
    e = uniform_allocation(2.0, t, delta_prime=1e-12)
    total = float(np.sum(order_leakage(t, np.full(t.shape, e), delta_prime=1e-12, cap=False)))
    assert total == pytest.approx(2.0, rel=1e-9)


def test_pvalue_sensitivity_is_the_replace_one_two_sided_bound():
    from dpcd.privacy.sensitivity import (
        conditional_kendall_sensitivity,
        pvalue_sensitivity,
    )
    replace_z = conditional_kendall_sensitivity(1000, 4, relation="replace")
    # replace one = remove one and add one: twice the add/remove z-sensitivity
    assert replace_z == pytest.approx(2 * conditional_kendall_sensitivity(1000, 4))
    # the two-sided p-value moves twice as much as the one-sided one
    assert two_sided_kendall_pvalue_sensitivity(1000, 4) == pytest.approx(2 * pvalue_sensitivity(replace_z))
    # strictly above the add/remove value the module used before
    assert two_sided_kendall_pvalue_sensitivity(1000, 4) > 2 * pvalue_sensitivity(conditional_kendall_sensitivity(1000, 4))


@pytest.fixture(scope="module")
def asia_ds():
    return load_bnlearn("asia", 20_000, rng=0)


@pytest.fixture(scope="module")
def asia(asia_ds):
    return asia_ds.data


@pytest.fixture(scope="module")
def levels(asia_ds):
    """The public domain sizes of asia (from the network)."""
    return asia_ds.levels


@pytest.mark.parametrize("epsilon_total", [0.1, 1.0, 10.0])
def test_curate_total_leakage_never_exceeds_budget(asia, levels, epsilon_total):
    for seed in range(3):
        res = curate(asia, levels=levels, epsilon_total=epsilon_total, rng=seed)
        assert res.ledger.relation == "replace"
        assert res.info["epsilon_curate"] <= epsilon_total * (1 + 1e-9)
        assert res.info["delta_curate"] <= res.info["delta_total"] * (1 + 1e-12)
        # every order is charged its worst-case test count, never the count it happened to run
        per_order = sum(o["tests_charged"] for o in res.info["orders"])
        assert per_order == res.ledger.n_charges
        assert all(o["tests_charged"] >= o["tests"] for o in res.info["orders"])
        # the tight accountant can only be tighter than the paper's per-order accounting
        tight = res.ledger.total("tight", delta_prime=1e-12)
        assert tight.epsilon <= res.info["epsilon_curate"] * (1 + 1e-3) + 1e-9


def test_curate_runs_each_distinct_test_once_and_counts_match(asia, levels):
    res = curate(asia, levels=levels, epsilon_total=1.0, rng=0)
    run = [o["tests"] for o in res.info["orders"]]
    # the engine asks each (pair, S) from both ends; the repeat is answered from the cache, not run again
    assert all(c <= e for c, e in zip(run, res.tests_per_order))
    assert sum(run) <= res.n_tests
    for o in res.info["orders"]:
        # the charged worst case is within the paper's e_i C(d - 2, i) with e_i <= 28 edges on 8 nodes
        assert o["tests"] <= o["tests_charged"] <= 28 * math.comb(6, o["order"])


def test_curate_delta_budget_stops_the_search(asia, levels):
    res = curate(asia, levels=levels, epsilon_total=50.0, rng=0, delta_prime=1e-12, delta_total=1e-12)
    assert len(res.info["orders"]) == 1
    assert res.stopped_early and res.info["stop_reason"] == "delta budget spent"


def test_an_order_never_starts_on_the_floating_point_leftover_of_opt():
    # OPT spends the whole remainder on the first order up to ~1e-12 of it; child at n = 100 000 and a total of 10
    # used to start order 1 on that leftover with a per-test epsilon near 1e-16 (coin flips that emptied the graph)
    sample = load_bnlearn("child", 100_000, rng=0)
    result = curate(sample.data, levels=sample.levels, epsilon_total=10.0, rng=1, delta_total=1e-6, max_order=2)
    assert all(order["epsilon_test"] > 1e-6 for order in result.info["orders"]), result.info["orders"]
    assert result.info["stop_reason"] == "epsilon budget spent" and curate_module.LEFTOVER < 1e-6
    assert result.cpdag.number_of_edges() > 0


def test_curate_with_negligible_noise_equals_nonprivate_margin_pc(asia, levels):
    """With a tiny sensitivity and no margins the decisions are the non-private ones."""
    from dpcd.discovery import pc
    ref = pc(asia, ci_test="kendall", alpha=0.05)
    res = curate(asia, levels=levels, epsilon_total=1e6, rng=0, beta1=0.0, beta2=0.0,
                 unproven={"sensitivity": 1e-12})
    assert set(res.skeleton) == set(ref.skeleton)


def test_curate_same_seed_same_result_and_subsampling(asia, levels):
    a = curate(asia, levels=levels, epsilon_total=1.0, rng=3, subsample=True)
    b = curate(asia, levels=levels, epsilon_total=1.0, rng=3, subsample=True)
    assert set(a.skeleton) == set(b.skeleton) and a.info["orders"] == b.info["orders"]
    assert a.info["subsample_rate"] == pytest.approx(0.1)
    assert a.info["epsilon_curate"] <= 1.0 + 1e-9


def test_curate_rejects_bad_arguments(asia, levels):
    with pytest.raises(ValueError, match="epsilon_total"):
        curate(asia, levels=levels, epsilon_total=0.0, rng=0)
    with pytest.raises(ValueError, match="beta1"):
        curate(asia, levels=levels, epsilon_total=1.0, rng=0, beta1=1.5)
    with pytest.raises(ValueError, match="composition"):
        curate(asia, levels=levels, epsilon_total=1.0, rng=0, unproven={"composition": "basic"})
    with pytest.raises(ValueError, match="composition"):  # the proven default is not an unproven option
        curate(asia, levels=levels, epsilon_total=1.0, rng=0, unproven={"composition": "advanced"})
    with pytest.raises(ValueError, match="no unproven option 'sepset'"):
        curate(asia, levels=levels, epsilon_total=1.0, rng=0, unproven={"sepset": "argmax"})
    with pytest.raises(TypeError, match="rng"):
        curate(asia, levels=levels, epsilon_total=1.0, rng=None)
    with pytest.raises(TypeError, match="levels"):
        curate(asia, levels=None, epsilon_total=1.0, rng=0)
    with pytest.raises(ValueError, match="data preparation"):
        curate(asia, levels=(1,) + tuple(levels[1:]), epsilon_total=1.0, rng=0)


def test_pvalue_sensitivity_is_at_most_one_even_with_more_strata_than_rows():
    assert two_sided_kendall_pvalue_sensitivity(100, 500) == 1.0
    assert 0 < two_sided_kendall_pvalue_sensitivity(100, 2) <= 1.0


# --------------------------------------------------------------------------- worst-case test counts


def _random_adjacency(rng: np.random.Generator, d: int, density: float) -> np.ndarray:
    upper = np.triu(rng.random((d, d)) < density, 1)
    return upper | upper.T


def _brute_force_questions(adjacency: np.ndarray, order: int) -> int:
    """Distinct (unordered pair, S) questions of one order: S from adj(x)∖{y} or from adj(y)∖{x}."""
    d = len(adjacency)
    questions = set()
    for x in range(d):
        for y in range(d):
            if x == y or not adjacency[x, y]:
                continue
            others = [v for v in range(d) if adjacency[x, v] and v != y]
            for S in combinations(others, order):
                questions.add((min(x, y), max(x, y), S))
    return len(questions)


class _AskEverything(Decider):
    """Removes exactly the edges absent from ``target`` at order 0, then never removes anything and
    records every distinct question the engine asks per order."""

    def __init__(self, target: np.ndarray):
        self.target = target
        self.order = -1
        self.asked: dict[int, set] = {}
        self.adjacency_at_start: dict[int, np.ndarray] = {}

    def start_order(self, order, adjacency):
        self.order = order
        self.asked[order] = set()
        self.adjacency_at_start[order] = adjacency.copy()
        return True

    def decide(self, x, y, S):
        self.asked[self.order].add((min(x, y), max(x, y), tuple(sorted(S))))
        return self.order == 0 and not self.target[x, y]


def test_order_worst_case_tests_equals_brute_force_on_random_graphs():
    rng = np.random.default_rng(17)
    checked = 0
    for _ in range(60):
        d = int(rng.integers(2, 9))
        adjacency = _random_adjacency(rng, d, float(rng.uniform(0.1, 1.0)))
        for order in range(0, d - 1):
            assert order_worst_case_tests(adjacency, order) == _brute_force_questions(adjacency, order), \
                (adjacency.astype(int).tolist(), order)
            checked += 1
    assert checked > 100
    complete = ~np.eye(5, dtype=bool)
    assert [order_worst_case_tests(complete, i) for i in range(4)] == [10 * math.comb(3, i) for i in range(4)]
    assert order_worst_case_tests(np.zeros((4, 4), dtype=bool), 0) == 0


def test_order_worst_case_tests_is_attained_by_the_pc_engine():
    """A decider that keeps every edge after order 0 makes the stable PC engine ask every question it can:
    the distinct questions of each order are exactly the worst case of the adjacency at its start."""
    rng = np.random.default_rng(18)
    for _ in range(25):
        d = int(rng.integers(3, 8))
        target = _random_adjacency(rng, d, float(rng.uniform(0.3, 1.0)))
        decider = _AskEverything(target)
        skeleton = pc_skeleton(d, decider)
        assert np.array_equal(skeleton.adjacency, target)
        for order, asked in decider.asked.items():
            start = decider.adjacency_at_start[order]
            assert len(asked) == order_worst_case_tests(start, order)
            assert len(asked) <= int(np.triu(start).sum()) * math.comb(d - 2, order)


# --------------------------------------------------------------------------- accounting of a run


@pytest.fixture(scope="module")
def small_datasets():
    """A few small categorical data sets with their public domains."""
    out = [load_bnlearn("asia", 3_000, rng=1), load_bnlearn("cancer", 3_000, rng=2)]
    for seed in (3, 4):
        out.append(sample_categorical(random_dag(6, 0.5, seed), 3_000, seed))
    return out


def _record_start_orders(monkeypatch) -> list[tuple[int, np.ndarray]]:
    seen: list[tuple[int, np.ndarray]] = []
    original = CurateDecider.start_order

    def recording(self, order, adjacency):
        seen.append((order, np.array(adjacency, copy=True)))
        return original(self, order, adjacency)

    monkeypatch.setattr(CurateDecider, "start_order", recording)
    return seen


@pytest.mark.parametrize("epsilon_total", [0.5, 5.0])
def test_each_order_is_charged_its_worst_case(monkeypatch, small_datasets, epsilon_total):
    for index, ds in enumerate(small_datasets):
        seen = _record_start_orders(monkeypatch)
        res = curate(ds.data, levels=ds.levels, epsilon_total=epsilon_total, rng=index)
        info = res.info
        assert res.ledger.relation == curate_module.RELATION.name == "replace"
        assert info["epsilon_curate"] <= epsilon_total * (1 + 1e-9)
        assert info["delta_curate"] <= info["delta_total"] * (1 + 1e-12)
        adjacency_at = dict(seen)
        entries = {e.mechanism: e for e in res.ledger.entries}
        assert len(entries) == len(res.ledger.entries)  # one charge per order
        for o in info["orders"]:
            assert o["tests_charged"] == order_worst_case_tests(adjacency_at[o["order"]], o["order"])
            assert o["tests_charged"] >= o["tests"]
            entry = entries[f"ci_test_order_{o['order']}"]
            assert entry.count == o["tests_charged"]
            assert entry.epsilon == pytest.approx(o["epsilon_test"])
            # the order's leakage is computed from the charged (worst-case) count
            assert o["epsilon_curate"] == pytest.approx(
                order_leakage(o["tests_charged"], o["epsilon_test"], delta_prime=info["delta_prime"]))
        assert sum(o["tests_charged"] for o in info["orders"]) == res.ledger.n_charges
        monkeypatch.undo()


def test_delta_prime_defaults(asia, levels):
    default = curate(asia, levels=levels, epsilon_total=1.0, rng=0)
    assert default.info["delta_prime"] == 1e-12 and default.info["delta_total"] == pytest.approx(7e-12)
    given = curate(asia, levels=levels, epsilon_total=1.0, rng=0, delta_total=7e-6)
    # d - 2 + 1 = 7 orders on asia's 8 variables share delta_total
    assert given.info["delta_prime"] == pytest.approx(1e-6) and given.info["delta_total"] == 7e-6
    assert given.info["delta_curate"] <= 7e-6 * (1 + 1e-12)


@pytest.mark.parametrize("epsilon_total, delta_total, max_order", [(0.5, None, None), (2.0, 1e-6, None),
                                                                   (10.0, 1e-8, 2)])
def test_plan_dominates_the_run(small_datasets, epsilon_total, delta_total, max_order):
    ds = small_datasets[0]
    p = ds.data.shape[1]
    plan = curate_module.worst_case(epsilon_total=epsilon_total, delta_total=delta_total, p=p, max_order=max_order)
    assert plan.relation.name == "replace" and plan.epsilon == epsilon_total
    res = curate(ds.data, levels=ds.levels, epsilon_total=epsilon_total, delta_total=delta_total, rng=0,
                 max_order=max_order)
    assert res.info["delta_prime"] == plan.parameters["delta_prime"]
    assert res.info["epsilon_curate"] <= plan.epsilon * (1 + 1e-9)
    assert sum(o["epsilon_curate"] for o in res.info["orders"]) <= plan.epsilon * (1 + 1e-9)
    assert res.info["delta_curate"] <= plan.delta * (1 + 1e-12)
    assert len(res.info["orders"]) <= plan.parameters["max_order"] + 1


def test_experiment_algorithms_are_names():
    names = curate_cells.EXPERIMENT_ALGORITHMS
    assert isinstance(names, tuple) and all(isinstance(v, str) for v in names)
    assert "curate" in names and "pc" in names
    from dpcd.registry import ALGORITHMS

    assert set(names) - {"pc"} <= set(ALGORITHMS)  # every private line is a registry algorithm


def test_subsampled_run_is_amplified_once_within_the_budget():
    """One sub-sample for every test: accounted on it at the larger budget, amplified once (BBG18 Thm 9)."""
    ds = load_bnlearn("asia", 20_000, rng=0)
    res = curate(ds.data, levels=ds.levels, epsilon_total=1.0, delta_total=1e-6, rng=3, subsample=True)
    q = res.info["subsample_rate"]
    spent_on_subsample = sum(o["epsilon_curate"] for o in res.info["orders"])
    assert spent_on_subsample <= math.log1p(math.expm1(1.0) / q) * (1 + 1e-9)
    assert spent_on_subsample > 1.0  # the sub-sample run may spend more than the request ...
    (charge,) = res.ledger.entries  # ... and is charged once, amplified
    assert charge.epsilon == pytest.approx(math.log1p(q * math.expm1(spent_on_subsample)))
    assert res.info["epsilon_curate"] == charge.epsilon <= 1.0 + 1e-9 and charge.delta <= 1e-6 * (1 + 1e-9)


def test_a_sensitivity_below_the_proven_bound_is_refused_unless_labelled_not_private():
    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.curate import curate

    sample = load_bnlearn("cancer", 2_000, rng=0)
    with pytest.raises(ValueError, match="below the proven bound"):
        curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0, sensitivity=1e-8)
    diagnostic = curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0,
                        unproven={"sensitivity": 1e-8})
    assert diagnostic.info["differentially_private"] is False
    assert not diagnostic.ledger.differentially_private
    assert "Eq. 16" in diagnostic.ledger.total("tight", target_delta=1e-6).not_dp
    assert curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0).info["differentially_private"] is True


def test_a_declared_sensitivity_must_cover_the_widest_stratification_not_only_order_0():
    # Conditioning on S splits the rows into prod(levels[S]) strata and the p-value's replace-one sensitivity
    # grows with the number of strata; a single declared Δ is used for every test, so a Δ proven only for
    # the marginal (order-0) test is not enough once conditional tests run.
    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.curate import curate
    from dpcd.privacy.sensitivity import two_sided_kendall_pvalue_sensitivity as bound

    sample = load_bnlearn("cancer", 2_000, rng=0)  # five binary variables: order ≤ 3 meets up to 2³ strata
    n = sample.data.shape[0]
    assert bound(n, 8) > bound(n, 1)
    with pytest.raises(ValueError, match="below the proven bound"):
        curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0, sensitivity=bound(n, 1))
    with pytest.raises(ValueError, match="up to 4 strata"):
        curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0, max_order=2, sensitivity=bound(n, 2))
    assert curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0, max_order=0,
                  sensitivity=bound(n, 1)).info["differentially_private"] is True
    assert curate(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0,
                  sensitivity=bound(n, 8)).info["differentially_private"] is True
