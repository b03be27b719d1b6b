"""Non-private PC (G², α = 0.01) on alarm: ours against causal-learn and pgmpy, and against our plain code path.

Interleaved in one process. "plain" is the engine as it was before the speed work of the scale issue: every row
counted (no distinct rows with multiplicities), one process. Every line must give the same skeleton; with
``max_cond_vars`` at alarm's deepest order pgmpy's PC answers the same tests.
"""

import numpy as np
import pandas as pd
import pytest
from causallearn.search.ConstraintBased.PC import pc as cl_pc

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc


def _skeleton(adjacency, names):
    return {frozenset((names[i], names[j])) for i, j in zip(*np.nonzero(np.triu(adjacency)))}


@pytest.mark.benchmark
def test_pc_alarm_100k_against_causal_learn_pgmpy_and_our_plain_path(report, best_of):
    data = load_bnlearn("alarm", 100_000, rng=0).data
    names = list(data.columns)
    ours, t_ours = best_of(lambda: pc(data, ci_test="g2", alpha=0.01), repeat=3)
    plain, t_plain = best_of(lambda: pc(data, ci_test="g2", alpha=0.01, distinct=False), repeat=3)
    two, t_two = best_of(lambda: pc(data, ci_test="g2", alpha=0.01, n_jobs=2), repeat=3)
    theirs, t_cl = best_of(lambda: cl_pc(data.to_numpy(), 0.01, "gsq", stable=True, show_progress=False), repeat=1)
    from pgmpy.causal_discovery import PC as PgmpyPC

    frame = data.astype("category")
    pg, t_pg = best_of(lambda: PgmpyPC(ci_test="g_sq", significance_level=0.01, max_cond_vars=len(names) - 2,
                                       show_progress=False, n_jobs=1).fit(frame), repeat=1)
    pg_graph = getattr(pg, "skeleton_", None) or getattr(pg, "causal_graph_", None)
    pg_skeleton = {frozenset(map(str, e)) for e in pg_graph.edges()} if pg_graph is not None else None
    same = (_skeleton(theirs.G.graph != 0, names) == set(ours.skeleton) == set(plain.skeleton) == set(two.skeleton)
            and ours.sepsets == plain.sepsets == two.sepsets)
    report("PC alarm n=100k G2", ours_s=t_ours, plain_s=t_plain, two_processes_s=t_two, causal_learn_s=t_cl,
           pgmpy_s=t_pg, vs_plain=t_plain / t_ours, vs_causal_learn=t_cl / t_ours, vs_pgmpy=t_pg / t_ours,
           tests=ours.n_tests, distinct_rows=ours.info["distinct_rows"], same_skeleton=same,
           pgmpy_same=pg_skeleton == set(ours.skeleton) if pg_skeleton is not None else "n/a")
    assert same


@pytest.mark.benchmark
def test_pc_alarm_one_million_rows_against_our_plain_path(report, best_of):
    data = load_bnlearn("alarm", 1_000_000, rng=0).data
    ours, t_ours = best_of(lambda: pc(data, ci_test="g2", alpha=0.01), repeat=1)
    plain, t_plain = best_of(lambda: pc(data, ci_test="g2", alpha=0.01, distinct=False), repeat=1)
    same = ours.skeleton == plain.skeleton and ours.sepsets == plain.sepsets
    report("PC alarm n=1M G2", ours_s=t_ours, plain_s=t_plain, vs_plain=t_plain / t_ours, tests=ours.n_tests,
           distinct_share=float(len(pd.DataFrame(data).drop_duplicates()) / len(data)), same=same)
    assert same
