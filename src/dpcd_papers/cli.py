"""Command line of the compendium: ``python -m dpcd_papers <command>`` (also installed as ``dpcd-papers``).

Commands
    reproduce   run the notebooks with papermill (``--profile``, ``--only``, ``--jobs``, ``--out``)
    report      gather every ``<out>/*/comparison.csv`` into ``<out>/REPORT.md``
    grade       run submitted tutorial notebooks and collect their checks into ``<out>/grades.csv``

Exit status: 0 on success, 1 when a notebook fails, 2 on bad input (one line on stderr).

>>> build_parser().parse_args(["reproduce", "--profile", "smoke"]).jobs
1
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from dpcd import __version__
from dpcd.cli import OneLineParser, run

__all__ = ["main", "build_parser"]


def _reproduce(args: argparse.Namespace) -> int:
    from .runner import reproduce

    reproduce(profile=args.profile, only=args.only, jobs=args.jobs, out=args.out, notebooks_dir=args.notebooks,
              kernel_name=args.kernel, keep_going=args.keep_going, recompute=args.recompute, parameters={name: parse_value(value) for name, value in args.parameter or []})
    return 0


def parse_value(text: str) -> object:
    """A ``-p NAME VALUE`` value as papermill reads it: a JSON literal (number, true/false, null, list) or a string.

    >>> parse_value("17"), parse_value("0.5"), parse_value("true"), parse_value("asia")
    (17, 0.5, True, 'asia')
    """
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def _report(args: argparse.Namespace) -> int:
    from .reporting import build_report, summary_line, verdict_counts
    from .runner import default_out_dir

    out = default_out_dir() if args.out is None else args.out
    path = build_report(out)
    print(f"wrote {path}: {summary_line(verdict_counts(out))}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from .grading import GRADES, describe, grade

    grades = grade(args.submissions, args.out, profile=args.profile, kernel_name=args.kernel)
    print(f"wrote {os.path.join(args.out, GRADES)}: {describe(grades)}")
    return 0


def _sample(args: argparse.Namespace) -> int:
    from .large_sample import write_sample

    data = write_sample(args.network, args.rows, args.out, rows_per_part=args.rows_per_part, seed=args.seed,
                        format=args.format)
    print(f"wrote {data}: {args.rows:,} records of {args.network}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``dpcd_papers`` argument parser (one subparser per command)."""
    parser = OneLineParser(prog="dpcd_papers",
                           description="The dpcd compendium: reproduce the five papers' tables and figures.")
    parser.add_argument("--version", action="version", version=f"dpcd {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)

    rep = commands.add_parser("reproduce", help="run the notebooks with papermill and write figures/tables")
    rep.add_argument("--profile", choices=("smoke", "quick", "full"), default="quick",
                     help="grid size: smoke (seconds), quick (default, minutes), full (the papers' grids)")
    rep.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                     help="run only these notebooks (names without .ipynb)")
    rep.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel worker processes per notebook")
    rep.add_argument("--out", default=None, metavar="DIR",
                     help="output folder (default: results/ beside the project's notebooks; 'figures' refreshes the "
                          "committed results)")
    rep.add_argument("--notebooks", default=None, metavar="DIR",
                     help="folder of the notebooks (default: the project's notebooks/)")
    rep.add_argument("--kernel", default=None, metavar="NAME",
                     help="installed Jupyter kernelspec to use (default: this Python interpreter)")
    rep.add_argument("--keep-going", action="store_true", help="run the other notebooks after a failure")
    rep.add_argument("--recompute", action="store_true",
                     help="reuse no cached or committed grid cell: compute every cell anew")
    rep.add_argument("-p", "--parameter", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a notebook parameter, papermill style (repeatable), e.g. -p seed 3; VALUE is read as a "
                          "JSON literal (17, 0.5, true, null) or else as a string")
    rep.set_defaults(handler=_reproduce)

    report = commands.add_parser("report", help="collect every comparison.csv into REPORT.md")
    report.add_argument("--out", default=None, metavar="DIR",
                        help="output folder (default: results/, as for reproduce)")
    report.set_defaults(handler=_report)

    sample = commands.add_parser(
        "sample", help="write a large forward sample of a bnlearn network in parts (Parquet or CSV) with its schema, "
                       "for the release path's scale benchmark")
    sample.add_argument("network", metavar="NETWORK", help="a bundled bnlearn network (e.g. alarm)")
    sample.add_argument("--rows", type=int, required=True, metavar="N", help="number of records")
    sample.add_argument("--out", required=True, metavar="PATH",
                        help="a new folder of Parquet parts, or (--format csv) PATH.csv; the schema goes to PATH.schema.json")
    sample.add_argument("--rows-per-part", type=int, default=1_000_000, metavar="R",
                        help="records per part, the memory bound of the writing (default 1 000 000)")
    sample.add_argument("--format", choices=("parquet", "csv"), default="parquet", help="file format")
    sample.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the sample (default 0)")
    sample.set_defaults(handler=_sample)

    grading = commands.add_parser(
        "grade", help="run each submitted tutorial notebook (solutions off) and write <out>/grades.csv: one row per "
                      "student and exercise, and a row for a student whose notebook failed or wrote no checks")
    grading.add_argument("submissions", metavar="SUBMISSIONS",
                         help="folder of the submitted notebooks, one <student>.ipynb per student")
    grading.add_argument("--out", required=True, metavar="DIR",
                         help="output folder (created): DIR/<student>/ and DIR/grades.csv")
    grading.add_argument("--profile", choices=("smoke", "quick", "full"), default="quick",
                         help="the profile the students worked in (default: quick, the notebook's default)")
    grading.add_argument("--kernel", default=None, metavar="NAME",
                         help="installed Jupyter kernelspec to use (default: this Python interpreter)")
    grading.set_defaults(handler=_grade)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m dpcd_papers``; returns the exit status."""
    from .runner import NotebookError

    return run(build_parser(), argv, failures=(NotebookError,))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
