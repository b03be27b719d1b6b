"""The shape of the source tree: one direction between the library and the compendium, no cycles, no reach-ins.

Read from the source files with ``ast`` (nothing is imported): every
``import`` and ``from … import`` statement of every module under ``src/``,
including imports inside functions (a lazy import is still a dependency);
imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
LIBRARY, COMPENDIUM = "dpcd", "dpcd_papers"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py")) if not p.name.startswith(".")}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def _resolve(current: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = current if _is_package(current) else current.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports_of(name: str) -> list[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for every import statement of module ``name``."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, "", node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.append((target, "", node.lineno) if target in MODULES else (base, alias.name, node.lineno))
    return found


def _internal_edges(package: str) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name in MODULES:
        if name != package and not name.startswith(package + "."):
            continue
        targets = {target for target, _, _ in imports_of(name) if target in MODULES}
        edges[name] = {t for t in targets if t != name and (t == package or t.startswith(package + "."))}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_tree_has_both_packages():
    assert LIBRARY in MODULES and COMPENDIUM in MODULES


def test_no_import_cycles_inside_the_library():
    cycles = _cycles(_internal_edges(LIBRARY))
    assert not cycles, f"import cycles: {cycles}"


def test_no_private_name_is_imported_across_modules():
    offenders = []
    for name in MODULES:
        for target, imported, line in imports_of(name):
            private = (imported.startswith("_") and not imported.startswith("__")) or \
                      (not imported and target.rpartition(".")[2].startswith("_")
                       and not target.rpartition(".")[2].startswith("__") and target.rpartition(".")[0] != name
                       and target not in ("dpcd.validation", "dpcd._version"))
            if private and (target.split(".")[0] in (LIBRARY, COMPENDIUM)):
                offenders.append(f"{MODULES[name].relative_to(SRC)}:{line} imports {imported or target} from "
                                 f"{target if imported else target.rpartition('.')[0]}")
    assert not offenders, "\n".join(offenders)


def test_the_library_never_imports_the_compendium():
    offenders = [f"{MODULES[name].relative_to(SRC)}:{line} imports {target}"
                 for name in MODULES if name.split(".")[0] == LIBRARY
                 for target, _, line in imports_of(name) if target.split(".")[0] == COMPENDIUM]
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("forbidden", ["dpcd.datasets", "dpcd_papers"])
def test_algorithm_modules_hold_algorithms_only(forbidden):
    offenders = [f"{MODULES[name].relative_to(SRC)}:{line} imports {target}"
                 for name in MODULES if name.startswith("dpcd.discovery.") or name.startswith("dpcd.bivariate.")
                 for target, _, line in imports_of(name)
                 if target == forbidden or target.startswith(forbidden + ".")]
    assert not offenders, "\n".join(offenders)


# --------------------------------------------------------------------------- the algorithm objects (ARCHITECTURE.md)

FLOORS = {  # a package or top-level module of the library may import only from its own floor or below
    0: {"dpcd._version", "dpcd.validation", "dpcd.graphs", "dpcd.kernels", "dpcd.schema", "dpcd.datasets",
        "dpcd.statements"},
    1: {"dpcd.privacy", "dpcd.ci"},
    2: {"dpcd.discovery", "dpcd.bivariate"},
    3: {"dpcd.registry"},
    4: {"dpcd.preparation"},
    5: {"dpcd.forecast"},
    6: {"dpcd.release"},
    7: {"dpcd.audit", "dpcd.teaching", "dpcd.cli", "dpcd.__main__", "dpcd"},
}
UNIT_FLOOR = {unit: floor for floor, units in FLOORS.items() for unit in units}


def _unit(name: str) -> str:
    """The floor unit of library module ``name``: its first-level package or module under ``dpcd``."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def test_every_library_unit_has_a_floor():
    units = {_unit(name) for name in MODULES if name.split(".")[0] == LIBRARY}
    assert units <= set(UNIT_FLOOR), f"units without a floor in ARCHITECTURE.md: {sorted(units - set(UNIT_FLOOR))}"


def test_imports_never_go_up_a_floor_so_no_loop_between_packages():
    offenders = []
    for name in MODULES:
        if name.split(".")[0] != LIBRARY or name == LIBRARY:
            continue
        for target, _, line in imports_of(name):
            if target.split(".")[0] != LIBRARY or target == LIBRARY:
                continue
            here, there = UNIT_FLOOR[_unit(name)], UNIT_FLOOR[_unit(target)]
            if there > here:
                offenders.append(f"{MODULES[name].relative_to(SRC)}:{line} (floor {here}) imports {target} "
                                 f"(floor {there})")
    assert not offenders, "\n".join(offenders)
    units = {}
    for name in MODULES:
        if name.split(".")[0] == LIBRARY and name != LIBRARY:
            units.setdefault(_unit(name), set()).update(
                _unit(t) for t, _, _ in imports_of(name) if t.split(".")[0] == LIBRARY and t != LIBRARY)
    edges = {u: {t for t in ts if t != u} for u, ts in units.items()}
    assert not _cycles(edges), _cycles(edges)


def test_the_library_reaches_no_module_by_a_name_in_a_string():
    offenders = []
    for name, path in MODULES.items():
        if name.split(".")[0] != LIBRARY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            first = node.args[0] if node.args else None
            literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            if called.endswith("import_module") or called == "__import__" or (
                    called.endswith("find_spec") and (literal is None or literal.startswith(("dpcd", ".")))):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno} {ast.unparse(node)}")
    assert not offenders, "\n".join(offenders)


def _algorithm_modules() -> dict[str, str]:
    from dpcd.registry import ALGORITHMS

    return {spec.run.__module__: name for name, spec in ALGORITHMS.items()}


def test_no_algorithm_module_imports_a_sibling_algorithm():
    algorithms = _algorithm_modules()
    offenders = [f"{MODULES[name].relative_to(SRC)}:{line} imports {target}"
                 for name in algorithms for target, _, line in imports_of(name)
                 if target in algorithms and target != name]
    assert not offenders, "\n".join(offenders)


UNSAFE_KEYWORDS = {"sepset", "distance", "composition", "unproven_sensitivity", "sensitivity_mode", "degenerate"}
"""Switches to published-but-unproven variants; they are reachable only through ``unproven=`` (marked not DP)."""


def test_no_unsafe_keyword_in_the_public_signature_of_a_registry_algorithm():
    import inspect

    from dpcd.registry import ALGORITHMS

    for name, spec in ALGORITHMS.items():
        parameters = inspect.signature(spec.run).parameters
        assert not UNSAFE_KEYWORDS & set(parameters), (name, sorted(UNSAFE_KEYWORDS & set(parameters)))
        if "sensitivity" in parameters:  # only a declared bound the algorithm checks against its proof
            assert parameters["sensitivity"].default is None, name
        if "unproven" in parameters:
            assert parameters["unproven"].default is None, name
            assert parameters["unproven"].kind is inspect.Parameter.KEYWORD_ONLY, name


def test_discover_never_opts_into_an_unproven_variant():
    import inspect

    from dpcd.preparation import ReleasePlan, plan_release
    from dpcd.registry import calibrate

    for function in (plan_release, ReleasePlan, calibrate):  # every keyword a release passes is built by these
        assert "unproven" not in inspect.getsource(function)


def test_every_run_of_a_release_a_forecast_or_the_benchmark_is_built_by_one_release_plan():
    """The public phase (view, caps, calibration) has one implementation: ``plan_release``. A module that runs an
    algorithm calls it and ``ReleasePlan.run``, never ``spec.run`` or ``calibrate`` on a path of its own."""
    import ast

    modules = {"dpcd.release.api": SRC / "dpcd" / "release" / "api.py", "dpcd.forecast": SRC / "dpcd" / "forecast.py",
               "dpcd_papers.benchmark": SRC / "dpcd_papers" / "benchmark.py"}
    for name, path in modules.items():
        calls = [node.func for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Call)]
        names = {call.id if isinstance(call, ast.Name) else call.attr for call in calls
                 if isinstance(call, (ast.Name, ast.Attribute))}
        assert "plan_release" in names, name
        runs = [ast.unparse(call) for call in calls if isinstance(call, ast.Attribute) and call.attr == "run"]
        assert runs and all(run == "plan.run" for run in runs), (name, runs)
        if name != "dpcd_papers.benchmark":  # its calibrator wraps calibrate to record an over-budget row
            assert "calibrate" not in names, name


NULL_SIMULATIONS = {"dpcd.ci.noisy", "dpcd.ci.gcm", "dpcd.ci.denoise"}
"""Modules that draw Gaussian numbers to simulate a test's null distribution from already-noisy statistics
(a parametric bootstrap: post-processing, not privacy noise)."""
RANDOM_FEATURES = {"dpcd.ci.hsic"}
"""Modules that draw Gaussian frequencies of random Fourier features before any record is read (a public, data-free
feature map, not privacy noise)."""


def test_privacy_noise_is_drawn_in_one_module():
    offenders = []
    for name, path in MODULES.items():
        if not name.startswith(("dpcd.discovery", "dpcd.bivariate", "dpcd.privacy", "dpcd.ci")) \
                or name == "dpcd.privacy.mechanisms":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                    node.func.attr in ("laplace", "exponential", "gumbel")
                    or (node.func.attr == "normal" and name not in NULL_SIMULATIONS | RANDOM_FEATURES)):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno} {ast.unparse(node.func)}")
    assert not offenders, "draw noise with dpcd.privacy.mechanisms.laplace_noise / gaussian_noise:\n" + \
        "\n".join(offenders)


@pytest.mark.parametrize("name", [name for name, spec in __import__("dpcd.registry", fromlist=["ALGORITHMS"])
                                  .ALGORITHMS.items() if spec.differentially_private and not spec.exact_subset])
def test_every_release_records_its_algorithm_and_budget_parameter_in_info(name):
    import dpcd
    from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
    from dpcd.registry import ALGORITHMS

    spec = ALGORITHMS[name]
    sample = load_bnlearn("cancer", 2_000, rng=0) if spec.data == "categorical" else \
        sample_linear_gaussian(random_dag(4, 0.5, 0), 2_000, 0)
    found = dpcd.discover(sample.data, schema=sample.schema(), algorithm=name, epsilon=1.0, rng=0, progress=False,
                          options=dpcd.ReleaseOptions(forecast_repetitions=0))
    assert found.result.info["algorithm"] == name
    assert spec.budget_arg in found.result.info


IMPORT_NAMES = {"dp-accounting": "dp_accounting"}
"""Distributions whose import name differs from their name on PyPI."""
COMPENDIUM_ONLY = ("seaborn", "papermill", "nbformat", "ipykernel", "jupyter_client", "causallearn", "dask",
                   "distributed")
"""Packages the compendium, the course or the tests need and a release never imports (the library imports Dask
only to read a table on a cluster, :data:`LIBRARY_EXTRAS`; scikit-learn is not among them: pgmpy imports it, so it
comes with pgmpy, not with a requirement of ours)."""


def _third_party_imports(package: str) -> set[str]:
    import sys

    found = set()
    for name in MODULES:
        if name == package or name.startswith(package + "."):
            for target, _, _ in imports_of(name):
                top = target.split(".")[0]
                if top and top not in sys.stdlib_module_names and top not in (LIBRARY, COMPENDIUM):
                    found.add(top)
    return found


def _core_dependencies() -> set[str]:
    import re

    import tomllib

    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].strip().lower() for spec in project["dependencies"]}
    return {IMPORT_NAMES.get(name, name.replace("-", "_")) for name in names}


LIBRARY_EXTRAS = {"dask": {"dask", "distributed"}}
"""The library's optional extras: packages ``src/dpcd`` imports only inside the function that needs them (reading a
table on a Dask cluster, :mod:`dpcd.release.cluster`), which ``pip install "dpcd[dask]"`` brings."""


def test_the_library_install_brings_exactly_what_the_library_imports():
    """``pip install dpcd`` brings the packages ``src/dpcd`` imports (lazy imports included) and nothing else but
    its optional extras' (:data:`LIBRARY_EXTRAS`, each declared as that extra): the compendium's and the course's
    needs are the ``papers`` extra."""
    import re

    import tomllib

    optional = set().union(*LIBRARY_EXTRAS.values())
    assert _third_party_imports(LIBRARY) - optional == _core_dependencies()
    assert not _core_dependencies() & set(COMPENDIUM_ONLY)
    extras = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    for extra, packages in LIBRARY_EXTRAS.items():
        declared = {part.strip("[] ").lower() for spec in extras[extra] for part in re.split(r"[<>=!~;,\[]", spec)}
        assert packages <= declared, (extra, packages, declared)


def test_a_release_needs_none_of_the_compendiums_packages(tmp_path):
    """A release, a forecast and the command line run with every compendium-only package made unimportable."""
    import subprocess
    import sys

    script = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {COMPENDIUM_ONLY!r}:
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
from dpcd.datasets import load_bnlearn
from dpcd.release import discover
from dpcd.forecast import forecast
sample = load_bnlearn("cancer", 3000, rng=0)
release = discover(sample.data, schema=sample.schema(), epsilon=2.0, rng=1, out=r"{tmp_path / 'out'}")
table = forecast(sample.schema(), n=3000, epsilon=[1.0], repetitions=1, rng=0).table
from dpcd.cli import main
try:
    main(["--help"])
except SystemExit as stop:
    assert stop.code == 0
print(release.algorithm, len(table), sorted(name for name in sys.modules if name.split(".")[0] in {COMPENDIUM_ONLY!r}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(SRC)}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("[]"), done.stdout


def _mechanism_names() -> set[str]:
    import dpcd.privacy.mechanisms as mechanisms

    return {name for name in getattr(mechanisms, "__all__", dir(mechanisms)) if not name.startswith("_")}


def test_every_function_that_draws_noise_has_a_docstring():
    """A reader auditing a proof finds every place noise enters: each function or method of an algorithm that calls
    a mechanism of :mod:`dpcd.privacy.mechanisms` says what it releases in its docstring."""
    mechanisms = _mechanism_names()
    missing = []
    for name, path in MODULES.items():
        if not name.startswith(("dpcd.discovery", "dpcd.bivariate", "dpcd.ci")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or ast.get_docstring(node):
                continue
            calls = {sub.func.id if isinstance(sub.func, ast.Name) else sub.func.attr
                     for sub in ast.walk(node) if isinstance(sub, ast.Call)
                     and isinstance(sub.func, (ast.Name, ast.Attribute))}
            if calls & mechanisms:
                missing.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert not missing, "document what these release (they draw noise):\n" + "\n".join(missing)


def test_the_discovery_package_docstring_names_every_module():
    import dpcd.discovery

    modules = {name.rpartition(".")[2] for name in MODULES if name.startswith("dpcd.discovery.")}
    unnamed = sorted(m for m in modules if f"``{m}``" not in dpcd.discovery.__doc__)
    assert not unnamed, f"dpcd/discovery/__init__.py's docstring omits {unnamed}"
