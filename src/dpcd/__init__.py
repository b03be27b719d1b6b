"""dpcd: differentially private causal discovery — the library (the papers' compendium is ``dpcd_papers``).

``schema``, ``release`` (:func:`discover`), ``cli``: a data holder's release under a public :class:`Schema`
``forecast``: expected accuracy from synthetic data of the schema's shape; ``preparation``: a release's public plan
``discovery``: one PC engine and every algorithm, each a ``PrivateAlgorithm``; ``bivariate``: private ANM;
``ci``: the CI tests; ``privacy``: mechanisms, sensitivities, sieve, ledger, relations, worst cases and
calibration; ``registry``: the algorithm table
``audit``: empirical lower bounds on ε; ``datasets``, ``graphs``, ``kernels``, ``validation``: shared foundations.
"""

from ._version import __version__
from .release.api import Output, ReleaseOptions, discover
from .schema import Schema

__all__ = ["__version__", "discover", "ReleaseOptions", "Output", "Schema"]
