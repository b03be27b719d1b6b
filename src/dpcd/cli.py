"""Command line of the library: ``python -m dpcd <command>`` (also installed as ``dpcd``).

Commands
    discover    a user's CSV + public schema -> a differentially private causal graph + privacy report
    schema      draft a schema from a CSV (read from the private data: to be checked before use)
    forecast    forecast each algorithm's accuracy at given budgets from synthetic data (reads no data)

Exit status: 0 on success, 1 when a release fails after its checks, 2 on bad
input (one line on stderr, nothing written). The papers' notebooks have their
own command line, ``python -m dpcd_papers reproduce|report``.

>>> build_parser().parse_args(["schema", "data.csv"]).bins
4
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .forecast import MIN_EXPECTED_F1
from .preparation import RELEASE_ALPHA
from .release.api import EPSILON_REFUSE
from .release.html import FORECAST_CAUTION

__all__ = ["main", "build_parser", "OneLineParser", "run", "EXIT_FAILURE", "EXIT_USAGE"]

EXIT_FAILURE = 1
EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())}\n")


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None, *,
        failures: tuple[type[BaseException], ...] = ()) -> int:
    """Parse ``argv``, call the chosen command's handler and turn errors into one line and an exit status.

    ``failures`` are exception types that mean "the work failed" (exit 1);
    bad input (``ValueError``, ``TypeError``, a missing file) exits 2.
    """
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.error(f"choose a command (see {parser.prog} --help)")
    try:
        return int(args.handler(args))
    except failures as error:
        print(f"{parser.prog} {args.command}: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_FAILURE
    except (ValueError, TypeError, FileNotFoundError, NotADirectoryError) as error:
        print(f"{parser.prog} {args.command}: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{parser.prog} {args.command}: interrupted", file=sys.stderr)
        return 130


def _folder(path: str) -> str:
    """``path`` as a folder in messages: one trailing separator, whichever the user typed (``out/`` or ``out``)."""
    return os.path.join(os.path.normpath(path), "")


def _discover(args: argparse.Namespace) -> int:
    from .release import ClusterTable, Output, ReleaseOptions, discover

    if args.schema is None:
        print("dpcd discover: error: a public schema is required (--schema schema.json): draft one with "
              f"`dpcd schema {args.data} > schema.json`, check it against your data dictionary, then pass it",
              file=sys.stderr)
        return EXIT_USAGE
    out = args.out
    if out is None:
        stem = os.path.splitext(os.path.basename(args.data))[0] or "data"
        out = f"{stem}-graph"
    try:
        options = ReleaseOptions(alpha=args.alpha, max_order=args.max_order, forecast_repetitions=args.forecast,
                                 delimiter=args.delimiter, dependence=args.dependence, force=args.force)
        data = args.data if args.scheduler is None else ClusterTable(args.data, scheduler=args.scheduler)
        found = discover(data, schema=args.schema, epsilon=args.epsilon, delta=args.delta,
                         algorithm=args.algorithm, relation=args.relation, rng=args.seed,
                         out=Output(out, overwrite=args.overwrite), progress=None if args.progress else False,
                         options=options)
    except RuntimeError as error:
        print(f"dpcd discover: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_FAILURE
    if found.quality:
        print("data quality — what the schema's rules did to your values (read from your data without noise: for "
              "you only, never written into the release):", file=sys.stderr)
        for line in found.quality:
            print(f"  {line}", file=sys.stderr)
        print(f"  `dpcd schema {args.data} --check {args.schema}` gives the counts per column; fix the file or the "
              "schema and run again if a rule changed answers it should not", file=sys.stderr)
    privacy = found.privacy
    if found.auto_selected:
        how = ("by a forecast on synthetic data of the schema's shape (public inputs only)"
               if args.relation == "replace" else "from the schema and the relation (n is protected: no forecast)")
        print(f"algorithm auto: picked {found.label} ({found.algorithm}) {how}")
    guarantee, spent = privacy["guarantee"], privacy["spent_this_run"]["totals"]["tight"]
    edges = found.graph.to_undirected().number_of_edges()
    print(f"{found.label}: {found.graph_type} with {found.graph.number_of_nodes()} nodes and {edges} edges; "
          f"guarantee epsilon={guarantee['epsilon']:.4g}, delta={guarantee['delta']:.3g} under "
          f"{guarantee['relation']} (requested epsilon={args.epsilon:g}, delta={args.delta:g}); "
          f"this run spent epsilon={spent['epsilon']:.4g}")
    alpha = privacy["assumed_public"]["algorithm"]["parameters"].get("alpha")
    if alpha is not None:
        print(f"CI tests at alpha={alpha:g} (two-sided; recorded in privacy.json)")
    for warning in found.warnings:
        print(f"warning: {warning}")
    if found.headline and not any(w.startswith(found.headline) for w in found.warnings):
        print(found.headline)
    print(f"wrote {_folder(out)}: " + ", ".join(sorted(p.name for p in found.files.values())))
    return 0


def _check(args: argparse.Namespace) -> int:
    import pandas as pd

    from .release import read_table
    from .release.tables import data_quality
    from .schema import Schema

    schema = Schema.load(args.check)  # a draft may be checked too
    frame = read_table(args.data, delimiter=args.delimiter)
    table = schema.check(frame)
    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(table.to_string(index=False))
    absent = [c for c in frame.columns if c not in schema.names]
    print(f"{len(frame)} records read; {frame.attrs.get('blank_lines', 0)} blank lines skipped (not records)")
    if absent:
        print(f"columns in the file but not in the schema (discover stops on them): {absent[:10]}")
    lost = table[table["to_fill"] > 0]
    for _, row in lost.iterrows():
        if row["to_fill"] == len(frame) and len(frame):
            print(f"column {row['column']!r}: every cell falls to the fill; check its categories or bounds")
    for line in data_quality(frame, schema):
        print(line)
    print("dpcd schema --check: these counts are read from the private values without noise; they are for you, "
          "never for publication.", file=sys.stderr)
    return 0


def _schema(args: argparse.Namespace) -> int:
    from .release import read_table
    from .schema import draft_schema

    if args.check is not None:
        return _check(args)
    draft = draft_schema(read_table(args.data, delimiter=args.delimiter), bins=args.bins)
    text = draft.dumps()
    if args.out is None:
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    print("dpcd schema: this DRAFT is read from the private data: the categories and bounds are the values "
          "observed in the file. Check every column against public knowledge (a data dictionary), replace "
          "observed bounds by public limits, and delete the \"draft\" entry before `dpcd discover` will use it.",
          file=sys.stderr)
    return 0


def _budgets(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"epsilon must be numbers separated by commas, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("epsilon needs at least one number")
    return values


def _forecast(args: argparse.Namespace) -> int:
    import pandas as pd

    from .forecast import forecast as make_forecast
    from .privacy.relation import relation as as_relation

    def progress(text: str) -> None:
        if args.progress:
            print(f"dpcd forecast: {text} ...", file=sys.stderr, flush=True)

    forecast = make_forecast(args.schema, n=args.n, epsilon=args.epsilon, delta=args.delta, relation=args.relation,
                             algorithms=args.algorithm, alpha=args.alpha, max_order=args.max_order,
                             repetitions=args.repetitions, rng=args.seed, time_budget=args.time_budget or None,
                             progress=progress, dependence=args.dependence)
    table = forecast.table
    ok = table[table["status"] == "ok"]
    shown = ok[["label", "epsilon", "runs", "skeleton_f1", "skeleton_f1_low", "skeleton_f1_high", "random_f1_high",
                "lift", "cpdag_f1", "edges", "seconds"]].copy()
    shown.insert(1, "auto", ok["auto"].map({True: "*", False: ""}))
    shown = shown.rename(columns={"skeleton_f1": "skel_F1", "skeleton_f1_low": "10%", "skeleton_f1_high": "90%",
                                  "random_f1_high": "random_90%", "cpdag_f1": "cpdag_F1"})
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.3g}") if len(shown) else "no algorithm ran")
    for _, row in table[table["status"] != "ok"].iterrows():
        print(f"{row['label']} at epsilon={row['epsilon']:g}: {row['status']}")
    if forecast.auto is not None:
        why = ("" if as_relation(forecast.relation).n_public else
               " (by its fixed preference: under add/remove n is protected, so discover makes no forecast)")
        print(f"* algorithm auto would pick {forecast.auto}{why}")
    for eps in sorted(set(table["epsilon"])):
        best = forecast.best(eps)
        if best is not None:
            print(f"epsilon={eps:g}: best forecast {best['label']}, skeleton F1 {best['skeleton_f1']:.2f} against "
                  f"{best['random_f1']:.2f} for a random graph with as many edges: {best['verdict']}")
    print(forecast.statement)
    print(FORECAST_CAUTION)
    if args.out is not None:
        import matplotlib

        matplotlib.use("Agg")
        from .release.drawing import save_figure

        os.makedirs(args.out, exist_ok=True)
        table.to_csv(os.path.join(args.out, "forecast.csv"), index=False)
        save_figure(forecast.plot(), args.out, "forecast")
        print(f"wrote {_folder(args.out)}: forecast.csv, forecast.png, forecast.svg")
    return 0


def _delimiter(text: str) -> str:
    """``--delimiter``: one character, or ``tab`` (or ``\\t``) for a tab, which a shell cannot easily pass."""
    return "\t" if text in ("tab", "\\t") else text


def _repetitions(text: str) -> int | str:
    """``--repetitions``: a positive integer or ``auto``."""
    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}")
    return value


def _release_names(releasable: bool = True) -> list[str]:
    """The registry's algorithms a release can use (or, ``releasable=False``, those it refuses), in the registry's
    order: the command line's lists of names come from here, never typed out."""
    from .registry import ALGORITHMS, release_refusal

    return [name for name, spec in ALGORITHMS.items() if (release_refusal(spec) is None) == releasable]


def build_parser() -> argparse.ArgumentParser:
    """The ``dpcd`` argument parser (one subparser per command)."""
    parser = OneLineParser(
        prog="dpcd",
        description="Differentially private causal discovery: release a causal graph of your own data under a "
                    "public schema and a total (epsilon, delta).",
    )
    parser.add_argument("--version", action="version", version=f"dpcd {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)

    disc = commands.add_parser(
        "discover", help="release a differentially private causal graph of your own CSV",
        description="Read DATA.csv under a public schema (--schema), run a private causal discovery algorithm at "
                    "a total (epsilon, delta) and write graph.json, graph.graphml, graph.dot, graph.png, "
                    "privacy.json and report.html (one page with the graph, the privacy statement and a forecast) "
                    "into --out.")
    disc.add_argument("data", metavar="DATA",
                      help="CSV file with a header row, one column per variable; or a Parquet or Arrow IPC / Feather "
                           "file (.parquet, .pq, .feather, .arrow, .ipc), or a folder of such parts; read in chunks")
    disc.add_argument("--schema", default=None, metavar="SCHEMA.json",
                      help="the public schema: column kinds, categories and bounds (draft one with `dpcd schema`)")
    disc.add_argument("--algorithm", default="auto", metavar="NAME",
                      help=f"private algorithm ({', '.join(_release_names())}) or auto (default: the best forecast "
                           "on synthetic data of the schema's shape; reads no data). The registry's "
                           f"{', '.join(_release_names(releasable=False))} cannot make a release (no DP guarantee "
                           "or a delta of at least 1/n)")
    disc.add_argument("--relation", default="replace", choices=("replace", "add/remove"),
                      help="neighbouring relation of the guarantee: replace one record, n public (default), or "
                           "add/remove one record, n protected")
    disc.add_argument("--epsilon", type=float, required=True, metavar="E", help="total privacy budget epsilon > 0")
    disc.add_argument("--delta", type=float, default=1e-6, metavar="D",
                      help="total delta in (0, 1/n) (default 1e-6; pure-DP algorithms spend none)")
    disc.add_argument("--alpha", type=float, default=RELEASE_ALPHA, metavar="A",
                      help=f"two-sided significance level of the CI tests, the same for every algorithm (default "
                           f"{RELEASE_ALPHA:g}; recorded in privacy.json)")
    disc.add_argument("--force", action="store_true",
                      help="release even when the forecast says the graph is not worth having (no better than chance "
                           f"or expected skeleton F1 below {MIN_EXPECTED_F1:g}) or epsilon is above "
                           f"{EPSILON_REFUSE:g}; the page then leads with the warning")
    disc.add_argument("--seed", type=int, default=None, metavar="S",
                      help="seed of the algorithm's noise, for reproducible experiments only: whoever knows it can "
                           "undo the guarantee (default: fresh operating-system entropy, as a release needs)")
    disc.add_argument("--out", default=None, metavar="DIR", help="output folder (default: <DATA>-graph); must be new or empty")
    disc.add_argument("--max-order", type=int, default=None, metavar="K", help="largest conditioning-set size")
    disc.add_argument("--overwrite", action="store_true", help="replace the contents of a non-empty --out")
    disc.add_argument("--forecast", type=int, default=3, metavar="R",
                      help="most synthetic runs of the forecast shown on report.html (default 3, fewer for costly runs by "
                           "public sizes; 0: none; reads no data)")
    disc.add_argument("--delimiter", type=_delimiter, default=",", metavar="C",
                      help="field separator of DATA.csv (default ','; 'tab' for a tab)")
    disc.add_argument("--dependence", default="linear", choices=("linear", "nonlinear"),
                      help="model of numeric synthetic data in the forecasts, and where GCM-PC's feature basis "
                           "turns sparse: linear-Gaussian (default) or PCD's nonlinear additive-noise model; your "
                           "public statement about the data, never read from it")
    disc.add_argument("--scheduler", default=None, metavar="ADDRESS",
                      help="read and encode DATA on the Dask cluster whose scheduler is at ADDRESS "
                           "(tcp://host:8786), part by part, by the same rules; every worker must be able to read "
                           "DATA; the release is the one made on this machine (needs dpcd[dask])")
    disc.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    disc.set_defaults(handler=_discover)

    fc = commands.add_parser(
        "forecast", help="forecast each algorithm's accuracy at your budgets from synthetic data (reads no data)",
        description="Run every applicable private algorithm on synthetic data of the schema's shape (random DAGs "
                    "over its columns and categories/bounds, N rows) at each budget and print the expected skeleton "
                    "and CPDAG F1, edges and run time, with the algorithm auto would pick. No data file is read and "
                    "no privacy budget is spent.")
    fc.add_argument("--schema", required=True, metavar="SCHEMA.json", help="the public schema")
    fc.add_argument("--n", type=int, required=True, metavar="N",
                    help="number of rows of the release (under add/remove: a public guess, never the true n)")
    fc.add_argument("--epsilon", type=_budgets, required=True, metavar="E1,E2,...", help="total budgets to compare")
    fc.add_argument("--delta", type=float, default=1e-6, metavar="D", help="total delta (default 1e-6)")
    fc.add_argument("--relation", default="replace", choices=("replace", "add/remove"),
                    help="neighbouring relation of the guarantee (default replace)")
    fc.add_argument("--algorithm", action="append", default=None, metavar="NAME",
                    help=f"forecast only this algorithm (repeatable; default every applicable one): "
                         f"{', '.join(_release_names())}")
    fc.add_argument("--alpha", type=float, default=RELEASE_ALPHA, metavar="A",
                    help=f"two-sided significance level of the CI tests (default {RELEASE_ALPHA:g})")
    fc.add_argument("--max-order", type=int, default=None, metavar="K", help="largest conditioning-set size")
    fc.add_argument("--repetitions", type=_repetitions, default=10, metavar="R",
                    help="most synthetic data sets per algorithm and budget (default 10); 'auto': the count "
                         "discover's auto runs, from public sizes (with --time-budget 0, its very forecast)")
    fc.add_argument("--time-budget", type=float, default=30.0, metavar="SECONDS",
                    help="no new repetition starts after this many seconds per algorithm and budget (default 30; "
                         "0: no budget)")
    fc.add_argument("--no-progress", dest="progress", action="store_false", help="no progress lines on stderr")
    fc.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the synthetic data and the noise")
    fc.add_argument("--dependence", default="linear", choices=("linear", "nonlinear"),
                    help="model of numeric synthetic data, and where GCM-PC's feature basis turns sparse: "
                         "linear-Gaussian (default) or PCD's nonlinear additive-noise model (your public "
                         "statement about the data)")
    fc.add_argument("--out", default=None, metavar="DIR", help="also write forecast.csv and forecast.png/svg into DIR")
    fc.set_defaults(handler=_forecast)

    sch = commands.add_parser(
        "schema", help="draft a schema from a CSV (read from the private data: check it before use)",
        description="Print a DRAFT schema read from DATA.csv: column kinds, observed categories and observed "
                    "bounds. It is read from the private data; check every entry against public knowledge and "
                    "delete its 'draft' entry before `dpcd discover` will accept it.")
    sch.add_argument("data", metavar="DATA", help="CSV file with a header row, or a Parquet or Feather file or folder")
    sch.add_argument("--bins", type=int, default=4, metavar="B",
                     help="equal-width bins of a numeric column in categorical algorithms (default 4)")
    sch.add_argument("--out", default=None, metavar="FILE", help="write to FILE instead of standard output")
    sch.add_argument("--check", default=None, metavar="SCHEMA.json",
                     help="instead of drafting, count per column the cells of DATA.csv that SCHEMA.json's rules would "
                          "send to the fill or clamp, and the blank lines skipped (for you only: no noise)")
    sch.add_argument("--delimiter", type=_delimiter, default=",", metavar="C",
                      help="field separator of DATA.csv (default ','; 'tab' for a tab)")
    sch.set_defaults(handler=_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``dpcd`` / ``python -m dpcd``; returns the exit status."""
    return run(build_parser(), argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
