"""Real data shipped with the project: UCI Adult, Sachs flow cytometry, Tübingen pairs.

The raw files live gzip-compressed in the repository's ``data/`` directory
(``data/README.md`` gives their provenance, licences and checksums). Every
loader checks the SHA-256 of the uncompressed content against the constants
below before parsing, so a result is always computed from exactly the bytes the
README describes. Nothing is downloaded.

The data directory is ``<repository>/data``; set the environment variable
``DPCD_DATA_DIR`` to read the same files from elsewhere (e.g. an installed,
non-editable copy of the package).

References
----------
.. [adult] B. Becker and R. Kohavi. *Adult*. UCI Machine Learning Repository,
   1996. doi:10.24432/C5XW20.
.. [sachs] K. Sachs, O. Perez, D. Pe'er, D. A. Lauffenburger and G. P. Nolan.
   Causal protein-signaling networks derived from multiparameter single-cell
   data. *Science* 308(5721):523-529, 2005.
.. [tuebingen] J. M. Mooij, J. Peters, D. Janzing, J. Zscheischler and
   B. Schölkopf. Distinguishing cause from effect using observational data:
   methods and benchmarks. *JMLR* 17(32):1-102, 2016.
.. [xu2017] D. Xu, S. Yuan and X. Wu. Differential privacy preserving causal
   graph discovery. IEEE PAC 2017, Sec. VI-C.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import zlib
from functools import lru_cache

import networkx as nx
import numpy as np
import pandas as pd

from dpcd.datasets import Dataset

from ._io import DATA_DIR_ENV, data_dir

__all__ = [
    "DATA_DIR_ENV",
    "DataChecksumError",
    "data_dir",
    "load_adult",
    "load_adult_raw",
    "load_sachs",
    "load_tuebingen_pairs",
    "tuebingen_pair",
]

#: SHA-256 of the *uncompressed* content of every shipped file (path relative to
#: the data directory). ``data/README.md`` also lists the hashes of the .gz files.
SHA256 = {
    "adult/adult.data.gz":
        "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult/adult.test.gz":
        "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "adult/adult.names.gz":
        "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
    "sachs/cyto_full_data.csv.gz":
        "fc331dcd0bc1d8765986b88cd1d23dd5a3f52e4ffc299fdf96de9d522ddf01aa",
    "sachs/cyto_full_target.csv.gz":
        "398bc137b2669432ef12e0c57d3783fa876c1c7e2377577d3e75410f085485f6",
    "tuebingen/Tuebingen_pairs.csv.gz":
        "e3726459486cf50642de62ce4ceb35669100f6867bd564863b4663546c1393cf",
    "tuebingen/Tuebingen_targets.csv.gz":
        "a685bc4a610433a7b59f1deff71fb92333a4b1bb4764c6fec0603b6e559dba74",
}


class DataChecksumError(ValueError):
    """A shipped data file does not have the expected content (SHA-256 mismatch)."""


# --------------------------------------------------------------------------- files


def _read_verified(relpath: str) -> bytes:
    """Return the uncompressed bytes of ``data/<relpath>`` after checking its SHA-256."""
    base = data_dir()
    path = base / relpath
    if not path.is_file():
        source = (
            f"the directory set by {DATA_DIR_ENV}"
            if os.environ.get(DATA_DIR_ENV)
            else f"the repository's data directory (set {DATA_DIR_ENV} to use another one)"
        )
        raise FileNotFoundError(
            f"data file {relpath!r} not found: looked for {path} in {source}; "
            f"the directory must contain {relpath} as shipped with dpcd (see data/README.md)"
        )
    expected = SHA256[relpath]
    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise DataChecksumError(
            f"data file {path} is not a readable gzip file ({exc}); expected the "
            f"uncompressed content to have SHA-256 {expected}. Restore the file from the "
            f"repository or point {DATA_DIR_ENV} at an intact copy."
        ) from exc
    actual = hashlib.sha256(raw).hexdigest()
    if actual != expected:
        raise DataChecksumError(
            f"checksum mismatch for data file {path}: the uncompressed content has SHA-256 "
            f"{actual}, expected {expected}. The file was modified or replaced; restore it "
            f"from the repository or point {DATA_DIR_ENV} at an intact copy."
        )
    return raw


# --------------------------------------------------------------------------- Adult

#: Column names of adult.data / adult.test, as in adult.names (UCI order).
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip
_ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
_ADULT_N_TRAIN, _ADULT_N_TEST = 32_561, 16_281

#: The 14 variables of the case study (paper 000 reports p = 14 including income):
#: the UCI attributes without ``education-num``, which is a one-to-one recoding of
#: ``education``, plus ``income``.
ADULT_VARIABLES = [c for c in ADULT_COLUMNS if c != "education-num"]

_REST = "*"  # marks the group that takes every label not listed elsewhere

#: Numeric attributes: (inner cut points, labels). A value v gets the code
#: ``searchsorted(cuts, v, side="right")``, i.e. the bins are [.., c1), [c1, c2), ...
_ADULT_BINS: dict[str, tuple[list[int], list[str]]] = {
    "age": ([25, 45, 65], ["17-24", "25-44", "45-64", "65+"]),
    "fnlwgt": ([150_000, 250_000], ["<150000", "150000-249999", ">=250000"]),
    "capital-gain": ([1], ["0", ">0"]),
    "capital-loss": ([1], ["0", ">0"]),
    "hours-per-week": ([35, 41], ["<35", "35-40", ">40"]),
}

#: Categorical attributes: category -> original labels ('?' = missing in the UCI files).
_ADULT_GROUPS: dict[str, dict[str, list[str]]] = {
    "workclass": {
        "private": ["Private"],
        "self-employed": ["Self-emp-not-inc", "Self-emp-inc"],
        "government": ["Federal-gov", "Local-gov", "State-gov"],
        "not-working-or-unknown": ["Without-pay", "Never-worked", "?"],
    },
    "education": {
        "below-HS": ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th"],
        "HS-grad": ["HS-grad"],
        "some-college-or-associate": ["Some-college", "Assoc-voc", "Assoc-acdm"],
        "bachelors-or-higher": ["Bachelors", "Masters", "Prof-school", "Doctorate"],
    },
    "marital-status": {
        "married": ["Married-civ-spouse", "Married-AF-spouse"],
        "never-married": ["Never-married"],
        "formerly-married-or-spouse-absent": [
            "Divorced", "Separated", "Widowed", "Married-spouse-absent",
        ],
    },
    "occupation": {
        "professional-managerial": ["Exec-managerial", "Prof-specialty", "Tech-support"],
        "clerical-sales-service": [
            "Adm-clerical", "Sales", "Other-service", "Priv-house-serv",
            "Protective-serv", "Armed-Forces",
        ],
        "manual": [
            "Craft-repair", "Machine-op-inspct", "Transport-moving",
            "Handlers-cleaners", "Farming-fishing",
        ],
        "unknown": ["?"],
    },
    "relationship": {
        "spouse": ["Husband", "Wife"],
        "own-child": ["Own-child"],
        "not-in-family": ["Not-in-family"],
        "other": ["Unmarried", "Other-relative"],
    },
    "race": {
        "White": ["White"],
        "Black": ["Black"],
        "other": ["Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"],
    },
    "sex": {"Female": ["Female"], "Male": ["Male"]},
    "native-country": {
        "United-States": ["United-States"],
        "other": [_REST],
        "unknown": ["?"],
    },
    "income": {"<=50K": ["<=50K"], ">50K": [">50K"]},
}  # fmt: skip


def _adult_discretisation_record() -> dict[str, dict]:
    """The discretisation as plain data (for ``meta["discretisation"]``)."""
    record: dict[str, dict] = {}
    for column in ADULT_VARIABLES:
        if column in _ADULT_BINS:
            cuts, labels = _ADULT_BINS[column]
            record[column] = {
                "type": "numeric bins [lower, upper)",
                "cut_points": list(cuts),
                "categories": list(labels),
            }
        else:
            groups = _ADULT_GROUPS[column]
            record[column] = {
                "type": "categorical grouping",
                "categories": list(groups),
                "groups": {
                    name: ("every other label" if labels == [_REST] else list(labels))
                    for name, labels in groups.items()
                },
            }
    return record


def load_adult_raw() -> pd.DataFrame:
    """Both UCI Adult files as one table of original values (48 842 rows).

    Columns: the 15 of ``adult.names`` (:data:`ADULT_COLUMNS`) plus ``split``
    (``"train"`` for adult.data, ``"test"`` for adult.test). Numeric attributes are
    integers; categorical attributes are the original labels with surrounding
    spaces removed; missing values stay as the label ``"?"`` (present only in
    workclass, occupation and native-country). The trailing ``"."`` that adult.test
    puts on every income label is removed, so income is ``"<=50K"`` or ``">50K"``.
    """
    frames = []
    for split, relpath, skip, expected in (
        ("train", "adult/adult.data.gz", 0, _ADULT_N_TRAIN),
        # adult.test starts with the line "|1x3 Cross validator"
        ("test", "adult/adult.test.gz", 1, _ADULT_N_TEST),
    ):
        raw = _read_verified(relpath)
        frame = pd.read_csv(
            io.BytesIO(raw),
            names=ADULT_COLUMNS,
            header=None,
            skiprows=skip,
            skipinitialspace=True,
            skip_blank_lines=True,
            na_filter=False,
            dtype={c: "int64" for c in _ADULT_NUMERIC},
        )
        if len(frame) != expected:  # cannot happen with verified bytes; guards the parser
            raise ValueError(f"{relpath}: parsed {len(frame)} records, expected {expected}")
        frame["split"] = split
        frames.append(frame)
    data = pd.concat(frames, ignore_index=True)
    data["income"] = data["income"].str.rstrip(".")
    return data


def _codes_from_groups(values: pd.Series, groups: dict[str, list[str]]) -> np.ndarray:
    lookup: dict[str, int] = {}
    rest_code = None
    for code, labels in enumerate(groups.values()):
        for label in labels:
            if label == _REST:
                rest_code = code
            else:
                lookup[label] = code
    codes = values.map(lookup)
    if rest_code is not None:
        codes = codes.fillna(rest_code)
    if codes.isna().any():
        unknown = sorted(set(values[codes.isna()]))
        raise ValueError(f"column {values.name!r}: labels {unknown} have no category")
    return codes.to_numpy(dtype=np.int64)


def load_adult(*, discretise: bool = True) -> Dataset:
    """UCI Adult (adult.data + adult.test, all 48 842 records) as 14 discrete variables.

    This is the data of the case study of Xu, Yuan & Wu (2017), Sec. VI-C: "48842
    records with 14 attributes such as age, education, sex, occupation, and income
    ... we discretize each attribute's domain values into two to four categories"
    (p = 14 in the caption of their Fig. 1). The paper does not list the attributes
    or the cut points; the choices below fill that gap and are recorded in
    ``meta["discretisation"]``.

    Deviations and choices (the paper does not specify them):

    * **Variables.** UCI Adult has 14 attributes plus the income label, i.e. 15
      columns, while the paper counts 14 *including* income, so one attribute was
      left out. We leave out ``education-num``: it is a one-to-one recoding of
      ``education``, and two deterministically related nodes violate the
      faithfulness assumption the PC algorithm relies on. ``fnlwgt`` (the census
      sampling weight) is kept. The 14 variables are :data:`ADULT_VARIABLES`.
    * **Rows.** All 48 842 records are kept (the paper's n). Missing values
      (``"?"``; 2 799 in workclass, 2 809 in occupation, 857 in native-country)
      are not dropped: in occupation and native-country "unknown" is its own
      category; in workclass it shares the category "not-working-or-unknown"
      with Without-pay and Never-worked (31 records) to stay within four
      categories.
    * **Cut points** are fixed constants (round numbers; the age bands are the
      usual census bands), not computed from the data at load time, so the
      discretised domain does not depend on any record and can be treated as
      public, as the privacy analyses assume:

      - age: 17-24, 25-44, 45-64, 65+ (4)
      - fnlwgt: <150 000, 150 000-249 999, >=250 000 (3)
      - capital-gain, capital-loss: 0, >0 (2 each)
      - hours-per-week: <35 (part-time), 35-40, >40 (3)
    * **Groupings** of the categorical attributes:

      - workclass (4): private; self-employed (not-inc, inc); government
        (federal, state, local); not-working-or-unknown (Without-pay,
        Never-worked, ?)
      - education (4): below-HS (Preschool-12th); HS-grad;
        some-college-or-associate (Some-college, Assoc-voc, Assoc-acdm);
        bachelors-or-higher (Bachelors, Masters, Prof-school, Doctorate)
      - marital-status (3): married (civilian or armed-forces spouse);
        never-married; formerly-married-or-spouse-absent (Divorced, Separated,
        Widowed, Married-spouse-absent)
      - occupation (4): professional-managerial (Exec-managerial,
        Prof-specialty, Tech-support); clerical-sales-service (Adm-clerical,
        Sales, Other-service, Priv-house-serv, Protective-serv, Armed-Forces);
        manual (Craft-repair, Machine-op-inspct, Transport-moving,
        Handlers-cleaners, Farming-fishing); unknown (?)
      - relationship (4): spouse (Husband, Wife); own-child; not-in-family;
        other (Unmarried, Other-relative)
      - race (3): White; Black; other (Asian-Pac-Islander, Amer-Indian-Eskimo,
        Other)
      - sex (2); income (2: <=50K, >50K)
      - native-country (3): United-States; other (every other country);
        unknown (?)

    Parameters
    ----------
    discretise
        ``True`` (default): the coarse 2-4 category coding above.
        ``False``: the same 14 variables coded on their full original domains
        (categorical labels sorted alphabetically, ``"?"`` included; numeric
        attributes coded by their sorted distinct values, whose string forms are
        the ``categories``). Use :func:`load_adult_raw` for the original values.

    Returns
    -------
    Dataset
        ``data``: 48 842 x 14 integer codes 0..k-1; ``categories``: the labels of
        each code; ``kind="discrete"``; ``dag=None`` (Adult has no ground-truth
        graph; paper 000 uses the non-private PC estimate as reference).
    """
    if not isinstance(discretise, (bool, np.bool_)):
        raise TypeError(f"discretise must be True or False, got {type(discretise).__name__}")
    raw = load_adult_raw()
    columns: dict[str, np.ndarray] = {}
    categories: dict[str, list[str]] = {}
    for column in ADULT_VARIABLES:
        values = raw[column]
        if discretise and column in _ADULT_BINS:
            cuts, labels = _ADULT_BINS[column]
            columns[column] = np.searchsorted(np.asarray(cuts), values.to_numpy(), side="right")
            categories[column] = list(labels)
        elif discretise:
            groups = _ADULT_GROUPS[column]
            columns[column] = _codes_from_groups(values, groups)
            categories[column] = list(groups)
        else:
            levels = np.sort(values.unique())
            columns[column] = np.searchsorted(levels, values.to_numpy())
            categories[column] = [str(level) for level in levels]
    data = pd.DataFrame({c: v.astype(np.int64) for c, v in columns.items()})
    meta = {
        "n": len(data),
        "n_train": _ADULT_N_TRAIN,
        "n_test": _ADULT_N_TEST,
        "source": "UCI Machine Learning Repository, Adult (Becker & Kohavi 1996), "
        "doi:10.24432/C5XW20; files adult.data + adult.test",
        "licence": "CC BY 4.0",
        "dropped_columns": {
            "education-num": "one-to-one recoding of education (deterministic duplicate)"
        },
        "missing_values": "'?' kept: own category 'unknown' in occupation and native-country; "
        "merged into 'not-working-or-unknown' in workclass; no rows dropped",
        "discretised": bool(discretise),
        "paper": "Xu, Yuan & Wu (2017), Sec. VI-C: 48 842 records, p = 14, "
        "each attribute discretised to 2-4 categories",
    }
    if discretise:
        meta["discretisation"] = _adult_discretisation_record()
    else:
        meta["discretisation"] = None
    return Dataset(
        data=data,
        dag=None,
        name="adult" if discretise else "adult-full-domain",
        kind="discrete",
        categories=categories,
        meta=meta,
    )


# --------------------------------------------------------------------------- Sachs

SACHS_COLUMNS = [
    "praf", "pmek", "plcg", "PIP2", "PIP3", "p44/42", "pakts473", "PKA", "PKC", "P38", "pjnk",
]  # fmt: skip
_SACHS_N = 7_466


def load_sachs() -> Dataset:
    """Sachs et al. (2005) flow-cytometry data with the consensus signalling graph.

    11 phospho-protein/phospholipid measurements on 7 466 single cells, as
    redistributed by the Causal Discovery Toolbox (``cyto_full_data.csv``). The
    file carries no experimental-condition column, so it pools the unperturbed
    (anti-CD3/CD28) cells with cells from the perturbation conditions; treating
    all rows as i.i.d. observational data is a common approximation. Values are
    the raw (untransformed) intensities.

    Returns
    -------
    Dataset
        ``data``: 7 466 x 11 floats, columns :data:`SACHS_COLUMNS`;
        ``dag``: the 18-edge consensus graph of ``cyto_full_target.csv`` (the
        graph paper 002 calls "11 nodes and 18 arcs"), node names = column names;
        ``kind="continuous"``.

    Notes
    -----
    The consensus graph is loaded exactly as the file gives it, and it is **not
    acyclic**: it contains the directed cycle PIP2 -> PIP3 -> plcg -> PIP2 (the
    phospholipid feedback loop of the signalling pathway). Skeleton-based
    metrics (precision/recall/F1 on edges, as paper 002 reports) are well
    defined; anything that needs a DAG (CPDAG, v-structures, SHD on CPDAGs) is
    not, and callers must decide how to handle the cycle. ``meta["acyclic"]``
    and ``meta["directed_cycles"]`` record this.
    """
    raw = _read_verified("sachs/cyto_full_data.csv.gz")
    data = pd.read_csv(io.BytesIO(raw), dtype="float64")
    if list(data.columns) != SACHS_COLUMNS or len(data) != _SACHS_N:
        raise ValueError(
            f"sachs/cyto_full_data.csv: unexpected layout {data.shape} {list(data.columns)}"
        )
    edges = pd.read_csv(io.BytesIO(_read_verified("sachs/cyto_full_target.csv.gz")), dtype=str)
    dag = nx.DiGraph()
    dag.add_nodes_from(SACHS_COLUMNS)
    dag.add_edges_from(zip(edges["Cause"], edges["Effect"]))
    if set(dag.nodes) != set(SACHS_COLUMNS):  # an edge named an unknown node
        raise ValueError("sachs/cyto_full_target.csv names nodes that are not data columns")
    cycles = sorted(sorted(cycle) for cycle in nx.simple_cycles(dag))
    return Dataset(
        data=data,
        dag=dag,
        name="sachs-cytometry",
        kind="continuous",
        categories=None,
        meta={
            "n": len(data),
            "n_edges": dag.number_of_edges(),
            "source": "Sachs et al. (2005), Science 308:523-529; "
            "as redistributed by cdt==0.6.0 (cdt/data/resources/cyto_full_*.csv)",
            "acyclic": not cycles,
            "directed_cycles": cycles,
            "note": "rows pool the unperturbed and perturbation conditions "
            "(no condition labels in the file); the 18-edge consensus graph "
            "contains the directed cycle PIP2 -> PIP3 -> plcg -> PIP2",
        },
    )


# --------------------------------------------------------------------------- Tübingen

_TUEBINGEN_N_PAIRS = 99
_DIRECTIONS = {1: "x->y", -1: "y->x"}


def _pair_number(pair_id: str) -> int:
    match = re.fullmatch(r"pair(\d+)", pair_id)
    return int(match.group(1)) if match else -1


@lru_cache(maxsize=4)
def _tuebingen_table(directory: str, stamp: tuple) -> pd.DataFrame:
    """Parsed pairs (cached per data directory and file modification stamp)."""
    del directory, stamp  # cache key only; _read_verified reads data_dir() again
    pairs_raw = _read_verified("tuebingen/Tuebingen_pairs.csv.gz")
    pairs = pd.read_csv(io.BytesIO(pairs_raw), dtype=str)
    targets = pd.read_csv(
        io.BytesIO(_read_verified("tuebingen/Tuebingen_targets.csv.gz")),
        dtype={"SampleID": str, "Target": "float64"},
    )
    merged = pairs.merge(targets, on="SampleID", how="outer", validate="one_to_one")
    if merged[["A", "B", "Target"]].isna().any().any() or len(merged) != _TUEBINGEN_N_PAIRS:
        raise ValueError("Tuebingen_pairs.csv and Tuebingen_targets.csv do not list the same pairs")
    rows = []
    for sample_id, a, b, target in merged[["SampleID", "A", "B", "Target"]].itertuples(
        index=False
    ):
        x = np.array(a.split(), dtype=np.float64)
        y = np.array(b.split(), dtype=np.float64)
        if x.shape != y.shape:
            raise ValueError(f"Tübingen {sample_id}: x has {x.size} values, y has {y.size}")
        if target not in _DIRECTIONS:
            raise ValueError(f"Tübingen {sample_id}: unknown target {target!r} (expected 1 or -1)")
        x.setflags(write=False)
        y.setflags(write=False)
        rows.append((sample_id, x, y, x.size, _DIRECTIONS[int(target)], np.nan))
    table = pd.DataFrame(rows, columns=["pair_id", "x", "y", "n", "direction", "weight"])
    table["n"] = table["n"].astype(np.int64)
    order = table["pair_id"].map(_pair_number).to_numpy()
    return table.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)


def _tuebingen_cached() -> pd.DataFrame:
    stamp = []
    for relpath in ("tuebingen/Tuebingen_pairs.csv.gz", "tuebingen/Tuebingen_targets.csv.gz"):
        path = data_dir() / relpath
        try:
            info = path.stat()
            stamp.append((info.st_mtime_ns, info.st_size))
        except OSError:
            stamp.append(None)  # _read_verified raises the informative error
    directory = str(data_dir().resolve())
    return _tuebingen_table(directory, tuple(stamp))


def load_tuebingen_pairs() -> pd.DataFrame:
    """The 99 Tübingen cause-effect pairs redistributed by cdt, one row per pair.

    Columns
    -------
    pair_id : str
        cdt's identifier ``"pair1"`` ... ``"pair99"``. cdt numbers its pairs
        consecutively; these are **not** the ``pair0001``... numbers of the
        original database (see data/README.md).
    x, y : numpy.ndarray
        The two series (float64, equal length). In cdt's file the first series
        (``A``) is always the cause.
    n : int
        Number of samples.
    direction : str
        ``"x->y"`` (target 1 in ``Tuebingen_targets.csv``) or ``"y->x"``
        (target -1); all 99 shipped pairs have target 1.
    weight : float
        Always NaN: cdt does not ship the original ``pairmeta.txt`` weights, which
        down-weight groups of related pairs. Unweighted accuracies are therefore
        not comparable to weighted ones reported in the literature.

    All pairs are univariate; the multivariate pairs of the original database
    are not part of cdt's file.
    """
    table = _tuebingen_cached()
    out = table.copy()
    out["x"] = [np.array(v) for v in table["x"]]
    out["y"] = [np.array(v) for v in table["y"]]
    return out


def tuebingen_pair(pair_id: str | int) -> tuple[np.ndarray, np.ndarray, str]:
    """One Tübingen pair as ``(x, y, direction)``; ``pair_id`` is ``"pair7"`` or ``7``.

    ``direction`` is ``"x->y"`` or ``"y->x"``; see :func:`load_tuebingen_pairs`.
    """
    if isinstance(pair_id, (bool, np.bool_)):
        raise TypeError("pair_id must be a string like 'pair7' or an integer, got a bool")
    if isinstance(pair_id, (int, np.integer)):
        key = f"pair{int(pair_id)}"
    elif isinstance(pair_id, str):
        key = pair_id
    else:
        raise TypeError(
            f"pair_id must be a string like 'pair7' or an integer, got {type(pair_id).__name__}"
        )
    table = _tuebingen_cached()
    hit = table.index[table["pair_id"] == key]
    if len(hit) != 1:
        raise ValueError(
            f"pair_id {pair_id!r} is not a Tübingen pair shipped with dpcd; "
            f"use 'pair1' ... 'pair{_TUEBINGEN_N_PAIRS}' (or 1 ... {_TUEBINGEN_N_PAIRS})"
        )
    row = table.loc[hit[0]]
    return np.array(row["x"]), np.array(row["y"]), str(row["direction"])
