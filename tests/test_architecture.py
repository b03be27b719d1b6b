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
