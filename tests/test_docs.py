"""The README a newcomer reads first and the pages it points to: short, with the sections it promises, and every
link inside the repository resolving."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
PAPERS = ("em_pc", "priv_pc", "pcd", "private_anm", "curate")
SECTIONS = ("## Quick start", "## Results at a glance", "## Release a causal graph of your own data", "## Algorithms",
            "## Notebooks", "## Where everything else is")


def test_the_readme_is_short_and_has_its_sections():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 15_000, f"README.md is {len(text.encode('utf-8'))} bytes; keep it under 15 KB"
    positions = [text.find(f"\n{heading}\n") for heading in SECTIONS]
    assert all(p > 0 for p in positions) and positions == sorted(positions), "README sections missing or out of order"
    for command in ("make reproduce", "make test", "ONLY="):
        assert command in text, command


def test_the_readme_has_one_line_per_algorithm():
    from dpcd.registry import ALGORITHMS

    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## Algorithms\n"):text.index("\n## Notebooks\n")]
    bullets = re.findall(r"^\* (.*?)(?=\n\* |\n\n)", section, flags=re.S | re.M)  # a bullet with its wrapped lines
    named = [name for line in bullets for name in re.findall(r"`([a-z_]+)`", line.split(" — ")[0])]
    assert sorted(named) == sorted(ALGORITHMS)
    for name in ALGORITHMS:  # each name links its page, and the page is the algorithm's
        assert f"[`{name}`](docs/algorithm/{name}.md)" in section, name
        page = (ROOT / "docs" / "algorithm" / f"{name}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# {ALGORITHMS[name].label} (`{name}`)\n"), name
    assert sorted(p.stem for p in (ROOT / "docs" / "algorithm").glob("*.md")) == sorted(ALGORITHMS)


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_inside_the_repository_resolves(page):
    broken = []
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # an address outside the repository
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links that do not resolve: {broken}"


def test_every_page_of_the_docs_is_linked_from_the_readme():
    text = README.read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if page.name != "index.md":
            name = page.relative_to(ROOT).as_posix()
            assert name in text, f"README.md does not link {name}"


def _build_site(out: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-c", "docs", "-b", "html",
                           str(ROOT), str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = tmp_path_factory.mktemp("site")
    _build_site(out)
    return out


def test_the_site_builds_offline_with_warnings_as_errors(site):
    """`make docs`: every page of docs/, the README, ARCHITECTURE.md and the committed results they link to build
    with warnings as errors (a broken cross-reference or a page outside every toctree fails the build)."""
    home = (site / "docs" / "index.html").read_text(encoding="utf-8")
    for page in ("user-guide", "algorithms", "benchmark", "reproduce", "results", "course", "library",
                 *(f"papers/{paper}" for paper in PAPERS)):
        assert f'href="{page}.html"' in home, page
    for paper in PAPERS:  # each paper's page holds its citing paragraph and its claims, from the committed run
        text = (site / "docs" / "papers" / f"{paper}.html").read_text(encoding="utf-8")
        assert "What we found, if you cite it" in text and "<table" in text, paper
    results = (site / "docs" / "results.html").read_text(encoding="utf-8")
    for folder in sorted(p.name for p in (ROOT / "figures").iterdir() if p.is_dir() and not p.name.startswith(".")):
        assert f'id="{folder.replace("_", "-")}"' in results, f"the results page has no section for {folder}"
    from dpcd.registry import ALGORITHMS

    facts = (site / "docs" / "algorithms.html").read_text(encoding="utf-8")
    assert all(f'<span class="pre">{name}</span></code></p></td>' in facts
               for name in ALGORITHMS), "the algorithms page's table should hold every registry algorithm"
    for name, spec in ALGORITHMS.items():  # one page per algorithm, its parts read from the code and the results
        text = (site / "docs" / "algorithm" / f"{name}.html").read_text(encoding="utf-8")
        for heading in ("Guarantee (from the registry)", "Measured utility and cost", "Theorem and definition",
                        "Parameters"):
            assert heading in text, (name, heading)
        assert spec.run.__module__ in text, name
    api = (site / "docs" / "api.html").read_text(encoding="utf-8")  # the reference, from the docstrings
    for name in ("dpcd.discovery.marginal_pc.marginal_pc", "dpcd.schema.Schema", "dpcd.release.api.discover"):
        assert f'id="{name}"' in api, f"{name} has no object description (a cross-reference target) in the reference"
    assert 'id="module-dpcd.release.api"' in api
    assert "Relation: replace one record" in api  # a module docstring
    assert api.count('class="field-list') >= 10, "the numpydoc Parameters sections should render as field lists"
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(p.stem for p in (ROOT / "docs" / "notebooks").glob("*.md")) == notebooks
    for name in notebooks:  # each notebook as a page, its committed outputs after the cells that write them
        assert f'href="../docs/notebooks/{name}.html"' in results or f'href="notebooks/{name}.html"' in results, name
        text = (site / "docs" / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
        assert "nothing is executed to build it" in text and 'class="highlight-python' in text, name
        for png in sorted((ROOT / "figures" / name).glob("*.png")):
            assert f'<span class="pre">{png.stem}.png</span></code> (committed)' in text, (name, png.name)
    figures = sorted((ROOT / "figures").glob("*/*.png"))
    assert figures and all((site / "_images" / png.name).exists() for png in figures), "a committed figure is missing"


def _chromium() -> str | None:
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.parametrize(("page", "headings"), [
    ("docs/index.html", ["dpcd — differentially private causal discovery"]),
    ("docs/results.html", ["Committed results", "benchmark", "privacy_audit"]),
    ("docs/notebooks/priv_pc.html", ["Priv-PC and SVT-PC (Wang, Pang & Song, NeurIPS 2020)",
                                     "Fig. 1: F1 against accumulated privacy cost", "If you cite the paper"]),
])
def test_three_pages_render_in_headless_chromium(site, page, headings):
    import html
    import subprocess

    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium installed (apt-get install chromium) to render the pages")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={site / '.chromium'}", "--dump-dom", (site / page).as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    rendered = re.findall(r"<h[12][^>]*>(.*?)</h[12]>", done.stdout, flags=re.S)
    text = [html.unescape(re.sub(r"<[^>]+>", "", h)).replace("#", "").strip() for h in rendered]
    for heading in headings:
        assert heading in text, (heading, text[:20])


def test_every_docstring_renders_as_restructuredtext():
    """The API reference's renderer (docs/apidoc.py) reads every public module's, function's and class's docstring
    without a docutils warning, so none is shown verbatim; and it renders what it promises."""
    import importlib
    import inspect
    import sys

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import apidoc
        import conf
    finally:
        sys.path.remove(str(ROOT / "docs"))
    verbatim = []
    for name in conf.public_modules():
        module = importlib.import_module(name)
        for qualified, obj in [(name, module), *((f"{name}.{m}", o) for m, o in conf.exported(module))]:
            if not apidoc.render(inspect.getdoc(obj) or "")[1]:
                verbatim.append(qualified)
    assert verbatim == [], f"these docstrings would be shown verbatim on the API page: {verbatim}"
    rst = apidoc.to_rst("Sums |x|.\n\nParameters\n----------\nx, y : the values.\n\nReturns\n-------\n"
                        "total : the sum.\n\nNotes\n-----\n``a``  one\n``b``  two\n\n>>> 1 + 1\n2")
    assert rst.splitlines() == ["Sums \\|x\\|.", "", ":param x: the values.", ":param y: the values.", "",
                                ":returns: total — the sum.", "", ".. rubric:: Notes", "", "| ``a``  one", "| ``b``  two",
                                "", ">>> 1 + 1", "2"], rst
    assert not apidoc.render("A |bad\n\n.. unknown-thing\n   :x: `y\n")[1]


def test_every_public_function_and_class_has_a_docstring():
    """What the API reference renders: every function and class a public module exports (``__all__``) says what it
    does (the site's build, warnings as errors, checks that the docstrings render)."""
    import importlib
    import inspect
    import pkgutil

    import dpcd

    missing, modules = [], 0
    for info in pkgutil.walk_packages(dpcd.__path__, "dpcd."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        modules += 1
        if not inspect.getdoc(module):
            missing.append(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
                missing.append(f"{info.name}.{name}")
    assert modules > 30 and not missing, missing
