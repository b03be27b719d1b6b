"""dpcd_papers: the compendium that re-runs five papers on the :mod:`dpcd` library (dpcd never imports it).

``em_pc``, ``priv_pc``, ``pcd``, ``private_anm``, ``curate``: one module per paper (its grids and cells)
``benchmark``: every algorithm at one (ε, δ); ``realdata``: Adult, Sachs and Tübingen pairs from ``data/``
``experiments``: ``run_grid`` with seeds, cache, joblib or Dask; ``runner``: the notebooks under papermill
``reporting``, ``plotting``: tables, paper-vs-reproduced comparisons, REPORT.md, house-style figures
``cli``: ``python -m dpcd_papers reproduce | report``; the notebooks in ``notebooks/`` call these modules.
"""


def _import_tqdm_auto_quietly() -> None:
    """In a Jupyter kernel without ipywidgets, import ``tqdm.auto`` once with its "IProgress not found" warning off.

    pgmpy and causal-learn, which the notebooks use through ``dpcd``, import ``tqdm.auto``; in a kernel without
    ipywidgets it falls back to the console bar (``tqdm.std``) and prints a ``TqdmWarning`` into the first output
    of every executed notebook. The fallback is what the notebooks want and the warning says nothing about them:
    importing the module here, before them, changes nothing else (with ipywidgets it picks the widget bar as it
    would have; outside a kernel it is not imported at all), and no warning filter is left installed.
    """
    import sys

    if "ipykernel" not in sys.modules or "tqdm.autonotebook" in sys.modules:
        return
    import warnings

    try:
        from tqdm import TqdmWarning
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found", category=TqdmWarning)
        import tqdm.auto  # noqa: F401


_import_tqdm_auto_quietly()
