"""``python -m dpcd_papers`` runs the compendium's command line (see :mod:`dpcd_papers.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
