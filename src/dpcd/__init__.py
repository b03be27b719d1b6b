"""dpcd: differentially private causal discovery — the library (the papers' compendium is ``dpcd_papers``).

``schema``, ``release`` (:func:`discover`), ``cli``: a data holder's release under a public :class:`Schema`
``discovery``: one PC engine and every algorithm; ``bivariate``: private ANM; ``ci``: the CI tests
``privacy``: mechanisms, sensitivities, sieve, ledger, relations and plans; ``registry``: the algorithm table
``audit``: empirical lower bounds on ε; ``datasets``, ``graphs``, ``kernels``, ``validation``: shared foundations.
"""

from ._version import __version__
from .release.api import discover
from .schema import Schema

__all__ = ["__version__", "discover", "Schema"]
