"""dpcd.discover and dpcd.registry: one registry, calibration on data-independent plans, privacy.json."""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import dpcd
from dpcd import registry as reg
from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.discovery.gcm_pc import gcm_pc
from dpcd.discovery.pc import Decider, pc, run_pc, worst_case_tests
from dpcd.privacy import PrivacyLedger
from dpcd.privacy.relation import ADD_REMOVE, WorstCase, convert
from dpcd.release import Output, ReleaseOptions, writers
from dpcd.release.api import choose_kind
from dpcd.schema import DataPreparationError, Schema, SchemaError


def release(data, *, options: ReleaseOptions | None = None, **kwargs):
    """``discover`` for the mechanics of a release on small samples, whatever their forecast says (``force``);
    whether a release is worth having, and the refusal of one that is not, are tested in ``test_honest_releases``."""
    return dpcd.discover(data, options=replace(options or ReleaseOptions(), force=True), **kwargs)

# --------------------------------------------------------------------------- a test-only algorithm module (this file)

RELATION = ADD_REMOVE
SPEND = {"factor": 1.0}


def worst_case(*, epsilon_total: float) -> WorstCase:
    ledger = PrivacyLedger("add/remove", public=("domains",))
    ledger.charge("test charge", epsilon=epsilon_total / 4, count=4, kind="laplace")
    return WorstCase("fake_pc", ADD_REMOVE, epsilon_total, 0.0, ("domains",), "four Laplace charges", "basic",
                     ledger)


def pc_with_total_ledger(data, *, levels, epsilon_total, alpha, rng, max_order=None, max_tests=None):
    """Non-private PC with a ledger charging ``epsilon_total`` × SPEND as if it were private (tests only)."""
    result = pc(data, ci_test="g2", alpha=alpha, max_order=max_order, max_tests=max_tests)
    ledger = PrivacyLedger("add/remove", public=("domains",))
    ledger.charge("test charge", epsilon=SPEND["factor"] * epsilon_total / 4, count=4, kind="laplace")
    return replace(result, ledger=ledger)


FAKE = reg.PrivateAlgorithm("fake_pc", "Fake-PC", "categorical", ADD_REMOVE, ("domains",), "total", "epsilon_total",
                            run=pc_with_total_ledger, privacy_map=worst_case)
REGISTRY = {"fake_pc": FAKE}


@pytest.fixture(scope="module")
def asia():
    sample = load_bnlearn("asia", 2_000, np.random.default_rng(3))
    labels = sample.data.astype(object)
    for column in labels:
        labels[column] = np.where(sample.data[column].to_numpy() == 0, "no", "yes")
    schema = Schema.from_json({"columns": {c: {"type": "categorical", "categories": ["no", "yes"]}
                                           for c in labels.columns}})
    return labels, schema


@pytest.fixture(scope="module")
def gauss():
    dag = random_dag(5, 0.4, np.random.default_rng(1))
    sample = sample_linear_gaussian(dag, 2_000, np.random.default_rng(2))
    return sample.data, sample.schema()


# --------------------------------------------------------------------------- the one registry


def test_one_registry_serves_discover_benchmark_and_audit():
    from dpcd import audit
    from dpcd_papers import benchmark, curate

    assert set(reg.ALGORITHMS) == {"marginal_pc", "mst_pc", "aim_pc", "moment_pc", "gcm_pc", "em_pc", "lapmech",
                                   "priv_pc", "svt_pc", "subsampled_gaussian", "curate", "privpc_star", "pcd", "noleaks", "curate_sb"}
    assert benchmark.ALGORITHMS is reg.ALGORITHMS
    assert set(audit.CASES) == set(reg.ALGORITHMS)  # every algorithm has its audit case
    assert set(curate.EXPERIMENT_ALGORITHMS) - {"pc"} <= set(reg.ALGORITHMS)
    for spec in reg.ALGORITHMS.values():
        assert spec.budget_arg in ("epsilon_total", "epsilon_per_test", "epsilon_per_edge", "sigma")
        parameters = inspect.signature(spec.run).parameters
        assert spec.budget_arg in parameters  # the keyword exists
        if spec.takes_max_order:
            assert {"max_order", "max_tests"} <= set(parameters)
        assert spec.relation.name in ("add/remove", "replace")


def test_each_algorithm_module_exports_its_object_and_the_registry_holds_that_object():
    import importlib

    for name, spec in reg.ALGORITHMS.items():
        module = importlib.import_module(spec.run.__module__)
        exported = [value for value in vars(module).values() if value is spec]
        assert exported, f"{spec.run.__module__} does not export the registry's object for {name}"
        assert spec.privacy_map.__module__ == spec.run.__module__  # run and its privacy map live in one module


def test_resolve_by_name_or_label_and_auto_by_relation():
    assert reg.resolve_algorithm("Priv-PC").name == "priv_pc"
    assert reg.resolve_algorithm("PRIVPC_STAR").name == "privpc_star"
    with pytest.raises(ValueError, match="algorithm must be 'auto' or one of"):
        reg.resolve_algorithm("magic")
    assert reg.choose_algorithm("categorical", "replace").name == "marginal_pc"  # without a forecast
    assert reg.choose_algorithm("categorical", "add/remove").name == "em_pc"
    assert reg.choose_algorithm("numeric", "replace").name == "moment_pc"
    with pytest.raises(reg.AlgorithmUnavailable, match="add/remove guarantee"):
        reg.choose_algorithm("numeric", "add/remove")


def test_auto_under_add_remove_bins_a_numeric_table(gauss):
    # no numeric algorithm is proven under add/remove, so auto runs a categorical one on the schema's bins
    data, schema = gauss
    found = release(data, schema=schema, epsilon=1.0, relation="add/remove", rng=0, progress=False)
    assert found.algorithm == "em_pc" and found.auto_selected
    assert "equal-width bins" in found.privacy["assumed_public"]["schema"]["coding"]


def test_auto_kind_comes_from_the_schema_only():
    cat = Schema.categorical([2, 3])
    num = Schema.numeric([(0, 1), (0, 1)])
    assert choose_kind(cat) == "categorical" and choose_kind(num) == "numeric"
    mostly_numeric = Schema.from_json({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1},
                                                   "b": {"type": "numeric", "lower": 0, "upper": 1},
                                                   "c": {"type": "ordinal", "categories": ["lo", "mid", "hi"]}}})
    assert choose_kind(mostly_numeric) == "numeric"
    nominal = Schema.from_json({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1},
                                            "b": {"type": "numeric", "lower": 0, "upper": 1},
                                            "c": {"type": "categorical", "categories": ["r", "g", "b"]}}})
    assert choose_kind(nominal) == "categorical"


# --------------------------------------------------------------------------- calibration on the plan


class NeverIndependent(Decider):
    def decide(self, x, y, S):
        return False


@pytest.mark.parametrize(("p", "max_order"), [(4, None), (6, 1), (7, 2), (5, 10)])
def test_worst_case_tests_is_the_count_of_a_search_that_removes_nothing(p, max_order):
    result = run_pc([f"v{i}" for i in range(p)], NeverIndependent(), max_order=max_order)
    assert worst_case_tests(p, max_order) == result.n_tests


@pytest.mark.parametrize("name", ["priv_pc", "svt_pc", "subsampled_gaussian"])
@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_calibration_fills_but_never_exceeds_the_budget(name, epsilon):
    spec = reg.ALGORITHMS[name]
    delta = 1e-6
    calibration = reg.calibrate(spec, p=8, n=10_000, epsilon=epsilon, delta=delta, max_order=2)
    assert calibration.guarantee["epsilon"] <= epsilon and calibration.guarantee["delta"] <= delta * (1 + 1e-9)
    value = calibration.kwargs[spec.budget_arg]
    # a parameter 3 % more generous breaks the budget: the search is tight
    bolder = value / 1.03 if spec.budget == "noise" else value * 1.03
    params = {**calibration.kwargs, spec.budget_arg: bolder}
    assert reg.worst_case_of(spec, p=8, n=10_000, **params).epsilon > epsilon
    if spec.budget == "per_test":  # the tight accountant buys more per round than basic composition would
        assert value > epsilon / (worst_case_tests(8, 2) + 1)


def doubled_priv_pc_map(**parameters):
    """Priv-PC's worst case at twice the per-test ε (tests only): a variant that shares Priv-PC's name but spends twice
    as much per test."""
    from dpcd.discovery.priv_pc import worst_case as priv_pc_worst_case

    return priv_pc_worst_case(**{**parameters, "epsilon_per_test": 2 * parameters["epsilon_per_test"]})


def test_calibration_is_kept_by_the_object_not_by_its_name(tmp_path, monkeypatch):
    """A per-round algorithm outside the registry's table is calibrated on its own map (no KeyError), and a variant
    that shares a registry name is searched on its own map, in the process and in the disk store alike."""
    monkeypatch.setenv("DPCD_CACHE_DIR", str(tmp_path))
    spec = reg.ALGORITHMS["priv_pc"]
    outside = replace(spec, name="priv_pc_outside")
    assert "priv_pc_outside" not in reg.ALGORITHMS
    own = reg.calibrate(outside, p=6, n=10_000, epsilon=1.0, delta=1e-6, max_order=1)
    assert own.kwargs["epsilon_per_test"] == pytest.approx(
        reg.calibrate(spec, p=6, n=10_000, epsilon=1.0, delta=1e-6, max_order=1).kwargs["epsilon_per_test"])
    doubled = replace(spec, privacy_map=doubled_priv_pc_map)
    assert doubled.calibrations == {}  # a copy starts with no calibrations of its own
    twice = reg.calibrate(doubled, p=6, n=10_000, epsilon=1.0, delta=1e-6, max_order=1)
    assert twice.guarantee["epsilon"] <= 1.0
    assert twice.kwargs["epsilon_per_test"] == pytest.approx(own.kwargs["epsilon_per_test"] / 2, rel=0.02)  # its own map
    again = replace(spec, privacy_map=doubled_priv_pc_map)  # a fresh object: answered from the disk store, its own key
    assert reg.calibrate(again, p=6, n=10_000, epsilon=1.0, delta=1e-6, max_order=1).kwargs == twice.kwargs


def _scaled_priv_pc_map(factor):
    """A closure: every map it makes has the same qualified name, whatever ``factor`` (tests only)."""
    from dpcd.discovery.priv_pc import worst_case as priv_pc_worst_case

    def scaled(**parameters):
        return priv_pc_worst_case(**{**parameters, "epsilon_per_test": factor * parameters["epsilon_per_test"]})

    return scaled


def test_maps_that_share_a_name_never_share_a_stored_calibration(tmp_path, monkeypatch):
    """Two closures of one factory (or partials, or lambdas) have one qualified name: their calibrations stay on
    their objects, so the dearer one calibrated first never hands its parameter to the cheaper one, or back."""
    import functools

    monkeypatch.setenv("DPCD_CACHE_DIR", str(tmp_path))
    spec = reg.ALGORITHMS["priv_pc"]
    request = {"p": 6, "n": 10_000, "epsilon": 1.0, "delta": 1e-6, "max_order": 1}
    own = reg.calibrate(spec, **request).kwargs["epsilon_per_test"]
    dear = reg.calibrate(replace(spec, privacy_map=_scaled_priv_pc_map(2.0)), **request).kwargs["epsilon_per_test"]
    cheap = reg.calibrate(replace(spec, privacy_map=_scaled_priv_pc_map(1.0)), **request).kwargs["epsilon_per_test"]
    assert cheap == pytest.approx(own) and dear == pytest.approx(own / 2, rel=0.02)
    partial = replace(spec, privacy_map=functools.partial(doubled_priv_pc_map))
    assert reg.calibrate(partial, **request).kwargs["epsilon_per_test"] == pytest.approx(dear)
    assert not reg._storable(partial) and reg._storable(spec)


def test_total_budget_algorithms_get_the_budget_converted_to_their_relation():
    em = reg.calibrate(reg.ALGORITHMS["em_pc"], p=5, n=1_000, epsilon=2.0, delta=1e-6, relation="replace")
    assert em.kwargs == {"epsilon_total": 1.0}  # add/remove proof: replace-one needs half (group privacy)
    assert em.guarantee["epsilon"] == 2.0 and em.guarantee["proven_under"] == "add/remove"
    em_ar = reg.calibrate(reg.ALGORITHMS["em_pc"], p=5, n=None, epsilon=2.0, delta=1e-6, relation="add/remove")
    assert em_ar.kwargs == {"epsilon_total": 2.0} and "conversion" not in em_ar.guarantee
    curate = reg.calibrate(reg.ALGORITHMS["curate"], p=8, n=1_000, epsilon=1.5, delta=1e-7)
    assert curate.kwargs == {"epsilon_total": 1.5, "delta_total": 1e-7}
    assert curate.guarantee["epsilon"] <= 1.5 and curate.guarantee["delta"] <= 1e-7 * (1 + 1e-9)


@pytest.mark.parametrize(("name", "relation", "match"), [
    ("priv_pc", "add/remove", "gives no add/remove guarantee"),
    ("privpc_star", "add/remove", "gives no add/remove guarantee"),
    ("noleaks", "replace", "cannot meet"),
    ("curate_sb", "replace", "cannot meet"),
    ("pcd", "replace", "local sensitivity"),
])
def test_plans_that_cannot_meet_the_request_are_refused_before_any_data(name, relation, match):
    with pytest.raises(reg.CalibrationRefused, match=match):
        reg.calibrate(reg.ALGORITHMS[name], p=5, n=10_000, epsilon=1.0, delta=1e-6, relation=relation)


def test_conversion_between_relations():
    assert convert(1.0, 1e-6, source="add/remove", target="replace") == pytest.approx((2.0, (1 + math.e) * 1e-6))
    with pytest.raises(ValueError, match="no add/remove guarantee"):
        convert(1.0, 0.0, source="replace", target="add/remove")


# --------------------------------------------------------------------------- discover end to end


def test_discover_writes_every_file_and_a_truthful_privacy_json(asia, tmp_path):
    labels, schema = asia
    csv = tmp_path / "asia.csv"
    labels.to_csv(csv, index=False)
    out = tmp_path / "out"
    found = release(csv, schema=schema, algorithm="fake_pc", epsilon=1.0, progress=False, out=out,
                    options=ReleaseOptions(registry=REGISTRY))
    assert sorted(p.name for p in out.iterdir()) == sorted(writers.GRAPH_FILES + writers.FIGURE_FILES)
    graph = json.loads((out / "graph.json").read_text())
    assert graph["nodes"] == list(labels.columns)
    expected = pc(schema.encode(labels), ci_test="g2", alpha=0.05).cpdag
    assert set(found.graph.edges) == set(expected.edges)
    assert nx.read_graphml(out / "graph.graphml").number_of_edges() == found.graph.number_of_edges()
    privacy = json.loads((out / "privacy.json").read_text())
    assert privacy["relation"]["name"] == "replace"
    # the guarantee is the plan's, converted from add/remove; the run's spending is reported apart
    assert privacy["guarantee"]["epsilon"] == pytest.approx(1.0) and privacy["guarantee"]["proven_under"] == "add/remove"
    assert privacy["spent_this_run"]["totals"]["basic"]["epsilon"] == pytest.approx(1.0)
    assert privacy["spent_this_run"]["mechanisms"] == [{"mechanism": "test charge", "kind": "laplace", "count": 4,
                                                        "epsilon": 0.5, "delta": 0.0}]
    # exactly the public information: the schema, the algorithm and its parameters, n (replace-one)
    public = privacy["assumed_public"]
    assert set(public) == {"schema", "algorithm", "n"} and public["n"] == len(labels)
    assert public["schema"]["sha256"] == schema.sha256 and len(public["schema"]["columns"]) == len(schema)
    # the search caps come from public inputs (p = 8 binary columns, n = 2000) and say why
    assert public["algorithm"]["parameters"] == {"epsilon_total": 0.5, "alpha": 0.05, "max_order": 6,
                                                 "max_tests": 2800}
    assert "rows per cell" in public["algorithm"]["limits"] and "public inputs only" in public["algorithm"]["limits"]
    # and every other setting the run took at its default, from the code (EM-PC: its budget split, distance cap)
    assert public["algorithm"]["defaults"] == dpcd.release.api.run_defaults(REGISTRY["fake_pc"])
    em_pc = dpcd.release.api.run_defaults(reg.ALGORITHMS["em_pc"])
    assert {"epsilon_split", "max_distance", "exact_states"} <= set(em_pc)
    assert not {"epsilon_total", "alpha", "max_order", "max_tests", "node_names"} & set(em_pc)
    assert privacy["schema"] == schema.to_json()
    assert privacy["data_preparation"] == dpcd.release.api.data_preparation()  # the defaults: 100 rows, commas
    assert (out / "graph.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_add_remove_release_neither_uses_nor_publishes_n(asia, tmp_path):
    labels, schema = asia
    found = release(labels.iloc[:40], schema=schema, algorithm="em_pc", relation="add/remove", epsilon=1.0,
                    progress=False, out=Output(tmp_path / "out", draw=False))  # 40 rows: no minimum, n is private
    privacy = json.loads((tmp_path / "out" / "privacy.json").read_text())
    assert "n" not in privacy["assumed_public"] and privacy["relation"]["name"] == "add/remove"
    assert privacy["guarantee"] == {**found.privacy["guarantee"]} and privacy["guarantee"]["epsilon"] == 1.0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(writers.GRAPH_FILES)


@pytest.mark.parametrize("name", ["em_pc", "lapmech", "priv_pc", "svt_pc", "curate", "subsampled_gaussian"])
@pytest.mark.parametrize("relation", ["replace", "add/remove"])
def test_guarantee_within_request_for_every_algorithm_and_relation(asia, name, relation):
    labels, schema = asia
    spec = reg.ALGORITHMS[name]
    if relation == "add/remove" and spec.relation.name == "replace":
        with pytest.raises(ValueError, match="no add/remove guarantee"):
            release(labels, schema=schema, algorithm=name, relation=relation, epsilon=1.0, progress=False)
        return
    found = release(labels, schema=schema, algorithm=name, relation=relation, epsilon=1.0, delta=1e-6, rng=5,
                    progress=False, options=ReleaseOptions(max_order=1))
    guarantee = found.privacy["guarantee"]
    assert guarantee["relation"] == relation
    assert guarantee["epsilon"] <= 1.0 and guarantee["delta"] <= 1e-6 * (1 + 1e-9)
    spent = found.privacy["spent_this_run"]["totals"]["basic"]
    assert spent["epsilon"] <= guarantee["epsilon"] * (1 + 1e-9) or \
        found.privacy["spent_this_run"]["totals"]["tight"]["epsilon"] <= guarantee["epsilon"] * (1 + 1e-6)


RELEASABLE = [name for name, spec in reg.ALGORITHMS.items() if reg.release_refusal(spec) is None]


@pytest.mark.parametrize("n", [None, 100_000])
def test_the_order_cap_gives_its_reason_when_the_columns_bind_it(n):
    # with three columns no conditioning set exceeds one column, whatever the default before that cap says
    from dpcd.preparation import default_limits

    limits = default_limits(Schema.categorical([2] * 3), reg.ALGORITHMS["em_pc"], n)
    assert limits.max_order == 1
    assert limits.why.startswith("max_order 1: p − 2, the largest conditioning set 3 columns allow;")


@pytest.mark.parametrize("name", RELEASABLE)
def test_every_run_stays_within_its_privacy_map(asia, gauss, name):
    # the run's ledger (its run-time charges) against the object's privacy map at the calibrated parameters
    from dpcd.preparation import plan_release
    from dpcd.release.tables import encode_table

    spec = reg.ALGORITHMS[name]
    frame, schema = asia if spec.data == "categorical" else gauss
    plan = plan_release(schema, spec, epsilon=1.0, delta=1e-6, n=len(frame))
    result = plan.run(encode_table(frame, plan.view), rng=3)
    calibration = plan.calibration
    worst = calibration.worst_case
    assert result.ledger.differentially_private and result.ledger.relation == worst.relation.name
    spent = min(result.ledger.total("basic").epsilon,
                result.ledger.total("tight", target_delta=max(worst.delta, 1e-12)).epsilon)
    assert spent <= worst.epsilon * (1 + 1e-6) + 1e-9, (name, spent, worst.epsilon)
    assert worst.epsilon <= 1.0 * (1 + 1e-9) or spec.relation.name != "replace"


def test_numeric_auto_picks_by_forecast_and_mixed_tables_are_coded_by_the_schema(gauss):
    from dpcd.forecast import choose_by_forecast
    from dpcd.registry import AUTO_CANDIDATES

    data, schema = gauss
    # the number of synthetic runs comes from public sizes, not a clock: the two forecasts below see the same runs
    # even on a loaded machine
    found = release(data, schema=schema, epsilon=2.0, rng=0, progress=False)
    expected, _ = choose_by_forecast(schema, n=len(data), epsilon=2.0)  # public inputs only: the same pick
    assert found.auto_selected and found.algorithm == expected.name in AUTO_CANDIDATES["numeric"]
    assert found.privacy["guarantee"]["epsilon"] == 2.0 and list(found.graph.nodes) == list(data.columns)
    mixed = data.copy()
    mixed["flag"] = np.where(data.iloc[:, 0] > 0, "yes", "no")
    columns = {c: {"type": "numeric", "lower": lo, "upper": hi} for c, (lo, hi) in zip(data.columns, schema.bounds)}
    columns["flag"] = {"type": "categorical", "categories": ["no", "yes"]}
    mixed_schema = Schema.from_json({"columns": columns})
    found = release(mixed, schema=mixed_schema, algorithm="privpc_star", epsilon=2.0, rng=0, progress=False)
    assert "codes" in found.privacy["assumed_public"]["schema"]["coding"]
    binned = release(mixed, schema=mixed_schema, algorithm="em_pc", epsilon=2.0, rng=0, progress=False)
    assert "bins" in binned.privacy["assumed_public"]["schema"]["coding"]


def test_guarantee_does_not_change_when_one_record_changes(asia):
    labels, schema = asia
    neighbour = labels.copy()
    neighbour.iloc[0] = ["yes"] * labels.shape[1]
    for name in ("priv_pc", "em_pc", "curate"):
        a = release(labels, schema=schema, algorithm=name, epsilon=1.0, rng=1, progress=False,
                    options=ReleaseOptions(max_order=1))
        b = release(neighbour, schema=schema, algorithm=name, epsilon=1.0, rng=2, progress=False,
                    options=ReleaseOptions(max_order=1))
        assert a.privacy["guarantee"] == b.privacy["guarantee"]
        assert a.privacy["assumed_public"] == b.privacy["assumed_public"]
        assert a.privacy["calibration"] == b.privacy["calibration"]


def test_values_outside_the_schema_run_without_an_error(asia, tmp_path):
    labels, schema = asia
    dirty = labels.copy()
    dirty.iloc[0, 0] = "maybe"
    dirty.iloc[1, 1] = None
    dirty.iloc[2, 2] = "YES"
    found = release(dirty, schema=schema, algorithm="em_pc", epsilon=1.0, rng=0, progress=False)
    clean = labels.copy()
    clean.iloc[0, 0] = clean.iloc[1, 1] = clean.iloc[2, 2] = "no"  # what the fill rule makes of them
    same = release(clean, schema=schema, algorithm="em_pc", epsilon=1.0, rng=0, progress=False)
    assert set(found.graph.edges) == set(same.graph.edges)


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


class _Liar(int):
    """An int equal to everything: merged with other values, it recoded them."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash(1)


ODD_CELLS = {
    "int-400": lambda: 10 ** 400,
    "int-neg-400": lambda: -10 ** 400,
    "int-5000": lambda: 10 ** 5000,
    "sNaN": lambda: Decimal("sNaN"),
    "fraction": lambda: Fraction(10 ** 400, 3),
    "unprintable": _Unprintable,
    "complex": lambda: 2 + 3j,
    "liar": lambda: _Liar(2),
}
"""Python objects a DataFrame cell can hold that made the schema's column rules raise or read other cells."""


@pytest.mark.parametrize("kind", sorted(ODD_CELLS))
def test_one_dataframe_cell_changes_only_its_own_code_and_never_stops_the_release(asia, gauss, kind):
    # one record's content must not decide between a release and an error, nor move another record's code
    from dpcd.release.tables import encode_table

    odd = ODD_CELLS[kind]()
    for frame, schema in (asia, gauss):
        dirty, blank = frame.astype(object), frame.astype(object)
        for row in (3, 4):
            dirty.iloc[row, 1] = odd
            blank.iloc[row, 1] = None
        dirty.iloc[5, 1], blank.iloc[5, 1] = "x", "x"
        read, expected = encode_table(dirty, schema), encode_table(blank, schema)
        assert read.drop(index=[3, 4]).equals(expected.drop(index=[3, 4]))
        assert read.iloc[3, 1] == read.iloc[4, 1]  # the same cell, the same code: a rule on the cell
        assert read.drop(columns=read.columns[1]).equals(expected.drop(columns=expected.columns[1]))
    labels, schema = asia
    dirty = labels.astype(object)
    dirty.iloc[3, 1] = odd
    found = release(dirty, schema=schema, algorithm="em_pc", epsilon=1.0, rng=0, progress=False,
                    options=ReleaseOptions(max_order=1))
    assert list(found.graph.nodes) == list(labels.columns)


def test_a_dataframe_cell_is_read_by_its_own_type_and_text():
    from dpcd.release.tables import encode_table, plain_cell

    schema = Schema.numeric([(-5, 5)], names=["a"])
    fill = encode_table(pd.DataFrame({"a": [None]}), schema)["a"][0]
    dates = pd.DataFrame({"a": pd.to_datetime(["2020-01-01", None, "2021-06-01"])})
    assert encode_table(dates, schema)["a"].tolist() == [fill] * 3  # a date is no number; NaT is missing
    assert [plain_cell(v) for v in (True, np.int64(4), _Liar(2), "b", float("nan"))][:4] == [True, 4, 2, "b"]
    assert type(plain_cell(_Liar(2))) is int
    ordinal = Schema.categorical([3], names=["a"])
    assert encode_table(pd.DataFrame({"a": pd.Series([_Liar(2), 1, 1], dtype=object)}), ordinal)["a"].tolist() == \
        [2, 1, 1]


def test_a_column_whose_rules_still_raise_is_read_cell_by_cell(monkeypatch):
    # the net under plain_cell: should a column's rules raise on some plain value, only that cell is missing
    from dpcd.release.tables import encode_table
    from dpcd.schema import Column

    schema = Schema.numeric([(-5, 5), (0, 1)], names=["a", "b"])
    fill = encode_table(pd.DataFrame({"a": [None], "b": [None]}), schema).iloc[0].tolist()
    encode = Column.encode

    def fragile(self, values):
        if any(isinstance(v, str) and v == "boom" for v in values.tolist()):
            raise OverflowError("a value these rules cannot read")
        return encode(self, values)

    monkeypatch.setattr(Column, "encode", fragile)
    frame = pd.DataFrame({"a": ["1.5", "boom", "-9"], "b": ["0.25", "0.5", "boom"]})
    assert encode_table(frame, schema).to_numpy().tolist() == [[1.5, 0.25], [fill[0], 0.5], [-5.0, fill[1]]]


@pytest.mark.parametrize(("name", "epsilon"), [("priv_pc", 0.01), ("svt_pc", 0.01), ("curate", 0.01),
                                             ("subsampled_gaussian", 0.01), ("svt_pc", 18.5)])
def test_a_run_on_many_columns_releases_within_its_guarantee(name, epsilon):
    # at ε = 0.01, thousands of charges of ε ≈ 1e-5: totalled on the ledger's default PLD grid they came to basic
    # composition, above the worst case's zCDP guarantee, and the release stopped as "a run above its plan"; at
    # ε = 18.5, SVT-PC's run totalled a hair above its plan, which was totalled on another grid
    rng = np.random.default_rng(0)
    p = 30
    frame = pd.DataFrame(rng.integers(0, 2, size=(2000, p)).astype(str), columns=[f"c{j}" for j in range(p)])
    schema = Schema.categorical([2] * p, names=list(frame.columns), ordinal=False)
    found = release(frame, schema=schema, algorithm=name, epsilon=epsilon, rng=1, progress=False)
    tight = found.privacy["spent_this_run"]["totals"]["tight"]["epsilon"]
    assert tight <= found.privacy["guarantee"]["epsilon"] * (1 + 1e-6)


def test_malformed_rows_are_read_as_missing_values_not_errors(asia, tmp_path):
    labels, schema = asia
    csv = tmp_path / "asia.csv"
    labels.to_csv(csv, index=False)
    text = csv.read_bytes().splitlines()
    text[1] = text[1] + b",extra,fields"   # too many fields
    text[2] = b"no"                        # too few
    text[3] = b"\xff\xfe" + text[3][2:]     # not UTF-8
    csv.write_bytes(b"\n".join(text) + b"\n")
    found = release(csv, schema=schema, algorithm="em_pc", epsilon=1.0, rng=0, progress=False)
    assert found.privacy["assumed_public"]["n"] == len(labels)


MALFORMED_LINES = {
    "extra fields on the first row": lambda line: line + b",extra,fields",
    "a trailing comma": lambda line: line + b",",
    "too few fields": lambda line: line.split(b",")[0],
    "not UTF-8": lambda line: b"\xff\xfe" + line[2:],
    "a quote left open": lambda line: b'"' + line,
    "a carriage return in a quoted field": lambda line: line + b',"x\ry"',  # a line ends at \n only
    "other line-break characters": lambda line: line.replace(b",", b"\x0b,\xc2\x85", 1),
    "a NUL byte": lambda line: line.replace(b",", b"\x00,", 1),
}


@pytest.mark.parametrize("where", [0, 57])
@pytest.mark.parametrize("kind", sorted(MALFORMED_LINES))
def test_one_malformed_line_changes_only_its_own_row(asia, tmp_path, kind, where):
    # neighbours stay neighbours after reading: one record's content may change its own row, never another row
    # nor the number of rows (public under replace-one)
    from dpcd.release.tables import read_table

    labels, schema = asia
    csv = tmp_path / "clean.csv"
    labels.iloc[:120].to_csv(csv, index=False)
    lines = csv.read_bytes().split(b"\n")
    lines[1 + where] = MALFORMED_LINES[kind](lines[1 + where])
    dirty = tmp_path / "dirty.csv"
    dirty.write_bytes(b"\n".join(lines))
    clean, read = schema.encode(read_table(csv)), schema.encode(read_table(dirty))
    assert read.shape == clean.shape
    assert read.drop(index=where).equals(clean.drop(index=where))


def test_blank_lines_are_layout_not_records(asia, tmp_path):
    # a record of two or more columns always holds a separator, so no record reads as a blank line: blank lines
    # (a trailing empty line, say) are skipped and counted for the holder, and n is the number of records
    from dpcd.release.tables import read_table

    labels, schema = asia
    csv = tmp_path / "clean.csv"
    labels.iloc[:120].to_csv(csv, index=False)
    lines = csv.read_bytes().split(b"\n")
    dirty = tmp_path / "dirty.csv"
    dirty.write_bytes(b"\n".join(lines[:30] + [b"", b"  "] + lines[30:]) + b"\n\n")
    clean, read = read_table(csv), read_table(dirty)
    assert read.attrs["blank_lines"] == 4 and clean.attrs["blank_lines"] == 0
    assert schema.encode(read).equals(schema.encode(clean))


def test_bounds_whose_width_overflows_are_refused_before_the_data_are_read(tmp_path):
    # scaled to the box, a record of such a column can become NaN, and whether a run then fails depends on the
    # values: the schema rule refuses such bounds, whatever the data hold, on every path that takes bounds
    columns = {"a": {"type": "numeric", "lower": -1e308, "upper": 1e308},
               "b": {"type": "numeric", "lower": 0.0, "upper": 1.0}}
    with pytest.raises(SchemaError, match="column 'a': upper - lower must be a finite number"):
        Schema.from_json({"columns": columns})
    with pytest.raises(SchemaError, match="column 'a': upper - lower must be a finite number"):
        release(tmp_path / "missing.csv", schema={"columns": columns}, epsilon=1.0, algorithm="moment_pc",
                      progress=False)
    # the algorithms called directly with bounds: the same rule, before any release (the column of -1e308 and the
    # one holding a 0 would otherwise differ in whether the run fails)
    data = np.full((50, 2), -1e308)
    for values in (data, np.where(np.arange(50)[:, None] == 0, 0.0, data)):
        with pytest.raises(ValueError, match=r"bounds\[0\]: upper - lower must be a finite number"):
            gcm_pc(values, bounds=[(-1e308, 1e308), (-1e308, 1e308)], epsilon_total=1.0, rng=0)


def test_a_category_holding_a_line_break_is_refused_before_a_csv_is_read(tmp_path):
    # a CSV is read one line per record: a record holding such a category (legal CSV, quoted) would be read as
    # two rows, so one record's content would decide n; the schema is refused, whatever the file holds
    schema = Schema.from_json({"columns": {"a": {"type": "categorical", "categories": ["x", "line1\nline2"]},
                                           "b": {"type": "categorical", "categories": ["u", "v"]}}})
    with pytest.raises(SchemaError, match="column 'a': category 'line1\\\\nline2' holds a line break"):
        release(tmp_path / "missing.csv", schema=schema, epsilon=1.0, algorithm="em_pc", progress=False)
    frame = pd.DataFrame({"a": ["x", "line1\nline2"] * 60, "b": ["u", "v"] * 60})  # no lines: a DataFrame runs
    released = release(frame, schema=schema, epsilon=1.0, algorithm="em_pc", rng=0, progress=False)
    assert set(released.graph.nodes) == {"a", "b"}


@pytest.mark.parametrize("separator", [",", "\t", " ", ";", "|"])
def test_a_record_of_missing_values_is_a_record_whatever_the_separator(separator, tmp_path):
    # replacing a record by one of empty fields must not change n (replace-one): a line of separators is a record
    # even when the separator is white space, which a test for blank lines by str.strip() would drop
    from dpcd.release.tables import read_table

    rows = [separator.join(["a", "b", "c"]), separator.join(["1", "2", "3"]), separator * 2,
            separator.join(["4", "5", "6"]), ""]
    path = tmp_path / "t.txt"
    path.write_text("\n".join(rows) + "\n")
    table = read_table(path, delimiter=separator)
    assert len(table) == 3 and table.attrs["blank_lines"] == 1
    assert table.iloc[1].isna().all()
    stated = dpcd.release.api.data_preparation(150, separator)  # privacy.json states the rule the run used
    assert "at least 150" in stated and ("a tab" if separator == "\t" else repr(separator)) in stated


def test_a_wrong_separator_is_named_and_can_be_given(asia, tmp_path):
    from dpcd.release.tables import read_table
    from dpcd.schema import DataPreparationError

    labels, schema = asia
    csv = tmp_path / "semicolons.csv"
    labels.iloc[:120].to_csv(csv, index=False, sep=";")
    with pytest.raises(DataPreparationError, match="separated by ';'.*--delimiter"):
        read_table(csv)
    assert schema.encode(read_table(csv, delimiter=";")).equals(schema.encode(labels.iloc[:120]))
    with pytest.raises(ValueError, match="delimiter must be one character"):
        read_table(csv, delimiter=";;")


def test_a_header_the_csv_module_cannot_read_is_a_structure_error(tmp_path):
    from dpcd.release.tables import read_table

    for text in ("", "\n1,2\n", "a,,c\n1,2,3\n", "a,b,a\n1,2,3\n"):
        path = tmp_path / "bad.csv"
        path.write_text(text)
        with pytest.raises(DataPreparationError):
            read_table(path)


def _draw_recorder(draws):
    """A test algorithm: non-private PC with a fixed ledger that records one uniform draw of the rng it is given."""
    def algorithm(data, *, levels, epsilon_total, alpha, rng, max_order=None, max_tests=None):
        draws.append(rng.random())
        return pc_with_total_ledger(data, levels=levels, epsilon_total=epsilon_total, alpha=alpha, rng=rng,
                                    max_order=max_order, max_tests=max_tests)
    return algorithm


def test_a_release_draws_its_noise_from_fresh_entropy_unless_seeded(asia, monkeypatch):
    # the noise must be secret: by default every release gets a generator nobody can recompute (two releases of
    # the same data draw different noise); a seed makes a run reproducible and privacy.json says it was given
    labels, schema = asia
    draws: list[float] = []
    registry = {"recorded_pc": replace(FAKE, name="recorded_pc", run=_draw_recorder(draws))}
    found = [release(labels, schema=schema, algorithm="recorded_pc", epsilon=1.0, progress=False,
                     options=ReleaseOptions(registry=registry, forecast_repetitions=0))
             for _ in range(2)]  # the release's own draws only
    assert draws[0] != draws[1]
    assert all("operating-system entropy" in f.privacy["noise"] for f in found)
    seeded = [release(labels, schema=schema, algorithm="recorded_pc", epsilon=1.0, rng=7, progress=False,
                      options=ReleaseOptions(registry=registry, forecast_repetitions=0)) for _ in range(2)]
    assert draws[2] == draws[3]
    assert all("must stay secret" in f.privacy["noise"] and "7" not in f.privacy["noise"] for f in seeded)


def test_the_forecast_does_not_depend_on_the_noise_generator(asia, tmp_path):
    # report.html's forecast is published: it may depend on public inputs only, not on the release's generator
    # (whose state would give away the noise)
    labels, schema = asia
    pages = []
    for seed in (1, 2):
        out = tmp_path / f"out{seed}"
        release(labels, schema=schema, algorithm="em_pc", epsilon=1.0, rng=seed, progress=False,
                out=Output(out, draw=False), options=ReleaseOptions(forecast_repetitions=2, max_order=1))
        page = (out / "report.html").read_text()
        start = page.index("(forecast)</h2>")
        pages.append(page[start:page.index("</table>", start)])
    assert "<td>" in pages[0] and pages[0] == pages[1]


@pytest.mark.parametrize("name", ["pcd", "noleaks", "curate_sb"])
def test_algorithms_that_cannot_release_are_refused_before_the_data_are_read(tmp_path, gauss, name):
    _, schema = gauss
    with pytest.raises(ValueError, match="cannot make"):
        release(tmp_path / "no-such-file.csv", schema=schema, algorithm=name, epsilon=1.0, progress=False)


def test_privacy_json_lists_the_registrys_fixed_parameters(asia):
    labels, schema = asia
    found = release(labels, schema=schema, algorithm="subsampled_gaussian", epsilon=1.0, rng=0, progress=False,
                    options=ReleaseOptions(max_order=1))
    assert found.privacy["assumed_public"]["algorithm"]["parameters"]["sampling_rate"] == 0.1


def test_add_remove_refuses_a_schema_that_declares_n(asia):
    labels, schema = asia
    with pytest.raises(SchemaError, match="n is protected"):
        release(labels, schema=Schema(schema.columns, n=len(labels)), relation="add/remove", epsilon=1.0,
                      algorithm="em_pc", progress=False)
    tiny = release(labels.iloc[:2], schema=schema, relation="add/remove", epsilon=1.0, algorithm="em_pc",
                         progress=False)  # any number of rows runs: n is protected
    assert set(tiny.graph.nodes) == set(labels.columns)


def test_schema_is_required_and_a_draft_is_refused(asia):
    labels, schema = asia
    with pytest.raises(SchemaError, match="dpcd schema DATA.csv"):
        release(labels, schema=None, epsilon=1.0, progress=False)
    draft = Schema(schema.columns, draft="DRAFT read from the private data")
    with pytest.raises(SchemaError, match="draft"):
        release(labels, schema=draft, epsilon=1.0, progress=False)


def test_structure_errors_are_data_preparation(asia):
    labels, schema = asia
    with pytest.raises(DataPreparationError, match="does not declare"):
        release(labels.assign(extra=1), schema=schema, epsilon=1.0, progress=False)
    declared = Schema(schema.columns, n=len(labels) + 1)
    with pytest.raises(DataPreparationError, match="schema declares n"):
        release(labels, schema=declared, epsilon=1.0, progress=False)
    with pytest.raises(DataPreparationError, match="at least 100"):
        release(labels.iloc[:50], schema=schema, epsilon=1.0, progress=False)


def test_nothing_is_written_when_a_step_fails(asia, tmp_path, monkeypatch):
    labels, schema = asia

    def broken_draw(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(writers, "_draw", broken_draw)
    with pytest.raises(OSError, match="disk full"):
        release(labels, schema=schema, algorithm="fake_pc", epsilon=1.0, progress=False, out=tmp_path / "out",
                options=ReleaseOptions(registry=REGISTRY))
    assert list(tmp_path.iterdir()) == []


def test_a_run_above_its_plan_is_a_bug_and_writes_nothing(asia, tmp_path, monkeypatch):
    labels, schema = asia
    monkeypatch.setitem(SPEND, "factor", 2.0)
    with pytest.raises(RuntimeError, match="above its planned guarantee"):
        release(labels, schema=schema, algorithm="fake_pc", epsilon=1.0, progress=False, out=tmp_path / "out",
                options=ReleaseOptions(registry=REGISTRY))
    assert list(tmp_path.iterdir()) == []


def test_out_folder_must_be_new_or_empty(asia, tmp_path):
    labels, schema = asia
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="not an empty folder"):
        release(labels, schema=schema, algorithm="fake_pc", epsilon=1.0, progress=False, out=out,
                options=ReleaseOptions(registry=REGISTRY))
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    release(labels, schema=schema, algorithm="fake_pc", epsilon=1.0, progress=False, out=Output(out, overwrite=True,
            draw=False), options=ReleaseOptions(registry=REGISTRY))
    assert sorted(p.name for p in out.iterdir()) == sorted(writers.GRAPH_FILES)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
        ({"epsilon": math.inf}, ValueError, "epsilon must be finite"),
        ({"epsilon": 1.0, "delta": 1.5}, ValueError, r"delta must lie in \(0, 1\)"),
        ({"epsilon": 1.0, "delta": 1e-3}, ValueError, "delta must be below 1/n"),
        ({"epsilon": 1.0, "alpha": 0.0}, ValueError, "alpha must lie in"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ({"epsilon": 1.0, "relation": "swap"}, ValueError, "relation must be"),
        ({"epsilon": 1.0, "algorithm": "pcd"}, ValueError, "local sensitivity"),
    ],
)
def test_discover_rejects_bad_arguments(asia, kwargs, error, match):
    labels, schema = asia
    kwargs = {"algorithm": "fake_pc", **kwargs}
    registry = {**REGISTRY, "pcd": reg.ALGORITHMS["pcd"]}
    settings = {"registry": registry, **({"alpha": kwargs.pop("alpha")} if "alpha" in kwargs else {})}
    with pytest.raises(error, match=match):
        release(labels, schema=schema, progress=False, **kwargs, options=ReleaseOptions(**settings))


# --------------------------------------------------------------------------- the cross-paper benchmark's cells


def test_benchmark_cell_rows_and_ranking():
    from dpcd_papers.benchmark import dataset_kind, rank_table, run_cell, summarise

    assert dataset_kind("asia") == "categorical" and dataset_kind("nonlinear") == "numeric"
    with pytest.raises(ValueError, match="dataset must be"):
        dataset_kind("mnist")
    assert run_cell(dataset="linear_gaussian", algorithm="lapmech", epsilon=1.0, delta=1e-6, n=500, rng=0) == []
    assert run_cell(dataset="linear_gaussian", algorithm="pcd", epsilon=1.0, delta=1e-6, n=500, rng=0) == []
    rows = run_cell(dataset="cancer", algorithm="svt_pc", epsilon=1.0, delta=1e-6, n=1_000, rng=0)
    assert len(rows) == 1 and rows[0]["error"] == "" and rows[0]["within_budget"]
    assert 0.0 <= rows[0]["f1"] <= 1.0 and rows[0]["epsilon_spent"] <= rows[0]["epsilon_guarantee"] <= 1.0
    lapmech = run_cell(dataset="cancer", algorithm="lapmech", epsilon=1.0, delta=1e-6, n=1_000, rng=0)[0]
    assert lapmech["within_budget"] and lapmech["delta_spent"] <= 1e-6 and lapmech["epsilon_spent"] <= 1.0 + 1e-9
    over = run_cell(dataset="linear_gaussian", algorithm="noleaks", epsilon=1.0, delta=1e-6, n=2_000, rng=0)
    assert over[0]["within_budget"] is False and over[0]["delta_guarantee"] > 1e-6
    results = pd.DataFrame({
        "dataset": ["a", "a", "a", "b", "b", "b"], "label": ["X", "Y", "Z", "X", "Y", "Z"], "epsilon": [1.0] * 6,
        "f1": [0.9, 0.5, 0.99, 0.2, 0.4, 0.1], "skeleton_f1": 0.5, "shd": 1.0, "seconds": 0.1, "epsilon_spent": 1.0,
        "within_budget": [True, True, False, True, True, True], "error": "",
    })
    ranks = rank_table(summarise(results)).set_index("label")
    assert ranks.loc["X", "mean_rank"] == 1.5 and ranks.loc["Y", "mean_rank"] == 1.5
    assert ranks.loc["Z", "mean_rank"] == 3.0 and ranks.loc["Z", "datasets"] == 1  # over budget on a: not ranked
