"""dpcd: differentially private causal discovery.

A reproducible research compendium and library re-implementing five papers on
differentially private causal discovery (EM-PC, Priv-PC, PCD, private ANM, CURATE)
on one PC engine, one set of conditional-independence tests and one privacy ledger.
"""

__version__ = "0.1.0"

from .release import discover  # noqa: E402  (the module behind it is dpcd.release)
