"""dpcd: differentially private causal discovery.

A reproducible research compendium and library re-implementing five papers on
differentially private causal discovery (EM-PC, Priv-PC, PCD, private ANM, CURATE)
on one PC engine, one set of conditional-independence tests and one privacy ledger.
A release of one's own data goes through a public :class:`Schema` and :func:`discover`.
"""

from ._version import __version__
from .release.api import discover
from .schema import Schema

__all__ = ["__version__", "discover", "Schema"]
