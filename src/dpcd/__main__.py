"""``python -m dpcd`` runs the command line (see :mod:`dpcd.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
