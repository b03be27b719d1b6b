"""Sphinx configuration of dpcd's documentation site, built offline by `make docs` with warnings as errors.

The source folder is the repository itself (`sphinx-build -c docs . build/docs`), so the pages in docs/, the README,
ARCHITECTURE.md and the committed results the pages link to (figures/REPORT.md, each notebook's tables) are all
documents of the site and every link between them resolves; nothing is executed at build time.

Why Sphinx with MyST Markdown rather than Jupyter Book 2: Jupyter Book 2 is a MyST (Node) toolchain beside the
Python one the library is tested with, while Sphinx imports the package, so the API reference and the algorithm
pages are built from the code itself (:mod:`apidoc` renders the docstrings). The notebook pages need no notebook
reader either: they are built from ``notebooks/<name>.ipynb`` and the committed ``figures/<name>/`` files, because
the executed copies are not committed (``figures/.gitignore``) and a fresh clone must build the same site.
"""

project = "dpcd"
author = "the dpcd contributors"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "docs/index"
include_patterns = ["README.md", "ARCHITECTURE.md", "docs/*.md", "docs/papers/*.md", "docs/algorithm/*.md", "docs/notebooks/*.md", "data/README.md", "figures/REPORT.md",
                    "figures/*/*.md"]
exclude_patterns = ["build", ".venv", "results"]
myst_heading_anchors = 3
suppress_warnings = []
html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_title = "dpcd"
html_copy_source = False

import importlib  # noqa: E402
import inspect  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import apidoc  # noqa: E402


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
        if (ROOT / "docs" / "notebooks" / f"{folder.name}.md").exists():
            parts.append(f"\nThe notebook with these outputs in place:\n\n```{{toctree}}\n:maxdepth: 1\n\n"
                         f"/docs/notebooks/{folder.name}\n```\n")
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

    rows = _facts_rows(ALGORITHMS.items(), release_refusal)
    pages = "\n".join(f"algorithm/{name}" for name in ALGORITHMS)
    source[0] += ("\n\n## Every algorithm at a glance (from the registry)\n\n" + "\n".join(rows)
                  + "\n\nOne page per algorithm — its guarantee, theorem, parameters and measured utility:\n\n"
                  + f"```{{toctree}}\n:maxdepth: 1\n\n{pages}\n```\n")


def _facts_rows(specs, release_refusal) -> list[str]:
    """Markdown rows of the registry facts (identity, relation, what is public, budget, proof) of ``specs``."""
    rows = ["| name | label | data | relation | public | budget | proof | theorem | release |", "|---" * 9 + "|"]
    for name, spec in specs:
        refusal = release_refusal(spec)
        rows.append(f"| `{name}` | {spec.label} | {spec.data} | {spec.relation.name} | {', '.join(spec.public)} | "
                    f"{spec.budget} (`{spec.budget_arg}`) | {spec.proof} | {spec.theorem.replace('|', '/')} | "
                    + ("yes" if refusal is None else f"refused: {refusal}".replace("|", "/")) + " |")
    return rows


def _definition(name: str) -> str:
    """The bullet of docs/algorithms.md that defines ``name`` (its first line names it in backticks)."""
    lines = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("* ") and f"`{name}`" in line.split(" — ")[0]:
            block = [line[2:]]
            for more in lines[i + 1:]:
                if not more.startswith("  "):
                    break
                block.append(more.strip())
            # its links are relative to docs/, and this page is one folder down
            return re.sub(r"\]\((?![a-z]+:|/|#)", "](../", " ".join(block))
    return f"`{name}` has no definition on the algorithms page."


def _measured(label: str) -> str:
    """What ``label`` reached in the committed benchmark run: per data set at ε = 1, skeleton F1, CPDAG F1, SHD and
    seconds (means over the run's repetitions), development and held-out sets apart."""
    import pandas as pd

    parts = []
    for title, stem in (("Development set", "benchmark_summary"), ("Held-out set", "benchmark_held_out_summary")):
        path = ROOT / "figures" / "benchmark" / f"{stem}.csv"
        if not path.exists():
            continue
        table = pd.read_csv(path)
        rows = table[(table["label"] == label) & (table["epsilon"] == 1.0)]
        if rows.empty:
            continue
        lines = ["| data | skeleton F1 | CPDAG F1 | SHD | seconds | runs |", "|---" * 6 + "|"]
        for row in rows.itertuples():
            if pd.isna(row.skeleton_f1_mean):  # refused from public inputs (the schema), reported, not dropped
                lines.append(f"| {row.dataset} | refused | | | | {row.runs} |")
                continue
            lines.append(f"| {row.dataset} | {row.skeleton_f1_mean:.2f} | {row.f1_mean:.2f} | {row.shd_mean:.0f} | "
                         f"{row.seconds_mean:.2f} | {row.runs} |")
        parts.append(f"**{title}** (ε = 1, means over the run's repetitions; "
                     f"[its tables](/figures/benchmark/{stem})):\n\n"
                     + "\n".join(lines))
    return "\n\n".join(parts) or f"{label} is not run by the committed benchmark."


def algorithm_page(app, docname, source):
    """docs/algorithm/<name>.md, a title in the repository, gets on the site: the algorithm's definition (from
    docs/algorithms.md), its registry facts, its module's docstring (the theorem and its proof), its
    run function's parameters, and what it reached in the committed benchmark — all read at build time."""
    if not docname.startswith("docs/algorithm/"):
        return
    from dpcd.registry import ALGORITHMS, release_refusal

    name = docname.removeprefix("docs/algorithm/")
    spec = ALGORITHMS[name]
    module, function = spec.run.__module__, spec.run.__qualname__
    title = source[0].splitlines()[0]
    source[0] = "\n\n".join([
        title, _definition(name), "## Guarantee (from the registry)", "\n".join(_facts_rows([(name, spec)], release_refusal)),
        "## Measured utility and cost (the committed benchmark run)", _measured(spec.label),
        "## Theorem and definition (the module's docstring)", _eval_rst(_rst(importlib.import_module(module))),
        f"## Parameters\n\nThe run function {{py:func}}`{module}.{function}` (in the API reference):"
        f"\n\n```text\n{function}{_signature(spec.run)}\n```",
        _eval_rst(_rst(spec.run))]) + "\n"


def _rst(obj, indent: str = "") -> str:
    """``obj``'s docstring rendered by :mod:`apidoc` (numpydoc sections as field lists, plain-text formulas
    escaped), or verbatim where the rendering would not parse; each line prefixed with ``indent``."""
    text, _ = apidoc.render(inspect.getdoc(obj) or "(no docstring)")
    return "\n".join(indent + line if line.strip() else "" for line in text.splitlines())


def _eval_rst(body: str) -> str:
    return _fenced(body, "{eval-rst}")


def _signature(obj) -> str:
    """``obj``'s call signature on one line, annotations left out (the docstring says what each argument is), a
    routine or class default by its qualified name."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    sig = sig.replace(parameters=[_plain(p) for p in sig.parameters.values()],
                      return_annotation=inspect.Signature.empty)
    return " ".join(str(sig).split())


def _plain(parameter: inspect.Parameter) -> inspect.Parameter:
    """``parameter`` without its annotation, a routine or class default by its qualified name."""
    default = parameter.default
    if default is not parameter.empty and callable(default) and hasattr(default, "__qualname__"):
        return parameter.replace(annotation=parameter.empty, default=_Named(default))
    return parameter.replace(annotation=parameter.empty)


class _Named:
    """A function or class used as a default value, shown by its qualified name (its repr holds a memory address,
    which would make the page differ between builds)."""

    def __init__(self, obj) -> None:
        self.name = obj.__qualname__

    def __repr__(self) -> str:
        return self.name


def _object_rst(module: str, name: str, obj) -> str:
    """A Sphinx object description (``py:function`` or ``py:class``) of ``module.name`` with its docstring."""
    kind = "class" if inspect.isclass(obj) else "function"
    return f".. py:{kind}:: {name}{_signature(obj)}\n   :module: {module}\n\n{_rst(obj, '   ')}\n"


def api_reference(app, docname, source):
    """docs/api.md gets every public module of :mod:`dpcd` — its docstring, then each function and class its
    ``__all__`` exports and it defines, as a Sphinx object description with its signature and its docstring — found
    by walking the package at build time, so a new module or function is never missing from the reference."""
    if docname != "docs/api":
        return
    parts = []
    for name in public_modules():
        module = importlib.import_module(name)
        body = [f".. py:module:: {name}\n", _rst(module), ""]
        body += [_object_rst(name, member, obj) for member, obj in exported(module)]
        parts.append(f"\n## `{name}`\n\n{_eval_rst(chr(10).join(body))}\n")
    source[0] += "".join(parts)


def public_modules() -> list[str]:
    """Every public module of :mod:`dpcd` (no part of its name starting with ``_``), the package first."""
    import pkgutil

    import dpcd

    return ["dpcd", *sorted(m.name for m in pkgutil.walk_packages(dpcd.__path__, "dpcd.")
                            if not any(part.startswith("_") for part in m.name.split(".")))]


def exported(module) -> list[tuple[str, object]]:
    """The functions and classes ``module.__all__`` exports that ``module`` defines (where they are documented)."""
    return [(member, obj) for member in getattr(module, "__all__", ())
            if (inspect.isfunction(obj := getattr(module, member)) or inspect.isclass(obj))
            and obj.__module__ == module.__name__]


_WRITES = re.compile(r"(?:savefig|write_table)\([^\n]*?\bout,\s*\"([^\"]+)\"")
INLINE_TABLE_LINES = 40  # a committed table of at most this many lines is shown in place; a longer one is linked


def notebook_page(app, docname, source):
    """docs/notebooks/<name>.md, a title in the repository, gets on the site the notebook ``notebooks/<name>.ipynb``
    (stored without outputs) with its committed full run's outputs in place: each markdown cell, each code cell, and
    after a cell the figures (``figures/<name>/<stem>.png``) and tables it writes (``savefig(…, out, "stem")``,
    ``write_table(…, out, "stem")``); what no cell names (a figure written in a loop) follows at the end. Nothing is
    executed: the outputs are the committed files, so a page never shows a run the repository does not hold."""
    if not docname.startswith("docs/notebooks/"):
        return
    import json

    name = docname.removeprefix("docs/notebooks/")
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    folder = ROOT / "figures" / name
    run = json.loads((folder / "run.json").read_text(encoding="utf-8")) if (folder / "run.json").exists() else {}
    note = (f"*This page is `notebooks/{name}.ipynb` with the outputs of its committed run "
            f"({run.get('profile', '?')} profile, {run.get('date', '?')}, `figures/{name}/`) placed after the cells "
            "that write them: nothing is executed to build it. Run it yourself with "
            f"`make reproduce ONLY={name}`.*")
    parts, placed = [], set()
    titled = bool(cells) and cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).startswith("# ")
    if not titled:  # the stub's title heads the page
        parts += [source[0].splitlines()[0], note]
    for number, cell in enumerate(cells):
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if number == 0 and titled:
                title, _, rest = text.partition("\n")
                parts += [title, note, rest]
            else:
                parts.append(text)
            continue
        parts.append(_fenced(text, "python"))
        parts += _outputs(folder, name, _WRITES.findall(text), placed)
    rest = sorted({f.stem for f in folder.glob("*.png")} | {f.stem for f in folder.glob("*.md")} - {"citing"})
    rest = [stem for stem in rest if stem not in placed]
    if rest:
        parts.append("## Also committed by this run")
        parts += _outputs(folder, name, rest, placed)
    source[0] = "\n\n".join(parts) + "\n"


def _fenced(text: str, language: str) -> str:
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`{3,}", text)), default=0) + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _outputs(folder: Path, name: str, stems: list[str], placed: set[str]) -> list[str]:
    """The committed figure and table of each stem (those not shown yet), as MyST blocks."""
    out = []
    for stem in stems:
        if stem in placed:
            continue
        if (folder / f"{stem}.png").exists():
            out.append(f"```{{figure}} /figures/{name}/{stem}.png\n:width: 100%\n\n`{stem}.png` (committed)\n```")
            placed.add(stem)
        table = folder / f"{stem}.md"
        if table.exists():
            lines = table.read_text(encoding="utf-8").count("\n")
            link = f"{{doc}}`{stem} </figures/{name}/{stem}>`"
            out.append(f"Committed table {link}:\n\n```{{include}} /figures/{name}/{stem}.md\n```"
                       if lines <= INLINE_TABLE_LINES else f"Committed table {link} ({lines} lines, on its own page).")
            placed.add(stem)
    return out


def setup(app):
    app.connect("source-read", committed_results)
    app.connect("source-read", algorithm_facts)
    app.connect("source-read", algorithm_page)
    app.connect("source-read", api_reference)
    app.connect("source-read", notebook_page)
