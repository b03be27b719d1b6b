"""``dpcd.forecast`` / ``dpcd forecast``: a forecast from synthetic data of the schema's shape, reading no private data."""

from __future__ import annotations

import inspect
import os

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpcd.cli import main  # noqa: E402
from dpcd.datasets import load_bnlearn  # noqa: E402
from dpcd.forecast import FORECAST_COLUMNS, forecast  # noqa: E402
from dpcd.schema import Schema  # noqa: E402


@pytest.fixture(scope="module")
def cancer_schema() -> Schema:
    return load_bnlearn("cancer", 100, rng=0).schema()


def test_forecast_has_no_data_argument():
    parameters = inspect.signature(forecast).parameters
    assert "data" not in parameters and list(parameters)[0] == "schema"
    assert {"n", "epsilon", "delta", "relation", "rng"} <= set(parameters)


def test_forecast_grows_with_epsilon_on_average(cancer_schema):
    result = forecast(cancer_schema, n=3000, epsilon=[0.1, 5.0], algorithms=["em_pc", "lapmech"], repetitions=20,
                    rng=1)
    table = result.table.set_index(["algorithm", "epsilon"])
    assert list(result.table.columns) == list(FORECAST_COLUMNS)
    assert (result.table["status"] == "ok").all() and (result.table["runs"] == 20).all()
    for name in ("em_pc", "lapmech"):
        assert table.loc[(name, 5.0), "skeleton_f1"] > table.loc[(name, 0.1), "skeleton_f1"] + 0.1
        row = table.loc[(name, 5.0)]
        assert row["skeleton_f1_low"] <= row["skeleton_f1"] <= row["skeleton_f1_high"]
    # auto keeps the first candidate that ran (em_pc before lapmech here) unless the other's lift is ahead by
    # more than AUTO_MARGIN, at each budget
    from dpcd.forecast import AUTO_MARGIN, ranked

    for eps in (0.1, 5.0):
        rows = result.table[result.table["epsilon"] == eps]
        good = rows[rows["skeleton_f1"] > rows["random_f1_high"]].set_index("algorithm")
        best = ranked(rows).iloc[0]
        first = "em_pc" if "em_pc" in good.index else best["algorithm"]
        expected = best["algorithm"] if best["skeleton_f1"] > rows.set_index("algorithm").loc[first, "skeleton_f1"] \
            + AUTO_MARGIN else first
        assert rows.loc[rows["auto"], "algorithm"].tolist() == [expected]
    assert result.auto == result.table[result.table["epsilon"] == 5.0].set_index("algorithm")["auto"].idxmax()
    assert "synthetic" in result.statement and "No private data was read" in result.statement
    assert result.best(5.0)["algorithm"] in {"em_pc", "lapmech"}


def test_forecast_lists_every_applicable_algorithm_and_says_why_one_cannot_run(cancer_schema):
    result = forecast(cancer_schema, n=1000, epsilon=0.5, repetitions=1, rng=0)
    statuses = result.table.set_index("algorithm")["status"]
    assert statuses["em_pc"] == "ok" and statuses["priv_pc"] == "ok"
    assert statuses["noleaks"].startswith("refused")  # its line-search subset costs more than the budget
    fig = result.plot()
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert len(labels) <= 6 and sum(label.startswith("random graph") for label in labels) == 1  # 5 algorithms at most
    numeric_only = Schema.numeric({"x": (0, 1), "y": (0, 1), "z": (0, 1)})
    assert set(forecast(numeric_only, n=500, epsilon=1.0, repetitions=1, rng=0).table["algorithm"]) >= {"privpc_star"}
    assert "em_pc" in set(forecast(numeric_only, n=500, epsilon=1.0, repetitions=1, rng=0).table["algorithm"])


def test_add_remove_uses_the_stated_n_as_a_public_guess(cancer_schema):
    result = forecast(cancer_schema, n=2000, epsilon=2.0, relation="add/remove", algorithms=["em_pc", "priv_pc"],
                    repetitions=2, rng=0)
    assert result.relation == "add/remove"
    assert result.table.set_index("algorithm").loc["em_pc", "status"] == "ok"


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
    ({"epsilon": []}, ValueError, "at least one budget"),
    ({"n": 5}, ValueError, "n must be"),
    ({"algorithms": ["nope"]}, ValueError, "unknown algorithm"),
    ({"repetitions": 0}, ValueError, "repetitions must be"),
])
def test_forecast_rejects_bad_input(cancer_schema, kwargs, error, match):
    arguments = {"n": 1000, "epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        forecast(cancer_schema, **arguments)


def test_cli_forecast_writes_table_and_plot(cancer_schema, tmp_path, capsys):
    path = cancer_schema.save(tmp_path / "schema.json")
    out = tmp_path / "forecast"
    assert main(["forecast", "--schema", str(path), "--n", "1500", "--epsilon", "0.5,2", "--algorithm", "em_pc",
                 "--repetitions", "2", "--out", str(out) + "/", "--dependence", "nonlinear"]) == 0  # numeric only
    printed = capsys.readouterr().out
    assert "algorithm auto would pick em_pc" in printed and "This forecast is synthetic" in printed
    assert "How far to trust it" in printed  # the error the benchmark measured on held-out networks
    assert f"wrote {out}{os.sep}: forecast.csv" in printed  # one separator, though the user typed one
    table = pd.read_csv(out / "forecast.csv")
    assert sorted(table["epsilon"]) == [0.5, 2.0]
    assert (out / "forecast.png").read_bytes()[:4] == b"\x89PNG"
    from dpcd.forecast import auto_repetitions
    from dpcd.registry import ALGORITHMS

    assert main(["forecast", "--schema", str(path), "--n", "1500", "--epsilon", "1", "--algorithm", "em_pc",
                 "--repetitions", "auto", "--time-budget", "0", "--out", str(tmp_path / "auto")]) == 0
    runs = pd.read_csv(tmp_path / "auto" / "forecast.csv")["runs"].tolist()
    assert runs == [auto_repetitions(ALGORITHMS["em_pc"], cancer_schema, 1500)]  # discover's own count


@pytest.mark.parametrize("argv", [
    ["--schema", "MISSING", "--n", "1000", "--epsilon", "1"],
    ["--schema", "SCHEMA", "--n", "1000", "--epsilon", "one"],
    ["--schema", "SCHEMA", "--n", "1000", "--epsilon", "-1"],
    ["--schema", "SCHEMA", "--n", "1000", "--epsilon", "1", "--relation", "swap"],
    ["--schema", "BAD", "--n", "1000", "--epsilon", "1"],
    ["--schema", "SCHEMA", "--n", "1000", "--epsilon", "1", "--repetitions", "many"],
    ["--schema", "SCHEMA", "--n", "1000", "--epsilon", "1", "--repetitions", "0"],
])
def test_cli_forecast_bad_input_is_one_line_and_exit_2(cancer_schema, tmp_path, capsys, argv):
    path = cancer_schema.save(tmp_path / "schema.json")
    (tmp_path / "bad.json").write_text('{"columns": {"a": {"type": "categorical"}}}')
    names = {"MISSING": str(tmp_path / "missing.json"), "SCHEMA": str(path), "BAD": str(tmp_path / "bad.json")}
    argv = ["forecast", *(names.get(a, a) for a in argv)]
    with pytest.raises(SystemExit) as info:
        raise SystemExit(main(argv))
    assert info.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_random_graph_baseline_and_a_dense_graph_cannot_be_best():
    from dpcd.forecast import random_graph_f1

    assert random_graph_f1(11, [10], [55]) == pytest.approx((2 * 10 / 65, 2 * 10 / 65))  # complete: F1 fixed
    mean, high = random_graph_f1(11, [10, 10], [10, 10])
    assert mean == pytest.approx(2 * 10 * 10 / (55 * 20)) and mean <= high <= 1.0
    # the exact mean against a simulation of random graphs
    import numpy as np

    rng = np.random.default_rng(0)
    shared = [len(set(rng.choice(55, 12, replace=False)) & set(range(10))) for _ in range(20_000)]
    assert random_graph_f1(11, [10], [12])[0] == pytest.approx(np.mean(2 * np.array(shared) / 22), abs=0.005)


def test_the_random_baseline_tests_the_mean_over_runs_not_one_run():
    import numpy as np
    from scipy import stats

    from dpcd.forecast import RANDOM_GRID, random_graph_f1, ranked

    # one run: the exact 90 % quantile of one random graph (10 true edges among 45 pairs, 5 released)
    cumulative = np.cumsum(stats.hypergeom.pmf(np.arange(6), 45, 10, 5))
    assert random_graph_f1(10, [10], [5])[1] == pytest.approx(2 * int(np.searchsorted(cumulative, 0.9)) / 15)
    # ten runs, five of them empty: one run's pooled quantile is 0 (most random graphs miss), the mean's is not;
    # a forecast with a single hit among its five edges (mean 0.018) is not better than chance
    assert 0.5 + 0.5 * (45 / 55) >= 0.9  # pooled over the runs, F1 = 0 has probability 0.91: its quantile is 0
    mean, high = random_graph_f1(11, [10] * 10, [0] * 5 + [1] * 5)
    assert mean == pytest.approx(5 * (10 / 55) * (2 / 11) / 10) and high == pytest.approx(2 * (2 / 11) / 10, abs=1e-3)
    rows = pd.DataFrame({"algorithm": ["empty", "dense"], "status": "ok", "skeleton_f1": [1 / 55, 0.33],
                         "random_f1": [mean, 0.20], "random_f1_high": [high, 0.25], "lift": [1 / 55 - mean, 0.13]})
    assert ranked(rows)["algorithm"].tolist() == ["dense", "empty"]
    # against a simulation of the mean of 10 random graphs (12 of 55 pairs, 10 true): never below, within the grid
    rng = np.random.default_rng(1)
    simulated = np.quantile((2 * rng.hypergeometric(10, 45, 12, size=(200_000, 10)) / 22).mean(axis=1), 0.9)
    assert simulated - 1e-9 <= random_graph_f1(11, [10] * 10, [12] * 10)[1] <= simulated + 1 / RANDOM_GRID
    # more runs, a narrower mean: the quantile falls towards the expectation
    highs = [random_graph_f1(11, [10] * r, [12] * r)[1] for r in (1, 4, 16)]
    assert highs[0] > highs[1] > highs[2] > random_graph_f1(11, [10], [12])[0]


def test_forecast_says_when_a_release_is_no_better_than_chance(cancer_schema):
    result = forecast(cancer_schema, n=3000, epsilon=[0.05, 20.0], algorithms=["em_pc"], repetitions=6, rng=3)
    table = result.table.set_index("epsilon")
    assert (table["lift"] == table["skeleton_f1"] - table["random_f1"]).all()
    assert table.loc[20.0, "verdict"].startswith("better than a random graph")
    assert table.loc[20.0, "lift"] > table.loc[0.05, "lift"]
    best = result.best(20.0)
    assert best["algorithm"] == "em_pc" and best["skeleton_f1"] > best["random_f1_high"]
    assert {"max_order", "max_tests"} <= set(result.table.columns) and (result.table["max_tests"] > 0).all()


def test_time_budget_bounds_the_repetitions(cancer_schema):
    from dpcd.forecast import estimated_seconds
    from dpcd.registry import ALGORITHMS

    expected = estimated_seconds(ALGORITHMS["em_pc"], cancer_schema, 2000)
    result = forecast(cancer_schema, n=2000, epsilon=1.0, algorithms=["em_pc"], repetitions=50, rng=0,
                      time_budget=expected * 1.0001)
    assert result.table["runs"].tolist() == [1]  # one run always; none starts once it would not fit
    skipped = forecast(cancer_schema, n=2000, epsilon=1.0, algorithms=["em_pc"], repetitions=50, rng=0,
                       time_budget=expected * 0.9)  # one run cannot fit: skipped before it starts
    assert skipped.table["runs"].tolist() == [0] and skipped.table["status"].iloc[0].startswith("skipped")
    lines = []
    forecast(cancer_schema, n=2000, epsilon=[1.0, 2.0], algorithms=["em_pc"], repetitions=1, rng=0, progress=lines.append)
    assert lines == ["EM-PC at epsilon=1", "EM-PC at epsilon=2"]


def test_auto_repetitions_come_from_public_sizes_not_a_clock(cancer_schema):
    from dpcd.forecast import AUTO_REPETITIONS, AUTO_WORK, auto_repetitions
    from dpcd.registry import ALGORITHMS

    marginal, gcm, lapmech = ALGORITHMS["marginal_pc"], ALGORITHMS["gcm_pc"], ALGORITHMS["lapmech"]
    assert auto_repetitions(marginal, cancer_schema, 3000) == AUTO_REPETITIONS  # small tables: every run
    counts = [auto_repetitions(marginal, Schema.categorical([3] * p), 100_000) for p in (8, 20, 37, 60, 200)]
    assert all(a >= b for a, b in zip(counts, counts[1:])) and counts[-1] == 1  # fewer for larger p, at least one
    numeric = Schema.numeric([(0.0, 1.0)] * 20)
    assert auto_repetitions(gcm, numeric, 100_000) < auto_repetitions(ALGORITHMS["moment_pc"], numeric, 100_000)
    assert auto_repetitions(marginal, Schema.categorical([3] * 37), 100_000) == int(AUTO_WORK // (37 ** 2 * 120_000))
    # LapMech's run time grows with the full table's cells, whatever n: a large table leaves it fewer runs
    assert auto_repetitions(lapmech, Schema.categorical([2] * 24), 5_000) < auto_repetitions(
        marginal, Schema.categorical([2] * 24), 5_000)
    result = forecast(cancer_schema, n=3000, epsilon=1.0, algorithms=["em_pc"], repetitions="auto", rng=0,
                      time_budget=None)
    assert result.table["runs"].tolist() == [auto_repetitions(ALGORITHMS["em_pc"], cancer_schema, 3000)]
    with pytest.raises(ValueError, match="repetitions must be a positive integer or 'auto'"):
        forecast(cancer_schema, n=3000, epsilon=1.0, algorithms=["em_pc"], repetitions="many")


def test_auto_picks_by_a_forecast_that_reads_no_data(cancer_schema):
    from dpcd.forecast import choose_by_forecast

    assert "data" not in inspect.signature(choose_by_forecast).parameters
    from dpcd.forecast import AUTO_MARGIN, ranked

    spec, result = choose_by_forecast(cancer_schema, n=3000, epsilon=1.0)
    rows = result.table[result.table["status"] == "ok"]
    good = rows[rows["skeleton_f1"] > rows["random_f1_high"]]
    best = ranked(rows).iloc[0]
    first = good.iloc[0] if len(good) else best  # the candidates run in AUTO_CANDIDATES order
    assert spec.name == (best["algorithm"] if best["skeleton_f1"] > first["skeleton_f1"] + AUTO_MARGIN
                         else first["algorithm"])
    assert set(result.table["algorithm"]) <= {"marginal_pc", "mst_pc", "em_pc", "lapmech"}
    again, repeated = choose_by_forecast(cancer_schema, n=3000, epsilon=1.0)
    assert again.name == spec.name  # a pure function of public inputs
    assert repeated.table["skeleton_f1"].equals(result.table["skeleton_f1"])  # the same runs, not a clock's share
    fallback, none = choose_by_forecast(cancer_schema, n=3000, epsilon=1.0, relation="add/remove")
    assert none is None and fallback.relation.name == "add/remove"  # n protected: no forecast, a proven pick


def test_nonlinear_relations_switch_the_synthetic_model_and_a_release_records_them(tmp_path):
    """``dependence`` is the holder's public statement: it switches the numeric synthetic model to PCD's nonlinear
    SEM (scaled to the public bounds like the linear one), the forecast says so, and a release records it."""
    import numpy as np

    import dpcd
    from dpcd.forecast import synthetic_truth

    schema = Schema.numeric([(-3.0, 3.0)] * 6, names=[f"x{i}" for i in range(6)])
    linear, _ = synthetic_truth(schema, "numeric", 400, 2.0, np.random.default_rng(1))
    nonlinear, _ = synthetic_truth(schema, "numeric", 400, 2.0, np.random.default_rng(1), "nonlinear")
    assert not np.allclose(linear.to_numpy(), nonlinear.to_numpy())
    assert nonlinear.min().min() >= -3.0 and nonlinear.max().max() <= 3.0  # scaled to the public bounds
    result = forecast(schema, n=20_000, epsilon=[1.0], algorithms=["gcm_pc", "moment_pc"], repetitions=3,
                      time_budget=None, dependence="nonlinear", rng=0)
    assert set(result.table["status"]) == {"ok"} and "nonlinear" in result.statement
    with pytest.raises(ValueError, match="dependence"):
        forecast(schema, n=1000, epsilon=[1.0], dependence="quadratic")
    data = nonlinear.iloc[:300]
    found = dpcd.discover(data, schema=schema, epsilon=1.0, rng=0, progress=False, out=tmp_path / "out",
                          options=dpcd.ReleaseOptions(dependence="nonlinear", forecast_repetitions=1))
    assert found.privacy["assumed_public"]["algorithm"]["forecast_dependence"] == "nonlinear"


def test_under_add_remove_the_forecast_names_the_pick_discover_makes():
    # discover cannot forecast where n is protected and takes the registry's fixed preference; the forecast's
    # auto column must name that pick, not the best forecast (LapMech beats EM-PC on this schema at ε = 0.3)
    from dpcd.preparation import auto_algorithm
    from dpcd.registry import ALGORITHMS

    schema = Schema.categorical([2] * 5)
    result = forecast(schema, n=20_000, epsilon=[0.3], relation="add/remove", algorithms=["em_pc", "lapmech"],
                      repetitions=3, time_budget=None, rng=0)
    fixed = auto_algorithm(schema, "add/remove", ALGORITHMS).name
    assert result.auto == fixed == "em_pc"
    assert result.table.set_index("algorithm")["auto"].to_dict() == {"em_pc": True, "lapmech": False}


@pytest.mark.parametrize("relation, out, repetitions, listed", [
    ("add/remove", True, 3, False), ("replace", False, 3, True), ("replace", True, 0, True)])
def test_privacy_json_lists_the_forecast_model_only_when_a_forecast_read_it(tmp_path, relation, out, repetitions,
                                                                           listed):
    import dpcd

    sample = load_bnlearn("cancer", 2_000, rng=0)
    schema = sample.schema().to_json()
    schema.pop("n", None)
    found = dpcd.discover(sample.data, schema=schema, epsilon=1.0, rng=0, progress=False, relation=relation,
                          out=tmp_path / "out" if out else None,
                          options=dpcd.ReleaseOptions(forecast_repetitions=repetitions, force=True))
    assert ("forecast_dependence" in found.privacy["assumed_public"]["algorithm"]) == listed
    manual = dpcd.discover(sample.data, schema=schema, epsilon=1.0, rng=0, progress=False, relation="replace",
                           algorithm="em_pc", out=None,
                           options=dpcd.ReleaseOptions(forecast_repetitions=0))  # no auto, none asked: no forecast
    assert "forecast_dependence" not in manual.privacy["assumed_public"]["algorithm"]


def test_categorical_algorithms_are_forecast_on_the_numeric_draw_put_through_the_bins():
    """A categorical algorithm reads numeric columns through the schema's bins: its synthetic data are the numeric
    draw a numeric algorithm gets from the same seed (the stated model), binned as a release codes real records —
    not random tables over the bins, on which binning would lose nothing."""
    import numpy as np

    from dpcd.forecast import _synthetic_binned, synthetic_truth
    from dpcd.schema import Column

    columns = (Column("x", "numeric", lower=-2.0, upper=2.0), Column("y", "numeric", lower=0.0, upper=10.0),
               Column("g", "ordinal", categories=("lo", "mid", "hi")), Column("z", "numeric", lower=-1.0, upper=1.0))
    schema = Schema(columns=columns, bins=5)
    view = schema.as_categorical()
    for dependence in ("linear", "nonlinear"):
        binned, dag = _synthetic_binned(schema, view, 2000, 2.0, np.random.default_rng(3), dependence)
        numeric, numeric_dag = synthetic_truth(schema.as_numeric(), "numeric", 2000, 2.0, np.random.default_rng(3),
                                          dependence)
        assert list(binned.columns) == ["x", "y", "g", "z"] and set(dag.edges) == set(numeric_dag.edges)
        for name, (lower, upper) in {"x": (-2.0, 2.0), "y": (0.0, 10.0), "z": (-1.0, 1.0)}.items():
            expected = np.clip(np.floor((numeric[name].to_numpy() - lower) / (upper - lower) * 5), 0, 4)
            assert np.array_equal(binned[name].to_numpy(), expected.astype(np.int64)), name
        assert np.array_equal(binned["g"].to_numpy(), numeric["g"].to_numpy().astype(np.int64))
        assert set(binned["g"]) <= {0, 1, 2}
        # values spread over ±3 sd of the bounds pile up in the middle bins, unlike Dirichlet tables
        middle = np.mean(binned[["x", "y", "z"]].to_numpy() == 2)
        assert middle > 0.3, middle
    result = forecast(schema, n=2000, epsilon=[1.0], algorithms=["marginal_pc", "moment_pc"], repetitions=2,
                      time_budget=None, rng=0)
    assert set(result.table["status"]) == {"ok"} and "schema's bins" in result.statement


def test_without_a_numeric_coding_categorical_algorithms_keep_random_tables_over_the_bins():
    """An unordered column of more than two categories has no numeric coding: the categorical algorithms' forecast
    falls back to random conditional tables over the categories and the bins (and still runs)."""
    from dpcd.schema import Column

    columns = (Column("x", "numeric", lower=0.0, upper=1.0),
               Column("c", "categorical", categories=("a", "b", "c")), Column("y", "numeric", lower=0.0, upper=1.0))
    schema = Schema(columns=columns, bins=4)
    assert not schema.numeric_coding_allowed()
    result = forecast(schema, n=2000, epsilon=[1.0], algorithms=["marginal_pc"], repetitions=2, time_budget=None,
                      rng=0)
    assert list(result.table["status"]) == ["ok"]
    assert "tables (Dirichlet(1) rows) over the schema's categories and bins" in result.statement


def test_the_report_forecast_counts_its_runs_from_public_sizes_not_a_clock(tmp_path, monkeypatch):
    # report.html must be a function of public inputs: on a machine so slow that every synthetic run seems to take
    # 100 s, the forecast it shows still makes min(--forecast, auto_repetitions) runs (a time budget stopped at one)
    import itertools

    import dpcd
    import dpcd.forecast as forecast_module
    from dpcd.forecast import auto_repetitions
    from dpcd.preparation import view_for
    from dpcd.registry import ALGORITHMS

    sample = load_bnlearn("cancer", 2_000, rng=0)
    schema = sample.schema()
    runs = min(3, auto_repetitions(ALGORITHMS["em_pc"], view_for(schema, ALGORITHMS["em_pc"]), 2_000))
    assert runs == 3
    clock = itertools.count(0.0, 100.0)
    monkeypatch.setattr(forecast_module.time, "perf_counter", lambda: float(next(clock)))
    dpcd.discover(sample.data, schema=schema, epsilon=1.0, algorithm="em_pc", rng=0, progress=False,
                  out=tmp_path / "out", options=dpcd.ReleaseOptions(forecast_repetitions=3, force=True))
    page = (tmp_path / "out" / "report.html").read_text()
    assert "(3 random DAGs with" in page and "as many as fit" not in page  # exactly 3 runs; no time budget


def test_the_synthetic_degree_follows_the_schema_kind_and_is_stated():
    """A categorical schema's synthetic DAGs have SYNTHETIC_DEGREE["categorical"] neighbours per node, a numeric
    one's SYNTHETIC_DEGREE["numeric"] (chosen apart, on the development set), each stated in the forecast; an
    explicit degree or concentration wins and is stated too."""
    from dpcd.forecast import SYNTHETIC_DEGREE

    categorical = forecast(Schema.categorical([2, 3, 2, 2]), n=500, epsilon=[1.0], algorithms=["marginal_pc"],
                           repetitions=1, rng=0)
    numeric = forecast(Schema.numeric([(-3.0, 3.0)] * 4), n=500, epsilon=[1.0], algorithms=["moment_pc"],
                       repetitions=1, rng=0)
    assert f"{SYNTHETIC_DEGREE['categorical']:g} neighbours per node" in categorical.statement
    assert f"{SYNTHETIC_DEGREE['numeric']:g} neighbours per node" in numeric.statement
    assert SYNTHETIC_DEGREE["categorical"] != SYNTHETIC_DEGREE["numeric"]
    chosen = forecast(Schema.categorical([2, 3, 2, 2]), n=500, epsilon=[1.0], algorithms=["marginal_pc"],
                      repetitions=1, degree=1.5, concentration=0.5, rng=0)
    assert "1.5 neighbours per node" in chosen.statement and "Dirichlet(0.5) rows" in chosen.statement
    with pytest.raises(ValueError, match="concentration"):
        forecast(Schema.categorical([2, 2]), n=500, epsilon=[1.0], concentration=0.0)
