"""``report.html``: a valid, self-contained page with the graph, its edges, the privacy statement and a forecast."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from dpcd.cli import main as cli_main
from dpcd.datasets import load_bnlearn
from dpcd.schema import Schema

VOID = {"meta", "br", "img", "hr", "link", "input", "path", "use", "stop", "rect", "circle", "ellipse", "line",
        "polyline", "polygon"}


def main(argv):
    """The command line for the mechanics of a release on small samples, whatever their forecast says (``--force``);
    whether a release is worth having, and the refusal of one that is not, are tested in ``test_honest_releases``."""
    return cli_main([*argv, "--force"] if argv and argv[0] == "discover" else argv)


class Checker(HTMLParser):
    """Tags balanced, no script, no external resource; collects the text."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []
        self.tags: set[str] = set()
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if name in {"src", "href"} and value and not value.startswith("#"):
                self.external.append(value)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> Checker:
    checker = Checker()
    checker.feed(page)
    checker.close()
    assert checker.stack == [], f"unclosed tags {checker.stack}"
    return checker


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    folder = tmp_path_factory.mktemp("html")
    sample = load_bnlearn("asia", 2_000, np.random.default_rng(3))
    sample.data.rename(columns={"either": "either<b>"}).to_csv(folder / "asia.csv", index=False)
    schema = sample.schema().to_json()
    schema["columns"]["either<b>"] = schema["columns"].pop("either")
    Schema.from_json(schema).save(folder / "asia.json")
    out = folder / "release"
    assert main(["discover", str(folder / "asia.csv"), "--schema", str(folder / "asia.json"), "--epsilon", "2",
                 "--forecast", "2", "--out", str(out), "--no-progress"]) == 0
    return out


def test_report_html_is_valid_and_holds_graph_privacy_and_forecast(release):
    page = (release / "report.html").read_text(encoding="utf-8")
    checker = parse(page)
    text = " ".join(" ".join(checker.text).split())
    assert page.startswith("<!DOCTYPE html>") and "svg" in checker.tags and "script" not in checker.tags
    assert checker.external == []  # self-contained
    graph = json.loads((release / "graph.json").read_text())
    privacy = json.loads((release / "privacy.json").read_text())
    for u, v in graph["directed_edges"]:
        assert f"{u} → {v}".replace("<", "&lt;") in page or f"{u} → {v}" in text
    for u, v in graph["undirected_edges"]:
        assert f"{u} — {v}" in text
    assert "either<b>" in text and "either<b>" not in page  # user text is escaped
    assert f"ε = {privacy['guarantee']['epsilon']:.3g}" in text and "replace" in text
    assert "Assumed public" in text and "n = 2000" in text
    assert "This forecast is synthetic" in text and "EM-PC" in text
    assert "How far to trust it" in text and "upper estimate" in text  # the benchmark's measured held-out error
    assert "Noise: fresh operating-system entropy" in text  # the CLI without --seed: secret noise


def test_no_forecast_under_add_remove(tmp_path):
    sample = load_bnlearn("cancer", 1_000, np.random.default_rng(0))
    sample.data.to_csv(tmp_path / "cancer.csv", index=False)
    sample.schema().save(tmp_path / "cancer.json")
    out = tmp_path / "release"
    assert main(["discover", str(tmp_path / "cancer.csv"), "--schema", str(tmp_path / "cancer.json"), "--epsilon",
                 "1", "--relation", "add/remove", "--out", str(out), "--no-progress"]) == 0
    text = " ".join(" ".join(parse((out / "report.html").read_text()).text).split())
    assert "under add/remove the number of rows is protected" in text and "n = 1000" not in text


def test_a_release_no_better_than_chance_says_so_and_pure_dp_shows_no_delta(tmp_path):
    # a tiny budget on a small table: the forecast of the released algorithm is within a random graph's range
    sample = load_bnlearn("asia", 300, np.random.default_rng(0))
    sample.data.to_csv(tmp_path / "asia.csv", index=False)
    sample.schema().save(tmp_path / "asia.json")
    out = tmp_path / "release"
    assert main(["discover", str(tmp_path / "asia.csv"), "--schema", str(tmp_path / "asia.json"), "--epsilon",
                 "0.01", "--algorithm", "em_pc", "--forecast", "3", "--seed", "1", "--out", str(out),
                 "--no-progress"]) == 0
    text = " ".join(" ".join(parse((out / "report.html").read_text()).text).split())
    assert "no better than a random graph with as many edges" in text and "EM-PC (released)" in text
    assert "random graphs, same edges (90 % of mean)" in text
    charged = text[text.index("What this run happened to charge"):].split(";")[0]
    assert "basic composition of its pure ε-DP steps" in charged and "δ" not in charged  # EM-PC is pure ε-DP


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.mark.skipif(_browser() is None, reason="no Chromium installed (apt-get install chromium) to render the page")
def test_report_html_renders_in_a_headless_browser(release, tmp_path):
    shot = tmp_path / "page.png"
    subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=1000,1400", (release / "report.html").resolve().as_uri()],
                   check=True, capture_output=True, timeout=120)
    from PIL import Image

    image = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert image.shape == (1400, 1000)
    assert (image < 128).mean() > 0.005  # text and the drawing are painted, not a blank page
    assert pd.Series(image.ravel()).nunique() > 20


def test_cjk_names_drawn_without_warnings_and_listed_on_the_page(tmp_path):
    import warnings

    import networkx as nx

    from dpcd.release.drawing import drawable
    from dpcd.release.writers import write_outputs

    graph = nx.DiGraph([("年齢", "性別"), ("性別", "年齢"), ("年齢", "income")])
    privacy = {"label": "EM-PC", "relation": {"name": "replace", "in_words": "replace one record"},
               "guarantee": {"epsilon": 1.0, "delta": 0.0}, "assumed_public": {"n": 500}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = write_outputs(tmp_path / "release", graph, privacy, title="EM-PC, ε = 1")
    assert [str(w.message) for w in caught] == []
    assert files["graph.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = files["report.html"].read_text(encoding="utf-8")
    text = " ".join(" ".join(parse(page).text).split())
    assert "年齢 → income" in text and "年齢 — 性別" in text
    if not drawable("年齢性別"):  # no CJK font here: the drawing shows ids, the page says which is which
        assert "drawn as short ids" in text and "in the drawing variable v1 年齢 v2 性別" in text
    assert json.loads(files["graph.json"].read_text(encoding="utf-8"))["nodes"] == ["年齢", "性別", "income"]


def test_the_files_carry_the_time_the_release_began_not_when_the_run_ended(tmp_path):
    # a run's duration depends on the data: the written files' times must not tell it
    import time

    import networkx as nx

    import dpcd
    from dpcd.datasets import load_bnlearn
    from dpcd.release.writers import write_outputs

    privacy = {"label": "EM-PC", "relation": {"name": "replace", "in_words": "replace one record"},
               "guarantee": {"epsilon": 1.0, "delta": 0.0}, "assumed_public": {"n": 500}}
    files = write_outputs(tmp_path / "fixed", nx.DiGraph([("a", "b")]), privacy, draw=False, timestamp=1e9)
    assert {path.stat().st_mtime for path in [*files.values(), tmp_path / "fixed"]} == {1e9}
    sample = load_bnlearn("cancer", 2_000, rng=0)
    before = time.time()
    found = dpcd.discover(sample.data, schema=sample.schema(), epsilon=1.0, algorithm="em_pc", rng=0, progress=False,
                          out=tmp_path / "release", options=dpcd.ReleaseOptions(forecast_repetitions=1, force=True))
    after = time.time()
    times = {path.stat().st_mtime for path in [*found.files.values(), tmp_path / "release"]}
    assert len(times) == 1 and before <= times.pop() <= before + 0.5 * (after - before)
