"""dpcd.schema: the public schema — kinds, domains, rules for values outside it, views, drafts, JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpcd.schema import (
    DRAFT_NOTE,
    Column,
    DataPreparationError,
    Schema,
    SchemaError,
    check_codes,
    draft_schema,
    public_bounds,
    public_levels,
    scale_to_box,
)

MIXED = {
    "columns": {
        "age": {"type": "numeric", "lower": 18, "upper": 100},
        "sex": {"type": "categorical", "categories": ["F", "M"]},
        "edu": {"type": "ordinal", "categories": ["primary", "secondary", "tertiary"], "fill": "secondary"},
        "income": {"type": "numeric", "lower": 0, "upper": 200_000, "fill": 0},
    },
    "bins": 4,
}


def test_every_kind_round_trips_through_json(tmp_path):
    schema = Schema.from_json(MIXED)
    assert schema.names == ("age", "sex", "edu", "income") and schema.kind == "mixed"
    assert schema["edu"].categories == ("primary", "secondary", "tertiary")  # order kept
    assert schema["edu"].fill == "secondary" and schema["sex"].fill == "F" and schema["age"].fill == 59.0
    path = schema.save(tmp_path / "schema.json")
    again = Schema.load(path)
    assert again == schema and again.sha256 == schema.sha256
    assert json.loads(path.read_text())["columns"]["age"] == {"type": "numeric", "lower": 18.0, "upper": 100.0,
                                                              "fill": 59.0}
    changed = Schema.from_json({**MIXED, "columns": {**MIXED["columns"],
                                                     "age": {"type": "numeric", "lower": 18, "upper": 99}}})
    assert changed.sha256 != schema.sha256


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"columns": {}}, "non-empty 'columns'"),
        ({"columns": {"a": {"type": "numeric", "lower": 1}}}, "needs public 'lower' and 'upper'"),
        ({"columns": {"a": {"type": "numeric", "lower": 2, "upper": 1}}}, "lower must be below upper"),
        ({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1, "fill": 5}}}, "outside"),
        ({"columns": {"a": {"type": "categorical", "categories": ["x", "x"]}}}, "distinct"),
        ({"columns": {"a": {"type": "categorical", "categories": ["x"], "fill": "y"}}}, "not one of the categories"),
        ({"columns": {"a": {"type": "text"}}}, "type must be one of"),
        ({"columns": {"a": {"categories": ["x"]}}}, "'type' is missing"),
        ({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1, "mean": 0.5}}}, "unknown entries"),
        ({"columns": {"a": {"type": "ordinal", "categories": ["x"]}}, "secret": 1}, "unknown schema entries"),
        ("{not json", "not valid JSON"),
    ],
)
def test_malformed_schemas_are_refused_with_a_message(spec, match):
    with pytest.raises(SchemaError, match=match):
        Schema.from_json(spec)


def test_values_outside_the_schema_follow_its_rules_never_an_error():
    schema = Schema.from_json(MIXED)
    frame = pd.DataFrame({
        "age": ["30", "150", "", "abc", "-4", "inf"],
        "sex": ["M", "F", "X", None, " M ", "m"],
        "edu": ["tertiary", "none", "primary", "", "secondary", "PhD"],
        "income": [1e9, None, "12.5", "-1", "5e4", "NaN"],
    })
    encoded = schema.encode(frame)
    assert encoded["age"].tolist() == [30.0, 100.0, 59.0, 59.0, 18.0, 100.0]
    assert encoded["sex"].tolist() == [1, 0, 0, 0, 1, 0]  # unknown, missing, case differs -> fill "F"
    assert encoded["edu"].tolist() == [2, 1, 0, 1, 1, 1]  # unknown -> fill "secondary"
    assert encoded["income"].tolist() == [200_000.0, 0.0, 12.5, 0.0, 50_000.0, 0.0]
    assert encoded.dtypes.tolist() == [np.float64, np.int64, np.int64, np.float64]


def test_numbers_and_labels_match_categories_whatever_their_type():
    schema = Schema.categorical([3], names=["a"])
    for values in ([0, 1, 2, 7], [0.0, 1.0, 2.0, 7.0], ["0", "1", "2", "7"], [np.int64(0), 1, 2.0, "7"]):
        assert schema.encode(pd.DataFrame({"a": values}))["a"].tolist() == [0, 1, 2, 0]


def test_encode_checks_structure_only():
    schema = Schema.from_json(MIXED)
    with pytest.raises(DataPreparationError, match=r"no column\(s\) \['income'\]"):
        schema.encode(pd.DataFrame({"age": [1], "sex": ["F"], "edu": ["primary"]}))
    with pytest.raises(DataPreparationError, match=r"column\(s\) \['zip'\] that the schema does not declare"):
        schema.encode(pd.DataFrame({"age": [1], "sex": ["F"], "edu": ["primary"], "income": [0], "zip": [1]}))
    reordered = pd.DataFrame({"income": [10], "edu": ["tertiary"], "sex": ["M"], "age": [40]})
    assert list(schema.encode(reordered).columns) == list(schema.names)  # schema order, not file order


def test_categorical_view_bins_numeric_columns_on_public_edges():
    schema = Schema.from_json(MIXED)
    view = schema.as_categorical()
    assert view.levels == (4, 2, 3, 4)
    assert view["age"].categories[0] == "[18, 38.5)" and view["age"].categories[-1] == "[79.5, 100]"
    frame = pd.DataFrame({"age": [18, 38.4, 38.5, 100, 1000, None], "sex": ["F"] * 6, "edu": ["primary"] * 6,
                          "income": [0, 49_999, 50_000, 200_000, -5, 150_000]})
    encoded = view.encode(frame)
    assert encoded["age"].tolist() == [0, 0, 1, 3, 3, 2]  # missing -> fill 59 -> bin 2
    assert encoded["income"].tolist() == [0, 0, 1, 3, 0, 3]
    # the edges do not move with the data
    assert view.encode(frame.iloc[:2])["age"].tolist() == [0, 0]


def test_bins_of_narrow_bounds_get_distinct_labels_from_the_bounds_alone():
    # six significant digits would name all four bins of (10**6, 10**6 + 1) alike, and the categorical view (what
    # em_pc reads) would be refused; the labels switch to each edge's exact text, decided by the bounds only
    view = Schema.numeric([(1e6, 1e6 + 1), (0.0, 1.0)], names=["a", "b"]).as_categorical()
    assert view["a"].categories == ("[1000000.0, 1000000.25)", "[1000000.25, 1000000.5)",
                                    "[1000000.5, 1000000.75)", "[1000000.75, 1000001.0]")
    assert view["b"].categories[0] == "[0, 0.25)"  # bounds whose edges six digits tell apart keep their labels
    frame = pd.DataFrame({"a": [1e6, 1e6 + 0.3, 1e6 + 1], "b": [0.0, 0.5, 1.0]})
    assert view.encode(frame)["a"].tolist() == [0, 1, 3]


def test_scale_to_box_holds_bounds_wider_than_half_the_float_range_and_keeps_every_other_value():
    import warnings

    # 2·(x − lower) overflowed past half the float range and clamped x to the upper edge (with a warning whose
    # appearance depended on the values); the quotient first cannot overflow inside the bounds
    bounds = np.array([[-1e308, 6.67e307]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaled = scale_to_box(np.array([[-1e308], [0.5], [6.67e307]]), bounds)
    assert scaled.ravel().tolist() == pytest.approx([-1.0, 1e308 / (1e308 + 6.67e307) * 2 - 1, 1.0])
    # elsewhere the values are those of the former 2·(x − lower)/width, bit for bit (doubling is exact)
    rng = np.random.default_rng(0)
    lower = rng.normal(0, 1e3, 200)
    upper = lower + rng.exponential(1e3, 200)
    X = rng.normal(0, 2e3, (500, 200))
    former = np.clip(2.0 * (X - lower) / (upper - lower) - 1.0, -1.0, 1.0)
    assert np.array_equal(scale_to_box(X, np.column_stack([lower, upper])), former)


def test_numeric_view_codes_ordinal_and_binary_columns_and_refuses_nominal_ones():
    schema = Schema.from_json(MIXED)
    view = schema.as_numeric()
    assert view.bounds == ((18.0, 100.0), (0.0, 1.0), (0.0, 2.0), (0.0, 200_000.0))
    frame = pd.DataFrame({"age": [20], "sex": ["M"], "edu": ["tertiary"], "income": [1.0]})
    assert view.encode(frame).iloc[0].tolist() == [20.0, 1.0, 2.0, 1.0]
    nominal = Schema((Column("colour", "categorical", ("r", "g", "b")), Column("x", "numeric", lower=0, upper=1)))
    assert not nominal.numeric_coding_allowed()
    with pytest.raises(SchemaError, match="no numeric coding"):
        nominal.as_numeric()


def test_draft_is_marked_and_reads_the_values():
    frame = pd.DataFrame({"a": ["1", "2", "2", "3"], "b": ["x", "y", "x", ""], "c": ["0.5", "2.5", "1.0", "3"],
                          "d": ["1", "2", "oops", "3"]})
    draft = draft_schema(frame)
    assert draft.draft == DRAFT_NOTE and "read from the private data" in draft.dumps()
    kinds = {c.name: c.type for c in draft.columns}
    assert kinds == {"a": "ordinal", "b": "categorical", "c": "numeric", "d": "categorical"}
    assert draft["a"].categories == ("1", "2", "3") and draft["c"].bounds == (0.5, 3.0)
    # a draft is a valid schema apart from its marker
    assert Schema.from_json(json.loads(draft.dumps())).draft == DRAFT_NOTE


def test_public_levels_and_bounds_come_from_arguments_not_data():
    names = ["a", "b"]
    assert public_levels([2, 3], 2).tolist() == [2, 3]
    assert public_levels({"b": 3, "a": 2}, 2, names).tolist() == [2, 3]
    assert public_levels(Schema.categorical([4, 5], names=names), 2, names).tolist() == [4, 5]
    with pytest.raises(TypeError, match="private algorithms do not read domains from the data"):
        public_levels(None, 2)
    with pytest.raises(ValueError, match="levels has 1 entries"):
        public_levels([2], 2)
    with pytest.raises(SchemaError, match="do not match"):
        public_levels(Schema.categorical([2, 2], names=["x", "y"]), 2, names)
    assert public_bounds([(0, 1), (-2, 2)], 2).tolist() == [[0.0, 1.0], [-2.0, 2.0]]
    with pytest.raises(TypeError, match="bounds"):
        public_bounds(None, 2)
    with pytest.raises(ValueError, match="lower must be below upper"):
        public_bounds([(1, 0), (0, 1)], 2)
    with pytest.raises(ValueError, match="data preparation"):
        check_codes(np.array([[0, 1], [2, 0]]), np.array([2, 2]))
    assert scale_to_box(np.array([[5.0, -10.0]]), np.array([[0.0, 10.0], [-1.0, 1.0]])).tolist() == [[0.0, -1.0]]


def test_constructors_for_arrays():
    assert Schema.categorical([2, 3]).names == ("X1", "X2")
    assert Schema.numeric({"u": (0, 1), "v": (-1, 1)}).bounds == ((0.0, 1.0), (-1.0, 1.0))
    with pytest.raises(SchemaError, match="names has 1 entries"):
        Schema.categorical([2, 3], names=["a"])
    with pytest.raises(SchemaError, match="unique"):
        Schema((Column("a", "ordinal", ("0",)), Column("a", "ordinal", ("0",))))


def test_a_drafted_schema_read_back_keeps_every_value(tmp_path):
    # a file that writes its codes as 1.0/2.0 (scikit-learn's diabetes "sex"): the draft keeps the labels as written,
    # and numeric-looking labels match by value, so no cell falls to the fill whichever spelling either side uses
    from dpcd.cli import main
    from dpcd.release.tables import read_table

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"sex": rng.choice([1.0, 2.0], 300), "grade": rng.choice([1, 2, 3, 4], 300),
                          "bmi": rng.uniform(18, 40, 300).round(1)})
    csv = tmp_path / "data.csv"
    frame.to_csv(csv, index=False)
    draft_path = tmp_path / "draft.json"
    assert main(["schema", str(csv), "--out", str(draft_path)]) == 0
    draft = Schema.load(draft_path)
    assert draft["sex"].categories == ("1.0", "2.0") and draft["grade"].categories == ("1", "2", "3", "4")
    text = read_table(csv)
    encoded = draft.encode(text)
    assert (encoded["sex"].to_numpy() == (frame["sex"].to_numpy() == 2.0)).all()
    assert (encoded["grade"].to_numpy() == frame["grade"].to_numpy() - 1).all()
    checked = draft.check(text).set_index("column")
    assert (checked["to_fill"] == 0).all() and (checked["clamped"] == 0).all()
    # a schema written by hand with "1"/"2" reads the same file the same way
    by_hand = Schema.from_json({"columns": {"sex": {"type": "ordinal", "categories": ["1", "2"]},
                                            "grade": {"type": "ordinal", "categories": ["1.0", "2", "3", "4"]},
                                            "bmi": {"type": "numeric", "lower": 18, "upper": 40}}})
    assert by_hand.encode(text).equals(encoded)


def test_categories_equal_as_numbers_are_refused():
    with pytest.raises(SchemaError, match="name the same number twice"):
        Column("x", "ordinal", ("1", "1.0"))
    assert Column("x", "categorical", ("a", "1", "b"))._codes(pd.Series(["1.00", "b", "2"], dtype=object)).tolist() \
        == [1, 2, 0]


def test_check_counts_fills_and_clamps_for_the_holder(tmp_path, capsys):
    from dpcd.cli import main

    csv = tmp_path / "data.csv"
    csv.write_text("sex,bmi\n1.0,20\n2.0,45\n3,x\n,17\n\n")
    schema = Schema.from_json({"columns": {"sex": {"type": "ordinal", "categories": ["1", "2"]},
                                           "bmi": {"type": "numeric", "lower": 18, "upper": 40}}})
    path = schema.save(tmp_path / "schema.json")
    assert main(["schema", str(csv), "--check", str(path)]) == 0
    printed = capsys.readouterr()
    rows = {line.split()[0]: line.split() for line in printed.out.splitlines()[1:3]}
    assert rows["sex"][3:6] == ["1", "1", "2"]       # missing, not a category, to the fill
    assert rows["bmi"][3:9] == ["0", "1", "1", "1", "1", "2"]  # 'x' to the fill; 17 and 45 clamped
    assert "4 records read; 1 blank lines skipped" in printed.out
    assert "never for publication" in printed.err
