"""Non-private PC (G², α = 0.01) on alarm with 100 000 rows: ours vs causal-learn, same process."""

import numpy as np
import pytest
from causallearn.search.ConstraintBased.PC import pc as cl_pc

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc


@pytest.mark.benchmark
def test_pc_alarm_100k_against_causal_learn(report, best_of):
    data = load_bnlearn("alarm", 100_000, rng=0).data
    array = data.to_numpy()
    ours, t_ours = best_of(lambda: pc(data, ci_test="g2", alpha=0.01), repeat=3)
    theirs, t_theirs = best_of(lambda: cl_pc(array, 0.01, "gsq", stable=True, show_progress=False), repeat=1)
    cl_adj = theirs.G.graph != 0
    names = list(data.columns)
    cl_skeleton = {frozenset((names[i], names[j])) for i, j in zip(*np.nonzero(np.triu(cl_adj)))}
    same = cl_skeleton == set(ours.skeleton)
    report("PC alarm n=100k G2", ours_s=t_ours, causal_learn_s=t_theirs, speedup=t_theirs / t_ours,
           tests=ours.n_tests, same_skeleton=same)
    assert same
