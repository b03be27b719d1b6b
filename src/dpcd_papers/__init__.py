"""dpcd_papers: the compendium that re-runs five papers on the :mod:`dpcd` library (dpcd never imports it).

``em_pc``, ``priv_pc``, ``pcd``, ``private_anm``, ``curate``: one module per paper (its grids and cells)
``benchmark``: every algorithm at one (ε, δ); ``realdata``: Adult, Sachs and Tübingen pairs from ``data/``
``experiments``: ``run_grid`` with seeds, cache, joblib or Dask; ``runner``: the notebooks under papermill
``reporting``, ``plotting``: tables, paper-vs-reproduced comparisons, REPORT.md, house-style figures
``cli``: ``python -m dpcd_papers reproduce | report``; the notebooks in ``notebooks/`` call these modules.
"""
