"""Command line: ``python -m dpcd <command>`` (also installed as ``dpcd``).

Commands
    reproduce   run the notebooks with papermill (``--profile``, ``--only``, ``--jobs``, ``--out``)
    report      gather every ``<out>/*/comparison.csv`` into ``<out>/REPORT.md``
    discover    a user's CSV -> a differentially private causal graph + privacy report

Exit status: 0 on success, 1 when a notebook fails, 2 on bad input (one line on
stderr, nothing written).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__

__all__ = ["main", "build_parser"]

EXIT_FAILURE = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())}\n")


def _reproduce(args: argparse.Namespace) -> int:
    from .runner import reproduce

    reproduce(
        profile=args.profile,
        only=args.only,
        jobs=args.jobs,
        out=args.out,
        notebooks_dir=args.notebooks,
        kernel_name=args.kernel,
        keep_going=args.keep_going,
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    from .reporting import build_report

    from .reporting import VERDICTS, verdict_counts

    path = build_report(args.out)
    total = verdict_counts(args.out).iloc[-1]
    print(f"wrote {path}: " + ", ".join(f"{int(total[v])} {v}" for v in VERDICTS))
    return 0


def _discover(args: argparse.Namespace) -> int:
    from .release import discover

    out = args.out
    if out is None:
        stem = os.path.splitext(os.path.basename(args.data))[0] or "data"
        out = f"{stem}-graph"
    try:
        found = discover(
            args.data,
            algorithm=args.algorithm,
            epsilon=args.epsilon,
            delta=args.delta,
            alpha=args.alpha,
            rng=args.seed,
            out=out,
            types=args.types,
            max_order=args.max_order,
            overwrite=args.overwrite,
            progress=None if args.progress else False,
        )
    except RuntimeError as error:
        print(f"dpcd discover: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_FAILURE
    privacy = found.privacy
    if found.auto_selected:
        print(f"algorithm auto: picked {found.label} ({found.algorithm}) for {found.data_info['kind']} data")
    achieved = privacy["achieved"]
    edges = found.graph.to_undirected().number_of_edges()
    print(f"{found.label}: {found.graph_type} with {found.graph.number_of_nodes()} nodes and {edges} edges; "
          f"privacy spent epsilon={achieved['epsilon']:.4g}, delta={achieved['delta']:.3g} "
          f"(tight accountant; requested epsilon={args.epsilon:g}, delta={args.delta:g}; "
          f"{privacy['neighbouring']} neighbouring)")
    print(f"wrote {out}/: " + ", ".join(sorted(p.name for p in found.files.values())))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``dpcd`` argument parser (one subparser per command)."""
    parser = _Parser(
        prog="dpcd",
        description="Differentially private causal discovery: reproduce the papers' tables and figures.",
    )
    parser.add_argument("--version", action="version", version=f"dpcd {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    rep = commands.add_parser("reproduce", help="run the notebooks with papermill and write figures/tables")
    rep.add_argument("--profile", choices=("smoke", "quick", "full"), default="quick",
                     help="grid size: smoke (seconds), quick (default, minutes), full (the papers' grids)")
    rep.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                     help="run only these notebooks (names without .ipynb)")
    rep.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel worker processes per notebook")
    rep.add_argument("--out", default="figures", metavar="DIR", help="output folder (default: figures)")
    rep.add_argument("--notebooks", default=None, metavar="DIR",
                     help="folder of the notebooks (default: the project's notebooks/)")
    rep.add_argument("--kernel", default=None, metavar="NAME",
                     help="installed Jupyter kernelspec to use (default: this Python interpreter)")
    rep.add_argument("--keep-going", action="store_true", help="run the other notebooks after a failure")
    rep.set_defaults(handler=_reproduce)

    report = commands.add_parser("report", help="collect every comparison.csv into REPORT.md")
    report.add_argument("--out", default="figures", metavar="DIR", help="output folder (default: figures)")
    report.set_defaults(handler=_report)

    disc = commands.add_parser(
        "discover", help="release a differentially private causal graph of your own CSV",
        description="Load DATA.csv (header row; categorical or numeric columns), run a private causal discovery "
                    "algorithm at a total (epsilon, delta) and write graph.json, graph.graphml, graph.dot, "
                    "graph.png and privacy.json into --out.")
    disc.add_argument("data", metavar="DATA.csv", help="CSV file with a header row, one column per variable")
    disc.add_argument("--algorithm", default="auto", metavar="NAME",
                      help="private algorithm (em_pc, lapmech, priv_pc, svt_pc, curate, privpc_star, noleaks, "
                           "curate_sb) or auto (default: picked from the data type)")
    disc.add_argument("--epsilon", type=float, required=True, metavar="E", help="total privacy budget epsilon > 0")
    disc.add_argument("--delta", type=float, default=1e-6, metavar="D",
                      help="total delta in (0, 1/n) (default 1e-6; pure-DP algorithms spend none)")
    disc.add_argument("--alpha", type=float, default=0.05, metavar="A", help="significance level of the CI tests")
    disc.add_argument("--seed", type=int, default=0, metavar="S", help="random seed of the algorithm's noise")
    disc.add_argument("--out", default=None, metavar="DIR", help="output folder (default: <DATA>-graph); must be new or empty")
    disc.add_argument("--types", default=None, metavar="T",
                      help="categorical | numeric | COL=KIND,COL=KIND (default: detected per column)")
    disc.add_argument("--max-order", type=int, default=None, metavar="K", help="largest conditioning-set size")
    disc.add_argument("--overwrite", action="store_true", help="replace the contents of a non-empty --out")
    disc.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    disc.set_defaults(handler=_discover)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpcd`` / ``python -m dpcd``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.error("choose a command: reproduce, report or discover (see dpcd --help)")
    from .runner import NotebookError

    try:
        return int(args.handler(args))
    except NotebookError as error:
        print(f"dpcd {args.command}: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_FAILURE
    except (ValueError, TypeError, FileNotFoundError, NotADirectoryError) as error:
        print(f"dpcd {args.command}: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"dpcd {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
