"""Sphinx configuration of dpcd's documentation site, built offline by `make docs` with warnings as errors.

The source folder is the repository itself (`sphinx-build -c docs . build/docs`), so the pages in docs/, the README,
ARCHITECTURE.md and the committed results the pages link to (figures/REPORT.md, each notebook's tables) are all
documents of the site and every link between them resolves; nothing is executed at build time.
"""

project = "dpcd"
author = "the dpcd contributors"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "docs/index"
include_patterns = ["README.md", "ARCHITECTURE.md", "docs/*.md", "docs/papers/*.md", "data/README.md", "figures/REPORT.md",
                    "figures/*/*.md"]
exclude_patterns = ["build", ".venv", "results"]
myst_heading_anchors = 3
suppress_warnings = []
html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_title = "dpcd"
html_copy_source = False

from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def committed_results(app, docname, source):
    """Each committed table of figures/ gets a title on its page (the file is left as it is); docs/results.md gets, per notebook folder of figures/, its committed figures and a list of its tables, read
    from the files at build time (so the page never lists a table that is not committed, nor misses one)."""
    if docname.startswith("figures/") and not source[0].lstrip().startswith("#"):
        folder, _, stem = docname.removeprefix("figures/").partition("/")
        source[0] = f"# {folder}: {stem.replace('_', ' ')}\n\n" + source[0]  # a committed table has no title
        return
    if docname != "docs/results":
        return
    parts = [source[0]]
    for folder in sorted(p for p in (ROOT / "figures").iterdir() if p.is_dir() and not p.name.startswith(".")):
        parts.append(f"\n## {folder.name}\n")
        for png in sorted(folder.glob("*.png")):
            parts.append(f"\n```{{figure}} /figures/{folder.name}/{png.name}\n:width: 100%\n\n`{png.stem}`\n```\n")
        tables = sorted(folder.glob("*.md"))
        if tables:
            parts.append("\nTables:\n\n```{toctree}\n:maxdepth: 1\n\n"
                         + "\n".join(f"/figures/{folder.name}/{t.stem}" for t in tables) + "\n```\n")
    source[0] = "".join(parts)


def algorithm_facts(app, docname, source):
    """docs/algorithms.md ends with a table of every registry algorithm's identity and proof, read from
    :data:`dpcd.registry.ALGORITHMS` at build time (so it is the code's, never a copy)."""
    if docname != "docs/algorithms":
        return
    from dpcd.registry import ALGORITHMS, release_refusal

    rows = ["| name | label | data | relation | public | budget | proof | theorem | release |", "|---" * 9 + "|"]
    for name, spec in ALGORITHMS.items():
        refusal = release_refusal(spec)
        rows.append(f"| `{name}` | {spec.label} | {spec.data} | {spec.relation.name} | {', '.join(spec.public)} | "
                    f"{spec.budget} (`{spec.budget_arg}`) | {spec.proof} | {spec.theorem.replace('|', '/')} | "
                    + ("yes" if refusal is None else "refused") + " |")
    source[0] += "\n\n## Every algorithm at a glance (from the registry)\n\n" + "\n".join(rows) + "\n"


def setup(app):
    app.connect("source-read", committed_results)
    app.connect("source-read", algorithm_facts)
