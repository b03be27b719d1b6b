"""The held-out protocol: a fixed development set and held-out set, a reproducible random-network generator, and no
module of the library that names a held-out network (no constant chosen on what is reported)."""

from __future__ import annotations

import gzip
import re

import networkx as nx
import numpy as np
import pytest

from dpcd.datasets import (
    BNLEARN_NETWORKS,
    DEGREE_PROFILES,
    _bundled_model_dir,
    load_network,
    random_network_dag,
    sample_random_network,
)
from dpcd_papers import benchmark


def _variables(name: str) -> int:
    """The number of variables a bundled BIF file declares (counted in its text: parsing the large ones takes
    minutes)."""
    text = gzip.decompress((_bundled_model_dir() / f"{name}.bif.gz").read_bytes()).decode("utf-8")
    return len(re.findall(r"^variable\s", text, flags=re.MULTILINE))


def test_variables_are_counted_as_the_parser_reads_them():
    assert _variables("alarm") == len(load_network("alarm").nodes()) == 37


def test_the_two_sets_are_fixed_disjoint_and_cover_every_shipped_network_of_at_most_100_nodes():
    development, held_out = set(benchmark.DEVELOPMENT), set(benchmark.HELD_OUT)
    assert development == {"asia", "cancer", "earthquake", "survey", "sachs", "child", "alarm"}
    assert not development & held_out
    small = {name for name in BNLEARN_NETWORKS if _variables(name) <= 100}
    assert small == development | held_out


def test_no_module_of_the_library_names_a_held_out_network(project_root):
    pattern = re.compile(r"\b(" + "|".join(benchmark.HELD_OUT) + r")\b", re.IGNORECASE)
    named = [f"{path.relative_to(project_root)}:{number}"
             for path in sorted((project_root / "src" / "dpcd").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if pattern.search(line)]
    assert named == []


@pytest.mark.parametrize("profile", DEGREE_PROFILES)
def test_random_networks_are_reproducible_by_seed_and_keep_their_documented_parameters(profile):
    first = sample_random_network(40, 300, 7, profile=profile)
    again = sample_random_network(40, 300, 7, profile=profile)
    other = sample_random_network(40, 300, 8, profile=profile)
    assert first.data.equals(again.data) and set(first.dag.edges) == set(again.dag.edges)
    assert set(first.dag.edges) != set(other.dag.edges)
    assert nx.is_directed_acyclic_graph(first.dag) and max(d for _, d in first.dag.in_degree()) <= 4
    assert 2 <= min(first.levels) and max(first.levels) <= 6
    assert first.meta["profile"] == profile and first.meta["concentration"] == 0.5


def test_the_hub_profile_has_hubs_and_the_uniform_one_does_not():
    def largest(profile):
        return np.mean([max(dict(random_network_dag(80, seed, profile=profile).out_degree()).values())
                        for seed in range(20)])

    assert largest("hubs") > 1.5 * largest("uniform")


def test_the_benchmark_draws_a_fresh_random_network_per_repetition():
    one = benchmark.load_dataset("random-hubs", 200, np.random.default_rng(1))
    two = benchmark.load_dataset("random-hubs", 200, np.random.default_rng(2))
    assert benchmark.RANDOM_P[0] <= one.data.shape[1] <= benchmark.RANDOM_P[1]
    assert set(one.dag.edges) != set(two.dag.edges)
    assert benchmark.dataset_kind("random-uniform") == "categorical"


def test_the_committed_full_benchmark_reports_both_sets_apart_and_the_readme_quotes_it(project_root):
    import pandas as pd

    folder = project_root / "figures" / "benchmark"
    held = pd.read_csv(folder / "benchmark_held_out.csv")
    assert set(held["dataset"]) == set(benchmark.HELD_OUT) | set(benchmark.RANDOM_NETWORKS)
    assert sorted(set(held["epsilon"])) == [0.3, 1.0, 3.0]
    summary = pd.read_csv(folder / "benchmark_held_out_summary.csv")
    auto = summary[summary["label"] == "auto (discover)"]
    refused = set(auto.loc[auto["errors"] == auto["runs"], "dataset"])  # every release refused, from public inputs
    ran = held[~held["dataset"].isin(refused)]
    assert len(ran) >= 3 * (len(set(held["dataset"])) - 2)
    for column in ("skeleton F1", "PC skeleton F1", "CPDAG F1", "PC CPDAG F1", "SHD", "PC SHD", "forecast",
                   "forecast error"):
        assert ran[column].notna().all(), column
    assert held.loc[held["dataset"].isin(refused), "PC skeleton F1"].notna().all()  # the ceiling still stands
    for dataset in held["dataset"].unique():  # a method too large for a network is reported, refused, not dropped
        labels = set(summary.loc[summary["dataset"] == dataset, "label"])
        assert {"auto (discover)", "Marginal-PC", "MST-PC", "AIM-PC", "PC (not private)"} <= labels, dataset
    development = pd.read_csv(folder / "benchmark_summary.csv")
    assert set(benchmark.DEVELOPMENT) <= set(development["dataset"])
    assert not set(benchmark.HELD_OUT) & set(development["dataset"])
    table = benchmark.held_out_markdown(held[~held["dataset"].isin(refused)])
    for page in ("README.md", "docs/benchmark.md"):
        readme = (project_root / page).read_text(encoding="utf-8")
        # the page's table holds the networks auto ran on; the refused ones are named under it with their ceiling
        assert table in readme, f"{page}'s held-out table should be the committed one"
        after = readme[readme.index(table) + len(table):][:600]
        assert all(name in after for name in refused), f"{page} should name the networks auto refused"


def test_a_network_the_schema_refuses_is_a_refused_row_not_a_failed_grid():
    # mildew has columns of more than 20 categories: every categorical method is refused from public inputs
    rows = benchmark.run_cell(dataset="mildew", algorithm="mst_pc", epsilon=1.0, delta=1e-6, n=2_000, rng=0)
    assert len(rows) == 1 and rows[0]["label"] == "MST-PC" and rows[0]["error"].startswith("refused: ")
    assert "more than 20 categories" in rows[0]["error"] and np.isnan(rows[0]["skeleton_f1"])
    lost = benchmark.diagnose_cell(dataset="mildew", epsilon=1.0, delta=1e-6, n=2_000, rng=0)
    assert len(lost) == 1 and lost[0]["kind"].startswith("refused: ")


def test_the_release_page_states_the_forecast_error_the_committed_benchmark_measured(project_root):
    import pandas as pd

    from dpcd.release.html import FORECAST_CAUTION, FORECAST_HELD_OUT_ERROR

    summary = pd.read_csv(project_root / "figures" / "benchmark" / "benchmark_held_out_summary.csv")
    auto = summary[(summary["label"] == "auto (discover)") & (summary["epsilon"] == 1.0)
                   & summary["dataset"].isin(benchmark.HELD_OUT)].dropna(subset=["skeleton_f1_mean"])
    error = auto["forecast_skeleton_f1"] - auto["skeleton_f1_mean"]
    assert len(error) >= 3
    assert (round(float(error.min()), 2), round(float(error.max()), 2)) == FORECAST_HELD_OUT_ERROR
    assert f"{FORECAST_HELD_OUT_ERROR[0]:.2f}–{FORECAST_HELD_OUT_ERROR[1]:.2f}" in FORECAST_CAUTION


def test_the_forecast_calibration_check_reads_development_networks_only(project_root):
    import pandas as pd

    from dpcd_papers.forecast_check import adjacent_pair_information

    folder = project_root / "figures" / "benchmark"
    information = pd.read_csv(folder / "benchmark_pair_information.csv")
    assert set(information["network"]) == set(benchmark.DEVELOPMENT)  # no held-out network chooses a correction
    assert set(information["source"]) == {"network", "forecast's synthetic tables"}
    errors = pd.read_csv(folder / "benchmark_forecast_development.csv")
    assert set(errors["dataset"]) == set(benchmark.DEVELOPMENT)
    # the synthetic truths are the forecast's: asia's schema (8 columns), about three neighbours per node
    network, synthetic = adjacent_pair_information("asia", n=500, draws=4, rng=3)
    assert network["edges"] == 8 and 8 <= synthetic["edges"] / 4 <= 16


